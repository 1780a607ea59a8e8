"""Markdown for audits/: one report per target and the summary table in audits/README.md.

Reads only ``audits/reports/<target>.json`` (written by ``run.py``), so ``python audits/run.py
--render-only`` rebuilds every page without running an audit. Verdicts per finding come from the
runtime measurements of the same class (when the runtime audit ran it) and from ``notes.py``
(what reading the code showed).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import catalog
from ropelaw.safeio import write_atomic  # every report written whole or not at all
import notes

# scenario names in the order reports show them: "autocast" (CPU policy) in reports made before the
# auditor emulated CUDA's policy; "autocast-cuda" / "autocast-cpu" since
SCEN = ("cast", "default", "autocast-cuda", "autocast-cpu", "autocast")
AUTOCAST = ("autocast-cuda", "autocast-cpu", "autocast")
DRIFT_TOL = 1e-5  # the runtime audit's own threshold for "frequencies rounded"


# --------------------------------------------------------------------------- formatting


def pct(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 1.0:
        return "100%"
    if x >= 0.9995:
        return f"{100 * x:.2f}%"
    return f"{100 * x:.2f}%" if x >= 0.0001 else f"{100 * x:.4f}%"


def klen(n: int) -> str:
    return f"{n // 1024}K" if n % 1024 == 0 else f"{n:,}"


def g3(x: float | None) -> str:
    if x is None:
        return "-"
    if x == 0:
        return "0"
    return f"{x:.3g}" if 1e-3 <= abs(x) < 1e4 else f"{x:.2e}"


def esc(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


# --------------------------------------------------------------------------- data access


class Runtime:
    """Runtime rows of one target: (model, dtype, length, scenario) -> scenario dict."""

    def __init__(self, results: list[dict[str, Any]]):
        self.rows: dict[tuple[str, str, int, str], dict[str, Any]] = {}
        self.meta: dict[str, dict[str, Any]] = {}      # model -> audit header (class, convention, ...)
        self.errors: dict[str, list[str]] = defaultdict(list)
        self.findings: dict[str, Counter] = defaultdict(Counter)
        self.models: list[str] = []
        for r in results:
            if r.get("kind") not in ("hf", "module"):
                continue
            m = r["model"]
            if m not in self.models:
                self.models.append(m)
            j = r.get("json")
            if not isinstance(j, dict) or "scenarios" not in j:
                self.errors[m].append(f"{r['dtype']} {klen(r['length'])}: exit {r.get('exit_code')}: "
                                      f"{last_line(r.get('stderr', ''))}")
                continue
            self.meta.setdefault(m, {k: j.get(k) for k in ("target", "convention", "layout", "rotary_dim",
                                                             "head_dim", "base", "base_source")})
            for s in j["scenarios"]:
                if s.get("path") == "error" or s.get("error"):  # the scenario raised (isolated): no numbers
                    self.errors[m].append(f"{r['dtype']} {klen(r['length'])} {s['scenario']}: {s.get('error')}")
                    continue
                self.rows[(m, r["dtype"], int(r["length"]), s["scenario"])] = s
            for f in j.get("findings", []):
                self.findings[m][f["code"]] += 1

    def get(self, m: str, dtype: str, n: int, scen: str) -> dict[str, Any] | None:
        return self.rows.get((m, dtype, n, scen))

    def scenarios(self) -> list[str]:
        seen = {k[3] for k in self.rows}
        return [s for s in SCEN if s in seen] + sorted(seen - set(SCEN))

    def lengths(self) -> list[int]:
        return sorted({k[2] for k in self.rows})

    def worst_exact(self, dtype: str, n: int) -> tuple[float | None, str]:
        """Smallest exact fraction over models and scenarios, and where."""
        best: tuple[float | None, str] = (None, "")
        for (m, d, L, s), row in self.rows.items():
            if d == dtype and n == L:
                x = row["exact_fraction"]
                if best[0] is None or x < best[0]:
                    best = (x, f"{m}, {s}")
        return best

    def audited_class(self, m: str) -> str:
        t = (self.meta.get(m) or {}).get("target") or ""
        return t.split()[-1] if t else ""

    def evidence(self, m: str, scenarios: tuple[str, ...], what: str) -> tuple[bool, str]:
        """Did the runtime audit of model m show `what` ('collide' or 'drift') in these scenarios?"""
        hits = []
        for (mm, d, n, s), row in sorted(self.rows.items(), key=lambda kv: (kv[0][1], kv[0][2])):
            if (mm != m and not mm.startswith(m + " (")) or s not in scenarios:
                continue
            if what == "collide" and (row["exact_fraction"] < 1.0 or row["nonfinite"] > 0):
                hits.append(f"{mm + ', ' if mm != m else ''}{s}/{d}/{klen(n)}: {pct(row['exact_fraction'])} exact"
                            + (f", {row['nonfinite']:,} non-finite" if row["nonfinite"] else ""))
            if what == "drift" and row["frequency_drift"] > DRIFT_TOL:
                hits.append(f"{s}/{d}: frequency drift {row['frequency_drift']:.2e}")
        if what == "drift":  # one per dtype is enough
            seen, uniq = set(), []
            for h in hits:
                k = h.split(":")[0]
                if k not in seen:
                    seen.add(k)
                    uniq.append(h)
            hits = uniq
        return bool(hits), "; ".join(hits[:3]) + (" ..." if len(hits) > 3 else "")


def last_line(text: str) -> str:
    lines = [ln for ln in str(text).strip().splitlines() if ln.strip()]
    return esc(lines[-1][:300]) if lines else "(no message)"


# which runtime scenarios can show what each static rule describes
RULE_EVIDENCE = {
    "RP101": (("cast",), "collide"), "RP122": (("cast",), "collide"),
    "RP102": (SCEN, "collide"), "RP103": (("default",), "collide"), "RP104": (SCEN, "collide"),
    "RP111": (SCEN, "collide"), "RP112": (AUTOCAST, "collide"), "RP113": (AUTOCAST, "collide"),
    "RP121": (("cast",), "drift"),
}


def model_of_path(path: str) -> str | None:
    m = re.match(r"transformers/models/([^/]+)/modeling_\1\.py$", path)
    return m.group(1) if m else None


def judge(doc: dict[str, Any], f: dict[str, Any], rt: Runtime) -> tuple[str, str]:
    """(verdict, why) for one static finding: notes first, then runtime evidence of the same class."""
    note = notes.verdict_for(doc["package"], doc["version"], f)
    cls = (f.get("scope") or "").split(".")[0]
    model = model_of_path(f.get("path", ""))
    runtime_txt = ""
    if doc["package"] == "transformers" and model and model in rt.meta and f["code"] in RULE_EVIDENCE:
        audited = rt.audited_class(model)
        scen, what = RULE_EVIDENCE[f["code"]]
        seen, where = rt.evidence(model, scen, what)
        if cls == audited:
            runtime_txt = (f"runtime audit of {audited}: reproduced ({where})" if seen else
                           f"runtime audit of {audited}: not reproduced in {'/'.join(scen)}")
        elif cls:
            runtime_txt = f"{cls} is not the class `audit hf {model}` builds ({audited}); judged by reading"
    elif doc["package"] == "transformers" and model and model in rt.errors and model not in rt.meta:
        runtime_txt = (f"`ropelaw audit hf {model}` could not run this version's class (see the runtime "
                       "section); judged by reading")
    elif doc["package"] != "transformers" and rt.meta and f["code"] in RULE_EVIDENCE:
        scen, what = RULE_EVIDENCE[f["code"]]
        m = rt.models[0]
        if notes.runtime_covers(doc["package"], f):
            seen, where = rt.evidence(m, scen, what)
            runtime_txt = (f"runtime audit: reproduced ({where})" if seen else
                           f"runtime audit: not reproduced in {'/'.join(scen)}")
    if note is not None:
        verdict, why = note
        if verdict.startswith("FALSE") and ": reproduced" in runtime_txt:
            runtime_txt = runtime_txt.replace(": reproduced (", ": the class does show it at runtime, through "
                                              "another line (")
        return verdict, (why + (f" ({runtime_txt})" if runtime_txt else ""))
    if (runtime_txt.startswith("runtime audit") and "reproduced (" in runtime_txt
            and "not reproduced" not in runtime_txt):
        return "REAL", runtime_txt
    return "UNJUDGED", runtime_txt or "no note and no runtime evidence for this class"


# --------------------------------------------------------------------------- per-target report


def static_section(doc: dict[str, Any], rt: Runtime) -> tuple[list[str], Counter, Counter, Counter]:
    """The report's static section; counts by code, by verdict, and by code of the findings judged REAL."""
    out: list[str] = []
    res = next((r for r in doc["results"] if r["kind"] == "static"), None)
    counts: Counter = Counter()
    verdicts: Counter = Counter()
    real: Counter = Counter()
    out.append("## Static scan\n")
    if res is None:
        out.append("Not run (no files to scan in this version).\n")
        return out, counts, verdicts, real
    nfiles = len(doc["scanned_files"])
    out.append(f"`{' '.join(res['argv'][:3])} FILES --format json` over {nfiles} path{'s' if nfiles != 1 else ''} "
               f"(paths relative to the install directory): "
               + ", ".join(f"`{p}`" for p in doc["scanned_files"]) + ".\n")
    findings = res.get("json")
    if not isinstance(findings, list):
        out.append(f"**The static scan failed** (exit {res.get('exit_code')}): {last_line(res.get('stderr', ''))}\n")
        return out, counts, verdicts, real
    if not findings:
        out.append("No findings.\n")
        return out, counts, verdicts, real
    counts.update(f["code"] for f in findings)
    out.append("Findings by code: " + ", ".join(f"{c} x{n}" for c, n in sorted(counts.items())) + ".\n")
    out.append("| location | code | in | verdict | why |")
    out.append("|---|---|---|---|---|")
    judged = []
    for f in findings:
        v, why = judge(doc, f, rt)
        verdicts[v] += 1
        if v.startswith("REAL"):
            real[f["code"]] += 1
        judged.append((f, v, why))
        out.append(f"| `{f['path']}:{f['line']}:{f['column']}` | {f['code']} {f['name']} | `{f.get('scope') or '-'}` "
                   f"| **{v}** | {esc(why)} |")
    out.append("")
    out.append("<details><summary>Messages as printed by the auditor</summary>\n")
    for f, _, _ in judged:
        out.append(f"- `{f['path']}:{f['line']}` {f['code']}: {esc(f['message'])}")
    out.append("\n</details>\n")
    return out, counts, verdicts, real


