"""Every real config.json through transformers' own forward, shrunk in place, against ropelaw's reading.

The files: every published config.json of the real corpus (``$ROPELAW_CORPUS``: ``hf/``, ``heldout-r2/hub/``,
``heldout-r3/hub/``) and of the project's manifests, listed with their sha256 in ``tests/corpus/hf_files.json``
(provenance: ``hf_manifest.json``, ``heldout_hub.json``, ``heldout-r3/SOURCES.tsv``). An entry whose file is
not in the corpus yet skips, naming it (``$ROPELAW_CORPUS_EXTRA``: more corpus roots, searched after it).

Each file is loaded as users load it and its language model shrunk in place (two heads of its own head dim,
small vocabulary, MLPs and expert counts; every layer, per-layer list and RoPE key kept:
``ropelaw.lint.layers.shrunk``), built, and run on CPU with hooks recording what every layer applies:
no attention (Mamba, convolution, linear attention), NoPE, or RoPE with its frequencies and attention factor,
and the span it attends. Three forwards: 24 tokens at positions 0-23 with every window and chunk
longer than that made 5 and 8 (so the spans show; ropelaw reads the same change), then at the far positions
(just past the original length where the file has one, else up to max_position_embeddings: LongRoPE's long
factors, Phi-3.5-MoE's long mscale) against ropelaw's reading of the file
itself at that length (``tests/hf_compare.py``).

The verdict per file and transformers version (recorded in ``hf_files.json``, listed in
docs/lint/huggingface.md): ``right`` (every layer agrees), ``differs`` (a layer differs and ropelaw says it
does not model it or the runtime refuses: RV021 / RV022 / RV024 / RV025 / RV008, or an error finding left the
group unanalysed), ``silent`` (a layer differs, nothing says so: a defect; kept as a strict xfail naming the
issue until fixed), ``false`` (ropelaw's finding says the runtime refuses a file it builds), ``refused``
(transformers does not load or build it: an unknown type, remote code, a refused value; or its forward raises;
ropelaw must say so with an error: RV021 or RV023, or a value rule's error naming the followed version in
``data.refused_by``), ``not-rope`` (ropelaw reads no RoPE, and the model has no rotary).

Runs in its own CI step under both transformers versions (``.ci/run``, ``ROPELAW_HF_FILES=1``); about
two CPU-minutes each. ``python tests/test_hf_files.py --record`` rewrites the installed version's verdicts;
``--docs`` the block of docs/lint/huggingface.md.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sys
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
import hf_compare  # noqa: E402

MANIFEST_PATH = REPO / "tests" / "corpus" / "hf_files.json"
MANIFEST = json.loads(MANIFEST_PATH.read_text())
ENTRIES = MANIFEST["files"]
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", REPO.parent / "shared" / "corpus"))
EXTRA = [pathlib.Path(p) for p in os.environ.get("ROPELAW_CORPUS_EXTRA", "").split(os.pathsep) if p]
FULL = os.environ.get("ROPELAW_HF_FILES") == "1"
ACKNOWLEDGED = hf_compare.ACKNOWLEDGED  # say "not modelled" / "refused"
VERDICTS = ("right", "differs", "silent", "false", "refused", "not-rope")
RESULTS: dict = {}  # "<set>/<file>" -> (verdict, detail), for the summary


def corpus_path(entry: dict) -> pathlib.Path | None:
    """The entry's file in the corpus (or an extra root), its sha256 checked; None when absent."""
    for root in [CORPUS, *EXTRA]:
        path = root / entry["set"] / entry["file"]
        if path.is_file():
            assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], f"{path} is not the recorded file"
            return path
    return None


def installed() -> str:
    from ropelaw.lint.dialects import hf

    import transformers

    return hf.SEMANTICS[0] if transformers.__version__.startswith("4.") else hf.SEMANTICS[1]


