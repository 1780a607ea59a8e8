"""MaxText's own config loading and rotary against ropelaw's reading, on every MaxText config of the corpus
(``frameworks-examples/maxtext``: AI-Hypercomputer/maxtext@e591f30c ``src/maxtext/configs``, the rows of
SOURCES.tsv, with the files kept elsewhere in the corpus) and the entries of ``maxtext_manifest.json``
(files used here that are not in the corpus yet: skipped and listed until they are).

For each file, MaxText (``maxtext_runtime.py``: maxtext==0.2.4 from its wheel, jax on CPU) composes the
config (``pyconfig.initialize``: a model file ``configs/models/<name>.yml`` runs as ``base.yml
model_name=<name>``; a distillation config builds the student with ``**student_overrides`` and the teacher
with ``**teacher_overrides``, as ``train_distill.py`` does) and builds each layer kind's rotary
(``Attention.init_rotary_embedding``); ropelaw reads the file. Compared: the rotary dims, the base, every
pair's frequency (angle at position 1), the attention factor (the magnitude of a rotated unit vector),
the layer kinds (global / local sliding and the window), the training length (``max_target_length``) and
whether the scheme is in force from the first step (no ``load_parameters_path``). Each file's outcome is
one of ``right``, ``cannot`` (ropelaw says it cannot read it, and why) or ``refused`` (MaxText itself
raises), recorded in ``maxtext_expected.json``; a misread fails.

Runs in the CI step "jax" (``ROPELAW_FRAMEWORK_DL`` holding the maxtext wheel, jax installed); otherwise
skipped, naming what is missing.
"""

from __future__ import annotations

import json
import math
import os
import pathlib

import corpus_examples as examples
import pytest

from ropelaw.errors import UsageError
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import ModelNeeded, NoRopeFound, NotARopeConfig, load_config

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DL = pathlib.Path(os.environ.get("ROPELAW_FRAMEWORK_DL", ROOT.parent / "shared" / "dl"))
EXPECTED = json.loads((HERE / "maxtext_expected.json").read_text())
MANIFEST = json.loads((HERE / "maxtext_manifest.json").read_text())


def corpus_file(key: str) -> pathlib.Path:
    return examples.path_of("maxtext", key, MANIFEST)


@pytest.fixture(scope="module")
def mx(tmp_path_factory):
    pytest.importorskip("jax", reason="jax[cpu]: the CI step 'jax' of .ci/run installs it")
    import maxtext_runtime as rt

    if rt.wheel(str(DL)) is None:
        pytest.skip(f"no maxtext=={rt.VERSION} wheel under {DL} (pip download --no-deps --python-version 3.12 "
                    f"--only-binary=:all: -d {DL}/maxtext maxtext=={rt.VERSION}; ROPELAW_FRAMEWORK_DL)")
    return rt, rt.load(str(DL), str(tmp_path_factory.getbasetemp()))


def ropelaw_reading(path: pathlib.Path):
    """``(LintResult, None)`` or ``(None, why ropelaw cannot read it)``."""
    try:
        return lint_config(load_config(str(path))), None
    except (NoRopeFound, NotARopeConfig, ModelNeeded, UsageError) as exc:
        return None, f"{type(exc).__name__}: {exc}"


BASE = "src/maxtext/configs/base.yml"
# the one line of the corpus's base.yml (e591f30c) that maxtext 0.2.4 does not know (its pydantic config refuses it)
BASE_GAP = 'managed_mldiagnostics_storage_path: "" # Optional parameter to use a separate storage path for ' \
    'mldiagnostic data (profile, telemetry etc.) than the base directory path.'


def maxtext_models(rt, m, key: str, path: pathlib.Path) -> dict:
    """``{role: composed config}``: "model" for a plain run; "student" and "teacher" for a distillation config.
    A model file runs as ``base.yml model_name=<its name>``; base.yml is the wheel's (the corpus copy adds
    :data:`BASE_GAP`, checked here)."""
    import yaml

    if key == BASE:
        extra = set(path.read_text().splitlines()) - set(pathlib.Path(m.configs, "base.yml").read_text().splitlines())
        assert extra == {BASE_GAP}, extra
        return {"model": rt.compose(m, [os.path.join(m.configs, "base.yml")])}
    if key.startswith("src/maxtext/configs/models/"):
        return {"model": rt.compose(m, [os.path.join(m.configs, "base.yml"), f"model_name={path.stem}"])}
    data = yaml.safe_load(path.read_text()) or {}
    if isinstance(data.get("student_overrides"), dict) or isinstance(data.get("teacher_overrides"), dict):
        return {"student": rt.compose(m, [str(path)], **(data.get("student_overrides") or {})),
                "teacher": rt.compose(m, [str(path)], **(data.get("teacher_overrides") or {}))}
    return {"model": rt.compose(m, [str(path)])}