def runtime_section(doc: dict[str, Any], rt: Runtime) -> list[str]:
    out = ["## Runtime audit\n"]
    if doc.get("runtime_note"):
        out.append(doc["runtime_note"] + ".\n")
        return out
    if not rt.models:
        out.append("Not run.\n")
        return out
    lengths = rt.lengths() or doc["lengths"]
    cmd = ("ropelaw audit hf MODEL [--config KEY=VALUE]" if doc["package"] == "transformers" else
           "ropelaw audit module " + " | ".join(spec for _, spec in doc.get("modules", [])))
    autocast = ("**autocast-cuda** = built in float32, called inside an autocast region with CUDA's op lists "
                "emulated on CPU (bf16 AMP on a GPU); **autocast-cpu** = inside `torch.autocast('cpu', dtype)`"
                if any(s.startswith("autocast-") for s in rt.scenarios()) else
                "**autocast** = built in float32, called inside `torch.autocast('cpu', dtype)`")
    out.append(f"`{cmd} --dtype bf16|fp16 --length {'|'.join(str(n) for n in lengths)} --scenario all "
               "--format json` with PYTHONPATH set to this version's install directory. Scenarios: "
               "**cast** = built in float32 then `.to(dtype)` (`model.bfloat16()`, DeepSpeed); "
               "**default** = built and run under `torch.set_default_dtype(dtype)` (Lightning `bf16-true`); "
               f"{autocast}. Exact = share of positions 0..L-1 "
               "whose encoding is nearer its own ideal encoding than half the gap to the next position's.\n")
    for m in rt.models:
        meta = rt.meta.get(m)
        label = m if doc["package"] == "transformers" else m
        out.append(f"### {label}\n")
        if meta:
            base = meta.get("base")
            shown = (f"{base:,.0f}" if base and float(base).is_integer() else g3(base)) if base else "n/a"
            out.append(f"{meta.get('target')}: convention {meta.get('convention')}, {meta.get('layout')}, "
                       f"rotary dims {meta.get('rotary_dim')} (head dim {meta.get('head_dim')}), "
                       f"base {shown} ({meta.get('base_source')}).\n")
        groups: dict[str, list[str]] = {}
        for e in rt.errors.get(m, []):
            where, _, msg = e.partition(": ")
            groups.setdefault(msg, []).append(where)
        for msg, wheres in groups.items():
            out.append(f"- runtime audit did not complete ({', '.join(sorted(wheres))}): {msg}")
        if rt.errors.get(m):
            out.append("")
        if not meta:
            continue
        hdr = "| dtype | scenario | " + " | ".join(f"exact @{klen(n)}" for n in lengths) + \
              f" | distinct @{klen(lengths[-1])} | non-finite @{klen(lengths[-1])} | frequency drift | " \
              f"max phase error @{klen(lengths[-1])} | evidence path @{klen(lengths[-1])} |"
        out.append(hdr)
        out.append("|" + "---|" * (hdr.count("|") - 1))
        for dtype in [d for d in catalog.DTYPES if any(k[0] == m and k[1] == d for k in rt.rows)]:
            for s in rt.scenarios():
                cells = [pct((rt.get(m, dtype, n, s) or {}).get("exact_fraction")) for n in lengths]
                last = rt.get(m, dtype, lengths[-1], s) or {}
                drift = max((r.get("frequency_drift", 0) for n in lengths if (r := rt.get(m, dtype, n, s))),
                            default=None)
                out.append(f"| {dtype} | {s} | " + " | ".join(cells) +
                           f" | {pct(last.get('distinct_fraction'))} | {last.get('nonfinite', '-'):,} | "
                           f"{g3(drift)} | {g3(last.get('max_phase_error'))} rad | {last.get('path', '-')} |"
                           if last else f"| {dtype} | {s} | " + " | ".join(cells) + " | - | - | - | - | - |")
        codes = rt.findings.get(m)
        if codes:
            out.append("\nRuntime findings over all lengths and dtypes: "
                       + ", ".join(f"{c} x{n}" for c, n in sorted(codes.items())) + ".")
        out.append("")
    return out