# -----------------------------------------------------------------------------------------
# ropelaw's reading
# -----------------------------------------------------------------------------------------
def ropelaw_reading(data: dict, path: str) -> dict:
    """``{"result": lint JSON or None, "codes": {code: severity}, "findings": [...], "not_rope": why or None}``
    of ``data`` (the file's mapping, or the file's with small spans) as ``ropelaw lint`` reads it."""
    from ropelaw.lint.check import lint_config
    from ropelaw.lint.loader import NotARopeConfig, UnreadConfig, load_mapping

    try:
        result = lint_config(load_mapping(data, path=path)).setup()
    except UnreadConfig as exc:
        return {"result": None, "codes": {exc.code: "error"}, "findings": [str(exc)], "not_rope": None}
    except NotARopeConfig as exc:
        return {"result": None, "codes": {}, "findings": [], "not_rope": str(exc)}
    codes: dict = {}
    for f in result["findings"]:
        if codes.get(f["code"]) != "error":
            codes[f["code"]] = f["severity"]
    followed = (result.get("semantics") or "").removeprefix("transformers ")
    refused = sorted({f["code"] for f in result["findings"] if f["severity"] == "error"
                      and followed in (f.get("data") or {}).get("refused_by", {})})
    return {"result": result, "codes": codes, "findings": [f"{f['code']} {f['severity']}: {f['message'][:160]}"
                                                            for f in result["findings"]], "not_rope": None,
            "refused": refused}


def _errors(reading: dict, *codes: str) -> list[str]:
    return [c for c in codes if reading["codes"].get(c) == "error"]


def runtime_fails(near) -> bool:
    """transformers refuses the config, cannot build the model, or its forward raises (a size mismatch: what RV003
    says of odd rotary dims), as ``shrunk.run_file`` saw it."""
    return bool(near.refused) or (near.problem or "").startswith("forward fails")


def said_refused(reading: dict) -> list[str]:
    """The error findings of ``reading`` that say the followed transformers does not build the config: RV021 /
    RV023 / RV030 (ropelaw read nothing of it, and says so), and a value rule's error whose ``data.refused_by``
    names the followed version (rules/runtime.py: RV021 is for the refusals no value rule reports)."""
    return _errors(reading, "RV021", "RV023", "RV030") + [c for c in reading.get("refused", ()) if
                                                          c not in ("RV021", "RV023", "RV030")]


# -----------------------------------------------------------------------------------------
# the differential of one file
# -----------------------------------------------------------------------------------------
def differential(path: pathlib.Path) -> tuple[str, str]:
    """``(verdict, detail)`` of one file under the installed transformers (see the module docstring)."""
    from ropelaw.lint.layers import probes, shrunk

    data = json.loads(path.read_text())
    real = ropelaw_reading(data, str(path))
    near = shrunk.run_file(data)
    if real["not_rope"] is not None:  # ropelaw reads no RoPE (a skip): the model must have none either
        rotates = near.probe is not None and any(o.rope is not None for o in near.probe.layers)
        if near.rotaries or rotates:
            return "silent", f"ropelaw reads no RoPE ({real['not_rope']}); the model has {near.rotaries}"
        return "not-rope", real["not_rope"].split(": ", 1)[-1] + (f" (transformers: {near.refused[:80]})"
                                                                   if near.refused else "")
    said = said_refused(real)
    if said and runtime_fails(near):
        return "refused", f"{said}; transformers: {(near.refused or near.problem)[:140]}"
    if near.refused:
        return "silent", f"transformers refuses it ({near.refused[:140]}); ropelaw: {sorted(real['codes']) or 'ok'}"
    if said and not near.problem:  # a shrunk model that did not build or run is not "transformers builds it"
        return "false", f"transformers builds it ({near.model_type}); ropelaw: {said} ({real['findings'][:2]})"
    if near.problem:
        return "unobserved", near.problem
    small, changed = shrunk.with_small_spans(data)
    runs = []  # (run, ropelaw's reading of the same mapping, sequence length, compare spans)
    if changed:
        spans = shrunk.run_file(small)
        if spans.problem or spans.refused:
            return "unobserved", f"with small windows: {spans.problem or spans.refused}"
        runs.append((spans, ropelaw_reading(small, str(path)), probes.LENGTH, True))
    else:
        runs.append((near, real, probes.LENGTH, True))
    end = shrunk.far_end(near)
    if end and end > probes.LENGTH:
        far = shrunk.run_file(data, offset=end - probes.LENGTH)
        if far.problem or far.refused:
            return "unobserved", f"at positions {end - probes.LENGTH:,}-{end - 1:,}: {far.problem or far.refused}"
        runs.append((far, real, end, False))
    verdict, codes, diffs = runs_verdict(near, runs, real, data)
    if verdict == "differs":
        return "differs", f"{codes}: {diffs[0]}"
    return verdict, "; ".join(diffs[:3])


