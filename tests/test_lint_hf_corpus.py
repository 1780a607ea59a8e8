"""The real corpus: published config.json files and the heldout hub-style set, linted and run.

Workplace rule: files fetched from public repositories are not committed. They live outside the
repository, in ``$ROPELAW_CORPUS`` (default ``<repo>/../shared/corpus``): ``hf/`` holds the files of
``tests/corpus/hf_manifest.json`` (``repo@commit path``), ``heldout-r2/hub/`` those of
``tests/corpus/heldout_hub.json`` (provenance in its ``SOURCES.md``). Each manifest entry records the
sha256 of the file, its reviewed lint result under each transformers semantics (``expect``, overridden
per version by ``expect_by_semantics``) and what each transformers version does with it (``runtime``).

- ``test_real_config`` / ``test_heldout_config``: ropelaw's reading under 4.57.1 and 5.23.0 semantics
  (no transformers needed).
- ``test_*_against_transformers`` (``hf``: CI's first step under 4.57.1, its second under 5.23.0): the
  installed transformers loads the file as users do (``tests/hf_runtime.py``; never with remote code).
  Where it runs, every layer group ropelaw reads has the frequencies and attention factor of the rotary
  transformers builds (float32); where it refuses, ropelaw reports the refusal (RV021); a file whose
  model runs the repository's own code is named (RV023 or a reading of that code ropelaw encodes); a
  file ropelaw finds no RoPE in builds no rotary. Nothing passes silently.

The corpus folder missing is a skip on a developer's machine and a failure in CI (``.ci/run`` sets
``ROPELAW_REQUIRE_CORPUS=1``); an entry whose file is absent skips, naming it.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re

import pytest

from ropelaw.lint.check import lint_config
from ropelaw.lint.dialects import hf
from ropelaw.lint.loader import NotARopeConfig, load_config

REPO = pathlib.Path(__file__).resolve().parents[1]
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", REPO.parent / "shared" / "corpus"))
REQUIRE = os.environ.get("ROPELAW_REQUIRE_CORPUS") == "1"
MANIFEST = json.loads((REPO / "tests" / "corpus" / "hf_manifest.json").read_text())
HELDOUT = json.loads((REPO / "tests" / "corpus" / "heldout_hub.json").read_text())
ENTRIES = MANIFEST["configs"]
HUB = HELDOUT["configs"]
REMOTE = "remote code (auto_map)"


# more corpus roots, searched after ROPELAW_CORPUS (files fetched this round, added to the corpus between rounds)
EXTRA = [pathlib.Path(p) for p in os.environ.get("ROPELAW_CORPUS_EXTRA", "").split(os.pathsep) if p]


def corpus_file(sub: str, entry: dict) -> pathlib.Path:
    folder = CORPUS / sub
    if not folder.is_dir():
        msg = f"real corpus folder {folder} is missing (set ROPELAW_CORPUS; see tests/configs/README.md)"
        if REQUIRE:
            pytest.fail(msg + ": CI requires it (ROPELAW_REQUIRE_CORPUS=1)")
        pytest.skip(msg)
    path = next((p for p in [folder / entry["file"], *(r / sub / entry["file"] for r in EXTRA)] if p.is_file()), None)
    if path is None:
        pytest.skip(f"{entry['file']} not in {folder} yet ({entry.get('repo', '')} {entry.get('source', '')})")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], f"{path} is not the recorded file"
    return path


def expected(entry: dict, semantics: str) -> dict:
    return {**entry["expect"], **entry.get("expect_by_semantics", {}).get(semantics, {})}


def reading(path: pathlib.Path) -> dict:
    try:
        cfg = load_config(str(path))
    except NotARopeConfig as exc:
        return {"not_rope": str(exc).split(": ", 1)[1]}
    r = lint_config(cfg)
    a = r.layers[0]
    s = a.spec
    return {"architecture": cfg.arch, "d": s.d if s else None, "base": s.base if s else None,
            "scheme": s.scheme if s else None, "train_len": s.train_len if s else None, "length": a.length,
            "findings": sorted(f"{f.code} {f.line}:{f.column}" for f in r.findings)}


def test_manifests_name_every_file_with_provenance():
    assert len(ENTRIES) == len({e["file"] for e in ENTRIES}) == 40
    for e in ENTRIES:
        assert len(e["commit"]) == 40 and e["path"].endswith(".json") and "/" in e["repo"]
        assert e["file"] == f"{e['repo'].replace('/', '__')}__{e['path'].replace('/', '__')}"
        assert len(e["sha256"]) == 64 and e["expect"] and set(e["runtime"]) == set(hf.SEMANTICS)
    assert len(HUB) == len({e["file"] for e in HUB}) == 62
    for e in HUB:
        assert e["source"] and len(e["sha256"]) == 64 and set(e["runtime"]) == set(hf.SEMANTICS)


@pytest.mark.parametrize("semantics", hf.SEMANTICS)
@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"][:60] for e in ENTRIES])
def test_real_config(entry, semantics, monkeypatch):
    path = corpus_file("hf", entry)
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", semantics)
    if "not_rope" in expected(entry, semantics):
        with pytest.raises(NotARopeConfig, match=re.escape(expected(entry, semantics)["not_rope"])):
            load_config(str(path))
        return
    assert reading(path) == expected(entry, semantics)


@pytest.mark.parametrize("semantics", hf.SEMANTICS)
@pytest.mark.parametrize("entry", HUB, ids=[e["file"] for e in HUB])
def test_heldout_config(entry, semantics, monkeypatch):
    path = corpus_file("heldout-r2/hub", entry)
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", semantics)
    assert reading(path) == expected(entry, semantics)


# -- per-layer results as transformers runs them: wait for i20-layers' layer groups -----------------------
LAYERED = [e for e in ENTRIES if "layers_as_run" in e]


@pytest.mark.parametrize("entry", LAYERED, ids=[e["file"][:40] for e in LAYERED])
def test_layers_as_transformers_runs_them(entry):
    path = corpus_file("hf", entry)
    truth = entry["layers_as_run"]
    r = lint_config(load_config(str(path)))
    if "every_layer_rope" in truth:  # gpt-oss: one YaRN rotary for the sliding and the full layers
        want = truth["every_layer_rope"]
        for a in r.layers:
            assert a.spec is not None and a.spec.scheme == want["scheme"], (a.label, a.spec)
            assert a.spec.param("factor") == want["factor"]
            assert a.scheme_result.attention_factor == pytest.approx(want["attention_factor"], abs=5e-5)
    if "nope_layers" in truth:  # SmolLM3: every 4th layer applies no rotary
        nope = [a for a in r.layers if "nope" in a.label.lower()]
        assert nope, [a.label for a in r.layers]
        counts = [int(m.group(1)) for a in nope for m in [re.search(r"(\d+) layers", a.label)] if m]
        assert sum(counts) == len(truth["nope_layers"])
        assert sorted(i for a in nope for i in a.group.indices) == truth["nope_layers"]
        assert all(a.spec is None and not a.group.rope for a in nope)


# -- against the installed transformers -----------------------------------------------------------------
def installed_semantics() -> str:
    import hf_runtime as hr

    return hf.SEMANTICS[0] if hr.transformers_version().startswith("4.") else hf.SEMANTICS[1]


def group_table(label: str, tables: dict):
    """The rotary table transformers uses for ropelaw's layer group ``label``: the local one (a module named
    ``*local``, or the ``sliding_attention`` table) for local layers, else the global one; a model with one
    table uses it for every layer."""
    local = label.startswith("local")
    if len(tables) == 1:
        return next(iter(tables.values()))
    for name, table in tables.items():
        if ("local" in name or name.endswith("/sliding_attention")) == local:
            return table
    return None


def check_against_transformers(path: pathlib.Path, entry: dict) -> None:
    import numpy as np

    import hf_runtime as hr

    sem = installed_semantics()
    verdict = entry["runtime"][sem]
    want = expected(entry, sem)
    if verdict.startswith("framework config"):
        return  # not a config.json transformers runs: the framework's own tests cover it
    # load the config and build a one-layer model (the manifest's "runs" means the model builds), keeping
    # every rotary it makes (4.57.1 Gemma 3: two modules)
    o = hr.run_config(json.loads(path.read_text()), forward=False, build=True)
    if verdict.startswith(REMOTE):
        # AutoConfig refuses to run the repository's code unasked; ropelaw names the model (RV023) or has a
        # reading of that code of its own (ChatGLM, InternLM2, Qwen v1: hf.REMOTE_DEFAULTS)
        assert o.raised and "custom code" in o.error, o.error
        assert any(f.startswith("RV023") for f in want.get("findings", ())) or \
            want.get("architecture") in hf.REMOTE_DEFAULTS or "not_rope" in want, want
        return
    if verdict.startswith("refuses"):
        assert o.raised and verdict[len("refuses: "):][:60] in o.error, (verdict, o.error)
        assert any(f.startswith("RV021") for f in want["findings"]), want  # ropelaw says so, as an error
        return
    assert verdict == "runs" and not o.raised, (verdict, o.stage, o.error)
    if "not_rope" in want:
        assert o.rotary is None and hr.rotary_class(o.config) is None  # no RoPE here, none there
        return
    tables = hr.model_rotary_tables(o.model)
    o.model = None  # free it before the next file
    if not tables:  # GPT-J / CodeGen: base 10,000 over rotary_dim, built in the attention module
        assert want["architecture"] in hf.FIXED_BASE and want["base"] == hf.FIXED_BASE[want["architecture"]]
        cfg = json.loads(path.read_text())
        assert want["d"] == cfg["rotary_dim"]
        return
    from ropelaw.schemes import apply_scheme

    r = lint_config(load_config(str(path)))
    for a in r.layers:
        if a.group is not None and not a.group.rope:
            continue  # NoPE layers: no rotary to compare (tests/test_hf_layers.py checks them layer by layer)
        table = group_table(a.label, tables)
        assert table is not None, (a.label, list(tables))
        inv, att = table
        if a.spec is None:
            pytest.fail(f"{path.name}: ropelaw could not analyse {a.label} ({a.error}); transformers runs it")
        ours = apply_scheme(a.spec, seq_len=None)
        mine = np.asarray(ours.inv_freq)
        assert mine.shape == inv.shape, (a.label, mine.shape, inv.shape)
        assert np.allclose(mine, inv, rtol=2e-6, atol=0), (a.label, float(np.max(np.abs(mine / inv - 1))))
        assert abs(ours.attention_factor - att) <= 2e-6 * att, (a.label, ours.attention_factor, att)


def known_defect(entry: dict) -> list:
    """A strict xfail for an entry whose layers ropelaw still reads wrong (``known_defect`` names the issue)."""
    d = entry.get("known_defect")
    return [pytest.mark.xfail(strict=True, reason=f"{d['issue']}: {d['note']}")] if d else []


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("entry", [pytest.param(e, marks=known_defect(e), id=e["file"][:60]) for e in ENTRIES])
def test_real_config_against_transformers(entry, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    path = corpus_file("hf", entry)
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", installed_semantics())
    check_against_transformers(path, entry)


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("entry", HUB, ids=[e["file"] for e in HUB])
def test_heldout_config_against_transformers(entry, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    path = corpus_file("heldout-r2/hub", entry)
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", installed_semantics())
    check_against_transformers(path, entry)


# the configs written here in the layouts transformers treats differently (tests/fixtures/hf_runtime/): what
# each version does, established by running it (tests/test_severity_parity.py has their shrunk twins)
FIXTURES = {
    "hunyuan-ocr.json": {"4.57.1": "refuses: ValueError: The checkpoint you are trying to load has model type "
                                   "`hunyuan_vl`", "5.23.0": "runs"},
    "llama-4-scout.json": {"4.57.1": "runs", "5.23.0": "runs"},
    "llama-4-flattened.json": {"4.57.1": "runs", "5.23.0": "refuses: AttributeError: 'Llama4Config' object has no "
                                                           "attribute 'max_position_embeddings'"},
    "qwen2.5-vl-rope-type-mrope.json": {"4.57.1": "refuses: KeyError: 'mrope'", "5.23.0": "runs"},
    # Devstral-Small-2's text model as a flat ministral3 file (its query scale: RL106, tests/test_hf_layer_kinds.py)
    "ministral3-query-scale.json": {"4.57.1": "refuses: ValueError: The checkpoint you are trying to load has model "
                                              "type `ministral3`", "5.23.0": "runs"},
}


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_runtime_fixture_against_transformers(name, monkeypatch):
    """HunyuanOCR's base 10000 * 1000^(128/126) = 1.11588e7 and Llama 4 Scout's llama3 frequencies (low = high
    = 1) are transformers' own, in the version that runs each file; where a version refuses, ropelaw says so."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", installed_semantics())
    path = REPO / "tests" / "fixtures" / "hf_runtime" / name
    check_against_transformers(path, {"file": name, "expect": reading(path), "runtime": FIXTURES[name]})


