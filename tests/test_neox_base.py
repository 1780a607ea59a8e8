"""GPT-NeoX's base key (ropelaw/lint/table_rows.py row ``base_key``): transformers runs ``rotary_emb_base`` and
ignores a top-level ``rope_theta``, in both versions ropelaw follows.

4.57.1 configuration_gpt_neox.py: ``self.rope_theta = rotary_emb_base`` (default 10000) after the kwargs, so a
``rope_theta`` of the file is overwritten; 5.23.0 ``convert_rope_params_to_dict``:
``rope_parameters.setdefault("rope_theta", kwargs.pop("rotary_emb_base", default_theta))``, the top-level
``rope_theta`` not read.

- ``test_reading_is_the_runtime`` (``-m hf``): each case's inv_freq as the installed transformers builds
  GPTNeoXConfig and its rotary, against ropelaw's reading (relative 1e-6: float32).
- ``test_the_ignored_key_is_said``: RV019, a warning, names the ignored key and the base that runs, when the two
  differ (and only then).
- ``test_plan_writes_the_key_that_runs``: ``plan --apply base`` writes ``rotary_emb_base`` (and the ignored
  ``rope_theta`` the same, so the file states one base), and the edited file reads back as the plan's base.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from ropelaw.lint.check import lint_config
from ropelaw.lint.dialects import hf
from ropelaw.lint.loader import load_mapping, parse_text

V4, V5 = hf.SEMANTICS
D = 64  # hidden_size 256 / 4 heads, rotary_pct 1
NEOX = {"model_type": "gpt_neox", "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2,
        "intermediate_size": 64, "vocab_size": 64, "max_position_embeddings": 2048, "rotary_pct": 1.0}
# (keys written, the base that runs: the file's rotary_emb_base, else GPTNeoXConfig's default 10,000)
CASES = [({"rope_theta": 1e6, "rotary_emb_base": 1e4}, 1e4),
         ({"rope_theta": 1e4, "rotary_emb_base": 1e6}, 1e6), ({"rope_theta": 1e6}, 1e4),
         ({"rotary_emb_base": 1e6}, 1e6), ({"rope_theta": 5e5, "rotary_emb_base": 5e5}, 5e5)]
# 5.23.0 only (4.57.1 reads no rope_parameters): the block's rope_theta runs, setdefault keeps it over
# rotary_emb_base, and neither top-level key is then said to run
BLOCK = {"rope_parameters": {"rope_type": "default", "rope_theta": 1e6}, "rotary_emb_base": 1e4, "rope_theta": 1e4}
IDS = ["theta1e6-base1e4", "theta1e4-base1e6", "theta1e6-only", "base1e6-only", "equal5e5"]


def lint(cfg: dict, semantics: str, monkeypatch):
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", semantics)
    data, pos = parse_text(json.dumps(cfg, indent=1), "json")
    return lint_config(load_mapping(data, pos, path="config.json"))


def ropelaw_inv_freq(res) -> list[float]:
    [a] = [a for a in res.layers if a.spec is not None]
    return [float(t) for t in a.scheme_result.inv_freq]


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("keys,runs", CASES, ids=IDS)
def test_reading_is_the_runtime(keys, runs, monkeypatch):
    """The installed transformers' inv_freq is rotary_emb_base's (its default 10,000 when absent), never
    rope_theta's: ropelaw reads the same frequencies."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import hf_runtime as hr

    installed = V4 if hr.transformers_version().startswith("4.") else V5
    o = hr.run_config({**NEOX, **keys})
    assert not o.raised, (o.stage, o.error)
    inv, _ = hr.rotary_tables(o.rotary)["all"]
    theirs = [float(x) for x in inv]
    assert len(theirs) == D // 2
    # the runtime's base, from its second frequency base^(-2/64): the one the CASES table names
    assert math.isclose(theirs[1] ** (-D / 2), runs, rel_tol=1e-4), theirs[1] ** (-D / 2)
    ours = ropelaw_inv_freq(lint({**NEOX, **keys}, installed, monkeypatch))
    assert all(math.isclose(a, b, rel_tol=1e-6) for a, b in zip(ours, theirs, strict=True)), (ours, theirs)


@pytest.mark.parametrize("semantics", hf.SEMANTICS)
@pytest.mark.parametrize("keys,runs", CASES, ids=IDS)
def test_the_ignored_key_is_said(keys, runs, semantics, monkeypatch):
    """RV019 (a warning) at rope_theta when it differs from the base that runs; none when they agree or it is
    absent. ropelaw's base is the one that runs, and its source is rotary_emb_base or the class default."""
    res = lint({**NEOX, **keys}, semantics, monkeypatch)
    [g] = [a for a in res.layers if a.spec is not None]
    assert g.spec.base == runs
    ignored = [f for f in res.findings if f.code == "RV019"]
    if "rope_theta" in keys and keys["rope_theta"] != runs:
        [f] = ignored
        assert f.severity == "warning" and f.data.get("key", "rope_theta") == "rope_theta"
        assert f.message.startswith(f"rope_theta {'1e6' if keys['rope_theta'] == 1e6 else '10,000'} is ignored by "
                                    f"transformers {semantics}: GPTNeoXConfig runs rotary_emb_base"), f.message
        assert ("its default" in f.message) == ("rotary_emb_base" not in keys)
    else:
        assert not ignored, [f.message for f in ignored]
    assert "RV025" not in {f.code for f in res.findings}  # rotary_emb_base is read: not "unread"


