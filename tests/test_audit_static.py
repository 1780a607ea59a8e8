"""Static scan: each fixture and the exact findings (code, line, column) it must give.

The fixtures under tests/fixtures/static/ mark every expected finding with a `# RPxxx`
comment on its line; the tables below are the specification, checked in both directions.
Numbers in messages are checked against brute-force casts (ml_dtypes), not against the code.
"""

from __future__ import annotations

import os
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ropelaw.audit.static import python_files, scan_file, scan_paths, scan_source
from ropelaw.errors import UsageError
from ropelaw.findings import get_rule

FIX = Path(__file__).parent / "fixtures" / "static"

EXPECTED: dict[str, list[tuple[str, int, int]]] = {
    # the einsum("i,j->ij") that rebuilds the cache is on CUDA autocast's list (RP113, issue 21)
    "seed004_llama_original.py": [("RP121", 12, 9), ("RP101", 20, 13), ("RP113", 21, 17), ("RP122", 30, 13)],
    "seed004_llama_fixed.py": [],
    "rp101_positions_in_buffer_dtype.py": [("RP121", 8, 9), ("RP101", 11, 13), ("RP101", 15, 13),
                                           ("RP101", 20, 15), ("RP101", 24, 16)],
    "rp102_positions_in_input_dtype.py": [("RP102", 6, 15), ("RP102", 10, 13), ("RP102", 14, 13),
                                          ("RP102", 18, 13), ("RP102", 23, 16), ("RP102", 28, 11)],
    "rp103_positions_in_default_dtype.py": [("RP103", 5, 9), ("RP103", 10, 11)],
    "rp104_positions_in_low_precision.py": [("RP104", 5, 9), ("RP104", 10, 12), ("RP104", 14, 12),
                                            ("RP104", 18, 11), ("RP104", 23, 12)],
    "rp111_angles_in_low_precision.py": [("RP111", 7, 16), ("RP111", 12, 15), ("RP111", 17, 16)],
    "rp112_angle_product_in_autocast.py": [("RP112", 9, 22), ("RP112", 14, 21)],
    "rp113_angle_product_autocast_eligible.py": [("RP113", 9, 18), ("RP113", 14, 16), ("RP113", 18, 16)],
    "rp121_inv_freq_float_buffer.py": [("RP121", 8, 9), ("RP123", 18, 9)],
    "rp122_cache_rebuilt_after_cast.py": [("RP121", 8, 9), ("RP122", 19, 13)],
    "rp131_alibi_distances_in_model_dtype.py": [("RP131", 11, 21), ("RP131", 17, 13)],
    "rp132_alibi_bias_in_model_dtype.py": [("RP132", 8, 12)],
    "noqa.py": [("RP102", 7, 9)],
    "clean_idioms.py": [],
    "re001_syntax_error.py": [("RE001", 1, 12)],
    # `t.type_as(self.inv_freq)` on an argument of unknown kind that meets the frequencies (x-transformers)
    "rp101_type_as_argument.py": [("RP121", 8, 9), ("RP101", 12, 50), ("RP113", 12, 18), ("RP101", 16, 16)],
    # int64 positions * a float buffer: type promotion takes the buffer's dtype
    # line 11: without a cast, a caller's CUDA autocast runs the einsum on a bf16 copy of the buffer (RP113 too)
    "rp101_promotion.py": [("RP121", 7, 9), ("RP101", 11, 18), ("RP113", 11, 18), ("RP101", 15, 16),
                           ("RP101", 18, 16), ("RP113", 22, 16), ("RP113", 39, 16)],
    # `self.X = nn.Buffer(...)` (PyTorch >= 2.5, transformers 5.x); `register_buffer("inv_freq", None)` is clean
    "rp121_nn_buffer.py": [("RP121", 9, 9), ("RP121", 15, 9)],
    # frequency buffers recognised by name (bands, omega) and by construction; look-alikes that are not
    "rp121_frequency_buffers_by_construction.py": [("RP121", 13, 9), ("RP121", 14, 9), ("RP121", 21, 9),
                                                   ("RP121", 22, 9), ("RP121", 23, 9), ("RP121", 24, 9)],
    # buffers restored after every cast by an `_apply` / `to` override (timm 1.0.31's pattern)
    "clean_apply_repair.py": [],
    # construction-only code reads a buffer no cast can have reached; code that runs later does not
    "rp101_construction_time.py": [("RP121", 8, 9), ("RP101", 23, 13),
                                   ("RP121", 42, 9), ("RP101", 43, 13)],
    # dynamic scaling: re-registering in float32 at forward time is a repair, not a rounding
    # (a re-registration converted to the input's dtype rounds on purpose: reported)
    "rp101_dynamic_rescaling.py": [("RP121", 9, 9), ("RP101", 15, 13), ("RP121", 40, 9), ("RP121", 64, 9)],
    # complex buffers / parameters that model.to(dtype) turns real (torchtitan 0.3.0's ComplexRoPE cache)
    "rp123_complex_buffer_cast_to_real.py": [("RP123", 12, 9), ("RP123", 58, 9), ("RP123", 65, 9),
                                             ("RP123", 66, 9)],
    # complex numbers built from angles converted to a low-precision dtype
    "rp114_complex_from_low_precision_angles.py": [("RP114", 8, 48), ("RP114", 13, 27)],
    # guarded code from real frameworks is clean; each unguarded twin is still found
    "clean_guard_flash_attn.py": [],
    "rp121_unguarded_flash_attn.py": [("RP121", 13, 9), ("RP122", 44, 13), ("RP122", 46, 13)],
    # the guard repairs the cast (no RP101/RP121); its einsum stays on CUDA autocast's list (RP113)
    "clean_guard_nanotron_lazy_init.py": [("RP113", 53, 21)],
    "rp101_unguarded_nanotron.py": [("RP121", 23, 9), ("RP101", 48, 17), ("RP113", 49, 21)],
    "rp121_not_a_repair.py": [("RP121", 15, 9), ("RP121", 29, 9), ("RP121", 49, 9)],
    "clean_numpy_int_positions_vllm.py": [],
    "rp102_tensor_positions_twins.py": [("RP102", 11, 18), ("RP102", 17, 9), ("RP104", 19, 11), ("RP104", 24, 12)],
    "clean_dtype_default_megatron.py": [],
    "rp102_dtype_default_with_caller.py": [("RP102", 8, 17), ("RP102", 14, 12), ("RP102", 18, 12)],
    # issue 21: products on CUDA autocast's list (einsum of any equation, addr, baddbmm) and their fixed twin
    "rp113_cuda_autocast_products.py": [("RP113", 14, 17), ("RP113", 20, 18), ("RP113", 25, 16), ("RP112", 29, 22)],
    "clean_cuda_autocast_products.py": [],
    # positions and frequencies in torch's implicit default dtype (Lightning 'bf16-true'), and their twin
    "rp115_default_dtype_tinyllama.py": [("RP116", 7, 29), ("RP115", 8, 15), ("RP115", 17, 9), ("RP116", 22, 25),
                                         ("RP116", 27, 23)],
    "rp115_default_dtype_lit_llama.py": [("RP116", 18, 29), ("RP115", 20, 17)],
    "clean_default_dtype.py": [],
    # angles cast to the model's precision (gpt-neox get_emb); its inv_freq buffer is never read: no RP121
    "rp111_gpt_neox_get_emb.py": [("RP111", 28, 16)],
    "clean_gpt_neox_get_emb_fixed.py": [],
    # fairseq2's float32 sin/cos tables named `freqs` and its frequency exponents: clean; the twin is not
    "clean_fairseq2_tables.py": [],
    "rp121_freqs_vector_twin.py": [("RP121", 10, 9), ("RP102", 17, 17)],
    # a framework the scan does not analyse, with position code: a note (info), never a silent pass
    "rp117_keras_rotary.py": [("RP117", 3, 1)],
    "clean_keras_no_position_code.py": [],
    # issue 33: RP117 only where there is rotary / ALiBi code, imported at module level
    "clean_tf_sinusoidal_positions.py": [],
    "clean_torch_rotary_tf_weights_loader.py": [],
    # settings handed on (a constant, keyword arguments) are not rotary code; applying the rotation is
    "clean_jax_rope_settings_only.py": [],
    "rp117_jax_rope_applied.py": [("RP117", 3, 1)],
    # issue 33: `.to(<buffer>)` follows the buffer's dtype; a buffer reshaped under its own name; a decay
    "rp101_to_buffer_retnet.py": [("RP121", 15, 9), ("RP101", 19, 17)],
    "clean_to_buffer_device_retnet.py": [],
    # issue 33: 32 positions bf16 holds exactly (only the frequencies' rounding, RP116); self.dtype asserted float32
    "rp116_sinusoidal_table_32_positions.py": [("RP116", 15, 30)],
    "rp121_asserted_float32_dtype_attribute.py": [("RP121", 15, 9)],
}

