"""OLMo-core's own model builders and rotary against ropelaw's reading of the config they save.

OLMo-core configures runs in Python (its example scripts, ``frameworks-examples/OLMo-core``, are never run by
ropelaw: a scan counts them); what a run leaves on disk, and what ``ropelaw lint`` reads, is the ``config.json``
of ``ConfigSaverCallback``: the experiment config's ``as_config_dict()``, whose ``model`` part is a
``TransformerConfig``. The scripts build that model with ``TransformerConfig``'s named builders (``olmo2_7B``,
``llama3_8B``, ``gemma3_1B``, ``qwen3_5_0_8B``, ...), optionally ``.with_rope_scaling(...)``. This test takes
every named builder of ai2-olmo-core==3.0.0 (the wheel, at its own defaults; the generic ``*_like``
constructors need arguments and are reached through them), plus every scaling config on two of them, and for
each compares, layer by layer:

- OLMo-core: each layer's attention module, built on the meta device as its block builds it (the block config
  from ``resolved_block_configs``): whether it has a rotary (``rope``; GatedDeltaNet blocks have no attention),
  its rotated dims, its sliding window (``window_size``: W positions, flash-attn ``(W - 1, 0)``), and the rotary's own
  ``_get_rotary_embedding`` on CPU: each pair's angle at position 1 (``atan2(sin, cos)``) and the attention
  factor (``cos`` at position 0);
- ropelaw: ``load_config`` on the saved ``as_config_dict()`` JSON (with ``train=8192``, ``target=32768``, a bare
  model dump having no lengths), the layer group holding that index: rotary or NoPE, d, frequencies
  (``scheme_result.inv_freq``), attention factor, window.

Patches, stated: ``boto3``, ``botocore``, ``google`` (cloud storage), ``cached_path``, ``requests`` and
``pandas``, which only OLMo-core's remote-file and data helpers use, are stand-ins (``stubs.py``). Runs in the
CI step "OLMo-core" of .ci/run (``ROPELAW_FRAMEWORK_DL`` holding the wheel; rich, dill, bettermap and
dataclass-extensions beside it); otherwise skipped, naming what is missing.
"""

from __future__ import annotations

import glob
import inspect
import json
import math
import os
import pathlib
import sys
import warnings
import zipfile

import pytest

from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import load_config

ROOT = pathlib.Path(__file__).resolve().parents[2]
DL = pathlib.Path(os.environ.get("ROPELAW_FRAMEWORK_DL", ROOT.parent / "shared" / "dl"))
VERSION = "3.0.0"
STUBBED = ("boto3", "botocore", "google", "cached_path", "requests", "pandas")
VOCAB = 100352  # the dolma2 tokenizer's padded vocabulary
# the named builders of TransformerConfig at 3.0.0 (63 classmethods less the five *_like constructors): counted,
# so a wheel with more or fewer is noticed
BUILDERS = 58
SCALED = ("llama3_8B", "olmo3_7B")  # every scaling config on these (olmo3: full-attention layers only and all)


@pytest.fixture(scope="module")
def olmo_core(tmp_path_factory):
    torch = pytest.importorskip("torch")
    for mod in ("rich", "dill", "bettermap", "dataclass_extensions"):
        pytest.importorskip(mod, reason=f"OLMo-core imports {mod}: the CI step 'OLMo-core' of .ci/run")
    from stubs import Stubs

    hits = sorted(glob.glob(str(DL / "**" / f"ai2_olmo_core-{VERSION}-*.whl"), recursive=True))
    if not hits:
        pytest.skip(f"no ai2-olmo-core=={VERSION} wheel under {DL} (pip download --no-deps -d {DL}/olmo-core "
                    f"ai2-olmo-core=={VERSION}; ROPELAW_FRAMEWORK_DL: the CI step 'OLMo-core' of .ci/run)")
    root = tmp_path_factory.getbasetemp() / f"ai2-olmo-core-{VERSION}"
    if not root.is_dir():
        zipfile.ZipFile(hits[-1]).extractall(root)
    stubs = Stubs(STUBBED)
    sys.meta_path.insert(0, stubs)
    sys.path.insert(0, str(root))
    try:
        from olmo_core.nn import rope
        from olmo_core.nn.transformer.config import TransformerConfig

        yield torch, TransformerConfig, rope
    finally:
        sys.meta_path.remove(stubs)
        sys.path.remove(str(root))
        for k in [k for k in sys.modules if k == "olmo_core" or k.startswith("olmo_core.")]:
            del sys.modules[k]