def checkpoint_section(doc: dict[str, Any]) -> tuple[list[str], Counter]:
    out = ["## Checkpoint audit\n"]
    counts: Counter = Counter()
    res = [r for r in doc["results"] if r["kind"] == "checkpoint"]
    if not res:
        out.append("Not run: " + ("no checkpoint writer for this target (static scan only)." if
                                  doc.get("runtime_note") else "no checkpoint kind configured.") + "\n")
        return out, counts
    out.append("Small checkpoints written by the target's own code after `.to(bf16|fp16)` "
               "(`audits/targets/make_checkpoints.py`), then `ropelaw audit checkpoint FILE --format json`.\n")
    out.append("| file | written by | rotary tensors found | findings |")
    out.append("|---|---|---|---|")
    for r in res:
        if r.get("exit_code") != 0 or not r.get("audits"):
            out.append(f"| {r['key']} | - | writer failed: {last_line(r.get('maker', {}).get('stderr', ''))} | - |")
            continue
        for a in r["audits"]:
            j = a.get("json")
            if not isinstance(j, dict):
                out.append(f"| `{a['file'].split('checkpoints/')[-1]}` | {a['writer']} | audit failed "
                           f"(exit {a.get('exit_code')}): {last_line(a.get('stderr', ''))} | - |")
                continue
            tensors = "; ".join(f"`{t['name']}` {t['dtype']} {t.get('shape')}" for t in j.get("rotary", [])) or "none"
            fs = j.get("findings", [])
            counts.update(f["code"] for f in fs)
            fl = "; ".join(f"{f['code']}: {esc(f['message'])}" for f in fs) or "none"
            out.append(f"| `{a['file'].split('checkpoints/')[-1]}` | {a['writer']} | {esc(tensors)} | {fl} |")
    out.append("")
    return out, counts


