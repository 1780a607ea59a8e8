"""Regenerate the installed transformers' part of ``ropelaw/data/hf_top_keys.json``: the keys of real config.json
files outside the rope blocks (every top-level key, and every key of the language model's section where the file
has one), each changed and removed, as a differential: the perturbed file through transformers' shrunk forward
*and* through ropelaw's reading, compared layer by layer as the real-files differential compares them.

    nice timeout 3000 .venv/bin/python scripts/hf_top_keys.py        # transformers 4.57.1
    nice timeout 3000 .venv-tf5/bin/python scripts/hf_top_keys.py    # transformers 5.23.0
    ... --files N     stop each pass after the first N files that have a key not measured yet (a deterministic subset)
    ... --from PATH   write a part saved by an earlier run (each save also goes to $TMPDIR/hf_top_keys-VERSION.json,
                      so two runs, one per version, never lose each other's part) without measuring
    ... --from PATH --again   the same, its entries whose reading differs (defect / says so / refused-silent / false)
                              measured again
    ... --from PATH --again --keys K1,K2   and every entry whose key is named K1 or K2 (a reading changed there)
    ... --resume      start from the table's part for the installed version: its entries and the files it reached
                      kept as they are (byte-identical), only the files not reached yet measured, in order (so the
                      keys not measured yet); written after every file, cpu_seconds adding up over the runs
    ... --pass NAME   only that pass (model / other), e.g. to finish the first pass in chunks with --files

Two passes over the files: first the keys about the model's layers, then the others (names, versions, dtypes, token
ids, vocabulary, caching, tying, initialisation: ``key_effects.about_the_model``); a run cut short (a time limit)
leaves the files reached in each pass, in order, which ``subset`` states.

The files: ``tests/corpus/hf_files.json`` in its order, found in ``$ROPELAW_CORPUS`` (sha256 checked), that ropelaw
reads as RoPE (the rope-block generator's list, ``scripts/hf_key_perturbation.py``). A key is measured once per
model type (as ropelaw reads it) and key path (relative to the language model's section, ``(root).`` outside it),
in the first file of the type that has it. Per key: one change (``key_effects.top_changes``: the next candidate
only when transformers refuses the first) and the removal. Per change, two forwards (24 positions with small
windows, and the far positions; a third at the unperturbed file's far positions when the change moves them), the
runtime's signature (``key_effects``) compared with the unperturbed file's, and ropelaw's reading of the changed
file compared with the changed forward (``tests/hf_compare.py``, the verdicts of ``tests/test_hf_files.py``). The
reading is ropelaw's own: the RV025 the linter draws from this table (``hf_keys.unfollowed_top_keys``) is off while
measuring, so a defect stays a defect until the reading models the key.

An entry: ``runtime`` reads (a change or the removal changes some layer's rotary, span or query scale) / ignores
(the change and the removal were made and change nothing) / unproven (nothing changed but the change could not be
made, transformers refused it, or the shrunk forward sets the key itself: ``shrunk.shrink_in_place``);
``ropelaw`` follows (every change's reading agrees with its forward) / defect (a layer differs and nothing says
so) / says so (a layer differs, a finding says it is not modelled or refused) / false (ropelaw says transformers
refuses what it builds) / refused-silent (transformers refuses the change, ropelaw says nothing) / not compared
(the unperturbed file itself is not ``right`` in the differential, or a forward was not observed); ``trials``:
each change as made, what the runtime did, ropelaw's verdict. ``tests/test_hf_top_keys.py`` checks the table.
"""

from __future__ import annotations

