"""The notebooks run top to bottom on a fresh kernel and reproduce the published numbers.

Each notebook is executed once (nbclient, kernel ``python3`` of this environment, Agg
backend, a per-cell timeout); the tests then read the text output of the cells tagged
``check-...`` (lines ``key = value``) and compare it with the published numbers, which are
cited at each assertion, or with values computed here independently.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

pytestmark = [pytest.mark.notebook, pytest.mark.slow]

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
CELL_TIMEOUT = 180  # seconds per cell; the slowest cell takes ~2 s here
_EXECUTED: dict[str, object] = {}


def executed(name: str):
    """The notebook ``name`` after a top-to-bottom run on a fresh kernel (cached per session)."""
    if name not in _EXECUTED:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        for cell in nb.cells:  # the committed notebooks carry no outputs
            assert cell.cell_type != "code" or (not cell.outputs and cell.execution_count is None), name
        env_backup = dict(os.environ)
        os.environ["MPLBACKEND"] = "Agg"
        os.environ["JUPYTER_PLATFORM_DIRS"] = "1"  # silences jupyter_core's platformdirs DeprecationWarning
        try:
            client = nbclient.NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name="python3",
                                             resources={"metadata": {"path": str(NOTEBOOKS)}})
            client.execute()
        finally:
            os.environ.clear()
            os.environ.update(env_backup)
        _EXECUTED[name] = nb
    return _EXECUTED[name]


def tagged(nb, tag: str):
    cells = [c for c in nb.cells if tag in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"expected one cell tagged {tag!r}, found {len(cells)}"
    return cells[0]


def text_of(cell) -> str:
    out = []
    for o in cell.outputs:
        if o.output_type == "stream" and o.name == "stdout":
            out.append(o.text)
        elif o.output_type == "error":
            pytest.fail(f"cell raised {o.ename}: {o.evalue}")
    return "".join(out)


def values(nb, tag: str) -> dict[str, str]:
    """``key = value`` lines printed by the cell tagged ``tag``."""
    pairs = {}
    for line in text_of(tagged(nb, tag)).splitlines():
        m = re.match(r"^([\w.\-]+) = (.*)$", line.strip())
        if m:
            pairs[m.group(1)] = m.group(2)
    assert pairs, f"cell {tag!r} printed no 'key = value' lines"
    return pairs


def html_of(cell) -> str:
    return "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs
                   if o.output_type in ("execute_result", "display_data"))


def has_png(cell) -> bool:
    return any(o.output_type in ("execute_result", "display_data") and "image/png" in o.get("data", {})
               for o in cell.outputs)


def test_notebooks_are_listed_and_cleared():
    names = sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    assert names[:2] == ["01_scaling_laws.ipynb", "02_precision.ipynb"] and "04_methods.ipynb" in names
    for name in names:
        nb = nbformat.read(NOTEBOOKS / name, as_version=4)
        nbformat.validate(nb)
        assert nb.metadata["kernelspec"]["name"] == "python3"
        assert nb.cells[0].cell_type == "markdown" and "reproduc" in nb.cells[0].source  # says what it reproduces
        for c in nb.cells:
            if c.cell_type == "code":
                assert not c.outputs and c.execution_count is None, f"{name}: outputs not cleared"


# -- 01: Liu et al. 2023 (arXiv 2310.05209), seed 001 --------------------------------------------
def test_scaling_laws_notebook_reproduces_liu_et_al():
    nb = executed("01_scaling_laws.ipynb")
    v = values(nb, "check-critical-dimension")
    assert v["critical_dimension"] == "92" == v["brute_force_count"]  # seed 001: LLaMA 2's d_extra = 92
    v = values(nb, "check-bound")
    # ~129K tokens for base 1e6 (seed 001 / UX sketch: 129,027 = 2*pi*1e6^(92/128))
    assert int(v["extrapolation_bound"]) == round(2 * math.pi * 1e6 ** (92 / 128)) == 129027
    assert v["independent"] == "129027" and v["between_128K_and_256K"] == "True"
    assert v["formula"] == "2*pi * 1e6^(92/128)"
    v = values(nb, "check-critical-base")
    assert v["rounded"] == "71738"  # seed 001: critical base for 4K -> 16K
    assert v["critical_base"] == v["independent"] == "71738.4"
    v = values(nb, "check-thresholds")
    # seed 001: bases "2608 .. 652" = 2T/pi, T/pi, T/(2pi) at T = 4096
    expected = f"{2 * 4096 / math.pi:.1f} {4096 / math.pi:.1f} {4096 / (2 * math.pi):.1f}"
    assert v["thresholds"] == expected == "2607.6 1303.8 651.9" == v["independent"]
    assert has_png(tagged(nb, "figure-periods")) and has_png(tagged(nb, "figure-bound"))
    table = html_of(tagged(nb, "table-bound"))  # a Result shows as an HTML table in Jupyter
    assert "<table" in table and "129,027" in table and "71,738.4" in table
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors


# -- 02: seed 004 (Baichuan), runtime audit ------------------------------------------------------
def test_precision_notebook_reproduces_896_of_8192():
    nb = executed("02_precision.ipynb")
    v = values(nb, "check-exact-bf16")
    # seed 004: "about 10%" of 8,192 positions exact in bf16; exactly 256 + 5*128 = 896
    assert (v["exact"], v["length"], v["closed_form"]) == ("896", "8192", "896")
    assert float(v["exact_fraction"]) == pytest.approx(896 / 8192, abs=5e-5)
    v = values(nb, "check-brute-force")
    assert v["ml_dtypes_count"] == v["torch_count"] == "896"
    assert has_png(tagged(nb, "figure-exact"))


def test_precision_notebook_shows_collisions():
    nb = executed("02_precision.ipynb")
    text = text_of(tagged(nb, "check-collisions"))
    # bf16 keeps every 32nd integer in [4096, 8192): runs of neighbouring positions share a value.
    # Expected runs by integer round-half-to-even (IEEE 754 roundTiesToEven) on multiples of 32:
    runs: dict[int, list[int]] = {}
    for n in range(8064, 8192):
        q, r = divmod(n, 32)
        q += r > 16 or (r == 16 and q % 2 == 1)
        runs.setdefault(32 * q, []).append(n)
    for value, members in runs.items():
        line = f"bf16 value {value}: positions {members[0]}..{members[-1]} ({len(members)} positions)"
        assert line in text, (line, text)
    assert "bf16 value 8160: positions 8145..8175 (31 positions)" in text  # 8144 ties to even 8128
    assert values(nb, "check-collisions")["distinct_positions"] == "897"  # 896 exact + 8192 itself
    assert has_png(tagged(nb, "figure-collisions"))


def test_precision_notebook_audits_buggy_and_fixed_modules():
    nb = executed("02_precision.ipynb")
    v = values(nb, "check-audit")
    parsed = {}
    for key, rest in v.items():
        m = re.match(r"exact (\d+) distinct (\d+) path ([a-z ]+) max_phase_error", rest)
        assert m, rest
        parsed[key] = (int(m.group(1)), int(m.group(2)), m.group(3).strip())
    scenarios = ("cast", "default", "autocast-cuda", "autocast-cpu")
    # positions rounded to bf16, product in float32: exactly the format's 896 exact positions (seed 004)
    for s in scenarios:
        assert parsed[f"PositionsInModelDtype.{s}"] == (896, 897, "positions rounded")
        assert parsed[f"FixedRotary.{s}"] == (8192, 8192, "clean")
    # LLaMA-style (seed 004's quote) after model.to(bf16): positions AND the product are rounded
    exact, distinct, path = parsed["LlamaStyleRotary.cast"]
    assert exact < 896 and distinct <= 897 and path == "product rounded"
    findings = text_of(tagged(nb, "check-findings"))
    assert "LlamaStyleRotary -> RP3" in findings and "PositionsInModelDtype -> RP3" in findings
    assert "FixedRotary -> clean" in findings
    table = html_of(tagged(nb, "table-audit"))
    assert "<table" in table and "product rounded" in table


# -- 03: linting the real configs in tests/configs/ ------------------------------------------------
def test_config_lint_notebook_cli_and_llama2():
    nb = executed("03_config_lint.ipynb")
    text = text_of(tagged(nb, "check-cli-llama2"))
    # LLaMA 2 7B asked for 32K: d_extra = 92 (seed 001), so the bound is its 4,096; the base that
    # reaches 32K by Liu et al.'s law is (32768/2pi)^(128/92) ~ 1.49e5 (UX sketch: "1.5e5")
    assert "RL101" in text and "critical dimension 92" in text
    base_32k = (32768 / (2 * math.pi)) ** (128 / 92)
    assert f"a base of {base_32k:.3g}".replace("e+0", "e") in text  # "a base of 1.49e5"
    v = values(nb, "check-llama2-32k")
    assert v["critical_dimension"] == "92" and v["bound"] == "4096"
    assert float(v["base_for_32k"]) == pytest.approx(base_32k, rel=1e-3) and v["liu_formula"] == f"{base_32k:.4g}"
    assert "RL101: target 32,768 tokens" in text_of(tagged(nb, "check-llama2-32k"))


def test_config_lint_notebook_every_config():
    nb = executed("03_config_lint.ipynb")
    rows = values(nb, "check-configs")
    assert {"llama-2-7b.json", "qwen2-7b-instruct.json", "megatron-llama2-7b.yaml"} <= set(rows)
    pattern = re.compile(r"d (\d+) base (\S+) train (\d+) target (\d+) scheme (\S+) d_extra (\d+) bound (\d+) "
                         r"codes (\S+)")
    for name, rest in rows.items():
        m = pattern.fullmatch(rest)
        assert m, (name, rest)
        d, base, train, _target = int(m.group(1)), float(m.group(2)), int(m.group(3)), int(m.group(4))
        scheme, d_extra, bound = m.group(5), int(m.group(6)), int(m.group(7))
        # Lemma 1 by brute force: pairs whose period 2*pi*base^(2i/d) fits in the training length
        assert d_extra == min(d, 2 * sum(2 * math.pi * base ** (2 * i / d) <= train for i in range(d // 2))), name
        if scheme == "default":
            # trained with the config's own base (pretrain_base = base): beta = beta_0, bound = T_train
            assert bound == train, name
    # LLaMA 2 7B: head_dim 128, LlamaConfig's default rope_theta 10,000, 4,096 tokens -> 92 (seed 001)
    assert rows["llama-2-7b.json"].startswith("d 128 base 10000 train 4096 target 4096 scheme default d_extra 92")
    assert rows["megatron-llama2-7b.yaml"].startswith("d 128 base 10000 train 4096")
    assert has_png(tagged(nb, "figure-configs"))


def test_config_lint_notebook_fp16_positions():
    nb = executed("03_config_lint.ipynb")
    msg = values(nb, "check-rp201")["RP201"]
    # fp16 keeps every integer below 2^11 and every 2nd one up to 4,096: 2048 + 1024 = 3072 of 4096
    import numpy as np

    p = np.arange(4096, dtype=np.float64)
    exact = int(np.count_nonzero(p.astype(np.float16).astype(np.float64) == p))
    assert exact == 3072
    assert f"{100 * exact / 4096:.1f}%" in msg and "3,072 of 4,096" in msg


# -- 04: seed 000 (ReRoPE) and seed 003 (KeyNorm) ---------------------------------------------------
def test_methods_notebook_relative_positions():
    nb = executed("04_methods.ipynb")
    v = values(nb, "check-relpos")
    for name in ("rope", "pi", "rerope", "leaky"):
        assert v[f"{name}_matches_seed"] == "True"
    text = text_of(tagged(nb, "check-relpos"))
    for n in (4096, 65536, 1_000_000):
        # seed 000: ReRoPE never exceeds w; Leaky ReRoPE reaches w + (L - 1 - w)/k
        assert f"max_position L={n}: rerope 256 leaky {256 + (n - 1 - 256) / 16:g}" in text
    assert has_png(tagged(nb, "figure-relpos"))


def test_methods_notebook_rerope_is_exact():
    nb = executed("04_methods.ipynb")
    v = values(nb, "check-rerope-exact")
    assert float(v["max_diff_window_L_minus_1_vs_rope"]) < 1e-12  # float64: ReRoPE with w >= L-1 is RoPE
    assert float(v["max_diff_window_8_vs_seed_recipe"]) < 1e-12  # the seed's two-matrix recipe
    assert float(v["max_diff_window_8_vs_rope"]) > 1e-3  # and a small window does change the output


def test_methods_notebook_keynorm():
    nb = executed("04_methods.ipynb")
    v = values(nb, "check-keynorm")
    assert float(v["keynorm_vs_seed_formula"]) < 1e-12  # seed 003's KNA formula, float64
    assert float(v["keynorm_scale_invariance_diff"]) < 1e-12  # keys are L2-normalised: scale cannot matter


# -- 06: the plan and the explorer widget -----------------------------------------------------------
def test_plan_notebook_numbers():
    pytest.importorskip("ipywidgets")  # the notebook shows ropelaw.explore() (the notebooks / test extras)
    nb = executed("06_plan.ipynb")
    v = values(nb, "check-plan")
    assert v["critical_dimension"] == "92"  # seed 001: LLaMA 2's critical dimension
    # PI brings pair 46 (period 2*pi*1e4^(92/128) = 4,711.7) to a full period at 131,072 from s = 28
    assert v["pi_smallest_factor"] == v["pi_independent"] == "28"
    assert v["yarn_factor"] == "32.0"  # YaRN's s = L'/L = 131,072 / 4,096
    assert v["base_scaling_law"] == "1.02212e+06"  # README's `ropelaw base` example: 1.02212e6
    assert v["men_lower_bound"] == "8800000.0"  # README's `ropelaw base` example: 8.8e6
    assert v["base_both_papers"] == "8800000.0"  # the base option satisfies both papers: the larger
    assert v["bf16_exact"] == "1408"  # 256 + 9 * 128: the first 2^8 and 128 per binade up to 2^17
    same = text_of(tagged(nb, "check-same"))
    assert same.count("same_as_bound=True") == 10 and "same_as_bound=False" not in same
    e = values(nb, "check-explore")
    assert e["explore_d"] == "64" and e["explore_critical_dimension"] == "46" and e["explore_yarn_reaches"] == "True"
