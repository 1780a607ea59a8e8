"""Runtime audit of every cache layout and of the calling conventions of issue 21, checked independently.

Fixtures: tests/fixtures/runtime/layouts.py (written here, imitating gpt-fast, lit-llama, mistral-inference,
DeepSeek-V3, nanochat and xformers). Independent derivations:
- a stacked (L, d/2, 2) cache is read with all its pairs: rotary dims = n_elem, the frequencies recovered
  for every pair equal the float32 formula, every row distinct (brute force over the bf16 rows);
- frequencies rounded to bf16 in the module: the drift equals max_i |bf16(theta_i) / theta_i - 1| over the
  float32 frequencies (ml_dtypes), reported once as RP308 while every row stays exact;
- positions passed through bf16 (xformers): distinct encodings = distinct bf16 values of 0..L-1 (641 of 2,048);
- a table of 64 rows asked for 128 positions: exit 2 naming 64.
"""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ropelaw.audit.probe import Probe  # noqa: E402
from ropelaw.audit.measure import magnitude_tolerance, scenario_magnitude_tolerance  # noqa: E402
from ropelaw.audit.runtime import audit_module  # noqa: E402
from ropelaw.cli import main  # noqa: E402
from ropelaw.errors import UsageError  # noqa: E402

pytestmark = pytest.mark.torch

FIX = os.path.join(os.path.dirname(__file__), "fixtures", "runtime", "layouts.py")
L = 2048


def target(name: str) -> str:
    return f"{FIX}:{name}"


def theta32(d: int, base: float = 10000.0) -> np.ndarray:
    return (1.0 / (base ** (torch.arange(0, d, 2).float() / d))).double().numpy()


def bf16(x) -> np.ndarray:
    return np.asarray(x, np.float64).astype(ml_dtypes.bfloat16).astype(np.float64)


def test_stacked_cache_is_read_with_every_pair():
    a = audit_module(target("gpt_fast_cache"), "bf16", L)
    assert (a.output, a.layout, a.rotary_dim) == ("stacked", "per-pair", 128)
    assert "stack(cos, sin) on axis 2" in a.call
    assert (a.base, a.base_source) == (10000.0, "inferred")
    for s in a.scenarios:
        assert (s.exact, s.distinct, s.path) == (L, L, "clean")
        assert len(s.effective_frequencies) == 64  # every pair measured, not pair 0 alone
    assert a.findings == []
    # brute force: the bf16 rows of the float32 angles are all distinct
    t = np.arange(L, dtype=np.float32)[:, None] * theta32(128).astype(np.float32)[None, :]
    rows = np.concatenate([bf16(np.cos(t.astype(np.float64))), bf16(np.sin(t.astype(np.float64)))], axis=1)
    assert np.unique(rows, axis=0).shape[0] == L


def test_stacked_cache_with_bf16_frequencies_is_a_finding():
    a = audit_module(target("gpt_fast_rounded_frequencies"), "bf16", L)
    assert (a.layout, a.rotary_dim, a.base, a.frequencies_rounded_to) == ("per-pair", 128, 10000.0, "bf16")
    t = theta32(128)
    nominal = 10000.0 ** (-2.0 * np.arange(64) / 128)
    expected = float(np.max(np.abs(bf16(t) / nominal - 1)))
    assert a.reference_drift == pytest.approx(expected, rel=1e-9)
    assert a.reference_phase_error == pytest.approx((L - 1) * float(np.max(np.abs(bf16(t) - nominal))), rel=1e-9)
    for s in a.scenarios:
        assert (s.exact, s.distinct) == (L, L)  # consistent with itself: only the frequencies show it
        assert s.frequency_drift == pytest.approx(expected, rel=1e-9)
    assert [f.code for f in a.findings] == ["RP308"]  # once, not RP303 in every scenario
    assert "rounded to bf16" in a.findings[0].message


def test_stack_on_a_leading_axis_rotate_half():
    a = audit_module(target("lit_llama_stack0"), "bf16", L, ["cast"])
    assert (a.output, a.layout, a.rotary_dim) == ("stacked", "rotate-half", 128)
    assert a.scenarios[0].path == "clean" and a.findings == []


