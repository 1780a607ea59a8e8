"""Shared by the framework differentials (``test_diff_*.py``): the example configs of a framework's repository
in the corpus, its registry package unpacked, a fake Hugging Face cache of real config.json files, and ropelaw's
reading of a config reduced to what is compared with the framework's own.

The packages are the wheels ``pip download --no-deps -d $ROPELAW_FRAMEWORK_DL/<name> <name>==<version>`` leaves
(``.ci/run`` downloads them; a test whose wheel is absent skips, naming the command). Nothing here imports a
framework's package ``__init__``: each differential loads the modules it needs from the unpacked wheel, with the
stubs it states.
"""

from __future__ import annotations

import csv
import glob
import hashlib
import json
import math
import os
import pathlib
import sys
import types
import zipfile
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus"))
# files fetched this round, at their corpus paths, until they are added to the corpus (e.g. /work/shared-new/...)
CORPUS_NEW = pathlib.Path(os.environ["ROPELAW_CORPUS_NEW"]) if os.environ.get("ROPELAW_CORPUS_NEW") else None
EXAMPLES = CORPUS / "frameworks-examples"
DL = pathlib.Path(os.environ.get("ROPELAW_FRAMEWORK_DL", ROOT / ".dl"))
HUB_MODELS = json.loads((ROOT / "tests" / "corpus" / "hub_models.json").read_text())["models"]


def example_files(framework: str) -> list[str]:
    """Every example and recipe config of ``framework``'s repository at one commit that
    ``frameworks-examples/SOURCES.tsv`` lists, as paths in the repository."""
    return sorted(r["path"] for r in _sources() if r["framework"] == framework)


def _sources() -> list[dict]:
    path = EXAMPLES / "SOURCES.tsv"
    if not path.is_file():
        pytest.skip(f"no {path} (ROPELAW_CORPUS)")
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def source_row(framework: str, rel: str) -> dict:
    return next(r for r in _sources() if r["framework"] == framework and r["path"] == rel)


def example(framework: str, rel: str) -> pathlib.Path:
    """The corpus copy of one example (``<framework>/<path>``, or where SOURCES.tsv says it already was: "already
    in corpus at X"), its sha256 checked against SOURCES.tsv; skip (naming it) when absent."""
    note = source_row(framework, rel)["note"]
    path = (CORPUS / note.split(" at ", 1)[1].strip() if note.startswith("already in corpus at ")
            else EXAMPLES / framework / rel)
    if not path.is_file():
        if os.environ.get("ROPELAW_REQUIRE_CORPUS"):
            pytest.fail(f"{path} is missing (ROPELAW_REQUIRE_CORPUS is set)")
        pytest.skip(f"{framework}/{rel} is not in {EXAMPLES} yet")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == source_row(framework, rel)["sha256"], rel
    return path


def unpacked(tmp_path_factory, package: str, version: str) -> pathlib.Path:
    """The wheel of ``package==version`` unpacked once per session; skip naming the download command when absent."""
    norm = package.replace("-", "_")
    hits = sorted(glob.glob(str(DL / "**" / f"{norm}-{version}-*.whl"), recursive=True))
    if not hits:
        pytest.skip(f"no {package}=={version} wheel under {DL} (pip download --no-deps -d {DL}/{package} "
                    f"{package}=={version}; ROPELAW_FRAMEWORK_DL)")
    out = tmp_path_factory.getbasetemp() / f"{package}-{version}"
    if not out.is_dir():
        zipfile.ZipFile(hits[-1]).extractall(out)
    return out


def namespace(name: str, path: pathlib.Path | None = None) -> types.ModuleType:
    """An empty package ``name`` in sys.modules (its ``__init__`` is not run), whose submodules load from ``path``
    (with a module spec: ``importlib.util.find_spec`` of a module without one raises, and transformers 5 asks)."""
    import importlib.machinery

    mod = types.ModuleType(name)
    mod.__path__ = [str(path)] if path is not None else []
    mod.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    mod.__spec__.submodule_search_locations = mod.__path__
    sys.modules[name] = mod
    return mod


def transformers_rotary(config) -> tuple[list, float]:
    """``(inverse frequencies, attention factor)`` of the rotary transformers builds for the text model of
    ``config``: its ``*RotaryEmbedding`` class (tests/hf_runtime.py) built from that config; of a model with a
    rotary per layer type (5.x Gemma 3), the full-attention layers'."""
    from hf_runtime import rotary_class, rotary_tables, text_config

    rotary = rotary_class(config)(config=text_config(config))
    tables = rotary_tables(rotary)
    key = "all" if "all" in tables else "full_attention" if "full_attention" in tables else sorted(tables)[0]
    inv, attention = tables[key]
    return [float(x) for x in inv], float(attention)