import gc
import json
import os
import pathlib
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from ropelaw.safeio import write_atomic

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "tests"))
NAME = "hf_top_keys"
ABOUT = ("The keys of real config.json files outside the rope blocks (top level, and the language model's section), "
         "each changed once and removed, through transformers' shrunk forward and ropelaw's reading of the changed "
         "file: versions: transformers version -> {keys: model type (as ropelaw reads it) -> key path (relative to "
         "the section; '(root).' outside it) -> {runtime: reads / ignores / unproven, ropelaw: follows / defect / "
         "says so / false / refused-silent / not compared, trials, file, value (the key's value in the file, as "
         "JSON)}, files: file -> pass (model / other) -> what became of it, subset: pass -> the files reached, "
         "cpu_seconds}. Generated by scripts/hf_top_keys.py; do not edit. tests/test_hf_top_keys.py checks it "
         "against its source and derives a sample again under the installed transformers.")


@dataclass
class Observed:
    """A file (changed or not) as observed: the two forwards' signatures and runs, the far length."""

    near_sig: tuple
    near: Any  # shrunk.FileRun of the near forward (small windows)
    far: Any = None  # shrunk.FileRun at the far positions (None: no far forward)
    far_sig: tuple = ()
    end: int | None = None


def observe(data: dict) -> Observed:
    """The near forward (small windows) and the far one (just past the original length, else at
    max_position_embeddings), as ``key_effects`` and the real-files differential run them."""
    from ropelaw.lint.layers import key_effects, probes, shrunk

    sig, near = key_effects.near_part(data)
    out = Observed(sig, near)
    if near.refused or near.problem:
        return out
    end = shrunk.far_end(near)
    if end and end > probes.LENGTH:
        out.end = end
        out.far = shrunk.run_file(data, offset=end - probes.LENGTH)
        out.far_sig = key_effects.far_signature(out.far, near)
    return out


def agreement(data: dict, label: str, obs: Observed) -> tuple[str, str]:
    """``(verdict, detail)`` of ropelaw's reading of ``data`` against its forwards ``obs``: the verdicts of
    ``tests/test_hf_files.py`` (``differential``: the same ``runs_verdict``), over the same two forwards the signature
    comes from."""
    import test_hf_files

    from ropelaw.lint.layers import probes, shrunk

    real = test_hf_files.ropelaw_reading(data, label)
    near = obs.near
    if real["not_rope"] is not None:
        rotates = near.probe is not None and any(o.rope is not None for o in near.probe.layers)
        return ("silent", f"ropelaw reads no RoPE; the model has {near.rotaries}") if near.rotaries or rotates \
            else ("not-rope", real["not_rope"][:100])
    said = test_hf_files.said_refused(real)
    if said and test_hf_files.runtime_fails(near):
        return "refused", f"{said}"
    if near.refused:
        return "silent", f"transformers refuses it ({near.refused[:120]}); ropelaw: {sorted(real['codes']) or 'ok'}"
    if said and not near.problem:  # a shrunk model that did not build or run is not "transformers builds it"
        return "false", f"transformers builds it; ropelaw: {said}"
    if near.problem or (obs.far is not None and (obs.far.problem or obs.far.refused)):
        return "unobserved", (near.problem or obs.far.problem or obs.far.refused)[:120]
    small, changed = shrunk.with_small_spans(data)
    runs = [(near, test_hf_files.ropelaw_reading(small, label) if changed else real, probes.LENGTH, True)]
    if obs.far is not None:
        runs.append((obs.far, real, obs.end, False))
    verdict, codes, diffs = test_hf_files.runs_verdict(near, runs, real, data)
    if verdict == "differs":
        return "differs", f"{codes}: {diffs[0][:120]}"
    return verdict, "; ".join(diffs[:2])[:200]


def runtime_change(base: Observed, obs: Observed, data: dict) -> str:
    """What the change did to the runtime's signature: ``refused: ...``, ``unobserved: ...``, ``no change`` or
    the first difference (``key_effects.describe``)."""
    from ropelaw.lint.layers import key_effects, probes

    if obs.near.refused:
        return f"refused: {obs.near.refused[:100]}"
    if obs.near.problem or (obs.far is not None and obs.far.problem):
        return f"unobserved: {(obs.near.problem or obs.far.problem)[:100]}"
    if obs.near_sig != base.near_sig:
        return key_effects.describe(base.near_sig, obs.near_sig, "near")
    far_sig = obs.far_sig
    if base.end and obs.end != base.end:  # the change moved the far positions: the unperturbed file's, again
        far_sig = key_effects.far_part(data, base.end - probes.LENGTH, obs.near)
    if base.end and far_sig != base.far_sig:
        return key_effects.describe(base.far_sig, far_sig, "far")
    return "no change"