def builders(TransformerConfig) -> list[str]:
    """The named builders: classmethods taking ``vocab_size`` and requiring nothing else (the ``*_like``
    constructors require the shape)."""
    out = []
    for name, fn in inspect.getmembers(TransformerConfig, inspect.ismethod):
        if name.startswith("_") or fn.__self__ is not TransformerConfig:
            continue
        required = [p for p in inspect.signature(fn).parameters.values()
                    if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        if "vocab_size" in inspect.signature(fn).parameters and {p.name for p in required} <= {"vocab_size"}:
            out.append(name)
    return sorted(out)


def cases(TransformerConfig, rope) -> dict:
    """name -> TransformerConfig: every builder, and every scaling config on SCALED."""
    out = {name: getattr(TransformerConfig, name)(vocab_size=VOCAB) for name in builders(TransformerConfig)}
    scalings = {"pi": rope.PIRoPEScalingConfig(factor=4.0),
                "stepwise": rope.StepwiseRoPEScalingConfig(factor=8.0, old_context_len=8192),
                "yarn": rope.YaRNRoPEScalingConfig(factor=8.0, old_context_len=8192),
                "abf": rope.ABFRoPEScalingConfig(new_theta=8_000_000)}
    for base in SCALED:
        for s, sc in scalings.items():
            out[f"{base}+{s}"] = getattr(TransformerConfig, base)(vocab_size=VOCAB).with_rope_scaling(sc)
            if base == "olmo3_7B":
                out[f"{base}+{s}+all"] = getattr(TransformerConfig, base)(vocab_size=VOCAB).with_rope_scaling(
                    sc, full_attn_layers_only=False)
    return out


def olmo_core_layers(torch, cfg) -> list:
    """Per decoder layer: None (no attention: GatedDeltaNet, Mamba), ("nope", window) or (d rotated, angles
    fastest first, factor, window), from the attention OLMo-core builds for that layer: the block config
    ``resolved_block_configs`` gives it (``block_pattern``, ``block_overrides``), built with the call its block
    makes (``sequence_mixer.build(d_model, layer_idx=i, n_layers=n, ...)``, nn/transformer/block.py)."""
    from olmo_core.nn.attention import AttentionConfig

    out = []
    for i, block in enumerate(cfg.resolved_block_configs):
        mixer = block.sequence_mixer
        if not isinstance(mixer, AttentionConfig):  # GatedDeltaNet (needs flash-linear-attention), Mamba
            out.append(None)
            continue
        with warnings.catch_warnings():  # "Backend is set to flash_2, but GPUs are not available. Defaulting to torch."
            warnings.simplefilter("ignore")
            att = mixer.build(cfg.d_model, layer_idx=i, n_layers=cfg.n_layers, init_device="meta")
        window = getattr(att, "window_size", None)
        if getattr(att, "rope", None) is None:
            out.append(("nope", window))
            continue
        sin, cos = att.rope._get_rotary_embedding(2, torch.device("cpu"))
        half = att.rope.rotary_dim // 2
        angles = [math.atan2(float(sin[1, j]), float(cos[1, j])) for j in range(half)]
        out.append((att.rope.rotary_dim, sorted(angles, reverse=True), float(cos[0, 0]), window))
    return out


def disagreements(r, truth: list) -> list[str]:
    by_index = {}
    for g in r.layers:
        for i in (g.group.indices if g.group.indices is not None else range(len(truth))):
            by_index[i] = g
    bad = []
    for i, want in enumerate(truth):
        g = by_index.get(i)
        if want is None:
            if g is not None and g.group.attention:
                bad.append(f"layer {i}: no attention in OLMo-core; ropelaw: {g.label}")
            continue
        if g is None or not g.group.attention:
            bad.append(f"layer {i}: attention in OLMo-core; ropelaw: {g.label if g else 'no group'}")
            continue
        if want[0] == "nope":
            if g.group.rope:
                bad.append(f"layer {i}: NoPE in OLMo-core; ropelaw: rotary ({g.label})")
            elif g.window != want[1]:
                bad.append(f"layer {i}: window {g.window} vs OLMo-core {want[1]}")
            continue
        d, angles, factor, window = want
        if not g.group.rope or g.spec is None:
            bad.append(f"layer {i}: rotary in OLMo-core; ropelaw: {g.label} ({g.error})")
            continue
        ours = sorted((float(x) for x in g.scheme_result.inv_freq), reverse=True)
        if g.spec.d != d:
            bad.append(f"layer {i}: d {g.spec.d} vs OLMo-core {d}")
        elif max(abs(a - o) / o for a, o in zip(angles, ours, strict=True)) > 2e-5:
            j = max(range(len(ours)), key=lambda k: abs(angles[k] - ours[k]) / ours[k])
            bad.append(f"layer {i}: pair {j} frequency {ours[j]:.6g} vs OLMo-core {angles[j]:.6g}")
        if not math.isclose(factor, g.scheme_result.attention_factor, rel_tol=2e-6):
            bad.append(f"layer {i}: attention factor {g.scheme_result.attention_factor} vs OLMo-core {factor}")
        if g.window != window:
            bad.append(f"layer {i}: window {g.window} vs OLMo-core {window}")
    return bad


def test_builders_are_all_taken(olmo_core):
    _, TransformerConfig, _ = olmo_core
    assert len(builders(TransformerConfig)) == BUILDERS


def test_every_builder_as_olmo_core_builds_it(olmo_core, tmp_path):
    torch, TransformerConfig, rope = olmo_core
    report = {}
    for name, cfg in cases(TransformerConfig, rope).items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(cfg.as_config_dict()))
        r = lint_config(load_config(str(path), train=8192, target=32768))
        bad = disagreements(r, olmo_core_layers(torch, cfg))
        if bad:
            report[name] = bad[:3] + ([f"... {len(bad) - 3} more"] if len(bad) > 3 else [])
    assert report == {}