def summarize(doc: dict[str, Any]) -> dict[str, Any]:
    rt = Runtime(doc["results"])
    st_lines, st_counts, verdicts, real_counts = static_section(doc, rt)
    ck_lines, ck_counts = checkpoint_section(doc)
    worst = {n: rt.worst_exact("bf16", n) for n in rt.lengths()}
    worst16 = {n: rt.worst_exact("fp16", n) for n in rt.lengths()}
    nonfinite = sum(r["nonfinite"] for r in rt.rows.values())
    drift_cast = any(r["frequency_drift"] > DRIFT_TOL for k, r in rt.rows.items() if k[3] == "cast")
    verdict = notes.target_verdict(doc, rt, real_counts, verdicts, ck_counts)
    return {"rt": rt, "static_lines": st_lines, "static_counts": st_counts, "verdicts": verdicts,
            "ckpt_lines": ck_lines, "ckpt_counts": ck_counts, "worst_bf16": worst, "worst_fp16": worst16,
            "nonfinite": nonfinite, "drift_cast": drift_cast, "verdict": verdict}


def target_report(doc: dict[str, Any], s: dict[str, Any]) -> str:
    a = doc["auditor"]
    out = [f"# {doc['package']} {doc['version']}\n",
           f"{doc['what']}.\n",
           (f"- Read from its public repository at a pinned commit (never committed here; `audits/run.py` copies "
            f"the file into `audits/_work/site/{doc['target']}` from the local store after checking its sha256): "
            + doc.get("provenance", "") if doc.get("fetch") == "git" else
            f"- Installed from PyPI: `pip install --no-deps --target audits/_work/site/{doc['target']} "
            + " ".join(doc["pins"]) + "`") + (f"; {doc['deps_note']}" if doc.get("deps_note") else "") + ".",
           f"- Audited with {a['ropelaw']} (commit {a['commit']}, {a['ropelaw_tree']}), torch {a['torch']}, "
           f"Python {a['python']}, {a['machine']}, {a['date']}.",
           f"- Regenerate: `python audits/run.py --only {doc['target']}` (raw outputs: "
           f"[`{doc['target']}.json`]({doc['target']}.json)).\n",
           "## Verdict\n", s["verdict"]["long"] + "\n"]
    out += brute_force_section(doc)
    static = next((r for r in doc["results"] if r["kind"] == "static"), None)
    findings = static.get("json") if static and isinstance(static.get("json"), list) else []
    extra = notes.target_notes(doc["package"], doc["version"], findings)
    if extra:
        out.append(extra + "\n")
    out += s["static_lines"]
    out += runtime_section(doc, s["rt"])
    out += s["ckpt_lines"]
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- brute force (issue 21)