def runs_verdict(near, runs: list, real: dict, data: dict) -> tuple[str, list[str], list[str]]:
    """``(verdict, codes, differences)`` of the forwards ``runs`` (each ``(run, ropelaw's reading of the mapping it
    ran, sequence length, compare spans)``) against ropelaw's readings, ``real`` its reading of the file itself and
    ``near`` the file's forward at positions 0-23: every run's probe layers against its reading
    (``hf_compare.compare``; a reading with no result: "ropelaw analyses nothing") and the query scale
    (:func:`query_scale_differences`). ``right`` (no difference), ``differs`` (``codes``, sorted: the findings of
    :data:`ACKNOWLEDGED` ``real`` holds, and "error, not analysed" where an error finding left a RoPE group without
    a spec) or ``silent`` (nothing says so). The one verdict of this differential and of scripts/hf_top_keys.py."""
    import hf_compare

    from ropelaw.lint.layers import probes

    diffs = query_scale_differences(near, runs, real, data)
    for run, reading, seq_len, spans in runs:
        if reading["result"] is None:
            diffs.append(f"ropelaw analyses nothing ({reading['findings'][:1]})")
            continue
        diffs += hf_compare.compare(run.probe.layers, reading["result"], seq_len=seq_len, length=probes.LENGTH,
                                    span=spans)
    if not diffs:
        return "right", [], []
    codes = set(real["codes"]) & ACKNOWLEDGED
    groups = real["result"]["layers"] if real["result"] else []
    if any(g.get("spec") is None and g.get("rope", True) for g in groups) and \
            any(s == "error" and c.startswith("RV") for c, s in real["codes"].items()):
        codes.add("error, not analysed")
    return ("differs" if codes else "silent"), sorted(codes), diffs


def query_scale_differences(near, runs: list, real: dict, data: dict | None = None) -> list[str]:
    """Where ropelaw models a position-dependent query scale (``query_scale`` of the lint JSON: RL106), the first
    attention layer's query norms at the far positions over those at 0-23 (same tokens; the probe's identity re-run:
    the scale without the rotary) against ropelaw's scale at each far position (its value at position 0-23 is 1:
    the first step is at the original length). Relative 1e-5: float32 queries and norms."""
    from ropelaw.lint.rules.layers import llama4_query_scale

    qs = real["result"].get("query_scale") if real["result"] else None
    if qs and qs.get("position") == "cache position" and data is not None:
        return cached_query_scale_differences(data, qs)
    far = next((r for r, _, seq_len, spans in runs if not spans), None)
    if not qs or far is None:
        return []
    i = next((o.index for o in near.probe.layers if o.query_norm is not None and o.span != "none"), None)
    if i is None or far.probe.layers[i].query_norm is None:
        return [f"query scale: the forward's query norms were not observed (layer {i})"]
    a, b = near.probe.layers[i].query_norm, far.probe.layers[i].query_norm
    end = next(seq_len for r, _, seq_len, spans in runs if not spans)
    out = []
    for t, (x, y) in enumerate(zip(a, b, strict=True)):
        pos = end - len(b) + t
        want = llama4_query_scale(qs["beta"], qs["original"], pos + 1)
        if abs((y / x) / want - 1) > 1e-5:
            out.append(f"layer {i}: query scale {y / x:.6f} at position {pos:,}, ropelaw {want:.6f}")
            break
    return out


