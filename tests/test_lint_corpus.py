"""The lint corpus: published model / training configs, their exact findings and numbers.

Every number is re-derived here without ropelaw.theory / basebound / formats / schemes:
- critical dimension: a brute-force count of pairs whose period 2*pi*b^(2i/d) fits in T_train
  (Liu et al. 2023, arXiv 2310.05209, Lemma 1), in mpmath;
- the bound of plain RoPE trained from scratch (beta = b, T_tune = T_train) is T_train
  (Theorem 3: at or below the critical base the bound is T_tune; seed 001: "iff beta = 10000
  and T_tune = T_train the extrapolation is unchanged");
- the bound through a scheme: the scaled period of the first untrained pair, with the scheme's
  rule for that pair written out from its paper (linear: x s; YaRN: r = L/lambda < beta_slow
  -> x s; Llama 3.1: lambda > L_orig/low -> x s; LongRoPE: x long_factor[k]);
- Men et al.'s condition: numpy sums of cos(m*theta_i) over every m (first violation, count),
  and the base lower bound by brute force over the 2-significant-figure base grid of Men et
  al.'s Table 1 (the smallest grid base whose sums stay >= 0 for every m <= the context);
- exact positions: a brute-force cast with ml_dtypes.
Finding locations are checked against a text search for the key in the file.
"""

from __future__ import annotations

import functools
import json
import math
import pathlib
import re

import mpmath
import numpy as np
import pytest

from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import load_config

CORPUS = pathlib.Path(__file__).parent / "configs"


def loc(path: pathlib.Path, key: str) -> tuple[int, int]:
    """Line and column of the first ``"key":`` (JSON) or ``key:`` (YAML) in the file."""
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        m = re.search(rf'(^|\s|\{{)"{re.escape(key)}"\s*:', line)
        if m:
            return n, m.start() + len(m.group(1)) + 1
        m = re.match(rf"^(\s*){re.escape(key)}\s*:", line)
        if m:
            return n, len(m.group(1)) + 1
    raise AssertionError(f"{key} not in {path}")