def test_required_base_is_filled_from_base_or_refused_naming_the_flag(capsys):
    with pytest.raises(UsageError, match=r"`theta` is the RoPE base and has no default: give it with --base"):
        audit_module(target("mistral_precompute_freqs_cis"), "bf16", 256)
    assert main(["audit", "module", target("mistral_precompute_freqs_cis"), "--length", "256"]) == 2
    assert "--base" in capsys.readouterr().err
    a = audit_module(target("mistral_precompute_freqs_cis"), "bf16", L, base=1e6)
    assert (a.base, a.base_source, a.output, a.rotary_dim) == (1e6, "given", "complex", 128)
    assert "theta=1,000,000 (--base)" in a.call
    t = 1.0 / (1e6 ** (torch.arange(0, 128, 2).float() / 128)).double().numpy()
    nominal = 1e6 ** (-2.0 * np.arange(64) / 128)
    for s in a.scenarios:  # the float32 frequencies of base 1e6: float32 noise, nothing more
        assert s.path == "clean" and s.frequency_drift <= float(np.max(np.abs(t / nominal - 1))) + 1e-7
    assert a.findings == []


def test_length_names_and_a_refusal_that_lists_what_it_read():
    a = audit_module(target("maxseqlen_builder"), "bf16", 512, ["default"])
    assert "maxseqlen=L" in a.call and a.rotary_dim == 128

    def odd(dim, foo=3):
        return torch.zeros(4)

    with pytest.raises(ValueError) as err:
        audit_module(lambda: odd, "bf16", 64, ["default"])
    msg = str(err.value)
    assert "parameters  are" not in msg and "dim: the head dim" in msg and "foo: no role (has a default)" in msg


@pytest.mark.parametrize("name", ["deepseek_table", "deepseek_table_positions"])
def test_table_shorter_than_length_is_exit_2_naming_its_rows(name, capsys):
    with pytest.raises(UsageError, match=r"table has 64 rows \(positions 0\.\.63\), shorter than the 128"):
        audit_module(target(name), "bf16", 128)
    assert main(["audit", "module", target(name), "--length", "32k"]) == 2
    err = capsys.readouterr().err
    assert "64 rows" in err and "RP307" not in err and err.count("\n") == 1
    a = audit_module(target(name), "bf16", 64, ["default"])
    assert a.scenarios[0].path == "clean"


def test_bf16_tables_of_a_float32_build_are_still_geometric():
    """nanochat returns bf16 cos/sin from float32 angles: the base is inferred, not 'not geometric'."""
    a = audit_module(target("nanochat_tables"), "bf16", L)
    assert (a.base, a.base_source, a.frequencies_rounded_to) == (10000.0, "inferred", None)
    assert all(s.path == "clean" for s in a.scenarios) and a.findings == []


def test_xformers_positions_in_input_dtype_every_scenario_no_magnitude_finding():
    a = audit_module(target("xformers_rotary"), "bf16", L)
    distinct = int(np.unique(bf16(np.arange(L, dtype=np.float64))).size)
    assert distinct == 641
    for s in a.scenarios:
        assert s.distinct == distinct and s.path == "product rounded"
    codes = [(f.code, f.data["scenario"]) for f in a.findings]
    assert ("RP302", "autocast-cuda") in codes and not any(c == "RP306" for c, _ in codes)


def test_magnitude_tolerance_of_the_scenario_dtype():
    # a bf16 table returned in float32: its own rounding (2u of bf16) is output rounding, not a scale
    assert scenario_magnitude_tolerance("float32", "bf16") == magnitude_tolerance("bfloat16") == 2 * 2.0**-8 + 2.0**-20
    assert scenario_magnitude_tolerance("bfloat16", "fp16") == magnitude_tolerance("bfloat16")
    assert scenario_magnitude_tolerance("float32", "fp32") == magnitude_tolerance("float32")