# -- tests/configs/README.md's table of the real corpus, generated from the manifest ----------------------
BEGIN = "<!-- real-corpus: generated by `python tests/test_lint_hf_corpus.py` from tests/corpus/hf_manifest.json -->"
END = "<!-- /real-corpus -->"


def _result(e: dict, semantics: str) -> str:
    x = expected(e, semantics)
    if "not_rope" in x:
        return f"not RoPE: {x['not_rope']}"
    base = f"{x['base']:g}" if x["base"] is not None else "-"
    return (f"{x['architecture']}: d={x['d']}, base {base}, {x['scheme']}, trained {x['train_len']:,}, length "
            f"{x['length']:,}; {', '.join(x['findings']) or 'no findings'}")


def corpus_table() -> str:
    rows = ["| family | repo@commit path | transformers 4.57.1 / 5.23.0 | reviewed result (4.57.1 semantics; "
            "5.23.0 where it differs) |", "|---|---|---|---|"]
    for e in ENTRIES:
        runtime = " / ".join(e["runtime"][v].split(":")[0] if e["runtime"][v].startswith("refuses") else
                             ("remote code" if e["runtime"][v].startswith(REMOTE) else e["runtime"][v])
                             for v in hf.SEMANTICS)
        res = _result(e, hf.SEMANTICS[0])
        if e.get("expect_by_semantics"):
            res += f"; under 5.23.0: {_result(e, hf.SEMANTICS[1])}"
        if e.get("layers_as_run"):
            res += f" (per layer as transformers runs them: {e['layers_as_run']['source']})"
        rows.append(f"| {e['family']} | `{e['repo']}@{e['commit'][:12]}` `{e['path']}` | {runtime} | {res} |")
    return "\n".join(rows)


def test_configs_readme_table_is_the_manifest():
    text = (REPO / "tests" / "configs" / "README.md").read_text(encoding="utf-8")
    assert BEGIN in text and END in text, "tests/configs/README.md lacks the real-corpus table markers"
    assert text.split(BEGIN, 1)[1].split(END, 1)[0].strip() == corpus_table(), \
        "regenerate: python tests/test_lint_hf_corpus.py"


if __name__ == "__main__":  # rewrite tests/configs/README.md's table
    readme = REPO / "tests" / "configs" / "README.md"
    text = readme.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    readme.write_text(f"{head}{BEGIN}\n{corpus_table()}\n{END}{rest.split(END, 1)[1]}", encoding="utf-8")