def cached_query_scale_differences(data: dict, qs: dict) -> list[str]:
    """Llama 4's attention temperature tuning follows the cache position, which the probe's far forward
    (``position_ids``, no cache) does not move: every attention layer's query scale over 24 tokens after a cache of
    ``original - 12`` zero tokens (the first step inside them; ``hf_compare.cached_query_scales``) against ropelaw's
    (``query_scale``: its formula on the layers it names, 1 on the others). Relative 1e-5: float32 norms."""
    import hf_compare

    from ropelaw.lint.rules.layers import llama4_query_scale

    offset = max(qs["original"] - qs["shift"] - 12, 0)
    scaled = set(qs["layers"] or [])
    for i, (got, _) in sorted(hf_compare.cached_query_scales(data, offset).items()):
        for t, g in enumerate(got):
            want = llama4_query_scale(qs["beta"], qs["original"], offset + t + 1, qs["shift"], True) \
                if i in scaled else 1.0
            if g == g and abs(g / want - 1) > 1e-5:  # g != g: a pad token's zero query at that position
                return [f"layer {i}: query scale {g:.6f} at cache position {offset + t:,}, ropelaw {want:.6f}"]
    return []


# -----------------------------------------------------------------------------------------
# the tests
# -----------------------------------------------------------------------------------------
def _marks(entry: dict) -> list:
    want = entry.get("verdict", {})
    notes = {v: w for v, w in want.items() if w.get("verdict") == "silent"}
    if not notes:
        return []
    # strict: the day ropelaw reads it right, the test fails until the verdict is recorded again
    return [pytest.mark.xfail(condition=f"installed_version() in {sorted(notes)!r}", strict=True,
                              reason="; ".join(f"{v}: {w.get('issue', '')} {w.get('note', '')}" for v,
                                               w in notes.items()))]


def installed_version() -> str | None:
    try:
        return installed()
    except ImportError:
        return None


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.skipif(not FULL, reason="the differential over real files is its own CI step (ROPELAW_HF_FILES=1)")
@pytest.mark.parametrize("entry", [pytest.param(e, marks=_marks(e), id=f"{e['set']}/{e['file'][:70]}")
                                   for e in ENTRIES])