# issue 21: a real pattern (written here, or from a wheel) -> its twin; both directions in EXPECTED
PATTERN_TWINS = {
    "clean_cuda_autocast_products.py": "rp113_cuda_autocast_products.py",
    "clean_default_dtype.py": "rp115_default_dtype_tinyllama.py",
    "clean_gpt_neox_get_emb_fixed.py": "rp111_gpt_neox_get_emb.py",
    "clean_fairseq2_tables.py": "rp121_freqs_vector_twin.py",
    "clean_keras_no_position_code.py": "rp117_keras_rotary.py",
    "clean_tf_sinusoidal_positions.py": "rp117_keras_rotary.py",
    "clean_torch_rotary_tf_weights_loader.py": "rp117_keras_rotary.py",
    "clean_to_buffer_device_retnet.py": "rp101_to_buffer_retnet.py",
}

# guarded real pattern -> its unguarded twin (both directions are in EXPECTED above)
TWINS = {
    "clean_guard_flash_attn.py": "rp121_unguarded_flash_attn.py",
    "clean_guard_nanotron_lazy_init.py": "rp101_unguarded_nanotron.py",
    "clean_numpy_int_positions_vllm.py": "rp102_tensor_positions_twins.py",
    "clean_dtype_default_megatron.py": "rp102_dtype_default_with_caller.py",
    "clean_apply_repair.py": "rp121_not_a_repair.py",
}


def _got(name: str, **kw) -> list[tuple[str, int, int]]:
    return sorted((f.code, f.line, f.column) for f in scan_file(FIX / name, **kw))


def test_every_fixture_has_an_expectation():
    assert sorted(p.name for p in FIX.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_findings(name):
    want = sorted(EXPECTED[name])
    got = _got(name)
    assert got == want, f"{name}\n  expected {want}\n  actual   {got}"


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.startswith("rp")))
def test_marker_comments_agree_with_table(name):
    # every line carrying a `# RPxxx` marker comment is expected, and nothing else is
    lines = (FIX / name).read_text().splitlines()
    marked = sorted((tok, i) for i, line in enumerate(lines, 1) if "# RP" in line
                    for tok in _leading_codes(line.split("# RP", 1)[0] + "# RP" + line.split("# RP", 1)[1]))
    assert marked == sorted((c, ln) for c, ln, _ in EXPECTED[name])


