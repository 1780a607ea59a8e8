"""audits/ issue-21 targets: the auditor's counts where each verdict shows equal an independent brute force.

``audits/brute_force.py`` writes out each target's dtype flow in numpy / ml_dtypes (no ropelaw);
this file recomputes it and compares with the committed reports (``audits/reports/<target>.json``,
written by ``python audits/run.py``), and checks the brute force's model of torch's rounding rules
against torch itself. Where a report states a mismatch (``Show.mismatch``), the test checks that
the two still differ, so a fix of the auditor shows up here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

AUDITS = Path(__file__).resolve().parent.parent / "audits"
REPORTS = AUDITS / "reports"
sys.path.insert(0, str(AUDITS))

import brute_force as bf  # noqa: E402
import catalog  # noqa: E402
import render  # noqa: E402

SHOWS = [(t, s) for t in catalog.ISSUE21 for s in t.shows]


def test_at_least_twelve_new_implementations_each_with_a_scenario_and_a_brute_force():
    assert len({t.package for t in catalog.ISSUE21}) >= 12
    for t in catalog.ISSUE21:
        assert t.shows and t.verdict, t.name
        assert t.fetch == "git" or t.pins == (f"{t.package}=={t.version}",), t.name
        for s in t.sources:  # repo@commit path + sha256, never the file itself
            assert len(s.commit) == 40 and len(s.sha256) == 64, s
            assert not (AUDITS.parent / s.path).exists(), s.path  # not copied into the repository


@pytest.mark.parametrize("target, show", SHOWS, ids=[f"{t.name}:{s.brute}" for t, s in SHOWS])
def test_auditor_count_equals_brute_force(target, show):
    doc = json.loads((REPORTS / f"{target.name}.json").read_text())
    counts = bf.run(show.brute, show.dtype, show.length)
    stored = [b for b in doc.get("brute_force", []) if (b["module"], b["dtype"], b["length"], b["scenario"]) ==
              (show.module, show.dtype, show.length, show.scenario)]
    assert stored and stored[0]["counts"] == counts, "report's brute force is stale: run `python audits/run.py`"
    row = render.Runtime(doc["results"]).get(show.module, show.dtype, show.length, show.scenario)
    if show.mismatch:
        assert row is None or (row["exact"], row["distinct"]) != (counts["exact"], counts["distinct"]), \
            "the auditor now agrees with the brute force: drop Show.mismatch"
        return
    assert row is not None, f"no runtime row {show.module} / {show.dtype} / {show.length} / {show.scenario}"
    assert (row["exact"], row["distinct"]) == (counts["exact"], counts["distinct"])


def test_the_issue_numbers():
    """The counts issue 21 reported, from the brute force alone (exact = the auditor's definition)."""
    assert bf.modded_2024_12_cast("bf16", 65536)["distinct"] == 1281  # 257 + 8 x 128 bf16 positions
    assert bf.einsum_autocast_cuda("bf16", 1024)["distinct"] == 513
    assert bf.einsum_autocast_cuda("bf16", 2048)["distinct"] == 641
    assert bf.tinyllama_default("bf16", 2048)["distinct"] == 641
    assert bf.lit_llama_default("bf16", 2048)["distinct"] == 641


def test_counts_on_a_hand_case():
    """Positions rounded to bf16 with exact frequencies: exact = integers bf16 holds (640 below 2,048:
    256 + 3 x 128), distinct = bf16 values reached (641, 2,048 included), as seed 004 counts them."""
    th = bf.theta32(128, 10000.0)

    def angles(p):
        a = bf.low(p, "bf16")[:, None] * th[None, :]
        return np.cos(a), np.sin(a)

    c = bf.counts(angles, th, 2048)
    assert (c["exact"], c["distinct"]) == (640, 641)


torch = pytest.importorskip("torch")


def _np(t) -> np.ndarray:
    return t.double().numpy()


def test_brute_force_rounding_rules_match_torch():
    """The rules the brute force assumes, each checked against torch on CPU."""
    p = torch.arange(70000)
    w = torch.tensor(bf.low(bf.theta32(128, 10000.0), "bf16"), dtype=torch.bfloat16)
    # int64 x bf16 outer: positions rounded to bf16, then the bf16 product
    assert np.array_equal(_np(torch.outer(p, w)), bf.low(bf.low(np.arange(70000), "bf16")[:, None] * _np(w)[None],
                                                         "bf16"))
    # the same through einsum on bf16 copies (CUDA autocast's einsum), and cos of a bf16 tensor
    a = torch.einsum("i,j->ij", p.float().bfloat16(), w)
    assert np.array_equal(_np(a), _np(torch.outer(p, w)))
    assert np.array_equal(_np(a.cos()), bf.low(np.cos(_np(a)), "bf16"))
    old = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.bfloat16)
        for d in (64, 128):  # int64 / int in the default dtype; scalar base ** bf16 rounds the base
            got = 1.0 / (10000 ** (torch.arange(0, d, 2) / d))
            assert np.array_equal(_np(got), bf.theta_default_low(d, 10000.0, "bf16"))
        assert np.array_equal(_np(torch.arange(70000) / 1), bf.low(np.arange(70000), "bf16"))
    finally:
        torch.set_default_dtype(old)
    # XPos's centred positions `torch.arange(min_pos, max_pos, 1).to(self.scale)` (torchscale, NeMo): rounded to the
    # cast dtype like any value (bf16: 257 -> 256, exact only up to 256 in magnitude; fp16 exact up to 2,048), which
    # is why a few neighbours share a scale and the brute force finds 2,042 / 2,044 distinct rows, not 2,048
    for name, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        assert np.array_equal(_np(torch.arange(-1024, 1024, 1).to(dt)), bf.low(np.arange(-1024, 1024), name))
    assert _np(torch.arange(257, 258).to(torch.bfloat16))[0] == 256.0
    # float32 frequencies: within an ulp of torch's pow, the same after rounding to bf16
    th = (1.0 / (10000 ** (torch.arange(0, 128, 2).float() / 128))).double().numpy()
    assert np.max(np.abs(th / bf.theta32(128, 10000.0) - 1)) <= 2.0**-23
    assert np.array_equal(bf.low(th, "bf16"), bf.low(bf.theta32(128, 10000.0), "bf16"))