def trial(base: Observed, data: dict, label: str, change: str) -> dict:
    """One change of the file: ``{change, runtime, ropelaw, detail}``."""
    obs = observe(data)
    verdict, detail = agreement(data, label, obs)
    return {"change": change, "runtime": runtime_change(base, obs, data), "ropelaw": verdict, "detail": detail}


def measure_key(base: Observed, data: dict, path: tuple, label: str, base_verdict: str) -> dict:
    """The entry of one key: its first change transformers takes (``key_effects.top_changes``), and the removal."""
    from ropelaw.lint.layers import key_effects

    value = key_effects.node_at(data, path)
    trials = []
    for cand in key_effects.top_changes(path, value):
        trials.append(trial(base, key_effects.changed(data, [(path, cand)]), label, label_of(cand)))
        if not trials[-1]["runtime"].startswith("refused"):
            break
    trials.append(trial(base, key_effects.changed(data, [(path, key_effects.REMOVE)]), label, "removed"))
    return classify(trials, path[-1] in base.near.shrunk, base_verdict) | {"file": label, "value": label_of(value)}


def label_of(value: Any) -> str:
    """A value as the table names it (a change's label, an entry's ``value``): its JSON, 40 characters."""
    return json.dumps(value)[:40]


AGAIN = ("defect", "says so", "refused-silent", "false")  # the verdicts --again measures again


def measured_again(part: dict, keys_again: tuple = ()) -> dict:
    """``part`` with its entries whose reading differs (:data:`AGAIN`), and those of the keys ``keys_again`` (their
    last part), measured again by this script's
    code (``--from``: a run cut short may have measured them with an earlier one); their files' base forwards
    again, the rest kept."""
    import hf_key_perturbation

    from ropelaw.lint.layers import key_effects

    paths = {f"{e['set']}/{e['file']}": hf_key_perturbation.find(e) for e in
             json.loads(hf_key_perturbation.FILES.read_text())["files"]}
    by_file: dict = {}
    for keys in part["keys"].values():
        for rel, entry in keys.items():
            if (entry["ropelaw"] in AGAIN or rel.split(".")[-1] in keys_again) and paths.get(entry["file"]) is not None:
                by_file.setdefault(entry["file"], []).append((keys, rel))
    for label, todo in sorted(by_file.items()):
        data = json.loads(paths[label].read_text())
        base = observe(data)
        verdict, _ = agreement(data, label, base)
        sec = key_effects.section_path(data)
        for keys, rel in todo:
            path = next(p for p in key_effects.top_key_paths(data) if key_effects.top_relative(p, sec) == rel)
            keys[rel] = measure_key(base, data, path, label, verdict)
            print(f"again: {label[:60]} {rel}: {keys[rel]['runtime']} / {keys[rel]['ropelaw']}", flush=True)
    return part


def with_values(part: dict) -> dict:
    """``part`` with each entry's ``value`` (the key's value in its file) set from the corpus, and without the keys
    ``key_effects.NOT_MEASURED``: for a part saved by an earlier run (``--from``)."""
    import hf_key_perturbation

    from ropelaw.lint.layers import key_effects

    paths = {f"{e['set']}/{e['file']}": hf_key_perturbation.find(e) for e in
             json.loads(hf_key_perturbation.FILES.read_text())["files"]}
    for keys in part["keys"].values():
        for rel in [r for r in keys if r.split(".")[-1] in key_effects.NOT_MEASURED]:  # measured by an earlier run
            del keys[rel]
        for rel, entry in keys.items():
            if "value" not in entry and paths.get(entry["file"]) is not None:
                data = json.loads(paths[entry["file"]].read_text())
                sec = key_effects.section_path(data)
                path = next(p for p in key_effects.top_key_paths(data) if key_effects.top_relative(p, sec) == rel)
                entry["value"] = label_of(key_effects.node_at(data, path))
    return part


