"""torchtitan==0.2.2 (the last release configured by TOML) against what ropelaw reads: every flavor of
every family ropelaw's preset table holds, built by torchtitan's own model-args dataclasses and flavor
dicts, its rotary computed by torchtitan's own functions, compared with ropelaw's reading of a TOML
naming that flavor: head dim, base, scheme and parameters (the frequencies each pair turns per token),
attention factor, the layers that apply no rotary and the span the rotary layers attend.

Runs where ``ROPELAW_FRAMEWORK_DL`` holds the wheel (``pip download --no-deps -d DIR/torchtitan
torchtitan==0.2.2``) and ``tyro`` is installed (torchtitan's config module imports it): the CI step
"torchtitan 0.2.2" in .ci/run; otherwise skipped, naming what is missing. Patches, stated: the modules
are imported from the unpacked wheel without running ``torchtitan/models/<family>/__init__.py`` (it
imports the trainer, datasets and tensorboard); the flavor dict of that file (``llama4_args = {...}``)
is executed alone with torchtitan's own classes; ``torchtitan.models.moe.kernels`` (Triton kernels for
GPUs) and ``torchtitan.protocols.train_spec`` (the trainer's registry, which imports tensorboard) are
given as stand-ins holding the names the model modules import; decoder blocks are built on torch's
``meta`` device (no weights allocated).
"""

from __future__ import annotations

import ast
import glob
import json
import math
import os
import pathlib
import sys
import types
import warnings
import zipfile

import pytest

from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import load_config

ROOT = pathlib.Path(__file__).resolve().parents[2]
DL = pathlib.Path(os.environ.get("ROPELAW_FRAMEWORK_DL", ROOT.parent / "shared" / "dl"))
VERSION = "0.2.2"
TABLE = json.loads((ROOT / "ropelaw" / "data" / "presets_torchtitan.json").read_text())
FLAVORS = sorted(TABLE["presets"])
# family -> (flavor dict in __init__.py, its args class, the module defining that class)
FAMILIES = {"llama3": ("llama3_args", "TransformerModelArgs"), "llama4": ("llama4_args", "TransformerModelArgs"),
            "qwen3": ("qwen3_args", "Qwen3ModelArgs"), "deepseek_v3": ("deepseekv3_args", "DeepSeekV3ModelArgs"),
            "gpt_oss": ("gptoss_configs", "GptOssModelArgs")}


@pytest.fixture(scope="module")
def titan(tmp_path_factory):
    """torchtitan 0.2.2's model modules, imported from the wheel (see the module docstring)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("tyro", reason="torchtitan's config module imports tyro: the CI step 'torchtitan 0.2.2' "
                                       "of .ci/run installs it beside the wheel (ROPELAW_FRAMEWORK_DL)")
    hits = sorted(glob.glob(str(DL / "**" / f"torchtitan-{VERSION}-*.whl"), recursive=True))
    if not hits:
        pytest.skip(f"no torchtitan=={VERSION} wheel under {DL} (pip download --no-deps -d {DL}/torchtitan "
                    f"torchtitan=={VERSION}; ROPELAW_FRAMEWORK_DL)")
    root = tmp_path_factory.getbasetemp() / f"torchtitan-{VERSION}"
    if not root.is_dir():
        zipfile.ZipFile(hits[-1]).extractall(root)
    saved = {k: v for k, v in sys.modules.items() if k == "torchtitan" or k.startswith("torchtitan.")}
    sys.path.insert(0, str(root))
    caught = warnings.catch_warnings()
    caught.__enter__()
    warnings.simplefilter("ignore")  # torch's own deprecation warnings on importing torch.fx and the like
    try:
        for fam in FAMILIES:  # the packages, without their __init__.py
            pkg = types.ModuleType(f"torchtitan.models.{fam}")
            pkg.__path__ = [str(root / "torchtitan" / "models" / fam)]
            sys.modules[pkg.__name__] = pkg
        kernels = types.ModuleType("torchtitan.models.moe.kernels")
        kernels.generate_permute_indices = None  # Triton, GPU only
        sys.modules[kernels.__name__] = kernels
        spec = types.ModuleType("torchtitan.protocols.train_spec")
        spec.ModelProtocol = type("ModelProtocol", (), {})
        sys.modules[spec.__name__] = spec
        from torchtitan.protocols.model import BaseModelArgs

        spec.BaseModelArgs = BaseModelArgs
        out = {}
        for fam, (var, cls) in FAMILIES.items():
            model = __import__(f"torchtitan.models.{fam}.model.model", fromlist=["*"])
            args = __import__(f"torchtitan.models.{fam}.model.args", fromlist=["*"])
            from torchtitan.models.moe import MoEArgs

            init = (root / "torchtitan" / "models" / fam / "__init__.py").read_text()
            node = next(n for n in ast.parse(init).body if isinstance(n, ast.Assign)
                        and any(getattr(t, "id", "") == var for t in n.targets))
            ns = {cls: getattr(args, cls), "MoEArgs": MoEArgs, "RoPEScalingArgs": getattr(args, "RoPEScalingArgs",
                                                                                          None)}
            exec(compile(ast.Module([node], []), f"torchtitan/models/{fam}/__init__.py", "exec"), ns)
            out[fam] = (model, ns[var])
        caught.__exit__(None, None, None)
        yield torch, out
    finally:
        sys.path.remove(str(root))
        for k in [k for k in sys.modules if k == "torchtitan" or k.startswith("torchtitan.")]:
            del sys.modules[k]
        sys.modules.update(saved)


def ropelaw_reading(tmp_path, flavor: str, seq_len: int):
    fam, name = flavor.split("/")
    p = tmp_path / f"{fam}_{name}.toml"
    p.write_text(f'[model]\nname = "{fam}"\nflavor = "{name}"\n\n[training]\nseq_len = {seq_len}\n')
    return lint_config(load_config(str(p)))


def titan_rotary(torch, model, a, fam: str):
    """(per-pair angle at position 1, the factor cos / sin are multiplied by) as torchtitan builds them."""
    if fam in ("llama3", "llama4"):
        cis = model.precompute_freqs_cis(a.dim // a.n_heads, a.max_seq_len, a.rope_theta, a.rope_scaling_args)
        return torch.angle(cis[1]).double(), 1.0
    if fam == "deepseek_v3":
        cis = model.precompute_freqs_cis(a)
        scale = 1.0
        if a.max_seq_len > a.original_seq_len:  # Attention.__init__: softmax_scale *= mscale ** 2
            scale = 0.1 * a.mscale * math.log(a.rope_factor) + 1.0
        return torch.angle(cis[1]).double(), scale
    if fam == "qwen3":
        cache = model.precompute_rope_cache(a.head_dim, a.max_seq_len, a.rope_theta)
    else:
        cache = model.precompute_rope_cache(a.head_dim, a.max_seq_len, a.rope_theta, a.rope_factor, a.ntk_alpha,
                                            a.ntk_beta, a.original_seq_len)
    d = a.head_dim
    cos, sin = cache[1, : d // 2].double(), cache[1, d: d + d // 2].double()
    return torch.atan2(sin, cos), float(torch.hypot(cos[0], sin[0]))


def no_rope_layers(torch, model, a, fam: str) -> tuple:
    """The decoder layers whose attention applies no rotary, from torchtitan's own TransformerBlock."""
    if fam != "llama4":
        return ()
    with torch.device("meta"):
        return tuple(i for i in range(a.n_layers) if not model.TransformerBlock(i, a).attention.use_rope)


