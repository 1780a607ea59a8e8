#!/usr/bin/env python
"""Regenerate everything in audits/: ``python audits/run.py`` (from the repository root, venv active).

Steps (each target from ``audits/catalog.py``):
1. install: ``pip install --no-deps --target audits/_work/site/<target> <pins>`` (skipped when the
   directory already holds exactly those pins);
2. static scan: ``ropelaw audit code <files> --format json`` (run inside the install dir, so paths
   read ``transformers/models/llama/modeling_llama.py``);
3. runtime: ``ropelaw audit hf MODEL`` / ``ropelaw audit module FILE:make`` with ``--dtype bf16|fp16
   --length 8192|32768|131072 --scenario all --format json``, PYTHONPATH = the install dir. The six
   command lines of one architecture run in one process (``audits/targets/cli_batch.py`` calls
   ``ropelaw.cli.main`` with each argv and captures its output), because importing torch and
   transformers costs more than a 128K-position audit;
4. checkpoints: ``audits/targets/make_checkpoints.py`` writes small checkpoints with the target's
   own code (after ``model.to(bf16|fp16)``), then ``ropelaw audit checkpoint FILE --format json``
   (batched the same way);
5. writes ``audits/reports/<target>.json`` (raw outputs), ``audits/reports/<target>.md`` and the
   summary table in ``audits/README.md``.

Options: ``--only SUBSTRING`` (repeatable) to run some targets (the README table keeps the others'
last results from their ``reports/<target>.json``), ``--jobs N`` (default 2: one per core),
``--lengths 8192,32768`` to shorten a trial run, ``--render-only`` to rebuild the Markdown from
the stored JSON without running anything, ``--brute-force-only`` to recompute the issue-21 brute-force
counts (numpy only) stored beside the audits.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import concurrent.futures as cf
import datetime as _dt
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / "_work"
SITE = WORK / "site"
CKPT = WORK / "checkpoints"
REPORTS = HERE / "reports"
sys.path.insert(0, str(HERE))

import brute_force  # noqa: E402
import catalog  # noqa: E402
import render  # noqa: E402
from ropelaw.safeio import write_atomic  # noqa: E402  (every report written whole or not at all)

ENV_BASE = {
    "PYTHONWARNINGS": "ignore",
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "OMP_NUM_THREADS": "1",  # two audits run side by side on two cores
    "MKL_NUM_THREADS": "1",
}

_print_lock = threading.Lock()


def log(msg: str) -> None:
    with _print_lock:
        print(msg, flush=True)


# --------------------------------------------------------------------------- install


def site_of(t: catalog.Target) -> Path:
    return SITE / t.name


def source_roots() -> list[Path]:
    """Where files read from public repositories are kept (outside the repository, never committed):
    ``$ROPELAW_AUDIT_SOURCES``, the corpus's ``audit-sources/`` (``$ROPELAW_CORPUS`` or
    ``../shared/corpus``, where they are added between rounds), and the local stores they were
    fetched into, ``/work/fetched/i21-audits/git`` and (issue 33's corpus, ``audits/corpus.py``)
    ``/work/fetched/i33-precision/git``."""
    corpus = Path(os.environ.get("ROPELAW_CORPUS") or ROOT.parent / "shared" / "corpus")
    roots = [os.environ.get("ROPELAW_AUDIT_SOURCES"), corpus / "audit-sources", "/work/fetched/i21-audits/git",
             "/work/fetched/i33-precision/git"]
    return [Path(r) for r in roots if r]


def find_source(src: catalog.Source) -> tuple[Path | None, str]:
    """The local copy of ``src`` whose sha256 matches, else (None, why not)."""
    why = "not found under " + ", ".join(str(r) for r in source_roots())
    for root in source_roots():
        f = root / src.local
        if f.is_file():
            got = hashlib.sha256(f.read_bytes()).hexdigest()
            if got == src.sha256:
                return f, ""
            why = f"{f}: sha256 {got}, the manifest says {src.sha256}"
    return None, why


def missing_sources(t: catalog.Target) -> list[str]:
    return [f"{s.repo}@{s.commit[:12]} {s.path}: {why}" for s in t.sources for f, why in [find_source(s)] if f is None]


def install(t: catalog.Target) -> None:
    """Put the target's source into its site dir, idempotent: a marker file records the pins (and
    how they were fetched). ``pip install --no-deps --target`` by default; for targets that need
    Python 3.12 or CUDA to install, ``pip download`` of the wheel (for that Python) or the source
    distribution, unpacked (``.py`` files of the scanned top-level packages)."""
    d = site_of(t)
    marker = d / ".ropelaw-audit-pins"
    want = "\n".join((*t.pins, *(() if t.fetch == "install" else (t.fetch, *t.fetch_args, *t.extra_pins)),
                      *(f"{x.repo}@{x.commit} {x.path} {x.sha256}" for x in t.sources)))
    if marker.is_file() and marker.read_text() == want:
        return
    if d.exists():
        shutil.rmtree(d)
    t0 = time.time()
    if t.fetch == "git":  # copies of the pinned files, checked against the manifest's sha256
        missing = missing_sources(t)
        if missing:
            raise RuntimeError(f"{t.name}: sources missing: " + "; ".join(missing))
        for src in t.sources:
            f, _ = find_source(src)
            dest = d / src.path
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest)
        if t.extra_pins:
            cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
                   "--disable-pip-version-check", "--target", str(d), *t.extra_pins]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"pip install of {t.extra_pins} for {t.name} failed:\n{proc.stderr[-2000:]}")
    elif t.fetch == "install":
        cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
               "--disable-pip-version-check", "--target", str(d), *t.pins]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"pip install for {t.name} failed:\n{proc.stderr[-2000:]}")
    else:
        unpack(t, download(t), d)
        if t.extra_pins:
            cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
                   "--disable-pip-version-check", "--target", str(d), *t.extra_pins]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"pip install of {t.extra_pins} for {t.name} failed:\n{proc.stderr[-2000:]}")
    write_atomic(str(marker), want)
    how = {"install": "installed", "git": "copied (sha256 checked)"}.get(t.fetch, "downloaded and unpacked")
    log(f"  {how} {t.name} ({', '.join(t.pins) or f'{len(t.sources)} files'}) in {time.time() - t0:.0f}s")


def download(t: catalog.Target) -> Path:
    """``pip download --no-deps`` of the wheel (``fetch_args``: the Python / platform it is for) or the
    sdist (pip prepares its metadata: flash-attn's setup.py imports torch, hence --no-build-isolation,
    with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE so that nothing is compiled)."""
    dl = WORK / "dl" / t.name
    dl.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--disable-pip-version-check", "-d", str(dl)]
    env = dict(os.environ)
    if t.fetch == "sdist":
        cmd += ["--no-binary=:all:", "--no-build-isolation"]
        env["FLASH_ATTENTION_SKIP_CUDA_BUILD"] = "TRUE"
    proc = subprocess.run([*cmd, *t.fetch_args, *t.pins], capture_output=True, text=True, env=env)
    name = t.package.replace("-", "_").lower()
    found = sorted(p for p in dl.iterdir() if p.name.replace("-", "_").lower().startswith(f"{name}_{t.version}"))
    if not found:
        raise RuntimeError(f"pip download for {t.name} failed:\n{proc.stderr[-2000:]}")
    return found[0]


def unpack(t: catalog.Target, archive: Path, d: Path) -> None:
    """The ``.py`` files of the scanned top-level packages (and the dist-info/PKG-INFO metadata)."""
    import tarfile
    import zipfile

    tops = {p.split("/")[0] for p in t.scan}

    def wanted(rel: str) -> bool:
        first = rel.split("/")[0]
        return (first in tops and rel.endswith(".py")) or first.endswith(".dist-info") or rel == "PKG-INFO"

    d.mkdir(parents=True, exist_ok=True)
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            for m in z.namelist():
                if wanted(m) and ".." not in m.split("/"):
                    z.extract(m, d)
        return
    with tarfile.open(archive) as tf:
        for m in tf.getmembers():
            rel = m.name.split("/", 1)[1] if "/" in m.name else ""
            if m.isfile() and rel and wanted(rel) and ".." not in rel.split("/"):
                m.name = rel
                tf.extract(m, d)


# --------------------------------------------------------------------------- jobs


@dataclass
class Job:
    target: str
    kind: str            # static | runtime (a batch of hf/module audits) | checkpoint
    key: str             # unique within the target, e.g. "runtime/llama"
    argv: list[str]
    cwd: Path
    pythonpath: list[Path]
    meta: dict[str, Any] = field(default_factory=dict)
    batch: list[dict[str, Any]] = field(default_factory=list)  # runtime: one entry per CLI command
    weight: float = 1.0  # rough CPU cost, to start the longest jobs first


def env_for(pythonpath: list[Path]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(ENV_BASE)
    env["HF_HOME"] = str(WORK / "hf_home")
    # this checkout's ropelaw, always: without it a subprocess imports whatever ropelaw the venv has
    # installed (an editable install of another checkout), and the report would name the wrong auditor
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in [*pythonpath, ROOT] if p)
    return env


def ropelaw_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "ropelaw", *args]


BATCH = [sys.executable, str(HERE / "targets" / "cli_batch.py")]


def run_cmd(argv: list[str], cwd: Path, pythonpath: list[Path], timeout: float = 1800,
            stdin: str | None = None) -> dict[str, Any]:
    t0 = time.time()
    try:
        proc = subprocess.run(argv, cwd=cwd, env=env_for(pythonpath), capture_output=True, text=True,
                              timeout=timeout, input=stdin)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = -1, exc.stdout or "", f"timed out after {timeout:.0f}s"
        out = out.decode() if isinstance(out, bytes) else out
    return {"argv": _display_argv(argv), "cwd": _rel(cwd), "exit_code": rc, "seconds": round(time.time() - t0, 2),
            "stdout": out, "stderr": err}


def run_batch(commands: list[list[str]], cwd: Path, pythonpath: list[Path]) -> list[dict[str, Any]]:
    """Run ropelaw command lines through cli_batch.py; one result per command, in order."""
    res = run_cmd(BATCH, cwd, pythonpath, stdin=json.dumps(commands))
    out = []
    for line in res["stdout"].splitlines():
        with contextlib.suppress(json.JSONDecodeError):  # a line that is not a result (a warning)
            out.append(json.loads(line))
    for argv in commands[len(out):]:  # the batch process died before these
        out.append({"argv": ["ropelaw", *argv], "exit_code": res["exit_code"] if res["exit_code"] else -4,
                    "seconds": 0, "stdout": "", "stderr": "batch process ended early: " + last_lines(res["stderr"])})
    for r in out:
        r["json"] = parse_json(r.get("stdout", ""))
        if r["json"] is not None:
            r["stdout"] = ""
        r["stderr"] = r.get("stderr", "")[-2000:]  # library warnings can be long; the end says what failed
    return out


def last_lines(text: str, n: int = 3) -> str:
    return " | ".join(ln for ln in str(text).strip().splitlines()[-n:])


def _rel(p: Path | str) -> str:
    try:
        return str(Path(p).resolve().relative_to(ROOT))
    except ValueError:
        return str(p)


def _display_argv(argv: list[str]) -> list[str]:
    out = []
    for a in argv:
        if a == sys.executable:
            out.append("python")
        else:
            out.append(_rel(a) if a.startswith(str(ROOT)) else a)
    return out


def parse_json(stdout: str) -> Any:
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        return None


def static_files(t: catalog.Target) -> list[str]:
    site = site_of(t)
    return [p for p in t.scan if (site / p).exists()]


def hf_models_present(t: catalog.Target) -> list[str]:
    site = site_of(t)
    return [m for m in t.hf_models if (site / f"transformers/models/{m}/modeling_{m}.py").is_file()]


def target_lengths(t: catalog.Target, lengths: tuple[int, ...]) -> tuple[int, ...]:
    """The run's lengths, with the target's own (its training length) added; a trial run with
    ``--lengths`` shorter than the defaults keeps only those."""
    if lengths != tuple(catalog.LENGTHS):
        return lengths
    return tuple(sorted(set(t.lengths or lengths)))


def plan(t: catalog.Target, lengths: tuple[int, ...]) -> list[Job]:
    site = site_of(t)
    jobs: list[Job] = []
    files = static_files(t)
    if files:
        jobs.append(Job(t.name, "static", "static", ropelaw_cmd("audit", "code", *files, "--format", "json",
                                                                  "--no-progress"), site, [], weight=1))
    runtime: list[tuple[str, str, dict[str, Any]]] = []  # (model label, kind, base argv)
    for m in hf_models_present(t):
        runtime.append((m, "hf", {"argv": ["audit", "hf", m]}))
    for m, kv, why in t.hf_variants:
        if m in hf_models_present(t):
            runtime.append((f"{m} ({kv})", "hf", {"argv": ["audit", "hf", m, "--config", kv], "config": kv,
                                                  "config_why": why}))
    for mod in t.module_list():
        runtime.append((mod.label, "module", {"argv": ["audit", "module", mod.spec, *mod.args], "factory": mod.spec,
                                              "dtypes": mod.dtypes, "lengths": mod.lengths}))
    for m, kind, base in runtime:
        batch = []
        dtypes = base.pop("dtypes", None) or catalog.DTYPES
        mod_lengths = base.pop("lengths", None) or target_lengths(t, lengths)
        for dtype in dtypes:
            for n in mod_lengths:
                batch.append({"kind": kind, "key": f"{kind}/{m}/{dtype}/{n}", "model": m, "dtype": dtype,
                              "length": n, **{k: v for k, v in base.items() if k != "argv"},
                              "cmd": [*base["argv"], "--dtype", dtype, "--length", str(n),
                                      "--scenario", catalog.SCENARIO, "--format", "json"]})
        jobs.append(Job(t.name, "runtime", f"runtime/{m}", BATCH, ROOT, [site], batch=batch,
                        weight=4 + sum(n / 8192 for n in mod_lengths) * len(dtypes) * 0.3))
    for kind in t.checkpoints:
        if kind.startswith("hf:") and not (site / f"transformers/models/{kind[3:]}").is_dir():
            continue
        jobs.append(Job(t.name, "checkpoint", f"checkpoint/{kind}",
                        [sys.executable, str(HERE / "targets" / "make_checkpoints.py"), kind,
                         str(CKPT / t.name / kind.replace(":", "-"))],
                        ROOT, [site], {"ckpt_kind": kind}, weight=8))
    return jobs


def run_job(job: Job) -> list[dict[str, Any]]:
    """Run one job; returns result records (a runtime batch gives one per CLI command)."""
    if job.kind == "static":
        res = run_cmd(job.argv, job.cwd, job.pythonpath)
        res["json"] = parse_json(res["stdout"])
        if res["json"] is not None:
            res["stdout"] = ""
        res["argv"] = ["ropelaw", *res["argv"][3:]]
        return [{"key": job.key, "kind": job.kind, **res}]
    if job.kind == "runtime":
        outs = run_batch([b["cmd"] for b in job.batch], job.cwd, job.pythonpath)
        recs = []
        for b, r in zip(job.batch, outs, strict=True):  # run_batch: one result per command
            meta = {k: v for k, v in b.items() if k != "cmd"}
            recs.append({**meta, **r, "env": "PYTHONPATH=" + _rel(job.pythonpath[0])})
        return recs
    # checkpoint: write the files with the target's code, then audit each one
    out_dir = Path(job.argv[-1])
    if out_dir.exists():
        shutil.rmtree(out_dir)
    made = run_cmd(job.argv, job.cwd, job.pythonpath)
    files = []
    for line in made["stdout"].splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            files.append(json.loads(line))
    audits = []
    if files:
        outs = run_batch([["audit", "checkpoint", f["file"], "--format", "json"] for f in files], ROOT, [])
        for f, r in zip(files, outs, strict=True):  # run_batch: one result per command
            r["argv"] = [_rel(a) if a.startswith(str(ROOT)) else a for a in r["argv"]]
            audits.append({**f, "file": _rel(f["file"]), **r})
    made["stdout"] = ""
    return [{"key": job.key, "kind": job.kind, **job.meta, "maker": made, "audits": audits,
             "seconds": round(made["seconds"] + sum(a["seconds"] for a in audits), 2),
             "exit_code": made["exit_code"]}]


# --------------------------------------------------------------------------- context


def auditor_identity() -> dict[str, Any]:
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        except OSError:
            return ""

    version = subprocess.run(ropelaw_cmd("--version"), capture_output=True, text=True, cwd=ROOT).stdout.strip()
    torch_v = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                             capture_output=True, text=True).stdout.strip()
    dirty = git("status", "--porcelain", "--", "ropelaw")
    return {"ropelaw": version, "commit": git("rev-parse", "--short", "HEAD"),
            "ropelaw_tree": "modified since that commit" if dirty else "as committed",
            "torch": torch_v, "python": platform.python_version(),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")}


def enclosing_scopes(path: Path) -> list[tuple[int, int, str]]:
    """(first line, last line, Class.method) for every class/function in a file (for reports)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, OSError, ValueError):
        return []
    out: list[tuple[int, int, str]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                out.append((child.lineno, getattr(child, "end_lineno", child.lineno) or child.lineno, name))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


def scope_of(scopes: list[tuple[int, int, str]], line: int) -> str:
    best = ""
    for a, b, name in scopes:
        if a <= line <= b and len(name) >= len(best):
            best = name
    return best


def annotate_static(t: catalog.Target, result: dict[str, Any]) -> None:
    """Add the enclosing class/function of each static finding (read from the installed file)."""
    findings = result.get("json")
    if not isinstance(findings, list):
        return
    cache: dict[str, list] = {}
    for f in findings:
        p = f.get("path", "")
        if p not in cache:
            cache[p] = enclosing_scopes(site_of(t) / p)
        f["scope"] = scope_of(cache[p], int(f.get("line", 0) or 0))


# --------------------------------------------------------------------------- main


def store_brute_force(t: catalog.Target, doc: dict[str, Any]) -> None:
    """Issue 21: the independent counts where the target's verdict shows (numpy, no ropelaw)."""
    if t.shows:
        doc["brute_force"] = [{"module": sh.module, "dtype": sh.dtype, "length": sh.length,
                               "scenario": sh.scenario, "brute": sh.brute, "what": sh.what,
                               "mismatch": sh.mismatch, "counts": brute_force.run(sh.brute, sh.dtype, sh.length)}
                              for sh in t.shows]


def write_snapshot() -> None:
    """reports/_auditor.json: what the results depend on, measured on committed inputs (audits/behaviour.py)."""
    snap = run_cmd([sys.executable, "-c", "import json, sys; sys.path.insert(0, 'audits'); import behaviour; "
                    "from pathlib import Path; print(json.dumps(behaviour.snapshot(Path('.'))))"], ROOT, [ROOT])
    write_atomic(str(REPORTS / "_auditor.json"), json.dumps(json.loads(snap["stdout"]), indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], metavar="SUBSTRING",
                    help="only targets whose name contains this (repeatable)")
    ap.add_argument("--jobs", type=int, default=2, help="audits run in parallel (default 2)")
    ap.add_argument("--lengths", default=",".join(str(n) for n in catalog.LENGTHS),
                    help="comma-separated context lengths (default 8192,32768,131072)")
    ap.add_argument("--render-only", action="store_true", help="only rebuild Markdown from reports/*.json")
    ap.add_argument("--brute-force-only", action="store_true",
                    help="only recompute the brute-force counts stored in reports/*.json (no audit), then render")
    ap.add_argument("--snapshot-only", action="store_true",
                    help="only rewrite reports/_auditor.json (after the targets whose results changed were re-run "
                         "with --only and tests/test_audits_reports.py's local re-runs pass on this machine)")
    args = ap.parse_args(argv)
    if args.snapshot_only:
        write_snapshot()
        return 0

    targets = [t for t in catalog.TARGETS if not args.only or any(s in t.name for s in args.only)]
    if not targets:
        print(f"no target matches {args.only}", file=sys.stderr)
        return 2
    REPORTS.mkdir(parents=True, exist_ok=True)
    if args.brute_force_only:
        for t in targets:
            path = REPORTS / f"{t.name}.json"
            if t.shows and path.is_file():
                doc = json.loads(path.read_text())
                store_brute_force(t, doc)
                write_atomic(str(path), json.dumps(doc, indent=1, sort_keys=False) + "\n")
    if args.render_only or args.brute_force_only:
        render.write_all(REPORTS, HERE / "README.md")
        return 0

    lengths = tuple(int(x) for x in args.lengths.split(",") if x.strip())
    t_start = time.time()
    log(f"installing {len(targets)} targets into {_rel(SITE)} (pip --no-deps --target, pinned)")
    SITE.mkdir(parents=True, exist_ok=True)
    absent = {t.name: missing_sources(t) for t in targets if t.fetch == "git"}
    for name, missing in absent.items():
        if missing:  # a checkout without the local store: its committed report stays as it is
            log(f"  skipped {name}: " + "; ".join(missing))
    targets = [t for t in targets if not absent.get(t.name)]
    with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(install, targets))
    t_installed = time.time()

    ident = auditor_identity()
    jobs = [j for t in targets for j in plan(t, lengths)]
    jobs.sort(key=lambda j: -j.weight)  # longest first keeps both cores busy to the end
    n_cmds = sum(len(j.batch) or 1 for j in jobs)
    log(f"running {n_cmds} audits in {len(jobs)} processes on {args.jobs} workers (lengths "
        f"{', '.join(f'{n:,}' for n in lengths)})")
    results: dict[str, list[dict[str, Any]]] = {t.name: [] for t in targets}
    done = 0
    with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_job, j): j for j in jobs}
        for fut in cf.as_completed(futures):
            j = futures[fut]
            try:
                recs = fut.result()
            except Exception as exc:  # a bug here, not in a target: keep going, record it
                recs = [{"key": j.key, "kind": j.kind, **j.meta, "exit_code": -2, "stderr": repr(exc), "seconds": 0}]
            results[j.target].extend(recs)
            done += 1
            codes = Counter({0: "clean", 1: "findings"}.get(r.get("exit_code"), f"EXIT {r.get('exit_code')}")
                            for r in recs)
            log(f"  [{done:>3}/{len(jobs)}] {time.time() - t_installed:6.0f}s  {j.target}  {j.key}  "
                + ", ".join(f"{k} x{v}" for k, v in sorted(codes.items())))
    t_audited = time.time()

    for t in targets:
        rs = sorted(results[t.name], key=lambda r: r["key"])
        static = next((r for r in rs if r["kind"] == "static"), None)
        if static is not None:
            annotate_static(t, static)
        doc = {
            "target": t.name, "package": t.package, "version": t.version, "pins": list(t.pins),
            "what": t.what, "deps_note": t.deps_note, "runtime_note": t.runtime_note,
            "scanned_files": static_files(t), "hf_models": hf_models_present(t),
            "modules": [[m.label, m.spec] for m in t.module_list()], "lengths": list(target_lengths(t, lengths)),
            "provenance": t.provenance, "fetch": t.fetch,
            "auditor": ident, "results": rs,
        }
        store_brute_force(t, doc)
        write_atomic(str(REPORTS / f"{t.name}.json"), json.dumps(doc, indent=1, sort_keys=False) + "\n")
    timing = {"install_s": round(t_installed - t_start), "audit_s": round(t_audited - t_installed),
              "total_s": round(time.time() - t_start), "jobs": n_cmds, "processes": len(jobs),
              "load_average_at_end": list(os.getloadavg()), "workers": args.jobs,
              "targets": [t.name for t in targets], "date": ident["date"], "machine": ident["machine"]}
    full = not args.only and lengths == tuple(catalog.LENGTHS)
    if full:  # the README quotes the time of the last full regeneration only
        write_atomic(str(REPORTS / "_timing.json"), json.dumps(timing, indent=1) + "\n")
        # what the results depend on, measured on committed inputs (tests/test_audits_reports.py
        # recomputes it: the reports are stale when the auditor behaves differently on them)
        write_snapshot()
    # closed-form counts for the cross-check in the README (`ropelaw exact`, no torch)
    exact_path = REPORTS / "_exact.json"
    closed = json.loads(exact_path.read_text()) if exact_path.is_file() and not full else {}
    for dtype in catalog.DTYPES:
        for n in lengths:
            r = run_cmd(ropelaw_cmd("exact", "--dtype", dtype, "--length", str(n), "--format", "json"), ROOT, [])
            closed[f"{dtype}/{n}"] = parse_json(r["stdout"])
    write_atomic(str(exact_path), json.dumps(closed, indent=1) + "\n")
    render.write_all(REPORTS, HERE / "README.md")
    log(f"done in {time.time() - t_start:.0f}s (install {timing['install_s']}s, audits {timing['audit_s']}s); "
        f"wrote {_rel(REPORTS)}/*.md and {_rel(HERE / 'README.md')}")
    failed = [(t, r["key"]) for t, rs in results.items() for r in rs if r.get("exit_code") not in (0, 1)]
    failed += [(t, a.get("file", "?")) for t, rs in results.items() for r in rs for a in r.get("audits", [])
               if a.get("exit_code") not in (0, 1)]
    if failed:
        log(f"{len(failed)} audits did not run to completion (see the reports): "
            + ", ".join(f"{t}:{k}" for t, k in failed[:10]) + (" ..." if len(failed) > 10 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
