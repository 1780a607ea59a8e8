"""OpenRLHF's own argument parsing on every launch script of OpenRLHF/OpenRLHF@3c3be623 (= v0.11.0) in the corpus,
against what ropelaw reads: the model it trains, the sample length (``--data.max_len``, with each entry point's
own default) and the parameter dtype (``--ds.param_dtype``).

Runs where ``ROPELAW_FRAMEWORK_DL`` holds the wheel (``pip download --no-deps -d DIR/openrlhf openrlhf==0.11.0``,
the release of that very commit): the CI step "OpenRLHF". Each entry point builds its parser in its ``if __name__
== "__main__":`` block and imports Ray, DeepSpeed and vLLM at the top, none of which is installed here: the
statements of that block up to ``parser.parse_args()`` are executed alone (with ``argparse``), the flags are parsed
with ``parse_known_args`` and nested with OpenRLHF's own ``openrlhf.utils.config.hierarchize``. The argument vector
is the script's flags as ropelaw's shell reader finds them (the script is never run); the model's RoPE is the Hugging
Face config transformers builds (tests/test_hf_differential.py), so the comparison stops at the model's name, with
``tests/configs/llama-2-7b.json`` standing in for it to read the lengths.
"""

from __future__ import annotations

import argparse
import ast
import glob
import os
import pathlib
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DL = pathlib.Path(os.environ.get("ROPELAW_FRAMEWORK_DL", ROOT.parent / "shared" / "dl"))
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus"))
VERSION = "0.11.0"
SCRIPTS = CORPUS / "frameworks-examples" / "OpenRLHF" / "examples" / "scripts"
STAND_IN = str(ROOT / "tests" / "configs" / "llama-2-7b.json")
# the scripts of OpenRLHF@3c3be623 examples/scripts and what ropelaw makes of them (reviewed): "right" or why not
EXPECTED = {
    "ckpt_ds_zero_to_universal.sh": "not a model", "docker_run.sh": "not a model",
    "nvidia_docker_install.sh": "not a model", "serve_remote_rm.sh": "right",
    "train_dapo_ray_hybrid_engine.sh": "right",
    "train_dpo_llama.sh": "right", "train_nonrl_slurm.sh": "not a model (sources another script)",
    "train_ppo_ray_hybrid_engine.sh": "right", "train_ppo_ray_slurm.sh": "right",
    "train_ppo_with_reward_fn.sh": "right",
    "train_prorlv2_math_hybrid_engine.sh": "right", "train_reinforce_baseline_ray_agent_async.sh": "right",
    "train_rm.sh": "right", "train_sft.sh": "right", "train_sft_mixtral_lora.sh": "right",
    "train_vlm_math_hybrid_engine.sh": "right",
}


@pytest.fixture(scope="module")
def openrlhf(tmp_path_factory):
    hits = sorted(glob.glob(str(DL / "**" / f"openrlhf-{VERSION}-*.whl"), recursive=True))
    if not hits:
        pytest.skip(f"no openrlhf=={VERSION} wheel under {DL} (pip download --no-deps -d {DL}/openrlhf "
                    f"openrlhf=={VERSION}; ROPELAW_FRAMEWORK_DL)")
    root = tmp_path_factory.getbasetemp() / f"openrlhf-{VERSION}"
    if not root.is_dir():
        zipfile.ZipFile(hits[-1]).extractall(root)
    pkg = root / f"openrlhf-{VERSION}.data" / "purelib" / "openrlhf"
    ns: dict = {}
    exec(compile((pkg / "utils" / "config.py").read_text(), "config.py", "exec"), ns)
    return pkg, ns["hierarchize"]


def parser_of(pkg: pathlib.Path, module: str) -> argparse.ArgumentParser:
    """The parser ``openrlhf/cli/<module>.py`` builds: its ``__main__`` block up to ``parse_args``, run alone."""
    tree = ast.parse((pkg / "cli" / f"{module}.py").read_text())
    main = next(n for n in tree.body if isinstance(n, ast.If) and "__main__" in ast.unparse(n.test))
    body = []
    for stmt in main.body:
        if "parse_args" in ast.unparse(stmt):
            break
        body.append(stmt)
    import datetime
    import os as os_module

    # the module's own top-level imports the parser uses (argparse, os, datetime for default paths)
    ns: dict = {"argparse": argparse, "os": os_module, "datetime": datetime.datetime}
    exec(compile(ast.Module(body, []), f"{module}.py", "exec"), ns)
    return ns["parser"]


def openrlhf_reading(pkg, hierarchize, path: pathlib.Path) -> dict | None:
    """The model, --data.max_len and --ds.param_dtype OpenRLHF's parser gives the script's flags; None when the
    script runs no ``openrlhf.cli`` module."""
    from ropelaw.lint.dialects.openrlhf import LAUNCH, read_launch_text

    got = read_launch_text(path.read_text())
    if got is None:
        return None
    data, _ = got
    module = data.pop(LAUNCH)
    argv: list[str] = []

    def flatten(node: dict, prefix: str) -> None:
        for k, v in node.items():
            if isinstance(v, dict):
                flatten(v, f"{prefix}{k}.")
            elif v is True:
                argv.append(f"--{prefix}{k}")
            elif "$" not in str(v):  # from the environment: any value OpenRLHF accepts
                argv.extend([f"--{prefix}{k}", str(v)])
    flatten(data, "")
    parser = parser_of(pkg, module)
    parser.exit_on_error = False
    while True:  # a flag of several values (nargs=2) read with its first only: left out, it bears on no length
        try:
            args, _ = parser.parse_known_args(argv)
            break
        except argparse.ArgumentError as exc:
            flag = exc.argument_name.split("/")[0]
            i = argv.index(flag)
            del argv[i:i + 2]
    args = hierarchize(args)
    model = next((getattr(getattr(args, sec, None), "model_name_or_path", None)
                  for sec in ("actor", "model") + (("reward",) if module == "serve_rm" else ())
                  if getattr(getattr(args, sec, None), "model_name_or_path", None)), None)
    return {"module": module, "model": model, "max_len": args.data.max_len,
            "dtype": getattr(getattr(args, "ds", None), "param_dtype", None)}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_openrlhf_script(openrlhf, name):
    from ropelaw.errors import UsageError
    from ropelaw.lint.loader import ModelNeeded, NotARopeConfig, load_config

    path = SCRIPTS / name
    if not path.is_file():
        pytest.skip(f"OpenRLHF/OpenRLHF@3c3be623 examples/scripts/{name} is not under {CORPUS} yet")
    theirs = openrlhf_reading(*openrlhf, path)
    if theirs is None:
        with pytest.raises((NotARopeConfig, UsageError)):
            load_config(str(path))
        assert EXPECTED[name].startswith("not a model")
        return
    try:  # without the model: RV031 naming OpenRLHF's model, or its values from where ropelaw found them
        alone = load_config(str(path))
        assert theirs["model"] in alone.layers[0].base.note
    except ModelNeeded as named:
        assert f"model_name_or_path {theirs['model']!r} names the model" in str(named)
    cfg = load_config(str(path), model_config=STAND_IN)
    got = {"max_len": cfg.tune_len.raw, "target": cfg.target.raw,
           "dtype": cfg.dtype.raw if cfg.dtype is not None and cfg.dtype.key else None}
    want = {"max_len": theirs["max_len"], "target": theirs["max_len"],
            "dtype": theirs["dtype"] if theirs["dtype"] in ("bf16", "fp16") else None}
    assert got == want
    assert EXPECTED[name] == "right"