def show_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """For each ``Show`` of the target: the auditor's row there and the stored brute-force counts."""
    rt = Runtime(doc["results"])
    out = []
    try:  # what / mismatch as the catalog states them now (the counts come from the run)
        shows = {(x.module, x.dtype, x.length, x.scenario): x for x in catalog.by_name(doc["target"]).shows}
    except KeyError:
        shows = {}
    for b in doc.get("brute_force", []):
        sh = shows.get((b["module"], b["dtype"], b["length"], b["scenario"]))
        if sh is not None:
            b = {**b, "what": sh.what, "mismatch": sh.mismatch}
        row = rt.get(b["module"], b["dtype"], b["length"], b["scenario"])
        auditor = None if row is None else {"exact": row["exact"], "distinct": row["distinct"], "path": row.get("path")}
        err = next((e for e in rt.errors.get(b["module"], []) if f"{b['dtype']} {klen(b['length'])}" in e), "")
        agree = auditor is not None and all(auditor[k] == b["counts"][k] for k in ("exact", "distinct"))
        out.append({**b, "auditor": auditor, "error": err, "agree": agree})
    return out


def brute_force_section(doc: dict[str, Any]) -> list[str]:
    rows = show_rows(doc)
    if not rows:
        return []
    out = ["## The scenario that shows it, against a brute force\n",
           "The brute force (`audits/brute_force.py`, numpy + ml_dtypes, no ropelaw) writes out the dtype flow "
           "of this code and counts exact and distinct positions with the auditor's definitions; "
           "`tests/test_audits_brute_force.py` recomputes it and compares.\n",
           "| module | dtype | length | scenario | what happens | auditor exact / distinct (path) | brute force exact "
           "/ distinct | agree |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        a = r["auditor"]
        aud = (f"{a['exact']:,} / {a['distinct']:,} ({a['path']})" if a else
               f"no measurement ({esc(r['error'].split(': ', 1)[-1]) or 'not run'})")
        c = r["counts"]
        bf = f"{c['exact']:,} / {c['distinct']:,}" + (" (nearest own "
                                                      f"{c['nearest_own']:,})" if "nearest_own" in c else "")
        verdict = "yes" if r["agree"] else ("**NO**: " + esc(r.get("mismatch") or "see above"))
        out.append(f"| {esc(r['module'])} | {r['dtype']} | {r['length']:,} | {r['scenario']} | {esc(r['what'])} | "
                   f"{aud} | {bf} | {verdict} |")
    out.append("")
    return out


def issue21_table(docs: list[dict[str, Any]]) -> list[str]:
    rows = [(doc, r) for doc in docs for r in show_rows(doc)]
    if not rows:
        return []
    out = ["## Issue 21: real implementations, the scenario that shows each verdict, and a brute force\n",
           "Each row: the verdict, the runtime scenario where it shows, the auditor's exact / distinct counts "
           "there and those of an independent brute force (`audits/brute_force.py`: numpy + ml_dtypes over the "
           "dtype flow of the target's own code; `tests/test_audits_brute_force.py` recomputes it). Sources: "
           "each report's header (`repo@commit path` + sha256, or `package==version`).\n",
           "| target | verdict | scenario | auditor exact / distinct | brute force exact / distinct | agree |",
           "|---|---|---|---|---|---|"]
    for doc, r in rows:
        a = r["auditor"]
        aud = f"{a['exact']:,} / {a['distinct']:,}" if a else "no measurement"
        c = r["counts"]
        try:
            verdict = catalog.by_name(doc["target"]).verdict
        except KeyError:
            verdict = ""
        out.append(f"| [{doc['package']} {doc['version']}](reports/{doc['target']}.md) | {esc(verdict)} | "
                   f"{r['scenario']}, {r['dtype']}, {r['length']:,} positions | {aud} | {c['exact']:,} / "
                   f"{c['distinct']:,} | "
                   + ("yes" if r["agree"] else "**NO**") + " |")
    out.append("")
    return out


# --------------------------------------------------------------------------- README


README_HEAD = """# audits: ropelaw's three audits over real, published rotary implementations

Regenerate everything here with one command, from the repository root with the venv active:

```
python audits/run.py
```

It installs each target from PyPI at a pinned version into `audits/_work/site/<target>` (gitignored;
`pip install --no-deps --target`, several versions side by side, torch is always the venv's
`torch==2.13.0` CPU build). Targets published only as repositories (issue 21: modded-nanogpt, fairseq,
GPT-NeoX, lit-llama, TinyLlama, gpt-fast, Llama, llm.c, DeepSeek-V3, nanochat, GPT-J) are files read at a
pinned commit, never committed here: `audits/catalog.py` records each as `repo@commit path` + sha256, and
`run.py` copies it into the install directory from the first local store that has it with that sha256
(`$ROPELAW_AUDIT_SOURCES`, `../shared/corpus/audit-sources/`, `/work/fetched/i21-audits/git/`, laid out as
`<owner>__<repo>@<commit>/<path>`); a target whose files are absent is skipped, naming them, and keeps its
committed report. Targets that cannot be installed here are downloaded as published and
unpacked instead: megatron-core 0.19.2, vLLM 0.33.0 and axolotl 0.21.0 need Python >= 3.12 (`pip download
--python-version 3.12 --only-binary=:all:`, their wheel), flash-attn 2.8.3 needs CUDA to build (its sdist;
pip prepares its metadata with `--no-build-isolation`, so the venv needs `wheel`). Then it runs for each target

1. `ropelaw audit code FILES --format json`: the static scan of the target's rotary code;
2. `ropelaw audit hf MODEL` (transformers) or `ropelaw audit module audits/targets/<factory>.py:make`
   (other packages) with `--dtype bf16|fp16 --length 8192|32768|131072 --scenario all --format json`,
   PYTHONPATH pointing at that version;
3. `ropelaw audit checkpoint FILE --format json` on small checkpoints that the target's own code writes
   after `model.to(bf16|fp16)` (`audits/targets/make_checkpoints.py`; no weights are downloaded),

and writes `audits/reports/<target>.md` (with the raw outputs in `<target>.json`) and the table below.
`python audits/run.py --only transformers-4.28` re-runs some targets, `--render-only` rebuilds the
Markdown from the JSON, `--brute-force-only` recomputes the issue-21 brute-force counts (numpy, no audit),
`--lengths 8192` makes a quick trial run. What we concluded by reading each
target's code is in `audits/notes.py`; the targets and their pins are in `audits/catalog.py`.

**Staleness.** A report is stale when the auditor would now give other results on its target.
`tests/test_audits_reports.py` re-runs the static scan of every target, and the runtime rows of 2,048
positions or fewer, where the target's code is on the machine (after `run.py`; skipped, by name,
elsewhere), and compares them with the committed reports. Because the targets' code is not committed,
a full run also records what determines the results (`audits/behaviour.py`: the audit rule set and the
auditor's findings and counts on the committed fixtures, `tests/fixtures/static` and the runtime fixtures
it names) in `reports/_auditor.json`, for a check that needs no target code: a change of the auditor's
behaviour there means the reports must be regenerated; a refactor that keeps it does not. When only some
targets' results changed (the local re-runs name them), `python audits/run.py --only NAME ...` re-runs those
and `python audits/run.py --snapshot-only` then records the auditor's behaviour, once the local re-runs pass
for every target.
"""


def readme(docs: list[dict[str, Any]], sums: list[dict[str, Any]], timing: dict[str, Any] | None) -> str:
    out = [README_HEAD]
    if timing:
        load = timing.get("load_average_at_end")
        out.append(f"Last full regeneration: {timing['total_s'] / 60:.1f} min on {timing['machine']} "
                   f"({timing['jobs']} audits in {timing.get('processes', '?')} processes on {timing['workers']} "
                   + ("workers; the install directories already existed: a first run also downloads and installs "
                      "every target, about 2 min more)" if timing["install_s"] < 10 else
                      f"workers, including {timing['install_s']} s of pip installs)")
                   + (f"; load average {load[0]:.1f} at the end (other work shared the machine)" if load else "")
                   + f", {timing['date']}.\n")
    # the common lengths only: a target's own training length (1K, 2K, 16K, 64K) shows in its report
    lengths = sorted({n for s in sums for n in s["worst_bf16"]} & set(catalog.LENGTHS)) or list(catalog.LENGTHS)
    out.append("## Summary\n")
    out.append("Static findings are counted by code over the scanned files; the runtime columns give the "
               "smallest exact-position fraction in bf16 over every audited architecture and the "
               "scenarios (cast / default / autocast-cuda / autocast-cpu) at each length; `fp16 inf` counts positions "
               "with non-finite encodings in fp16 over all runs. Verdicts are explained in each report.\n")
    hdr = ("| target | version | static findings | " + " | ".join(f"bf16 worst exact @{klen(n)}" for n in lengths)
           + " | fp16 inf | freq. rounded by cast | checkpoint | verdict |")
    out.append(hdr)
    out.append("|" + "---|" * (hdr.count("|") - 1))
    for doc, s in zip(docs, sums, strict=True):  # one summary per report
        st = ", ".join(f"{c} x{n}" for c, n in sorted(s["static_counts"].items())) or "none"
        if not any(r["kind"] == "static" for r in doc["results"]):
            st = "not run"
        cells = []
        for n in lengths:
            x, where = s["worst_bf16"].get(n, (None, ""))
            if doc["package"] != "transformers":
                where = where.rsplit(", ", 1)[-1]  # one audited module: the scenario is enough
            cells.append("-" if x is None else (pct(x) + (f" ({where})" if x < 1 else "")))
        rt = s["rt"]
        has_rt = bool(rt.rows)
        ck = ", ".join(f"{c} x{n}" for c, n in sorted(s["ckpt_counts"].items())) or \
            ("clean" if any(r["kind"] == "checkpoint" for r in doc["results"]) else "-")
        row = f"| [{doc['package']}](reports/{doc['target']}.md) | {doc['version']} | {st} | "
        if has_rt:
            row += " | ".join(cells) + f" | {s['nonfinite']:,} | {'yes' if s['drift_cast'] else 'no'} | "
        else:
            row += " | ".join("-" for _ in lengths) + " | - | - | "
        out.append(row + f"{ck} | {s['verdict']['short']} |")
    out.append("")
    out.append("## Targets\n")
    seen = set()
    for doc in docs:
        if doc["package"] in seen:
            continue
        seen.add(doc["package"])
        versions = ", ".join(d["version"] for d in docs if d["package"] == doc["package"])
        out.append(f"- **{doc['package']}** ({versions}): {doc['what']}."
                   + (" "
                      f"{doc['runtime_note'][0].upper()}{doc['runtime_note'][1:]}." if doc.get("runtime_note") else ""))
    out.append("")
    out += issue21_table(docs)
    out.append(notes.README_NOTES)
    out += crosscheck(docs, sums)
    return "\n".join(out).rstrip() + "\n"


def crosscheck(docs: list[dict[str, Any]], sums: list[dict[str, Any]]) -> list[str]:
    """Runtime exact counts where only positions are rounded vs the closed form of `ropelaw exact`."""
    path = Path(__file__).resolve().parent / "reports" / "_exact.json"
    if not path.is_file():
        return []
    closed = json.loads(path.read_text())
    agree, disagree, examples = 0, [], {}
    for doc, s in zip(docs, sums, strict=True):  # one summary per report
        for (m, dtype, n, scen), row in s["rt"].rows.items():
            if row.get("path") != "positions rounded":
                continue
            c = closed.get(f"{dtype}/{n}")
            if not c:
                continue
            if row["exact"] == c["exact"] and row["nonfinite"] == c["overflow_count"]:
                agree += 1
                examples.setdefault((dtype, n), (row["exact"], c["exact"], row["nonfinite"], c["overflow_count"]))
            else:
                disagree.append(f"{doc['target']} {m} {scen} {dtype} {n}: runtime {row['exact']:,} exact, "
                                f"{row['nonfinite']:,} non-finite; closed form {c['exact']:,}, {c['overflow_count']:,}")
    out = ["## Cross-check: runtime audit vs closed form\n",
           "Where the runtime audit finds that only the positions were rounded (evidence path \"positions "
           "rounded\"), its exact count must equal the closed-form count of integers the format holds "
           "(`ropelaw exact --dtype D --length L`), and its non-finite count the closed-form overflow count. "
           f"Runs compared: {agree + len(disagree)}; agreeing: {agree}.\n"]
    if examples:
        out.append("| dtype | length | runtime exact | `ropelaw exact` | runtime non-finite | closed-form overflow |")
        out.append("|---|---|---|---|---|---|")
        for (dtype, n), (a, b, c_, d) in sorted(examples.items()):
            out.append(f"| {dtype} | {n:,} | {a:,} | {b:,} | {c_:,} | {d:,} |")
        out.append("")
    for d in disagree:
        out.append(f"- disagreement: {d}")
    return out


def _order(doc: dict[str, Any]) -> tuple:
    names = [t.name for t in catalog.TARGETS]
    return (names.index(doc["target"]) if doc["target"] in names else len(names), doc["target"])


def write_all(reports: Path, readme_path: Path) -> None:
    docs = [json.loads(p.read_text()) for p in sorted(reports.glob("*.json")) if not p.name.startswith("_")]
    for doc in docs:  # descriptions come from the catalog as it is now
        try:
            t = catalog.by_name(doc["target"])
        except KeyError:
            continue
        doc.update(what=t.what, deps_note=t.deps_note, runtime_note=t.runtime_note, provenance=t.provenance,
                   fetch=t.fetch)
    docs.sort(key=_order)
    sums = []
    for doc in docs:
        s = summarize(doc)
        sums.append(s)
        write_atomic(str(reports / f"{doc['target']}.md"), target_report(doc, s))
    timing_path = reports / "_timing.json"
    timing = json.loads(timing_path.read_text()) if timing_path.is_file() else None
    write_atomic(str(readme_path), readme(docs, sums, timing))