def brute_critical_dimension(d: int, t: int, b: float) -> int:
    """2 x number of pairs i with 2*pi*b^(2i/d) <= T_train, 60 digits."""
    with mpmath.workdps(60):
        return 2 * sum(1 for i in range(d // 2) if 2 * mpmath.pi * mpmath.mpf(b) ** (mpmath.mpf(2 * i) / d) <= t)


def period(d: int, b: float, i: int) -> float:
    return float(2 * mpmath.pi * mpmath.mpf(b) ** (mpmath.mpf(2 * i) / d))


def first_negative_b(inv_freq: np.ndarray, length: int) -> int | None:
    """Smallest m in [0, length] with sum_i cos(m theta_i) < 0 (Men et al. 2024, B_{m,theta})."""
    start, size = 0, 1024
    while start <= length:
        stop = min(start + size, length + 1)
        m = np.arange(start, stop, dtype=np.float64)[:, None]  # (M, 1) float64
        s = np.cos(m * inv_freq[None, :]).sum(axis=1)  # (M,) float64
        neg = np.nonzero(s < 0)[0]
        if neg.size:
            return start + int(neg[0])
        start, size = stop, 8192
    return None


def grid_bases():
    """2, 2.1, ..., 9.9, 10, 11, ..., 99, 100, 110, ...: two significant figures, ascending."""
    for e in range(-1, 16):
        for q in range(10, 100):
            b = float(f"{q}e{e}")
            if b >= 2.0:
                yield b


@functools.cache
def brute_lower_bound(d: int, length: int) -> float:
    """Smallest grid base b with sum_i cos(m b^(-2i/d)) >= 0 for every m in [0, length].

    Every grid base is tried in ascending order; a base is rejected by a negative sum either at
    distances near where the last smaller bases failed (a shortcut that only ever rejects with
    a genuine negative value) or by the full scan of first_negative_b.
    """
    i = np.arange(d // 2)
    recent: list[np.ndarray] = []
    for b in grid_bases():
        theta = b ** (-2.0 * i / d)  # (d/2,) float64
        if recent:
            m = np.concatenate(recent)[:, None]  # (M, 1) float64
            if (np.cos(m * theta[None, :]).sum(axis=1) < 0).any():
                continue
        first = first_negative_b(theta, length)
        if first is None:
            return b
        recent = (recent + [np.arange(max(0, first - 256), min(length, first + 256) + 1, dtype=np.float64)])[-4:]
    raise AssertionError("no grid base passes")


def count_negative_b(inv_freq: np.ndarray, length: int) -> int:
    """Number of m in [0, length] with sum_i cos(m theta_i) < 0."""
    total = 0
    for start in range(0, length + 1, 16384):
        m = np.arange(start, min(start + 16384, length + 1), dtype=np.float64)[:, None]  # (M, 1) float64
        total += int((np.cos(m * inv_freq[None, :]).sum(axis=1) < 0).sum())
    return total


def exact_count(dtype_name: str, length: int) -> int:
    import ml_dtypes

    dt = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16}[dtype_name]
    pos = np.arange(length, dtype=np.int64)  # (L,) int64
    back = pos.astype(np.float64).astype(dt).astype(np.float64)  # (L,) float64 after a round trip
    return int(np.sum(back == pos))


# file -> (d, base, train_len, main length, scheme, [(code, key the finding points at)], dtype); the remote-code
# families (ChatGLM, GLM-4, InternLM2: an auto_map, a model_type no transformers has) carry RV023
EXPECTED = {
    "llama-2-7b.json": (128, 1e4, 4096, 4096, "default", [("RL103", "model_type"), ("RP201", "torch_dtype")], "fp16"),
    "llama-3-8b.json": (128, 5e5, 8192, 8192, "default", [("RP201", "torch_dtype")], "bf16"),
    "llama-3.1-8b.json": (128, 5e5, 8192, 131072, "llama3",
                          [("RL102", "max_position_embeddings"), ("RL104", "rope_theta"), ("RP201", "torch_dtype")],
                          "bf16"),
    "llama-3.2-1b.json": (64, 5e5, 8192, 131072, "llama3", [("RL104", "rope_theta"), ("RP201", "torch_dtype")], "bf16"),
    "mistral-7b-v0.1.json": (128, 1e4, 32768, 4096, "default", [("RL103", "rope_theta"), ("RP201", "torch_dtype")],
                             "bf16"),
    "mistral-7b-instruct-v0.2.json": (128, 1e6, 32768, 32768, "default", [("RP201", "torch_dtype")], "bf16"),
    "mixtral-8x7b-v0.1.json": (128, 1e6, 32768, 32768, "default", [("RP201", "torch_dtype")], "bf16"),
    "qwen2-7b-instruct.json": (128, 1e6, 32768, 32768, "default", [("RP201", "torch_dtype")], "bf16"),
    "qwen2.5-7b-instruct-yarn.json": (128, 1e6, 32768, 32768, "yarn", [("RV010", "factor"), ("RP201", "torch_dtype")],
                                      "bf16"),
    "qwen3-8b.json": (128, 1e6, 40960, 40960, "default", [("RL103", "rope_theta"), ("RP201", "torch_dtype")], "bf16"),
    "gemma-2-9b.json": (256, 1e4, 8192, 8192, "default", [("RL103", "rope_theta"), ("RL103", "rope_theta")], None),
    "gemma-3-4b-it.json": (256, 1e6, 16384, 131072, "linear", [("RP201", "torch_dtype")], "bf16"),
    "phi-3-mini-128k-instruct.json": (96, 1e4, 4096, 131072, "longrope",
                                      [("RL104", "rope_theta"), ("RP201", "torch_dtype")], "bf16"),
    "phi-4.json": (128, 2.5e5, 16384, 16384, "default", [("RL103", "rope_theta"), ("RP201", "torch_dtype")], "bf16"),
    "deepseek-v3.json": (64, 1e4, 4096, 163840, "yarn", [("RL104", "rope_theta"), ("RP201", "torch_dtype")], "bf16"),
    "pythia-6.9b.json": (32, 1e4, 2048, 2048, "default", [("RL103", "rotary_emb_base")], "fp16"),
    "falcon-7b.json": (64, 1e4, 2048, 2048, "default", [("RL103", "model_type"), ("RP201", "torch_dtype")], "bf16"),
    "chatglm2-6b.json": (64, 1e4, 32768, 32768, "default", [("RL103", "seq_length"), ("RP201", "torch_dtype"),
                                                                        ("RV023", "model_type")], "fp16"),
    "glm-4-9b-chat.json": (64, 5e6, 131072, 131072, "default", [("RL103", "rope_ratio"), ("RP201", "torch_dtype"),
                                                                             ("RV023", "model_type")], "bf16"),
    "internlm2_5-7b-chat.json": (128, 1e6, 32768, 32768, "dynamic", [("RP201", "torch_dtype"), ("RV023", "model_type")],
                                 "bf16"),
    "gpt-neox-20b.yml": (24, 1e4, 2048, 2048, "default", [("RL103", '"max-position-embeddings"')], "fp16"),
    # NeMo trainer.precision bf16 without model.megatron_amp_O2: float32 parameters under bf16 autocast
    # (nemo_toolkit==2.5.0 params_dtype), so no RP201
    "megatron-llama2-7b.yaml": (128, 1e4, 4096, 4096, "default", [("RL103", "rotary_base")], "bf16-mixed"),
    # written here for shapes that broke the loader (issue 9): phi-2's partial factor (d = int(80 * 0.4) = 32 in
    # float), Qwen2.5-VL's mrope (plain RoPE over sections), LLaVA's text_config, NeMo's ${.interpolation}
    "phi-2.json": (32, 1e4, 2048, 2048, "default", [("RL103", "rope_theta")], "fp16"),
    "qwen2.5-vl-7b-instruct.json": (128, 1e6, 128000, 128000, "default",
                                    [("RL103", "rope_theta"), ("RP201", "torch_dtype")], "bf16"),
    "llava-1.5-7b-hf.json": (128, 1e4, 4096, 4096, "default",
                             [("RL103", "model_type"), ("RP201", "torch_dtype")], "fp16"),
    "nemo-llama2-7b-interpolation.yaml": (128, 1e4, 4096, 4096, "default", [("RL103", "rotary_base")], None),
}


def test_corpus_is_complete():
    files = sorted(p.name for p in CORPUS.iterdir() if p.suffix in (".json", ".yaml", ".yml", ".toml"))
    assert files == sorted(EXPECTED)
    assert len(files) >= 15
    for p in CORPUS.glob("*.json"):
        assert "_source" in json.loads(p.read_text()), p


@pytest.fixture(scope="module")
def results():
    return {name: lint_config(load_config(str(CORPUS / name))) for name in EXPECTED}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_config(name, results):
    d, base, train, length, scheme, findings, dtype = EXPECTED[name]
    r = results[name]
    a = r.layers[0]
    spec = a.spec
    assert (spec.d, spec.base, spec.train_len, a.length, spec.scheme) == (d, base, train, length, scheme), name
    # critical dimension: brute-force period count with the pretraining base (= the config's base)
    assert a.bound.critical_dimension == brute_critical_dimension(d, train, base)
    # exact findings: codes and the key each points at (text search, not the tracker)
    path = CORPUS / name
    expected = sorted((code,) + loc(path, key.strip('"')) if not key.startswith('"') else
                      (code,) + _loc_quoted(path, key.strip('"')) for code, key in findings)
    got = sorted((f.code, f.line, f.column) for f in r.findings)
    assert got == expected, f"{name}: expected {expected}, got {got}"
    # dtype counts against a brute-force cast
    for f in r.findings:
        if f.code == "RP201":
            n = int(r.config.target.number())
            assert f.data["dtype"] == dtype
            assert f.data["exact"] == exact_count(dtype, n)


def _loc_quoted(path, key):
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        i = line.find(f'"{key}"')
        if i >= 0:
            return n, i + 1
    raise AssertionError(key)


PLAIN = [n for n, e in EXPECTED.items() if e[4] == "default"]


@pytest.mark.parametrize("name", PLAIN)
def test_plain_rope_bound_is_training_length(name, results):
    """Trained from scratch (beta = b, T_tune = T_train): Liu et al. Theorem 3 gives T_tune."""
    a = results[name].layers[0]
    assert a.bound.regime == "at_or_below_critical_base"
    assert a.bound.extrapolation_bound == a.spec.train_len


def _scheme_bound(name: str) -> float:
    """The scaled period of the first untrained pair, written out per scheme (see module doc)."""
    d, base, train, _, scheme, _, _ = EXPECTED[name]
    k = brute_critical_dimension(d, train, base) // 2
    lam = period(d, base, k)
    if scheme == "linear":
        return 8 * lam  # Gemma 3: factor 8 (Chen et al. 2023: theta/s)
    if scheme == "yarn":
        cfg = json.loads((CORPUS / name).read_text())["rope_scaling"]
        s, orig = cfg["factor"], cfg["original_max_position_embeddings"]
        assert orig / lam < cfg.get("beta_slow", 1)  # r < beta_slow: fully interpolated (YaRN sec. 3.2)
        return s * lam
    if scheme == "llama3":
        cfg = json.loads((CORPUS / name).read_text())["rope_scaling"]
        assert lam > cfg["original_max_position_embeddings"] / cfg["low_freq_factor"]  # low band: theta/s
        return cfg["factor"] * lam
    if scheme == "longrope":
        cfg = json.loads((CORPUS / name).read_text())["rope_scaling"]
        return cfg["long_factor"][k] * lam  # L > L_orig: long factors (Ding et al. 2024)
    raise AssertionError(scheme)


@pytest.mark.parametrize("name", ["llama-3.1-8b.json", "llama-3.2-1b.json", "qwen2.5-7b-instruct-yarn.json",
                                  "deepseek-v3.json", "phi-3-mini-128k-instruct.json", "gemma-3-4b-it.json"])
def test_scheme_bound_matches_hand_derivation(name, results):
    a = results[name].layers[0]
    expected = _scheme_bound(name)
    if EXPECTED[name][4] == "longrope":  # length-dependent: the largest whole distance within the period
        expected = math.floor(expected)
    assert a.bound.extrapolation_bound == pytest.approx(expected, rel=1e-12)


def test_llama31_named_numbers(results):
    """Llama 3.1: pair 35 of 64 (critical dimension 70 at T=8192, b=5e5) has period 8,218.7;
    x8 -> 65,749.7 < 131,072: RL102 (assumes no tuning at 128K)."""
    a = results["llama-3.1-8b.json"].layers[0]
    assert a.bound.critical_dimension == 70
    assert round(_scheme_bound("llama-3.1-8b.json"), 1) == 65749.7
    f = next(f for f in results["llama-3.1-8b.json"].findings if f.code == "RL102")
    assert "65,750" in f.message and "131,072" in f.message and "llama3" in f.message


def test_yarn_designed_for_target_is_not_beyond_bound():
    """Qwen2.5 with yarn factor 4 over 32K served at 128K: bound through YaRN 141,332 >= 131,072."""
    r = lint_config(load_config(str(CORPUS / "qwen2.5-7b-instruct-yarn.json"), target=131072))
    assert not [f for f in r.findings if f.code in ("RL101", "RL102")]  # RL103/RL104 are Men et al.'s, not the bound
    assert r.layers[0].bound.extrapolation_bound == pytest.approx(4 * period(128, 1e6, 40), rel=1e-12)
    # the same context with plain RoPE is beyond the bound (trained at 32,768)
    import copy

    data = json.loads((CORPUS / "qwen2.5-7b-instruct-yarn.json").read_text())
    plain = copy.deepcopy(data)
    del plain["rope_scaling"]
    from ropelaw.lint.loader import load_mapping

    r2 = lint_config(load_mapping(plain, target=131072))
    assert [f.code for f in r2.findings if f.code.startswith("RL10")][0] == "RL101"


def single_base_frequencies(name: str, a) -> tuple[float, np.ndarray] | None:
    """(b, b^(-2i/d)) when the layer's inference frequencies come from one base, written out per
    scheme: plain RoPE the config's base; dynamic NTK (HF) b*(s*L/L0 - (s-1))^(d/(d-2)) past
    L0, else b. Other schemes (linear, YaRN, Llama 3, LongRoPE) change pairs differently: None."""
    d, b = a.spec.d, a.spec.base
    if a.spec.scheme == "dynamic":
        cfg = json.loads((CORPUS / name).read_text())
        s, l0 = cfg["rope_scaling"]["factor"], cfg["max_position_embeddings"]
        if a.length > l0:
            b = b * (s * a.length / l0 - (s - 1)) ** (d / (d - 2))
    elif a.spec.scheme != "default":
        return None
    return b, b ** (-2.0 * np.arange(d // 2) / d)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_men_rules_match_brute_force(name, results):
    """RL103 iff a single base b fails B >= 0 up to the context AND b < the brute-force grid lower
    bound; RL104 iff a scheme's frequencies (no single base) fail B >= 0 up to the context."""
    r = results[name]
    expected = []
    for a in r.layers:
        assert a.scheme_result.window is None  # no ReRoPE in the corpus: the context is a.length
        single = single_base_frequencies(name, a)
        inv = single[1] if single else np.array([float(t) for t in a.scheme_result.inv_freq])
        first = first_negative_b(inv, a.length)
        if first is None:
            continue  # the frequencies support the context: nothing to say
        data = {"length": a.length, "supported_length": first - 1, "violations": count_negative_b(inv, a.length)}
        if single is None:
            expected.append(("RL104", data))
            continue
        lb = brute_lower_bound(a.spec.d, a.length)
        if single[0] < lb:
            expected.append(("RL103", {**data, "base": single[0], "base_lower_bound": lb}))
    assert [f.code for f in r.findings if f.code in ("RL103", "RL104")] == [c for c, _ in expected], name
    got = [(f.code, {k: f.data[k] for k in e[1]}) for f, e in
           zip([f for f in r.findings if f.code in ("RL103", "RL104")], expected, strict=True)]
    assert got == expected, name


def test_qwen2_at_32k_is_above_the_lower_bound(results):
    """Qwen2 / Mistral v0.2 / Mixtral: base 1e6 at 32,768 tokens, d=128. Men et al. Table 1 prints
    6.4e5 for 32K; brute force over the grid gives 6.3e5 for 32,768 (every smaller grid base fails). The base
    itself has B < 0 at 4 isolated distances (first 27,115), but it is not BELOW the bound: no
    RL103 (the rule's meaning), and no other Men finding."""
    theta = 1e6 ** (-2.0 * np.arange(64) / 128)  # (64,) float64
    assert first_negative_b(theta, 32768) == 27115 and count_negative_b(theta, 32768) == 4
    lb = brute_lower_bound(128, 32768)
    assert lb == 6.3e5 and lb <= 6.4e5 <= 1e6
    # not monotone in the base: the printed 6.4e5 itself dips below zero at 27,685 < 32,768
    assert first_negative_b(6.4e5 ** (-2.0 * np.arange(64) / 128), 32768) == 27685
    for name in ("qwen2-7b-instruct.json", "mistral-7b-instruct-v0.2.json", "mixtral-8x7b-v0.1.json",
                 "internlm2_5-7b-chat.json"):
        assert not [f for f in results[name].findings if f.code in ("RL103", "RL104")], name


def test_llama2_at_32k_is_below_the_lower_bound():
    """Llama 2 7B served at 32K (--target 32k): base 1e4 < 6.3e5 (brute-force grid bound for
    32,768 tokens at d=128; Men et al. print 6.4e5 for 32K): RL103 with the numbers."""
    r = lint_config(load_config(str(CORPUS / "llama-2-7b.json"), target=32768))
    f = next(f for f in r.findings if f.code == "RL103")
    theta = 1e4 ** (-2.0 * np.arange(64) / 128)  # (64,) float64
    assert f.data["base"] == 1e4 and f.data["base_lower_bound"] == brute_lower_bound(128, 32768)
    assert f.data["supported_length"] + 1 == first_negative_b(theta, 32768) == 1707
    assert f.data["violations"] == count_negative_b(theta, 32768)
    assert "base 10,000 [rope_theta absent: LlamaConfig default] is below Men et al.'s lower bound 6.3e5 " \
           "for the target 32,768 tokens [--target] at d=128" in f.message
    assert f"B_(m,theta) < 0 at {count_negative_b(theta, 32768):,} of 32,768 distances, first at 1,707" in f.message
    assert (f.line, f.column) == loc(CORPUS / "llama-2-7b.json", "model_type")


def test_derived_aliases(results):
    """Aliases resolved as published code does."""
    c = results["chatglm2-6b.json"].config
    assert c.layers[0].d.raw == 64  # kv_channels 128, ChatGLM rotates half
    assert results["glm-4-9b-chat.json"].layers[0].spec.base == 10000 * 500  # rope_ratio
    assert results["pythia-6.9b.json"].layers[0].spec.d == 4096 // 32 // 4  # rotary_pct 0.25
    assert results["gpt-neox-20b.yml"].layers[0].spec.d == 6144 // 64 // 4
    assert results["deepseek-v3.json"].layers[0].spec.d == 64  # qk_rope_head_dim
    g3 = results["gemma-3-4b-it.json"]
    assert [a.label for a in g3.layers] == ["global (5 layers)", "local (29 layers)"]
    assert (g3.layers[1].spec.base, g3.layers[1].length) == (10000, 1024)  # rope_local_base_freq, window
    assert "Gemma3TextConfig default" in g3.config.layers[0].base.where
    assert "LlamaConfig default" in results["llama-2-7b.json"].config.layers[0].base.where
    assert results["phi-3-mini-128k-instruct.json"].config.train_len.key == "original_max_position_embeddings"
    assert results["megatron-llama2-7b.yaml"].config.train_len.key == "model.encoder_seq_length"
    assert results["gemma-2-9b.json"].layers[1].length == 4096
    assert results["mistral-7b-v0.1.json"].layers[0].window == 4096


def test_json_output_keys_match_bound_command(capsys):
    from ropelaw.cli import main

    rc = main(["lint", str(CORPUS / "llama-3-8b.json"), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    bound = out["configs"][0]["bound"]
    assert main(["bound", "--d", "128", "--train", "8192", "--base", "5e5", "--pretrain-base", "5e5",
                 "--format", "json"]) == 0
    reference = json.loads(capsys.readouterr().out)
    assert set(bound) == set(reference)  # the same key names as `ropelaw bound --format json`
    assert bound["critical_dimension"] == reference["critical_dimension"] == 70
    assert bound["extrapolation_bound"] == reference["extrapolation_bound"] == 8192
