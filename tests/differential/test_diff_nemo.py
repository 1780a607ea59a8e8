"""NeMo's config loading on every YAML of NVIDIA/NeMo@8cfedd72 (2.6.0rc0) in the corpus, against what ropelaw reads.

NeMo itself cannot run here: its language models import Lightning, Apex, Transformer Engine and megatron-core's
training stack, which need CUDA; no nemo-toolkit release has the 1.x ``examples/nlp`` models without them.
What runs is NeMo's config loader: OmegaConf 2.3.0 (what NeMo 2.x pins; Hydra loads the YAML with it) resolves
every interpolation (``${model.x}``, ``${.x}``) of each file, and the RoPE NeMo builds from the resolved ``model``
section is derived here from NeMo's code as cited (a read-the-code stand-in for ``build_transformer_config``):

- ``megatron_gpt_model.py``: ``position_embedding_type`` default ``learned_absolute``; ``rope`` (or ``rotary``)
  builds megatron-core's ``RotaryEmbedding(kv_channels, rotary_percent, seq_len_interpolation_factor,
  rotary_base)``;
- ``kv_channels`` default ``hidden_size // num_attention_heads``; ``rotary_percentage`` default 1.0, dims
  ``int(kv_channels * rotary_percentage)``; ``rotary_base`` default 10,000; ``encoder_seq_length`` the training
  length, ``max_position_embeddings`` the positions (default the training length).

Runs where ``omegaconf`` imports (the CI step "NeMo": ``pip install --no-deps --target`` of omegaconf==2.3.0 and
antlr4-python3-runtime==4.9.3, no other dependency); each file's verdict is recorded in ``nemo_examples.json``
(``repo@commit path``, sha256, verdict); ``python tests/differential/test_diff_nemo.py --write`` regenerates it.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sys

import pytest

import corpus_examples as examples

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus"))
REPO, COMMIT = "NVIDIA/NeMo", "8cfedd7203462cb251a914e700e5605444277561"
MANIFEST = pathlib.Path(__file__).with_name("nemo_examples.json")


def corpus_entries() -> list[tuple[str, pathlib.Path, str]]:
    """``(path in the repository, where the corpus holds it, sha256)`` of every NeMo example (corpus_examples.rows)."""
    out = [(path, CORPUS / rel, sha) for path, (rel, sha) in examples.rows("NeMo").items()]
    return sorted(out)


def nemo_rope(path: pathlib.Path) -> dict:
    """What NeMo builds from the file (see the module docstring): ``{"rope": False, ...}``, the rotary's values,
    ``{"needs": ...}`` for a model named elsewhere, or ``{"no": why}``."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    try:
        conf = OmegaConf.load(path)
    except Exception as exc:  # noqa: BLE001  YAML that OmegaConf refuses
        return {"no": f"OmegaConf: {type(exc).__name__}"}
    if not OmegaConf.is_dict(conf):
        return {"no": "not a mapping"}
    # NeMo's one resolver in these files (nemo/core/config/hydra_runner.py 48, core/classes/modelPT.py 61)
    OmegaConf.register_new_resolver("multiply", lambda x, y: x * y, replace=True)
    top = OmegaConf.is_dict(conf.get("model")) if "model" in conf else False
    if not top and "encoder_seq_length" not in conf:
        return {"no": "no model section"}
    keys = ("hidden_size", "num_attention_heads", "kv_channels", "restore_from_path", "position_embedding_type",
            "rotary_percentage", "rotary_percent", "encoder_seq_length", "seq_length", "max_position_embeddings",
            "rotary_base", "seq_len_interpolation_factor")
    model = {}
    for k in keys:  # each value as NeMo reads it: cfg.model.<k>, interpolations resolved
        try:
            model[k] = OmegaConf.select(conf, f"model.{k}" if top else k, default=None, throw_on_missing=False)
        except OmegaConfBaseException as exc:  # an interpolation NeMo would fail on too
            return {"no": f"model.{k} unresolved: {type(exc).__name__}"}
        if model[k] == "???":
            model[k] = None
    model = {k: v for k, v in model.items() if v is not None}
    if model.get("restore_from_path") is None and OmegaConf.is_missing(conf.model if top else conf,
                                                                        "restore_from_path"):
        model["restore_from_path"] = "???"
    dims = [model.get(k) for k in ("hidden_size", "num_attention_heads", "kv_channels")]
    if model.get("restore_from_path") not in (None, "") and not any(d is not None for d in dims):
        return {"needs": str(model["restore_from_path"])}
    pe = str(model.get("position_embedding_type") or "learned_absolute").lower()
    if pe not in ("rope", "rotary"):
        return {"rope": False, "pe": pe}
    kv = model.get("kv_channels") or (model["hidden_size"] // model["num_attention_heads"])
    d = int(kv * float(model.get("rotary_percentage", model.get("rotary_percent", 1.0)) or 1.0))
    seq = model.get("encoder_seq_length", model.get("seq_length"))
    return {"rope": True, "d": d, "base": float(model.get("rotary_base") or 10000), "train": seq,
            "target": model.get("max_position_embeddings") or seq,
            "linear": model.get("seq_len_interpolation_factor")}


def ropelaw_reading(path: pathlib.Path) -> dict:
    from ropelaw.errors import UsageError
    from ropelaw.lint.loader import NotARopeConfig, UnreadConfig, load_config

    try:
        cfg = load_config(str(path))
    except UnreadConfig as exc:
        return {"cannot": exc.code, "why": str(exc)}
    except NotARopeConfig as exc:
        return {"skipped": str(exc).split(": ", 1)[-1]}
    except UsageError as exc:
        return {"error": str(exc).split(": ", 1)[-1][:100]}
    g = cfg.layers[0]
    linear = g.params.get("factor").raw if g.scheme.raw == "linear" else None
    return {"d": g.d.raw, "base": float(g.base.raw), "train": cfg.train_len.raw, "target": cfg.target.raw,
            "linear": linear, "dialect": cfg.arch}


def verdict(path: pathlib.Path) -> str:
    theirs, ours = nemo_rope(path), ropelaw_reading(path)
    if "no" in theirs:
        if "cannot" in ours or "error" in ours:
            return "not a model: " + theirs["no"]
        if "skipped" in ours:
            return "not a model: " + theirs["no"]
        return f"misread: NeMo finds no model ({theirs['no']}), ropelaw reads one ({ours.get('dialect')})"
    if "needs" in theirs:
        if ours.get("cannot") == "RV031":
            return "says it cannot: RV031 (the .nemo is named elsewhere)"
        return f"misread: the model is {theirs['needs']!r}, ropelaw: {ours}"
    if not theirs["rope"]:
        return "right: no rotary" if "skipped" in ours else f"misread: NeMo builds no rotary ({theirs['pe']})"
    if "cannot" in ours or "error" in ours:
        return "says it cannot: " + ours.get("cannot", ours.get("error", ""))
    if "skipped" in ours:
        return "misread: skipped: " + ours["skipped"][:80]
    bad = [f"{k} {ours[k]!r} vs {theirs[k]!r}" for k in ("d", "base", "train", "target", "linear")
           if ours[k] != theirs[k]]
    return "misread: " + "; ".join(bad) if bad else "right"


ENTRIES = corpus_entries()


def manifest() -> dict:
    return json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {"files": {}}


def test_every_example_has_a_verdict():
    if not ENTRIES:
        pytest.skip(f"no {CORPUS}/frameworks-examples/SOURCES.tsv (ROPELAW_CORPUS)")
    assert sorted({f"{REPO}@{COMMIT} {p}" for p, _, _ in ENTRIES} ^ set(manifest()["files"])) == []


@pytest.mark.parametrize("path,local,sha", ENTRIES, ids=[e[0] for e in ENTRIES])
def test_nemo_reads_the_example_as_recorded(path, local, sha):
    pytest.importorskip("omegaconf", reason="the CI step 'NeMo' installs omegaconf==2.3.0 beside the suite")
    want = manifest()["files"][f"{REPO}@{COMMIT} {path}"]
    if not local.is_file():
        pytest.skip(f"{REPO}@{COMMIT[:8]} {path} is not under {CORPUS} yet")
    assert hashlib.sha256(local.read_bytes()).hexdigest() == sha == want["sha256"]
    assert verdict(local) == want["verdict"]


def main(argv: list[str]) -> int:
    files, counts = {}, {}
    for path, local, sha in ENTRIES:
        v = verdict(local) if local.is_file() else "not in the corpus yet"
        files[f"{REPO}@{COMMIT} {path}"] = {"sha256": sha, "verdict": v}
        counts[v.split(":")[0]] = counts.get(v.split(":")[0], 0) + 1
        if v.startswith(("misread", "says")) or "-v" in argv:
            print(f"{path}: {v}")
    print(json.dumps(counts, indent=1))
    if "--write" in argv:
        MANIFEST.write_text(json.dumps({"omegaconf": "2.3.0", "repo": REPO, "commit": COMMIT, "files": files},
                                       indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