def test_an_angles_table_with_a_pair_axis_is_not_read_as_stacked_cos_sin():
    """(L, k, 2) angles are 0 at position 0 on both entries: angles, not a stack of (cos, sin)."""
    def angles(seq_len, dim):
        t = torch.arange(seq_len, dtype=torch.float32)[:, None] * (0.5 ** torch.arange(dim // 4).float())
        return torch.stack([t, t / 3], dim=-1)  # (L, d/4, 2)

    probe = Probe.detect(angles, torch.float32, 5, 16)
    assert probe.output == "angles" and probe.pair_axis is None


def test_bf16_cache_returned_in_float32_is_still_geometric():
    """vLLM 0.33.0 (and sglang, derived from it) keep the cos/sin cache in the model dtype (bf16 by default)
    and convert it to the query's dtype: a float32 output that holds only bf16 values."""
    from ropelaw.audit.scenarios import values_precision

    fw = os.path.join(os.path.dirname(__file__), "fixtures", "runtime", "frameworks.py")
    a = audit_module(f"{fw}:vllm_forward_native", "bf16", 4096, ["default"])
    assert (a.base, a.base_source) == (10000.0, "inferred") and a.scenarios[0].path == "clean"
    c = np.cos(np.arange(16)[:, None] * theta32(16)[None, :]).astype(np.float32)
    assert values_precision(c, c, "float32") == "float32"
    assert values_precision(bf16(c), bf16(c), "float32") == "bfloat16"
    assert values_precision(c.astype(np.float16), c.astype(np.float16), "float32") == "float16"
    assert values_precision(c, c, "bfloat16") == "bfloat16"


def test_a_partial_keeps_the_values_it_binds():
    a = audit_module(target("gpt_fast_partial"), "bf16", 512, ["default"])
    assert a.rotary_dim == 64 and "n_elem" not in a.call and a.scenarios[0].path == "clean"


def test_a_complex_rope_first_in_a_tuple_is_read_as_complex():
    # (L, dim) complex cat((rope, rope), 1): rotate-half, rotary dims = its width (not 2 x 128 pairs)
    a = audit_module(target("opennmt_rope"), "bf16", 512, ["default"])  # dim given by the probe (dim=128)
    assert (a.output, a.layout, a.rotary_dim, a.base) == ("complex", "rotate-half", 128, 10000.0)
    assert (a.scenarios[0].path, a.scenarios[0].exact, a.scenarios[0].distinct) == ("clean", 512, 512)
    assert "dim=128" in a.call


# ---------------------------------------------------------------- issue 33


def test_2x2_rotation_matrices_are_read_with_every_pair(capsys):
    """Flux's rope returns [[cos, -sin], [sin, cos]] per pair: read as "rotary dims 2" with a made-up drift
    before; now 128 rotary dims, base 10,000, every position exact (float64 angles), exit 0."""
    a = audit_module(target("flux_rope_factory"), "bf16", 128, ["cast", "default"])
    assert (a.rotary_dim, a.layout, a.base) == (128, "per-pair", 10000.0)
    assert a.call.endswith("-> 2x2 rotation matrices [[cos, -sin], [sin, cos]]")
    assert [(s.exact, s.path) for s in a.scenarios] == [(128, "clean"), (128, "clean")] and a.findings == []


def test_2d_axial_layout_is_refused_in_one_line(capsys):
    """A 2-D axial rotary read along one axis of positions was "guessed" (RP302 in every scenario): the float32
    build's phase at 16 is not twice its phase at 8, so it is refused, exit 2, one line."""
    code = main(["audit", "module", target("axial_2d"), "--length", "1024"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("ropelaw: error: layout not identified: the float32 build's output")
    assert "pair 0's phase at position 16 is not twice its phase at 8" in err


def test_frequencies_are_those_the_module_multiplies_by():
    """torchscale's XPos multiplies float32 positions by float32 frequencies and rounds the angles to fp16:
    at powers of two that reads as frequencies rounded to fp16. The count judged against the frequencies
    the module multiplies by (a brute force: fp16 angles, fp16 sin / cos, w = the float32 frequencies)."""
    a = audit_module(target("xpos_rounded_angles"), "fp16", L, ["cast"])
    s = a.scenarios[0]
    w = (1.0 / (10000 ** (torch.arange(0, 64) / 64))).double().numpy()  # (32,) as the module computes them
    p = np.arange(L, dtype=np.float64)
    ang = (p[:, None] * w[None, :]).astype(np.float32).astype(np.float16).astype(np.float64)
    c = np.cos(ang).astype(np.float16).astype(np.float64)
    sn = np.sin(ang).astype(np.float16).astype(np.float64)
    err = np.arctan2(sn, c) - p[:, None] * w[None, :]
    err -= 2 * np.pi * np.round(err / (2 * np.pi))
    exact = int((np.linalg.norm(err, axis=1) < np.linalg.norm(w) / 2).sum())
    assert s.frequency_source == "float32 build" and s.exact == exact