def _leading_codes(line: str) -> list[str]:
    """The rule codes a `# RP101 RP113 (why)` marker comment names, in order."""
    out = []
    for tok in line.split("# ", 1)[1].split():
        tok = tok.strip("():,")
        if len(tok) == 5 and tok[:2] == "RP" and tok[2:].isdigit():
            out.append(tok)
        else:
            break
    return out


def test_every_static_rule_has_a_fixture_and_documentation():
    codes = {c for v in EXPECTED.values() for c, _, _ in v}
    for code in ("RP101", "RP102", "RP103", "RP104", "RP111", "RP112", "RP113", "RP114", "RP115", "RP116",
                 "RP117", "RP121", "RP122", "RP123", "RP131", "RP132", "RE001"):
        assert code in codes
    for code in codes | {"RE002", "RE003"}:
        rule = get_rule(code)
        for part in (rule.what, rule.why, rule.example, rule.fix):
            assert part.strip(), code
        assert rule.references or code.startswith("RE003"), code


@pytest.mark.parametrize("guarded", sorted(TWINS))
def test_guarded_pattern_is_clean_and_its_twin_is_found(guarded):
    twin = TWINS[guarded]
    twin_codes = {c for c, _, _ in EXPECTED[twin] if c != "RP113"}  # an einsum's autocast is not the guard's subject
    assert not [g for g in _got(guarded) if g[0] in twin_codes]
    assert [g for g in _got(guarded) if g[0] != "RP113"] == [g for g in EXPECTED[guarded] if g[0] != "RP113"] == []
    assert _got(twin) == sorted(EXPECTED[twin]) and EXPECTED[twin]
    # the real snippets say where they come from
    head = (FIX / guarded).read_text().splitlines()[:3]
    assert guarded == "clean_apply_repair.py" or any("==" in line and "/" in line for line in head)


def test_complex_buffer_cast_matches_torch():
    torch = pytest.importorskip("torch")
    import warnings

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            angles = torch.outer(torch.arange(16).float(), torch.tensor([1.0, 0.1]))
            self.register_buffer("freqs_cis", torch.polar(torch.ones_like(angles), angles), persistent=False)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Casting complex values to real discards the imaginary part"
        for dtype in (torch.bfloat16, torch.float16, torch.float64):
            m = M()
            ref = m.freqs_cis.clone()
            b = m.to(dtype).freqs_cis
            assert not b.is_complex() and b.dtype == dtype
            assert torch.equal(b.double(), ref.real.to(dtype).double())  # only cos(m*theta) is left
    assert M().bfloat16().freqs_cis.dtype == torch.complex64 == M().half().freqs_cis.dtype
    (f, *_) = scan_file(FIX / "rp123_complex_buffer_cast_to_real.py")
    assert f.code == "RP123" and "ComplexRoPE._precompute_cache" in f.message
    assert "keeps only its real part" in f.message and "`.bfloat16()` / `.half()` leave it complex" in f.message


def test_complex_from_fp16_angles_numbers():
    assert float(np.spacing(np.float16(8000))) == 4.0  # fp16 spacing on [4096, 8192): angles there off by <= 2
    fs = {f.line: f.message for f in scan_file(FIX / "rp114_complex_from_low_precision_angles.py")}
    assert "in bf16 the angle at position 8,191 is off by up to 16 rad" in fs[8]
    assert "in fp16 the angle at position 8,191 is off by up to 2 rad" in fs[13]


def test_new_rules_are_shown_by_rule_command(capsys):
    from ropelaw.cli import main

    for code, name in (("RP123", "complex-buffer-cast-to-real"), ("RP114", "complex-from-low-precision-angles")):
        assert main(["rule", code]) == 0
        out = capsys.readouterr().out
        assert code in out and name in out


def _bf16_exact(L: int) -> int:
    p = np.arange(L, dtype=np.float64)
    return int(np.sum(p.astype(ml_dtypes.bfloat16).astype(np.float64) == p))


def test_seed_message_carries_the_seed_figure():
    (rp101,) = [f for f in scan_file(FIX / "seed004_llama_original.py") if f.code == "RP101"]
    assert _bf16_exact(8192) == 896  # seed 004: about 10% of 8,192
    assert rp101.message == ("positions take the dtype of `self.inv_freq`, which `model.to(bfloat16)` "
                             "turns into bf16: 896 of 8,192 positions stay exact (path: made at line 20 by "
                             "`torch.arange`, cast at line 20, used at line 21 in `einsum`)")
    assert rp101.fix.startswith("build positions as int64")
    # issue 33: the path is data too (JSON / SARIF consumers)
    assert {k: rp101.data[k] for k in ("made_at", "cast_at", "used_at", "used_in")} == {
        "made_at": 20, "cast_at": 20, "used_at": 21, "used_in": "`einsum`"}


def test_a_cast_made_on_one_line_and_used_on_another_shows_both():
    src = ("import torch\nclass RotaryEmbedding(torch.nn.Module):\n"
           "    def forward(self, x, position_ids):\n"
           "        t = position_ids.to(x.dtype)\n"
           "        s = t + 0\n"
           "        return (s[:, None] * self.inv_freq).cos()\n")
    (f,) = scan_source(src, "m.py")
    assert (f.code, f.line) == ("RP102", 4)
    assert f.message.endswith("(path: made at line 3 by the argument `position_ids` of `forward`, cast at line 4, "
                              "used at line 6 in `*`)")


