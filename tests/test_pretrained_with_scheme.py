"""A scheme in force from the first pre-training step (RopeSpec.pretrained_with_scheme).

Liu et al. 2023 (arXiv 2310.05209), Lemma 1 defines the critical dimension by the periods of
pre-training: T_n = 2*pi/theta_n <= T_train for the first d_extra/2 pairs, > T_train after. When
a scheme is used from step 0 (torchtitan's Llama 3 flavors), theta_n are the scheme's
frequencies. Every expectation below is derived independently of ropelaw: a brute force over the
pairs in mpmath with the scheme's formula written out again here, the closed form of Lemma 1
where one exists (linear: T_train/s; NTK-aware: the scaled base), and torchtitan 0.2.2's own
``precompute_freqs_cis`` (copied with provenance in tests/fixtures/frameworks/snippets/).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import zipfile

import mpmath
import pytest

from ropelaw.schemes import apply_scheme, ntk_scaled_base
from ropelaw.spec import RopeSpec
from ropelaw.theory import critical_dimension, extrapolation_bound, pair_table, trained_critical_dimension

ROOT = pathlib.Path(__file__).resolve().parents[1]
SNIPPET = ROOT / "tests" / "fixtures" / "frameworks" / "snippets" / "torchtitan_llama3_rope.py"
LLAMA31 = dict(factor=8, low_freq_factor=1, high_freq_factor=4, original_max_position_embeddings=8192)


# ----------------------------------------------------------------------- independent derivation
def llama3_trained_mp(d, base, s, low, high, orig):
    """Llama 3.1 bands in mpmath, as torchtitan 0.2.2's precompute_freqs_cis writes them:
    wavelength < L/high kept, > L/low divided by s, between (1-smooth)*theta/s + smooth*theta
    with smooth = (L/wavelength - low)/(high - low)."""
    out = []
    for i in range(d // 2):
        theta = mpmath.mpf(base) ** (-mpmath.mpf(2 * i) / d)
        wavelen = 2 * mpmath.pi / theta
        if wavelen < mpmath.mpf(orig) / high:
            out.append(theta)
        elif wavelen > mpmath.mpf(orig) / low:
            out.append(theta / s)
        elif high == low:  # no band between (Llama 4): a wavelength of exactly L is kept
            out.append(theta)
        else:
            smooth = (orig / wavelen - low) / (mpmath.mpf(high) - low)
            out.append((1 - smooth) * theta / s + smooth * theta)
    return out


def brute_force_critical_dimension(freqs, train_len, d):
    """Lemma 1's definition, pair by pair: 2k for the first pair k whose period exceeds T_train."""
    for n, theta in enumerate(freqs):
        if 2 * mpmath.pi / theta > train_len:
            return 2 * n
    return d


GRID = [(d, base, t, s, orig, low, high)
        for d in (64, 128)
        for base in (1e4, 5e5, 1e6)
        for t in (2048, 8192, 32768)
        for s in (2, 8, 32)
        for orig in (t, 8192)
        for low, high in ((1, 4), (1, 1), (2, 8))]


@pytest.mark.parametrize("d,base,t,s,orig,low,high", GRID)
def test_llama3_trained_critical_dimension_is_the_brute_force_count(d, base, t, s, orig, low, high):
    spec = RopeSpec(d=d, train_len=t, base=base, pretrain_base=base, scheme="llama3",
                    params=dict(factor=s, low_freq_factor=low, high_freq_factor=high,
                                original_max_position_embeddings=orig), pretrained_with_scheme=True)
    with mpmath.workdps(50):
        expected = brute_force_critical_dimension(llama3_trained_mp(d, base, s, low, high, orig), t, d)
    assert trained_critical_dimension(spec) == expected
    r = extrapolation_bound(spec)
    assert r.critical_dimension == expected and r.pretrained_with_scheme and r.critical_base is None
    if expected < d:
        k = expected // 2
        with mpmath.workdps(50):
            period = 2 * mpmath.pi / llama3_trained_mp(d, base, s, low, high, orig)[k]
        # same scheme at the same base and length at inference: the bound is pair k's trained period
        assert r.critical_pair == k and r.extrapolation_bound == pytest.approx(float(period), rel=1e-12)
        assert r.regime == "above_critical_base" and r.extrapolation_bound > t
    else:
        assert r.unbounded