def classify(trials: list, harness_sets: bool, base_verdict: str) -> dict:
    """The key's ``runtime`` and ``ropelaw`` verdicts from its trials (see the module docstring)."""
    ran = [t for t in trials if not t["runtime"].startswith(("refused", "unobserved"))]
    if any(t["runtime"] != "no change" for t in ran):
        runtime = "reads"
    elif any(t["change"] != "removed" for t in ran) and len(ran) == len(trials) and not harness_sets:
        runtime = "ignores"
    else:
        runtime = "unproven"
    got = {t["ropelaw"] for t in trials}
    if base_verdict != "right" or "unobserved" in got:
        ropelaw = "not compared"
    else:
        ropelaw = next((name for name, v in (("defect", "silent"), ("false", "false"), ("says so", "differs"))
                        if v in got), "follows")
        if ropelaw == "defect" and all(t["runtime"].startswith("refused") for t in trials if t["ropelaw"] == "silent"):
            ropelaw = "refused-silent"
    lines = [f"{t['change']}: {t['runtime']}; ropelaw {t['ropelaw']}" + (f" ({t['detail']})" if t["detail"] else "")
             for t in trials]
    if harness_sets and runtime == "unproven":
        lines.append("the shrunk forward sets this key itself")
    return {"runtime": runtime, "ropelaw": ropelaw, "trials": [x[:300] for x in lines]}


def measure_file(data: dict, label: str, todo: list, done: dict) -> str:
    """Measure the keys ``todo`` (paths) of one file into ``done`` (relative path -> entry); its status."""
    from ropelaw.lint.layers import key_effects

    base = observe(data)
    if base.near.refused or base.near.problem:
        return f"not built or not observed ({(base.near.refused or base.near.problem)[:80]})"
    base_verdict, detail = agreement(data, label, base)
    sec = key_effects.section_path(data)
    for path in todo:
        done[key_effects.top_relative(path, sec)] = measure_key(base, data, path, label, base_verdict)
    return f"measured: {len(todo)} keys (the file itself: {base_verdict}{': ' + detail[:80] if detail else ''})"


PASSES = ("model", "other")  # the keys about the model's layers first, then the others (key_effects.about_the_model)


def measure_all(limit: int | None, save, prior: dict | None = None, passes: tuple = PASSES) -> None:
    """Every file in order, twice (:data:`PASSES`, or ``passes``; at most ``limit`` files a pass with keys to
    measure); ``save(keys, files)`` after each file measured. ``prior`` (``--resume``): a part written before, its
    entries and the statuses of the files it reached kept; only the files it did not reach are measured."""
    import hf_key_perturbation

    from ropelaw.lint.layers import key_effects

    manifest = json.loads(hf_key_perturbation.FILES.read_text())["files"]
    keys: dict = dict((prior or {}).get("keys", {}))
    files: dict = {f"{e['set']}/{e['file']}": {p: "not reached" for p in PASSES} for e in manifest}
    for label, status in (prior or {}).get("files", {}).items():
        if label in files:
            files[label].update(status)
    for which in passes:
        ran, unsaved = 0, False
        for e in manifest:
            label = f"{e['set']}/{e['file']}"
            if files[label][which] != "not reached":  # reached by an earlier run (--resume): kept as it is
                continue
            path = hf_key_perturbation.find(e)
            data = json.loads(path.read_text()) if path is not None else None
            reading = hf_key_perturbation.ropelaw_reading(data, path) if path is not None and data is not None else None
            if reading is None:
                files[label][which], unsaved = "not in the corpus" if data is None else "ropelaw reads no RoPE", True
                continue
            done = keys.setdefault(reading[0], {})
            sec = key_effects.section_path(data)
            todo = [p for p in key_effects.top_key_paths(data) if key_effects.top_relative(p, sec) not in done
                    and key_effects.about_the_model(p) == (which == "model")]
            if not todo:
                files[label][which], unsaved = "no key left to measure", True
                continue
            if limit is not None and ran >= limit:
                break
            t = time.process_time()
            files[label][which] = measure_file(data, label, todo, done)
            ran += 1
            print(f"{time.process_time() - t:6.1f}s {which} {reading[0]}: {files[label][which][:90]}  [{label[:60]}]",
                  flush=True)
            save(keys, files)
            unsaved = False
            gc.collect()
        if unsaved:  # the files reached after the last one measured (nothing to measure in them)
            save(keys, files)