def test_promotion_message_matches_torch_type_promotion():
    torch = pytest.importorskip("torch")
    # int64 positions meet a bf16 / fp16 buffer (after model.to): the product takes the buffer's dtype
    pos = torch.arange(8192)
    for low in (torch.bfloat16, torch.float16):
        freq = torch.ones(4, dtype=low)
        assert torch.einsum("i, j -> i j", pos, freq).dtype == low
        assert (pos[:, None] * freq).dtype == low and torch.outer(pos, freq).dtype == low
    # ... and float32 positions or a float32 buffer keep the product float32 (the clean idioms)
    assert torch.outer(pos, torch.ones(4)).dtype == torch.float32
    assert (pos.float()[:, None] * torch.ones(4, dtype=torch.bfloat16)).dtype == torch.float32
    # the promoted positions are bf16 positions: the seed's 896 of 8,192 stay exact
    assert int((pos.to(torch.bfloat16).double() == pos.double()).sum()) == _bf16_exact(8192) == 896
    (f,) = [f for f in scan_file(FIX / "rp101_promotion.py") if f.line == 11 and f.code == "RP101"]
    assert "type promotion" in f.message and "896 of 8,192 positions stay exact" in f.message


def test_rp121_message_numbers():
    # bf16 keeps 8 significant bits: rounding moves a value by at most 2^-8 relative, a value in
    # [0.5, 1) by at most 2^-9 absolute, so at position 8,191 a phase by up to 8191 * 2^-9 = 16 rad
    # every value of [1, 2) on a 2^-16 grid (the bf16 grid is 2^-7 there; ties included)
    f = 1.0 + np.arange(2 ** 16, dtype=np.float64) * 2.0 ** -16
    r = f.astype(ml_dtypes.bfloat16).astype(np.float64)
    rel = np.max(np.abs(r - f) / f)
    assert rel <= 2.0 ** -8 and rel == 2.0 ** -8 / (1 + 2.0 ** -8)  # at 1 + 2^-8, a tie rounded to 1
    g = f / 2  # [0.5, 1): the same values halved, the spacing halves too
    err = np.max(np.abs(g.astype(ml_dtypes.bfloat16).astype(np.float64) - g))
    assert err == 2.0 ** -9
    (msg,) = [x.message for x in scan_file(FIX / "rp121_inv_freq_float_buffer.py") if x.code == "RP121"]
    assert "up to 2^-8 relative (0.39%)" in msg and f"{2.0 ** -8:.2%}" == "0.39%"
    assert f"moves by up to 2^-9, {round(8191 * 2.0 ** -9)} rad of phase at position 8,191" in msg


def test_low_precision_re_registration_says_so():
    (f,) = [f for f in scan_file(FIX / "rp101_dynamic_rescaling.py") if f.line == 64]
    assert f.message.startswith("`inv_freq` is registered with a value converted to a low-precision dtype")


def test_bad_code_near_the_new_patterns_never_raises():
    odd = [
        "class A(A):\n    def _apply(self, fn):\n        self.register_buffer('inv_freq', None)\n",
        "class A:\n    def __init__(self):\n        self.inv_freq = nn.Buffer()\n        self.x = "
        "torch.nn.Buffer(data=t)\n",
        "class B(C):\n    pass\nclass C(B):\n    def __init__(self):\n        self.register_buffer('bands', 2 ** x)\n",
        "class A:\n    def f(self, t):\n        return einsum('i,j->ij', t.type_as(self.inv_freq))\n",
        # complex values through nn.Buffer / register_parameter / a method of another class; guards on odd tests
        "class A(nn.Module):\n    def __init__(self):\n        self.x = nn.Buffer(torch.polar(a, b))\n",
        "class A:\n    def __init__(self):\n        self.register_parameter('p', nn.Parameter(self.m()))\n"
        "class B:\n    def m(self):\n        return self.m()\n",
        "class A:\n    def __init__(self):\n        self.register_buffer('inv_freq', f())\n"
        "    def forward(self):\n        if self.inv_freq.dtype:\n            pass\n        self.inv_freq = "
        "g(self.inv_freq.float)\n",
        "def f(dtype=torch.float32):\n    return torch.arange(3, dtype=dtype)\nf(*a)\nf(dtype)\nf(**k)\n",
        "def f(out: 'np.ndarray[', n):\n    return np.arange(n, dtype=out.dtype)\n",
    ]
    for src in odd:
        scan_source(src, "odd.py")  # must not raise


def test_length_changes_the_numbers():
    (f,) = [f for f in scan_file(FIX / "seed004_llama_original.py", length=32768) if f.code == "RP101"]
    assert f"{_bf16_exact(32768):,} of 32,768 positions stay exact" in f.message


def test_fp16_message_reports_overflow():
    src = "import torch\ndef rope_positions(n):\n    return torch.arange(n, dtype=torch.float16)\n"
    (f,) = scan_source(src, "m.py", length=70000)
    p = np.arange(70000, dtype=np.float64)
    with np.errstate(over="ignore"):
        c = p.astype(np.float16).astype(np.float64)
    exact, nonfinite = int(np.sum(c == p)), int(np.sum(~np.isfinite(c)))
    assert f.code == "RP104"
    assert f"{exact:,} of 70,000 positions stay exact and {nonfinite:,} from 65,520 on become non-finite" in f.message


def test_angle_error_numbers():
    # bf16 spacing at 8,191 is 32 (np.spacing of bf16 8000): an angle there is off by up to 16 rad
    assert float(np.spacing(np.array([8000.0], dtype=ml_dtypes.bfloat16))[0]) == 32
    f = [f for f in scan_file(FIX / "rp111_angles_in_low_precision.py") if f.line == 7][0]
    assert "off by up to 16 rad" in f.message
    g = [f for f in scan_file(FIX / "rp111_angles_in_low_precision.py") if f.line == 17][0]
    assert "in fp16" in g.message and "off by up to 2 rad" in g.message  # fp16 spacing at 8,191 is 4