@pytest.mark.parametrize("seq_len", [4096, 65536])
@pytest.mark.parametrize("flavor", FLAVORS)
def test_flavor_rotary_is_torchtitans(tmp_path, titan, flavor, seq_len):
    torch, fams = titan
    fam, name = flavor.split("/")
    model, flavors = fams[fam]
    a = flavors[name]
    a.max_seq_len = seq_len  # update_from_config: [training] seq_len becomes max_seq_len
    r = ropelaw_reading(tmp_path, flavor, seq_len)
    rot = [g for g in r.layers if g.group.rope]
    main = rot[0]
    angles, scale = titan_rotary(torch, model, a, fam)
    ours = torch.tensor(main.scheme_result.inv_freq, dtype=torch.float64)
    assert main.spec.d == 2 * len(angles), flavor
    assert torch.allclose(angles, ours, rtol=3e-6, atol=0), (flavor, (angles - ours).abs().max())
    assert main.scheme_result.attention_factor == pytest.approx(scale, rel=1e-6), flavor
    assert main.spec.base == a.rope_theta and r.config.train_len.raw == seq_len
    nope = no_rope_layers(torch, model, a, fam)
    assert tuple(g.group.indices for g in r.layers if not g.group.rope) == ((nope,) if nope else ()), flavor
    if nope and a.attn_type == "flex":  # the rotary layers attend within fixed blocks
        assert main.chunk == a.fixed_attn_block_size and main.group.indices == tuple(
            i for i in range(a.n_layers) if i not in nope)
    if fam == "gpt_oss":  # layer_id % 2 == 0: sliding window
        assert [g.window for g in rot] == [None, a.sliding_window_size]


def test_every_family_of_the_wheel_is_in_the_table(titan):
    """The preset table holds every flavor of the families torchtitan 0.2.2 builds with RoPE (flux is a
    diffusion model without rotary text attention)."""
    _, fams = titan
    assert {f"{fam}/{name}" for fam, (_, fl) in fams.items() for name in fl} == set(FLAVORS)


def test_table_is_what_regenerate_reads_from_this_wheel():
    """ropelaw/data/presets_torchtitan.json is exactly what scripts/presets.py reads from the same wheel (nested
    dataclass calls such as ``RoPEScalingArgs()`` completed with their field defaults)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import presets as regenerate

    if not sorted(glob.glob(str(DL / "**" / f"torchtitan-{VERSION}-*.whl"), recursive=True)):
        pytest.skip(f"no torchtitan=={VERSION} wheel under {DL} (ROPELAW_FRAMEWORK_DL)")
    table = regenerate.torchtitan_table(str(DL))
    assert regenerate.dump(table) == (ROOT / "ropelaw" / "data" / "presets_torchtitan.json").read_text()