def value(x):
    return getattr(x, "value", x)


def compare(rt, m, cfg, groups: list, role: str) -> list[str]:
    """What differs between MaxText's layers of ``cfg`` and ropelaw's ``groups`` (LayerAnalysis)."""
    bad = []
    kinds = rt.attention_types(m, cfg)
    mla = value(cfg.attention_type) == "mla"
    for kind in sorted(set(kinds)):
        local = kind == "local_sliding"
        mine = [g for g in groups if ("local" in g.label) == local] or groups
        if not mine:
            bad.append(f"{role} {kind}: ropelaw has no such layer group ({', '.join(g.label for g in groups)})")
            continue
        g = mine[0]
        module = rt.rotary(m, cfg, kind)
        d = cfg.qk_rope_head_dim if mla else cfg.head_dim
        angles, magnitude = rt.pair_angles(module, d)
        where = f"{role} {kind}"
        if g.spec.d != 2 * len(angles):
            bad.append(f"{where}: d {g.spec.d} vs MaxText {2 * len(angles)}")
            continue
        ours = sorted((float(x) for x in g.scheme_result.inv_freq), reverse=True)
        worst = max(abs(a - o) / o for a, o in zip(angles, ours, strict=True))
        if worst > 2e-5:
            bad.append(f"{where}: frequencies differ by {worst:.2e} (relative; base {g.spec.base}, scheme "
                       f"{g.spec.scheme})")
        if not math.isclose(magnitude, g.scheme_result.attention_factor, rel_tol=2e-6):
            bad.append(f"{where}: attention factor {g.scheme_result.attention_factor} vs MaxText {magnitude}")
        window = cfg.sliding_window_size if local else None
        if (g.window if local else None) != window:
            bad.append(f"{where}: window {g.window} vs MaxText {window}")
        if g.spec.train_len != cfg.max_target_length:
            bad.append(f"{where}: trained {g.spec.train_len} vs MaxText max_target_length {cfg.max_target_length}")
        loaded = bool(cfg.load_parameters_path or cfg.load_full_state_path) or role == "teacher"  # never trained
        scaled = g.spec.scheme != "default"
        if bool(g.spec.pretrained_with_scheme) != (scaled and not loaded):
            weights = "loads " + str(cfg.load_parameters_path or cfg.load_full_state_path) if loaded else "no weights"
            bad.append(f"{where}: pretrained_with_scheme {g.spec.pretrained_with_scheme} vs MaxText {weights}")
    return bad


def outcome(rt, m, key: str) -> tuple[str, str]:
    path = corpus_file(key)
    result, why = ropelaw_reading(path)
    try:
        models = maxtext_models(rt, m, key, path)
    except Exception as exc:  # MaxText's own refusal (pydantic validation, a missing file ...)
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip() and "errors.pydantic.dev" not in ln]
        text = f"{type(exc).__name__}: {' | '.join(lines)[:400]}"
        return "refused", text + (f" | ropelaw: {why}" if why else "")
    if result is None or any(f.code in ("RV030", "RV031") for f in result.findings):
        said = why or "; ".join(f"{f.code} {f.message[:120]}" for f in result.findings if f.code in ("RV030", "RV031"))
        return "cannot", said
    bad = []
    for role, cfg in models.items():
        groups = [g for g in result.layers if g.spec is not None and g.group.rope]
        if role != "model":
            groups = [g for g in groups if g.label.startswith(role + " ")]
        bad += compare(rt, m, cfg, groups, role)
    return ("misread", "; ".join(bad)) if bad else ("right", "")


def keys() -> list[str]:
    return examples.keys("maxtext", MANIFEST)


@pytest.mark.parametrize("key", keys() or ["(no corpus)"])
def test_maxtext_file(mx, key):
    if key == "(no corpus)":
        pytest.skip(f"no {examples.SOURCES} (ROPELAW_CORPUS)")
    rt, m = mx
    got, why = outcome(rt, m, key)
    want = EXPECTED.get(key)
    assert want is not None, f"{key}: not in maxtext_expected.json (got {got}: {why})"
    assert got == want["outcome"] and want.get("because", "") in why, (key, got, why)


def test_expected_covers_every_file():
    """Every corpus row and manifest entry has a recorded outcome, and no recorded outcome is a misread."""
    if not examples.SOURCES.is_file():
        pytest.skip(f"no {examples.SOURCES} (ROPELAW_CORPUS)")
    assert set(EXPECTED) == set(keys())
    assert {e["outcome"] for e in EXPECTED.values()} <= {"right", "cannot", "refused"}