def test_findings_carry_location_and_rule_fields():
    f = scan_file(FIX / "rp103_positions_in_default_dtype.py")[0]
    d = f.to_dict()
    assert {"code", "name", "severity", "message", "path", "line", "column", "fix"} <= set(d)
    assert (d["name"], d["severity"]) == ("positions-in-default-dtype", "warning")


# ------------------------------------------------------------------ unreadable input

def test_undecodable_file_is_reported(tmp_path):
    p = tmp_path / "latin.py"
    p.write_bytes(b"x = '\xe9t\xe9'\n")
    (f,) = scan_file(p)
    assert (f.code, f.line) == ("RE002", 1)


def test_declared_encoding_is_honoured(tmp_path):
    p = tmp_path / "latin.py"
    p.write_bytes(b"# -*- coding: latin-1 -*-\nimport torch\ndef rotary(n, x):\n    return torch.arange(n, "
                  b"dtype=x.dtype)  # \xe9\n")
    assert [(f.code, f.line) for f in scan_file(p)] == [("RP102", 4)]


def test_null_bytes_and_dangling_links_are_reported(tmp_path):
    (tmp_path / "nul.py").write_bytes(b"x = 1\x00\n")
    os.symlink(tmp_path / "missing.py", tmp_path / "dangling.py")
    result = scan_paths([tmp_path])
    assert sorted((Path(f.path).name, f.code) for f in result.findings) == [("dangling.py", "RE003"),
                                                                            ("nul.py", "RE001")]
    assert result.files == 2


def test_missing_path_and_non_python_file_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        python_files([tmp_path / "nope.py"])
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(UsageError, match="not a Python file"):
        python_files([tmp_path / "config.json"])


def test_directories_recurse_into_py_files_only(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "m.py").write_text("import torch\ndef rotary(n, x):\n    return torch.arange(n, dtype=x.dtype)\n")
    (tmp_path / "a" / "notes.txt").write_text("torch.arange(n, dtype=x.dtype)")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "m.py").write_text("syntax error (")
    result = scan_paths([tmp_path])
    assert result.files == 1 and [f.code for f in result.findings] == ["RP102"]


def test_select_and_ignore():
    r = scan_paths([FIX / "rp122_cache_rebuilt_after_cast.py"], select=["RP12"], ignore=["RP121"])
    assert [f.code for f in r.findings] == ["RP122"]


def test_scan_never_raises_on_odd_code():
    odd = [
        "",
        "x = (",
        "async def f():\n    async with torch.autocast('cuda'):\n        return a @ b\n",
        "def f(*a, **k):\n    position_ids = position_ids.to(*a)\n",
        "lambda: torch.arange(1, dtype=x.dtype)\n",
        "class A:\n    def f(self):\n        self.register_buffer(name, t)\n",
        "match x:\n    case 1:\n        position_ids.to(q.dtype)\n",
        "def f(position_ids):\n    position_ids += 1\n    return position_ids.to(x.dtype)\n",
        "def f():\n" + "    " + "(" * 50 + "position_ids" + ")" * 50 + "\n",
        "def rotary(position_ids):\n    return " + " + ".join(["position_ids"] * 20000) + "\n",
    ]
    for src in odd:
        scan_source(src, "odd.py")  # must not raise


@pytest.mark.parametrize("clean", sorted(PATTERN_TWINS))
def test_issue21_pattern_twins(clean):
    twin = PATTERN_TWINS[clean]
    assert _got(clean) == [] and EXPECTED[clean] == []
    assert _got(twin) == sorted(EXPECTED[twin]) and EXPECTED[twin]
    head = " ".join((FIX / clean).read_text().splitlines()[:3])
    assert "Written here" in head or "==" in head  # labelled: written here, or package==version path


def test_default_dtype_findings_name_the_trainer_and_match_torch():
    torch = pytest.importorskip("torch")
    import importlib.util

    spec = importlib.util.spec_from_file_location("_tiny", FIX / "rp115_default_dtype_tinyllama.py")
    tiny = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiny)
    spec = importlib.util.spec_from_file_location("_lit", FIX / "rp115_default_dtype_lit_llama.py")
    lit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lit)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)  # what Lightning/Fabric 'bf16-true' does while building and running
    try:
        cos, _ = tiny.build_rope_cache(2048, 64, torch.float32, "cpu")
        cache = lit.build_rope_cache(2048, 64, torch.int64, "cpu")  # dtype = idx.dtype of int64 token ids
        assert (torch.arange(0, 64, 2) / 64).dtype == torch.bfloat16
    finally:
        torch.set_default_dtype(old)
    # rows of the encodings that stay distinct: the bf16 values of 0..2047 (brute force: 641)
    p = np.arange(2048, dtype=np.float64)
    assert np.unique(p.astype(ml_dtypes.bfloat16)).size == 641
    assert torch.unique(cos.float(), dim=0).shape[0] == 641
    assert torch.unique(cache.float().reshape(2048, -1), dim=0).shape[0] == 641
    fs = {(f.code, f.line): f for f in scan_file(FIX / "rp115_default_dtype_lit_llama.py")}
    assert "precision='bf16-true'" in fs[("RP115", 20)].message and "type promotion" in fs[("RP115", 20)].message
    assert not any(code == "RP102" for code, _ in fs)  # the caller passes int64 token ids: not the mechanism
    assert fs[("RP115", 20)].data["mechanism"] == "bf16-true"