def main() -> None:
    import torch
    import transformers

    from ropelaw import data
    from ropelaw.lint.dialects import hf

    from ropelaw.lint.dialects import hf_keys
    from ropelaw.lint.layers import shrunk

    torch.set_num_threads(1)
    shrunk.LEAN["on"] = True  # no gc.collect after each forward (measure_all collects after each file)
    hf_keys.TOP_TABLE["on"] = False  # ropelaw's own reading, not the RV025 this table feeds
    version = hf.SEMANTICS[0] if transformers.__version__.startswith("4.") else hf.SEMANTICS[1]
    if transformers.__version__ != version:
        raise SystemExit(f"transformers {transformers.__version__} is installed; the table is for {hf.SEMANTICS}")
    os.environ["ROPELAW_HF_SEMANTICS"] = version
    limit = int(sys.argv[sys.argv.index("--files") + 1]) if "--files" in sys.argv else None
    passes = (sys.argv[sys.argv.index("--pass") + 1],) if "--pass" in sys.argv else PASSES
    if not set(passes) <= set(PASSES):
        raise SystemExit(f"--pass: one of {PASSES}")
    prior = json.loads(pathlib.Path(data.path(NAME)).read_text())["versions"].get(version) \
        if "--resume" in sys.argv else None
    start = time.process_time() - (prior or {}).get("cpu_seconds", 0)
    side = pathlib.Path(tempfile.gettempdir(), f"{NAME}-{version}.json")

    def write(part: dict) -> None:
        data.write_versions(NAME, version, part, about=ABOUT, generated_by="scripts/hf_top_keys.py",
                            source="tests/corpus/hf_files.json's files under {versions} (shrunk forwards)")

    if "--from" in sys.argv:
        part = json.loads(pathlib.Path(sys.argv[sys.argv.index("--from") + 1]).read_text())
        again = tuple(sys.argv[sys.argv.index("--keys") + 1].split(",")) if "--keys" in sys.argv else ()
        if "--again" in sys.argv:  # the re-measurement's CPU time adds up with the runs that wrote the part
            t = time.process_time()
            part = measured_again(part, again)
            part["cpu_seconds"] = part.get("cpu_seconds", 0) + round(time.process_time() - t)
        write(with_values(part))
        return

    def save(keys: dict, files: dict) -> None:
        reached = {p: sum(v[p] != "not reached" for v in files.values()) for p in PASSES}
        subset = {p: f"the first {n} files of tests/corpus/hf_files.json ({len(files)}), in its order" for p, n in
                  reached.items()}
        part = {"keys": {t: dict(sorted(k.items())) for t, k in sorted(keys.items()) if k}, "files": files,
                "subset": subset, "cpu_seconds": round(time.process_time() - start)}
        write_atomic(str(side), json.dumps(part))  # the partial result, for --from after an interrupted run
        write(part)

    measure_all(limit, save, prior, passes)
    print(f"{time.process_time() - start:.0f} CPU-s (transformers {version}) -> {data.path(NAME)}")


if __name__ == "__main__":
    main()