@pytest.mark.hf
@pytest.mark.torch
def test_a_block_base_wins_under_5(monkeypatch):
    """5.23.0: rope_parameters' rope_theta 1e6 runs over rotary_emb_base 1e4 (measured here), ropelaw reads 1e6 and
    says nothing about the top-level keys (RV019 would name rotary_emb_base as the base that runs)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import hf_runtime as hr

    if hr.transformers_version().startswith("4."):
        pytest.skip("4.57.1 has no rope_parameters")
    o = hr.run_config({**NEOX, **BLOCK}, forward=False)
    assert not o.raised, (o.stage, o.error)
    inv, _ = hr.rotary_tables(o.rotary)["all"]
    assert math.isclose(float(inv[1]) ** (-D / 2), 1e6, rel_tol=1e-4)
    res = lint({**NEOX, **BLOCK}, V5, monkeypatch)
    [g] = [a for a in res.layers if a.spec is not None]
    assert g.spec.base == 1e6
    assert "RV019" not in {f.code for f in res.findings}, [f.message for f in res.findings]


@pytest.mark.parametrize("keys", [{"rope_theta": 1e6}, {"rope_theta": 1e6, "rotary_emb_base": 1e4}],
                         ids=["theta-only", "both"])
def test_plan_writes_the_key_that_runs(keys, tmp_path):
    """`ropelaw plan --apply base`: the new base goes to rotary_emb_base (what transformers reads) and the file's
    rope_theta the same; the read-back (plan_check) finds the plan's base, 2.7e10 ... as the edited file's."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**NEOX, "max_position_embeddings": 131072, **keys}, indent=1) + "\n")
    done = subprocess.run([sys.executable, "-m", "ropelaw", "plan", str(path), "--train", "4096", "--target",
                           "131072", "--apply", "base", "-o", str(tmp_path / "out.json")],
                          capture_output=True, text=True, env={**os.environ, "ROPELAW_HF_SEMANTICS": V5})
    assert done.returncode == 0, done.stderr
    edited = json.loads((tmp_path / "out.json").read_text())
    assert edited["rotary_emb_base"] == edited["rope_theta"] > 1e6
    monkey = pytest.MonkeyPatch()
    try:
        res = lint(edited, V5, monkey)
    finally:
        monkey.undo()
    [g] = [a for a in res.layers if a.spec is not None]
    assert g.spec.base == edited["rotary_emb_base"]
    assert "RV019" not in {f.code for f in res.findings}


@pytest.mark.hf
@pytest.mark.torch
def test_axolotl_block_override_base_is_read(tmp_path, monkeypatch):
    """axolotl 0.18.0 sets an ``overrides_of_model_config.rope_scaling`` with its own rope_theta on the GPT-NeoX
    config transformers 5 built (``setattr``, loaders/utils.py load_model_config, as tests/differential/
    test_diff_axolotl.py runs it): the mapping's rope_theta 1e6 runs (measured here: setattr on the installed
    GPTNeoXConfig), and ropelaw reads 1e6 (the override feeds rotary_emb_base too, the key the engine reads)."""
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    import hf_runtime as hr

    if hr.transformers_version().startswith("4."):
        pytest.skip("axolotl 0.18.0 runs transformers 5")
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({**NEOX, "rotary_emb_base": 1e4}))
    block = {"rope_type": "linear", "factor": 2.0, "rope_theta": 1e6}
    import warnings

    config = transformers.AutoConfig.from_pretrained(str(model))
    with warnings.catch_warnings():  # transformers 5: "`rope_scaling` is deprecated ..." (axolotl still sets it)
        warnings.simplefilter("ignore", FutureWarning)
        config.rope_scaling = block
    rotary = hr.rotary_class(config)(config=config)
    theirs = [float(x) for x in hr.rotary_tables(rotary)["all"][0]]
    assert math.isclose(theirs[1] * 2 ** 1, 1e6 ** (-2 / D), rel_tol=1e-6)  # linear: base^(-2/64) / 2
    ax = tmp_path / "ax.yml"
    ax.write_text(f"base_model: {model}\nsequence_len: 2048\noverrides_of_model_config:\n  rope_scaling:\n"
                  "    rope_type: linear\n    factor: 2.0\n    rope_theta: 1000000.0\n")
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", V5)
    from ropelaw.lint.loader import load_config

    ours = ropelaw_inv_freq(lint_config(load_config(str(ax))))
    assert all(math.isclose(a, b, rel_tol=1e-6) for a, b in zip(ours, theirs, strict=True)), (ours, theirs)