def test_integer_division_by_a_tensor_buffer_is_not_the_default_dtype():
    src = (
        "import torch\n"
        "class R(torch.nn.Module):\n"
        "    def __init__(self, d):\n"
        "        super().__init__()\n"
        "        self.register_buffer('scale', torch.ones(1, dtype=torch.float32))\n"
        "        self.inv_freq = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))\n"
        "        self.factor = 2.0\n"
        "    def forward(self, n):\n"
        "        t = torch.arange(n) / self.scale\n"  # int64 / float32 buffer: float32
        "        u = torch.arange(n) / self.factor\n"  # int64 / a Python float: the default dtype
        "        return torch.outer(t, self.inv_freq).cos(), torch.outer(u, self.inv_freq).cos()\n")
    assert [(f.code, f.line) for f in scan_source(src)] == [("RP115", 10)]
    torch = pytest.importorskip("torch")
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:  # torch's own type promotion, the ground truth of both lines
        assert (torch.arange(4) / torch.ones(1, dtype=torch.float32)).dtype == torch.float32
        assert (torch.arange(4) / 2.0).dtype == torch.bfloat16
    finally:
        torch.set_default_dtype(old)


def test_real_code_shapes_found_by_the_audits_of_issue_21():
    """Shapes the audits of real code met (i21-audits): numpy / jax code is not torch's default dtype nor
    its autocast; a decorator that turns autocast off; a module function only __init__ calls; a file
    with an invalid escape sequence scanned with warnings as errors."""
    import warnings

    numpy_code = ("import numpy as np\n"
                  "def fixed_pos_embedding(x, seq_dim=0):\n"
                  "    dim = x.shape[-1]\n"
                  "    inv_freq = 1.0 / (10000 ** (np.arange(0, dim, 2) / dim))\n"
                  "    sinusoid_inp = np.einsum('i , j -> i j', np.arange(x.shape[seq_dim]), inv_freq)\n"
                  "    return np.sin(sinusoid_inp), np.cos(sinusoid_inp)\n")
    assert scan_source(numpy_code) == []  # numpy: int64 / d is float64, and no autocast reaches np.einsum
    decorated = ("import torch\n"
                 "from torch.amp import autocast\n"
                 "def disable_autocast(fn):\n"
                 "    def inner(*args, **kwargs):\n"
                 "        with autocast('cuda', enabled=False):\n"
                 "            return fn(*args, **kwargs)\n"
                 "    return inner\n"
                 "class Rotary(torch.nn.Module):\n"
                 "    @disable_autocast\n"
                 "    def forward(self, positions):\n"
                 "        return torch.einsum('i, j -> i j', positions.float(), self.inv_freq.float())\n"
                 "    @torch.autocast('cuda', enabled=False)\n"
                 "    def other(self, positions):\n"
                 "        return torch.einsum('i, j -> i j', positions.float(), self.inv_freq.float())\n"
                 "    def eligible(self, positions):\n"
                 "        return torch.einsum('i, j -> i j', positions.float(), self.inv_freq.float())\n")
    assert [(f.code, f.line) for f in scan_source(decorated)] == [("RP113", 16)]
    gptj = ("import torch\n"
            "def create_sinusoidal_positions(num_pos, dim):\n"
            "    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))\n"
            "    sinusoid_inp = torch.einsum('i , j -> i j', torch.arange(num_pos).float(), inv_freq)\n"
            "    return torch.cat((torch.sin(sinusoid_inp), torch.cos(sinusoid_inp)), dim=1)\n"
            "class Attention(torch.nn.Module):\n"
            "    def __init__(self, n, d):\n"
            "        super().__init__()\n"
            "        self.embed_positions = create_sinusoidal_positions(n, d)\n")
    assert scan_source(gptj) == []  # built with the module, before any autocast region
    assert [f.code for f in scan_source(gptj + "def later(n, d):\n    return create_sinusoidal_positions(n, d)\n")] \
        == ["RP113"]  # called from code that may run under autocast too
    escape = "import torch\nPATTERN = '\\d+'\ndef f(n):\n    return torch.arange(n)\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert scan_source(escape) == []  # an invalid escape is a SyntaxWarning, not a syntax error


_PRODUCT_SRC = ("import torch\nfrom torch import nn\n\n\nclass Rotary(nn.Module):\n"
                "    def __init__(self, dim):\n        super().__init__()\n"
                "        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))\n"
                "        self.register_buffer(\"inv_freq\", inv_freq)\n\n"
                "    def forward(self, n):\n        t = torch.arange(n)\n"
                "        freqs = PRODUCT\n        return freqs.cos(), freqs.sin()\n")


@pytest.mark.parametrize("product", ["t[:, None] * self.inv_freq[None, :]",
                                     "torch.multiply(t[:, None], self.inv_freq[None, :])",
                                     "t[:, None].multiply(self.inv_freq[None, :])",
                                     "torch.mul(t[:, None], self.inv_freq[None, :])",
                                     "t[:, None].mul(self.inv_freq[None, :])",
                                     "torch.outer(t, self.inv_freq)"])
def test_every_spelling_of_a_product_is_a_product(product):
    """int64 positions times the frequency buffer: after `model.to(bf16)` the product is bf16 (RP101 at the
    product's line 13), whichever spelling of the product (issue 33: `multiply`, torch's alias of `mul`, was
    missed as a method); the buffer's cast is RP121 at line 9."""
    got = sorted((f.code, f.line) for f in scan_source(_PRODUCT_SRC.replace("PRODUCT", product), "m.py"))
    assert got == [("RP101", 13), ("RP121", 9)], product


def test_multiply_promotes_as_mul_in_torch():
    torch = pytest.importorskip("torch")
    pos, freq = torch.arange(300), torch.ones(4, dtype=torch.bfloat16)
    for out in (torch.multiply(pos[:, None], freq), pos[:, None].multiply(freq), pos[:, None] * freq):
        assert out.dtype == torch.bfloat16
    assert torch.equal(torch.multiply(pos[:, None], freq), pos[:, None] * freq)
    assert float(torch.multiply(pos, torch.ones(300, dtype=torch.bfloat16))[257]) == 256.0  # 257 rounded