@pytest.mark.parametrize("d,base,t", [(128, 1e4, 8192), (64, 5e5, 4096), (128, 1e6, 32768), (96, 1e4, 2048)])
def test_linear_from_the_start_is_lemma_1_at_T_train_over_s(d, base, t):
    """PI by s from step 0: period 2*pi*b^(2n/d)*s <= T  <=>  2*pi*b^(2n/d) <= T/s, Lemma 1's closed form."""
    for s in (2, 4, 8):
        spec = RopeSpec(d=d, train_len=t, base=base, pretrain_base=base, scheme="linear", params={"factor": s},
                        pretrained_with_scheme=True)
        assert trained_critical_dimension(spec) == critical_dimension(d, t // s, base)


@pytest.mark.parametrize("s", [2, 4, 16])
def test_ntk_from_the_start_is_plain_rope_at_the_scaled_base(s):
    spec = RopeSpec(d=128, train_len=4096, base=1e4, pretrain_base=1e4, scheme="ntk", params={"factor": s},
                    pretrained_with_scheme=True)
    assert trained_critical_dimension(spec) == critical_dimension(128, 4096, ntk_scaled_base(1e4, s, 128))


def test_without_the_flag_the_paper_is_unchanged():
    spec = RopeSpec(d=128, train_len=8192, base=5e5, pretrain_base=5e5, scheme="llama3", params=LLAMA31)
    assert trained_critical_dimension(spec) == critical_dimension(128, 8192, 5e5) == 70
    r = extrapolation_bound(spec)
    assert r.critical_dimension == 70 and r.critical_base == 5e5 and not r.pretrained_with_scheme


# --------------------------------------------------------------------------- exact boundaries
def _factor_at_boundary(period_of_factor, t):
    """The float factors around the exact s at which a trained period equals T_train (solved in mpmath)."""
    with mpmath.workdps(60):
        s = mpmath.findroot(lambda x: period_of_factor(x) - t, 3)
    f = float(s)
    return [math.nextafter(math.nextafter(f, 0), 0), math.nextafter(f, 0), f, math.nextafter(f, math.inf),
            math.nextafter(math.nextafter(f, math.inf), math.inf)]


def test_linear_boundary_decided_exactly():
    """Pair 40 of d = 128, b = 1e4 has period 2*pi*1e4^(80/128)*s; the float s nearest the one that
    makes it exactly 8,192 leaves T*theta/(2*pi) - 1 within 1e-15 of 0: floats cannot decide."""
    d, b, t, n = 128, 1e4, 8192, 40
    theta = lambda: mpmath.mpf(b) ** (-mpmath.mpf(2 * n) / d)  # noqa: E731
    factors = _factor_at_boundary(lambda s: 2 * mpmath.pi / (theta() / s), t)
    seen = set()
    for s in factors:
        spec = RopeSpec(d=d, train_len=t, base=b, pretrain_base=b, scheme="linear", params={"factor": s},
                        pretrained_with_scheme=True)
        float_theta = apply_scheme(spec, t).inv_freq[n]
        assert abs(t * float_theta / (2 * math.pi) - 1) < 1e-9  # the float is within the mpmath zone
        with mpmath.workdps(60):
            expected = brute_force_critical_dimension([mpmath.mpf(b) ** (-mpmath.mpf(2 * i) / d) / mpmath.mpf(s)
                                                       for i in range(d // 2)], t, d)
        got = trained_critical_dimension(spec)
        assert got == expected, s
        seen.add(got)
    assert seen == {80, 82}  # both sides of the boundary occur among the five factors


def test_llama3_medium_band_boundary_decided_exactly():
    """Pair 32 of torchtitan's Llama 3 (wavelength 4,443, in the smoothed band) at the factor s
    that puts its trained period exactly on 8,192 tokens; the band does not depend on s."""
    d, b, t, orig = 128, 5e5, 8192, 8192

    def period(s):
        return 2 * mpmath.pi / llama3_trained_mp(d, b, s, 1, 4, orig)[32]

    seen = set()
    for s in _factor_at_boundary(period, t):
        spec = RopeSpec(d=d, train_len=t, base=b, pretrain_base=b, scheme="llama3",
                        params=dict(LLAMA31, factor=s), pretrained_with_scheme=True)
        with mpmath.workdps(60):
            expected = brute_force_critical_dimension(llama3_trained_mp(d, b, s, 1, 4, orig), t, d)
        got = trained_critical_dimension(spec)
        assert got == expected, s
        seen.add(got)
    assert len(seen) == 2


# --------------------------------------------------------------------- torchtitan's own code
def _torchtitan():
    spec = importlib.util.spec_from_file_location("torchtitan_llama3_rope", SNIPPET)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_torchtitan_llama3_8b_bound_from_torchtitans_own_frequencies():
    """torchtitan 0.2.2 llama3/8B: dim 4096 / 32 heads = 128, rope_theta 500,000, default
    RoPEScalingArgs, trained at [training] seq_len 8,192. Its precompute_freqs_cis (float32) gives
    the frequencies trained; the first pair whose period exceeds 8,192 is 32 and its period is the
    bound. Plain-RoPE pre-training at that base would give critical dimension 70 and, with the
    bands added afterwards, 65,750 (what ropelaw said before this concept existed)."""
    torch = pytest.importorskip("torch")
    tt = _torchtitan()
    cis = tt.precompute_freqs_cis(128, 2, 500000.0, tt.RoPEScalingArgs())  # (2, 64) complex64
    freqs = torch.angle(cis[1]).double().tolist()  # position 1: the frequencies, rad/token
    periods = [2 * math.pi / f for f in freqs]
    first = next(i for i, p in enumerate(periods) if p > 8192)
    spec = RopeSpec(d=128, train_len=8192, base=500000.0, pretrain_base=500000.0, scheme="llama3",
                    params=LLAMA31, pretrained_with_scheme=True)
    r = extrapolation_bound(spec)
    assert (first, r.critical_pair, r.critical_dimension) == (32, 32, 64)
    assert r.extrapolation_bound == pytest.approx(periods[32], rel=1e-6)  # float32 frequencies
    assert round(r.extrapolation_bound) == 11971
    with mpmath.workdps(50):  # pair 32's period in closed form: wavelength 2*pi*sqrt(5e5), smoothed band
        lam = 2 * mpmath.pi * mpmath.sqrt(500000)
        smooth = (8192 / lam - 1) / 3
        closed = lam / ((1 - smooth) / 8 + smooth)
    assert r.extrapolation_bound == pytest.approx(float(closed), rel=1e-13)
    before = extrapolation_bound(spec.with_(pretrained_with_scheme=False))
    assert (before.critical_dimension, round(before.extrapolation_bound)) == (70, 65750)
    rows = pair_table(spec)
    assert [row.full_period_in_training for row in rows] == [p <= 8192 for p in periods]
    assert all(row.frequency == pytest.approx(f, rel=1e-6) for row, f in zip(rows, freqs, strict=True))


DL = pathlib.Path(os.environ.get("ROPELAW_FRAMEWORK_DL", ROOT.parent / "shared" / "dl"))


def _wheel():
    hits = sorted(DL.glob("torchtitan*/torchtitan-0.2.2-*.whl")) + sorted(DL.glob("torchtitan-0.2.2-*.whl"))
    return hits[0] if hits else None


@pytest.mark.skipif(_wheel() is None, reason=f"no torchtitan 0.2.2 wheel under {DL} (ROPELAW_FRAMEWORK_DL)")
def test_snippet_is_the_wheels_own_text():
    with zipfile.ZipFile(_wheel()) as zf:
        model = zf.read("torchtitan/models/llama3/model/model.py").decode()
        args = zf.read("torchtitan/models/llama3/model/args.py").decode()
    text = SNIPPET.read_text()
    fn = re.search(r"^def precompute_freqs_cis\(.*?^    return freqs_cis\n", model, re.S | re.M).group(0)
    cls = re.search(r"^@dataclass\nclass RoPEScalingArgs:.*?\n\n", args, re.S | re.M).group(0)
    assert fn in text and cls in text


# ------------------------------------------------------------------------------ spec and CLI
def test_spec_validation():
    with pytest.raises(ValueError, match="needs a scaling scheme"):
        RopeSpec(d=128, pretrained_with_scheme=True)
    with pytest.raises(ValueError, match="true or false"):
        RopeSpec(d=128, scheme="linear", params={"factor": 2}, pretrained_with_scheme="yes")
    with pytest.raises(ValueError, match="changes relative positions"):
        trained_critical_dimension(RopeSpec(d=128, scheme="rerope", params={"window": 512},
                                            pretrained_with_scheme=True))
    spec = RopeSpec(d=128, scheme="linear", params={"factor": 2}, pretrained_with_scheme=True)
    assert spec.to_dict()["pretrained_with_scheme"] is True


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "ropelaw", *args], capture_output=True, text=True)


def test_cli_bound_json():
    p = _cli("bound", "--d", "128", "--train", "8k", "--base", "500k", "--scheme", "llama3", "--factor", "8",
             "--pretrained-with-scheme", "--format", "json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    spec = RopeSpec(d=128, train_len=8192, base=5e5, pretrain_base=5e5, scheme="llama3", params={"factor": 8},
                    pretrained_with_scheme=True)
    assert out == json.loads(json.dumps(extrapolation_bound(spec).to_dict()))
    assert (out["pretrain_base"], out["critical_dimension"], out["critical_base"], out["pretrained_with_scheme"]) \
        == (500000.0, 64, None, True)


def test_cli_bound_text_and_errors():
    p = _cli("bound", "--d", "128", "--train", "8k", "--base", "500k", "--scheme", "llama3", "--factor", "8",
             "--pretrained-with-scheme")
    assert p.returncode == 0, p.stderr
    assert re.search(r"critical dimension +64 of 128", p.stdout)
    assert re.search(r"extrapolation bound +11,971 tokens", p.stdout)
    assert "same as --base: pre-trained with the scheme at it" in p.stdout
    for args, message in (([], "--pretrained-with-scheme needs the scheme"),
                          (["--scheme", "rerope", "--param", "window=512"], "changes relative positions")):
        p = _cli("bound", "--d", "128", "--train", "8k", "--base", "500k", "--pretrained-with-scheme", *args)
        assert p.returncode == 2 and p.stdout == ""
        assert len(p.stderr.strip().splitlines()) == 1 and message in p.stderr


def test_cli_dims_marks_the_trained_pairs():
    p = _cli("dims", "--d", "128", "--train", "8k", "--base", "500k", "--scheme", "llama3", "--factor", "8",
             "--pretrained-with-scheme", "--format", "json")
    rows = json.loads(p.stdout)
    assert [r["pair"] for r in rows if r["inside_critical_dimension"]] == list(range(32))


def test_no_pair_trained_when_the_scheme_slows_pair_0_past_T_train():
    """PI by s = 1,000 from step 0 at T_train = 4,096: pair 0 turns at 1/s rad/token, period 2*pi*1,000 =
    6,283.19 > 4,096, so no pair saw a full period (d_extra = 0) and pair 0's period is the bound."""
    spec = RopeSpec(d=128, train_len=4096, base=1e4, pretrain_base=1e4, scheme="linear", params={"factor": 1000},
                    pretrained_with_scheme=True)
    r = extrapolation_bound(spec)
    assert (r.critical_dimension, r.critical_pair) == (0, 0)
    assert r.extrapolation_bound == pytest.approx(2 * math.pi * 1000, rel=1e-15)
    assert r.note.startswith("no pair saw a full period in training")
    p = _cli("bound", "--d", "128", "--train", "4k", "--base", "1e4", "--scheme", "linear", "--factor", "1000",
             "--pretrained-with-scheme")
    assert re.search(r"critical dimension +0 of 128 +no pair saw a full period in training", p.stdout), p.stdout


def yarn_trained_mp(d, base, s, fast, slow, orig):
    """YaRN's frequencies as torchtitan 0.2.2 deepseek_v3 precompute_freqs_cis writes them (the
    transformers ramp): correction range floor/ceil of d*ln(L/(2*pi*r))/(2 ln b) in float, clamped to
    [0, d-1]; ramp (i - low)/(high - low) clamped to [0, 1]; theta/s*ramp + theta*(1 - ramp)."""
    def dim(r):
        return d * math.log(orig / (r * 2 * math.pi)) / (2 * math.log(base))
    low, high = max(math.floor(dim(fast)), 0), min(math.ceil(dim(slow)), d - 1)
    if low == high:
        high += 0.001
    out = []
    for i in range(d // 2):
        theta = mpmath.mpf(base) ** (-mpmath.mpf(2 * i) / d)
        ramp = min(max((i - mpmath.mpf(low)) / (mpmath.mpf(high) - low), 0), 1)
        out.append(theta / s * ramp + theta * (1 - ramp))
    return out


@pytest.mark.parametrize("d,base,t,s,orig", [(64, 1e4, 8192, 40, 4096), (128, 1e4, 16384, 4, 4096),
                                              (128, 1e6, 32768, 8, 8192), (64, 5e5, 4096, 16, 2048)])
def test_yarn_trained_critical_dimension_is_the_brute_force_count(d, base, t, s, orig):
    """torchtitan's DeepSeek-V3 (d = 64, b = 1e4, factor 40, betas 32/1, original 4,096) trains with YaRN
    from step 0 once seq_len > original_seq_len; the count of trained full periods, brute force."""
    spec = RopeSpec(d=d, train_len=t, base=base, pretrain_base=base, scheme="yarn",
                    params=dict(factor=s, beta_fast=32, beta_slow=1, original_max_position_embeddings=orig),
                    pretrained_with_scheme=True)
    with mpmath.workdps(50):
        freqs = yarn_trained_mp(d, base, s, 32, 1, orig)
        expected = brute_force_critical_dimension(freqs, t, d)
        period = 2 * mpmath.pi / freqs[expected // 2] if expected < d else None
    r = extrapolation_bound(spec)
    assert r.critical_dimension == expected
    if period is not None:
        assert r.extrapolation_bound == pytest.approx(float(period), rel=1e-12)