def test_real_file_as_transformers_runs_it(entry, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import torch

    torch.set_num_threads(1)
    path = corpus_path(entry)
    if path is None:
        pytest.skip(f"{entry['set']}/{entry['file']} not in the corpus yet ({entry.get('source', '')})")
    version = installed()
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", version)
    start = time.process_time()
    verdict, detail = differential(path)
    RESULTS[f"{entry['set']}/{entry['file']}"] = (verdict, detail, time.process_time() - start)
    assert verdict != "silent", f"ropelaw silently differs from transformers {version}: {detail}"
    assert verdict != "unobserved", f"the harness could not observe it: {detail}"
    want = entry.get("verdict", {}).get(version, {})
    assert verdict == want.get("verdict"), (f"recorded {want.get('verdict')!r}, now {verdict!r} ({detail}): check it, "
                                            f"then `python tests/test_hf_files.py --record`")


def test_every_real_file_is_listed():
    """Every published config.json of the corpus and of the manifests is in the differential's list."""
    listed = {(e["set"], e["file"]) for e in ENTRIES}
    assert len(listed) == len(ENTRIES)
    hf_manifest = json.loads((REPO / "tests" / "corpus" / "hf_manifest.json").read_text())["configs"]
    heldout = json.loads((REPO / "tests" / "corpus" / "heldout_hub.json").read_text())["configs"]
    want = {("hf", e["file"]) for e in hf_manifest} | \
        {("heldout-r2/hub", e["file"]) for e in heldout if e["file"].endswith(".json")}
    for sub in ("hf", "heldout-r2/hub", "heldout-r3/hub"):
        if (CORPUS / sub).is_dir():
            want |= {(sub, p.name) for p in (CORPUS / sub).glob("*.json")}
    assert want <= listed, sorted(want - listed)
    for e in ENTRIES:
        assert len(e["sha256"]) == 64 and e["source"], e


def summary() -> list[str]:
    """The lines the terminal summary prints (tests/conftest.py)."""
    if not RESULTS:
        return []
    counts = {v: 0 for v in (*VERDICTS, "unobserved")}
    for verdict, _, _ in RESULTS.values():
        counts[verdict] += 1
    cpu = sum(t for _, _, t in RESULTS.values())
    lines = [f"[real files through transformers {installed()}] {len(RESULTS)} files, {cpu:.0f} CPU-s: "
             + ", ".join(f"{k} {n}" for k, n in counts.items())]
    if os.environ.get("ROPELAW_HF_FILES_VERBOSE"):
        lines += [f"  {v:9} {k}: {d}" for k, (v, d, _) in sorted(RESULTS.items())]
    return lines


# -----------------------------------------------------------------------------------------
# the docs block (docs/lint/huggingface.md), from the recorded verdicts
# -----------------------------------------------------------------------------------------
DOCS = REPO / "docs" / "lint" / "huggingface.md"
BEGIN, END = ("<!-- real-files: generated by `python tests/test_hf_files.py --docs` from tests/corpus/hf_files.json; "
              "do not edit -->"), "<!-- /real-files -->"
LABELS = {"right": "right", "differs": "differs and says so", "silent": "silently wrong", "false": "false finding",
          "refused": "refused (both agree)", "not-rope": "not RoPE (both agree)", "unobserved": "not observed"}


def docs_block() -> str:
    """The table of verdicts per transformers version and the files that are not simply right."""
    from ropelaw.lint.dialects import hf

    lines = ["| transformers | files | " + " | ".join(LABELS[v] for v in (*VERDICTS, "unobserved")) + " |",
             "|---|---|" + "---|" * (len(VERDICTS) + 1)]
    for version in hf.SEMANTICS:
        got = [e["verdict"][version]["verdict"] for e in ENTRIES if version in e.get("verdict", {})]
        lines.append(f"| {version} | {len(got)} | " + " | ".join(str(got.count(v)) for v in (*VERDICTS, "unobserved"))
                     + " |")
    lines += ["", '<details markdown="1"><summary>Every file that is not simply right, per transformers version, '
                  'with what the differential found</summary>']
    for version in hf.SEMANTICS:
        rows = [(e["verdict"][version], e) for e in ENTRIES if e.get("verdict", {}).get(version, {}).get("verdict")
                not in (None, "right")]
        lines += ["", f"**transformers {version}**:", ""]
        for v, e in sorted(rows, key=lambda x: (VERDICTS.index(x[0]["verdict"]) if x[0]["verdict"] in VERDICTS else 9,
                                                 x[1]["set"], x[1]["file"])):
            issue = f" ({v['issue']})" if v.get("issue") else ""
            detail = v.get("detail", "").replace("|", "/").replace("\n", " ")
            lines.append(f"- {LABELS.get(v['verdict'], v['verdict'])}{issue}: `{e['set']}/{e['file']}`: {detail[:220]}")
    lines += ["", "</details>"]
    return "\n".join(lines)


def test_docs_block_is_fresh():
    text = DOCS.read_text(encoding="utf-8")
    assert BEGIN in text and END in text, f"{DOCS} lacks the real-files block"
    block = text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n")
    assert block == docs_block(), "regenerate: python tests/test_hf_files.py --docs"


def write_docs() -> None:
    text = DOCS.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    DOCS.write_text(f"{head}{BEGIN}\n{docs_block()}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", action="store_true", help="rewrite the installed version's verdicts")
    ap.add_argument("--docs", action="store_true", help="rewrite the block of docs/lint/huggingface.md")
    ap.add_argument("--only", default="", help="with --record: only the files whose name holds this")
    args = ap.parse_args()
    if args.docs:
        write_docs()
    if args.record:
        import torch

        torch.set_num_threads(1)
        version = installed()
        os.environ["ROPELAW_HF_SEMANTICS"] = version
        for e in (e for e in ENTRIES if args.only in e["file"]):
            path = corpus_path(e)
            if path is None:
                print(f"absent  {e['set']}/{e['file']}")
                continue
            t = time.process_time()
            verdict, detail = differential(path)
            old = e.setdefault("verdict", {}).get(version, {})
            e["verdict"][version] = {"verdict": verdict, "detail": detail,
                                     **({k: old[k] for k in ("issue", "note") if k in old}
                                        if verdict == "silent" else {})}
            print(f"{verdict:9} {time.process_time() - t:5.1f}s {e['set']}/{e['file'][:70]}: {detail[:150]}")
        MANIFEST_PATH.write_text(json.dumps(MANIFEST, indent=1, ensure_ascii=False) + "\n")