@pytest.mark.parametrize("lib", ["np", "jnp"])
def test_array_library_multiply_is_read_as_its_star(lib):
    """`np.multiply` / `jnp.multiply` (a module's function, not a method of a tensor) give what `*` gives."""
    head = "import numpy as np\n" if lib == "np" else "import jax.numpy as jnp\n"
    body = (f"def rotary_table(n, dim):\n    inv_freq = 1.0 / (10000 ** ({lib}.arange(0, dim, 2, dtype={lib}.float16)"
            f" / dim))\n    t = {lib}.arange(n, dtype={lib}.float16)\n    freqs = PRODUCT\n"
            f"    return {lib}.cos(freqs), {lib}.sin(freqs)\n")
    star = sorted((f.code, f.line) for f in scan_source(head + body.replace("PRODUCT", "t[:, None] * inv_freq"),
                                                        "m.py"))
    mul = sorted((f.code, f.line) for f in scan_source(
        head + body.replace("PRODUCT", f"{lib}.multiply(t[:, None], inv_freq)"), "m.py"))
    assert star and mul == star


_PAIRS_SRC = ("import torch\n\n\ndef _apply_rope(inputs, positions, max_wavelength=10_000):\n"
              "    x_rope, x = torch.chunk(inputs, 2, dim=-1)\n"
              "    FREQ\n"
              "    timescale = max_wavelength**freq_exponents\n    inv_frequencies = 1.0 / timescale\n"
              "    sinusoid_imp = positions[..., None] * inv_frequencies\n"
              "    return torch.sin(sinusoid_imp).type_as(inputs)\n")


@pytest.mark.parametrize("freq, want", [
    # recurrentgemma 1.0.1's torch _apply_rope (issue 33's miss): pair indices of the query's last axis
    ("freq = torch.arange(x_rope.shape[-1] // 2)\n    freq_exponents = 2 * freq / x_rope.shape[-1]", [("RP116", 7)]),
    ("freq_exponents = 2 * torch.arange(x_rope.size(-1) // 2) / x_rope.size(-1)", [("RP116", 6)]),
    ("freq_exponents = torch.arange(0, x_rope.shape[-1], 2) / x_rope.shape[-1]", [("RP116", 6)]),
    # a dtype, or not half the last axis: no default dtype / not pair indices
    ("freq_exponents = 2 * torch.arange(x_rope.shape[-1] // 2, dtype=torch.float32) / x_rope.shape[-1]", []),
    ("freq_exponents = torch.arange(x_rope.shape[-1] // 2).float() / x_rope.shape[-1]", []),
])
def test_pair_indices_of_the_last_axis_are_exponents(freq, want):
    got = sorted((f.code, f.line) for f in scan_source(_PAIRS_SRC.replace("FREQ", freq), "m.py"))
    assert got == want, freq