def hub_model_file(repo_id: str) -> pathlib.Path | None:
    """The real config.json of ``repo_id`` (tests/corpus/hub_models.json) in the corpus or ROPELAW_CORPUS_NEW, or
    None."""
    e = HUB_MODELS[repo_id]
    for root in (CORPUS, CORPUS_NEW):
        if root is not None and (root / e["file"]).is_file():
            return root / e["file"]
    return None


def fake_hub(root: pathlib.Path) -> tuple[pathlib.Path, list[str]]:
    """A Hugging Face cache under ``root`` holding, at ``refs/main``, the real config.json of every model of
    tests/corpus/hub_models.json whose file is in the corpus: ``(cache, models it holds)``."""
    cache = root / "hub"
    held = []
    for repo_id, e in sorted(HUB_MODELS.items()):
        path = hub_model_file(repo_id)
        if path is None:
            continue
        data = path.read_bytes()
        assert hashlib.sha256(data).hexdigest() == e["sha256"], repo_id
        commit = hashlib.sha1(repo_id.encode()).hexdigest()  # a stand-in commit id per repository
        repo = cache / ("models--" + repo_id.replace("/", "--"))
        (repo / "snapshots" / commit).mkdir(parents=True)
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text(commit)
        (repo / "snapshots" / commit / "config.json").write_bytes(data)
        held.append(repo_id)
    return cache, held


def offline_hub(monkeypatch, cache: pathlib.Path) -> None:
    """The Hugging Face cache ``cache`` for this process and for ropelaw, without the network: huggingface_hub and
    transformers read ``HF_HUB_CACHE`` / ``HF_HUB_OFFLINE`` once, at import, so their constants are set here too
    (what the variables set in a fresh process; transformers 4.x: ``utils/hub.py`` ``TRANSFORMERS_CACHE``,
    ``_is_offline_mode``)."""
    import huggingface_hub.constants as hc

    for var in ("TRANSFORMERS_CACHE", "PYTORCH_TRANSFORMERS_CACHE", "PYTORCH_PRETRAINED_BERT_CACHE", "HF_HOME",
                "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(hc, "HF_HUB_OFFLINE", True)
    try:
        import transformers.utils.hub as th
    except ImportError:
        return
    for name, value in (("TRANSFORMERS_CACHE", str(cache)), ("_is_offline_mode", True)):
        if hasattr(th, name):
            monkeypatch.setattr(th, name, value)


def refused_by_transformers(config, r) -> bool:
    """Whether the installed transformers cannot build the rotary of ``config`` (4.57.1 has no ``rope_type``
    'mrope' for a Qwen2.5-VL file that writes it so); then ropelaw must say so of the model's own file (RV021
    runtime-refuses-config, reported at that file's line)."""
    try:
        transformers_rotary(config)
    except KeyError as exc:
        refusals = [f for f in r.findings if f.code == "RV021" and f.path == r.config.model.file]
        assert refusals, f"transformers raised KeyError {exc} building the rotary; ropelaw did not report RV021"
        return True
    return False


@dataclass(frozen=True)
class Rotary:
    """A rotary as built: its inverse frequencies (rad/token, per pair) and attention factor, with the lengths."""

    d: int
    base: float
    scheme: str
    inv_freq: tuple
    attention: float
    train: int | None = None
    tune: int | None = None
    target: int | None = None


def ropelaw_rotary(r, layer: int = 0) -> Rotary:
    """ropelaw's reading of a linted config (:class:`~ropelaw.lint.check.LintResult`), layer group ``layer``."""
    a = r.layers[layer]
    s = a.spec
    tune = r.config.tune_len.number() if r.config.tune_len is not None else None
    return Rotary(s.d, s.base, s.scheme, tuple(float(x) for x in a.scheme_result.inv_freq),
                  float(a.scheme_result.attention_factor), s.train_len, int(tune) if tune is not None else None,
                  int(r.config.target.number()) if r.config.target.number() is not None else None)


def same_frequencies(theirs, ours, rel: float = 1e-6) -> None:
    """The framework's inverse frequencies (float32, as it builds them) equal ropelaw's float64 ones to float32's
    precision: 2^-24 = 6e-8 relative per rounding, and a scheme's frequency takes up to about eight roundings
    (Llama 3.1 bands: the wavelength, the smoothing ratio, the blend; the last pairs measured 4.3e-7 apart)."""
    assert len(theirs) == len(ours), (len(theirs), len(ours))
    for j, (x, y) in enumerate(zip(theirs, ours, strict=True)):
        assert math.isclose(float(x), float(y), rel_tol=rel), (j, float(x), float(y))