def test_pair_indices_take_the_default_dtype_in_torch():
    torch = pytest.importorskip("torch")
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        x = torch.zeros(2, 128)
        e = 2 * torch.arange(x.shape[-1] // 2) / x.shape[-1]
        assert e.dtype == torch.bfloat16 and (1.0 / 10_000 ** e).dtype == torch.bfloat16
    finally:
        torch.set_default_dtype(old)


_STEP_SRC = ("import torch\nfrom torch import nn\n\n\nclass RecurrentRotary(nn.Module):\n"
             "    def __init__(self, dim):\n        super().__init__()\n"
             "        self.register_buffer(\"inv_freq\", 1.0 / 10000 ** torch.linspace(0, 1, dim // 2))\n\n"
             "    def forward(self, ARGS):\n        angle = PRODUCT\n        return torch.sin(angle), "
             "torch.cos(angle)\n")


@pytest.mark.parametrize("args, product, want", [
    # torchscale 0.3.0 RetNetRelPos's recurrent step (issue 33's miss): the last position, a Python int
    ("slen", "self.inv_freq * (slen - 1)", [("RP111", 11)]),
    ("seq_len", "(seq_len - 1) * self.inv_freq", [("RP111", 11)]),
    # float32 frequencies, or a name that is not a length argument of this function: nothing to say
    ("slen", "self.inv_freq.float() * (slen - 1)", []),
    ("scale", "self.inv_freq * (scale - 1)", []),
])
def test_a_python_number_position_times_the_cast_buffer(args, product, want):
    src = _STEP_SRC.replace("ARGS", args).replace("PRODUCT", product)
    got = sorted((f.code, f.line) for f in scan_source(src, "m.py") if f.code != "RP121")
    assert got == want, product


def test_a_python_number_times_a_bf16_tensor_rounds_the_product_only():
    torch = pytest.importorskip("torch")
    w = torch.tensor([1.0 + 2.0 ** -7], dtype=torch.bfloat16)
    out = w * 257  # 257 * 1.0078125 = 259.0078...: bf16 260; had 257 been rounded to bf16 (256) first: 258
    assert out.dtype == torch.bfloat16 and float(out) == 260.0


_HELD_SRC = ("import torch\nfrom torch import nn\n\n\nclass RotaryEmbedding(nn.Module):\n"
             "    def __init__(self, dim):\n        super().__init__()\n"
             "        self.register_buffer('inv_freq', 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim)))\n\n"
             "    def forward(self, positions):\n"
             "        return torch.einsum('i , j -> i j', positions, self.inv_freq)\n\n\n"
             "class Model(nn.Module):\n    def __init__(self, dim, rotary=True):\n        super().__init__()\n"
             "        self.rotary_pos_emb = RotaryEmbedding(dim) if rotary else None\n\n"
             "    def forward(self, x, offset):\n        n = x.shape[1]\n        POS\n"
             "        return self.rotary_pos_emb(pos)\n")


@pytest.mark.parametrize("pos, want", [
    # recurrent-memory-transformer 0.7.0 (issue 33's miss): int64 positions reach forward through the attribute
    ("pos = torch.arange(n) + 10000\n        pos = torch.nn.functional.pad(pos, (1, 0), value=9999)",
     [("RP101", 11), ("RP113", 11)]),
    ("pos = torch.arange(n, dtype=torch.long)", [("RP101", 11), ("RP113", 11)]),
    # float32 positions, or an argument of the caller: not known to be int64 (the einsum's RP113 only)
    ("pos = torch.arange(n).float()", [("RP113", 11)]),
    ("pos = offset", [("RP113", 11)]),
])
def test_positions_followed_through_a_module_held_in_an_attribute(pos, want):
    got = sorted((f.code, f.line) for f in scan_source(_HELD_SRC.replace("POS", pos), "m.py") if f.code != "RP121")
    assert got == want, pos


def test_a_plain_attribute_set_by_an_in_file_base_does_not_follow_a_cast():
    """Issue 33, text-generation-inference's rotary.py: ``RotaryPositionEmbeddingMultimodalSections`` reads
    ``self.inv_freq``, which its base's ``__init__`` assigns as a plain float32 tensor: ``Module.to`` never casts
    it (torch says so below), so positions ``arange(n, dtype=self.inv_freq.dtype)`` are float32: no RP101. The
    same base registering it as a buffer: the cast reaches it, RP101 stays."""
    torch = pytest.importorskip("torch")
    template = (
        "import torch\n"
        "from torch import nn\n"
        "class Base(nn.Module):\n"
        "    def __init__(self, inv_freq):\n"
        "        super().__init__()\n"
        "        {store}\n"
        "class Sections(Base):\n"
        "    def __init__(self, inv_freq):\n"
        "        super().__init__(inv_freq)\n"
        "    def cos_sin(self, n):\n"
        "        t = torch.arange(n, dtype=self.inv_freq.dtype)\n"
        "        return torch.outer(t, self.inv_freq).cos()\n"
    )
    inv_freq = 1.0 / (10000 ** (torch.arange(0, 128, 2, dtype=torch.float32) / 128))
    cases = (("self.inv_freq = inv_freq", torch.float32, []),
             ('self.register_buffer("inv_freq", inv_freq)', torch.bfloat16, [("RP121", 6), ("RP101", 11)]))
    for store, cast_dtype, want in cases:
        src = template.format(store=store)
        ns: dict = {}
        exec(compile(src, "m.py", "exec"), ns)
        assert ns["Sections"](inv_freq).to(torch.bfloat16).inv_freq.dtype == cast_dtype
        assert [(f.code, f.line) for f in scan_source(src, "m.py")] == want, store


def test_a_buffer_built_from_float32_names_is_float32_at_construction_and_as_a_repair():
    """Issue 33, jquesnelle/yarn: ``yarn()`` registers ``inv_freq = inv_freq_interpolation * (1 - inv_freq_mask) +
    inv_freq_extrapolation * inv_freq_mask``, names built with ``.float()``; torch's promotion makes the sum float32
    (checked below, under a bf16 default dtype too). So ``__init__``'s positions right after ``self.yarn()`` are
    float32 (no RP101), and a ``forward`` that calls ``self.yarn()`` before reading the buffer repairs a cast (no
    RP101, no RP121); the rebuild that reads the cast buffer without it keeps its RP101."""
    torch = pytest.importorskip("torch")
    src = (
        "import torch\n"
        "class Yarn(torch.nn.Module):\n"
        "    def __init__(self, dim=64):\n"
        "        super().__init__()\n"
        "        self.dim = dim\n"
        "        self.yarn()\n"
        "        t = torch.arange(8, dtype=self.inv_freq.dtype)\n"
        "        self.t_dtype = t.dtype\n"
        "        self.register_buffer('cos_cached', torch.outer(t, self.inv_freq).cos(), persistent=False)\n"
        "    def yarn(self):\n"
        "        pos = 10000 ** (torch.arange(0, self.dim, 2).float() / self.dim)\n"
        "        extra, inter = 1.0 / pos, 1.0 / (4 * pos)\n"
        "        mask = 1 - torch.clamp(torch.arange(self.dim // 2) / 8, 0, 1).float()\n"
        "        inv_freq = inter * (1 - mask) + extra * mask\n"
        "        self.register_buffer('inv_freq', inv_freq, persistent=False)\n"
        "    def forward(self, n):\n"
        "        self.yarn()\n"
        "        t = torch.arange(n, dtype=self.inv_freq.dtype)\n"
        "        return torch.outer(t, self.inv_freq).cos()\n"
    )
    ns: dict = {}
    exec(compile(src, "m.py", "exec"), ns)
    old = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.bfloat16)
        m = ns["Yarn"]()
    finally:
        torch.set_default_dtype(old)
    assert m.t_dtype == torch.float32 and m.inv_freq.dtype == torch.float32
    m = m.to(torch.bfloat16)
    assert m.inv_freq.dtype == torch.bfloat16 and m(8).dtype == torch.float32  # forward's self.yarn() repairs it
    assert scan_source(src, "m.py") == []
    # without the repair in forward, the cast buffer feeds the positions (RP101) and is a float buffer (RP121)
    unrepaired = src.replace("        self.yarn()\n        t = torch.arange(n", "        t = torch.arange(n")
    assert sorted((f.code, f.line) for f in scan_source(unrepaired, "m.py")) == [("RP101", 17), ("RP121", 15)]
