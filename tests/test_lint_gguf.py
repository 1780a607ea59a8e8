"""`ropelaw lint model.gguf` and `ropelaw audit checkpoint model.gguf`: a GGUF read as llama.cpp reads it
(ropelaw/lint/dialects/gguf.py), each rule of rules/serving.py and audit/rules/gguf.py firing and not firing.

The files are written by the ``gguf`` package's own writer (gguf==0.19.0, the [test] pin; tests/gguf_files.py).
The values are checked against sources independent of ropelaw's reading: Llama 3.1's factors from transformers'
own ``_compute_llama3_parameters`` (the runtime's inv_freq, divided as llama.cpp's conversion divides them),
YaRN's attention factor from transformers' ``_compute_yarn_parameters``, ggml's rotary against float64 angles,
and the same model's config.json linted by ropelaw's Hugging Face reading.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from gguf_files import LLAMA31_8B, llama31, write_gguf
from ropelaw.cli import main
from ropelaw.lint.loader import load_config
from ropelaw.lint.rope_factors import llama3_factors

gguf = pytest.importorskip("gguf")

CORPUS = Path(os.environ.get("ROPELAW_CORPUS", Path(__file__).resolve().parents[1].parent / "shared" / "corpus"))
LLAMA32 = "hf/MatthewGoldsberry__LLM-Projects__Llama-3.2-1B__config.json"


def lint(capsys, *argv: str, every_rule: bool = True) -> tuple[int, str, str]:
    """``ropelaw lint --select ALL`` (informational findings such as RV044 shown too), or the default rule set."""
    code = main(["lint", *(["--select", "ALL"] if every_rule else []), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def codes(out: str) -> set[str]:
    return {w for line in out.splitlines() for w in line.split()[1:2] if w[:2] in ("RV", "RL", "RP", "RS", "RE")}


def transformers_llama3_factors(config: dict) -> np.ndarray:
    """Llama 3.1's per-pair factors as llama.cpp's conversion stores them (inv_freq / inv_freq_llama3), from
    transformers' own rope initialisation (4.57.1: ROPE_INIT_FUNCTIONS['default'] and ['llama3'])."""
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    cfg = LlamaConfig(**{k: v for k, v in config.items() if k not in ("architectures", "model_type")})
    plain, _ = ROPE_INIT_FUNCTIONS["default"](cfg, "cpu")
    scaled, _ = ROPE_INIT_FUNCTIONS["llama3"](cfg, "cpu")
    return (plain.double() / scaled.double()).numpy()


def test_llama3_factors_are_transformers():
    cfg = {"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000.0, "max_position_embeddings": 131072,
           "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                            "original_max_position_embeddings": 8192}}
    theirs = transformers_llama3_factors(cfg)  # transformers evaluates the smooth band in float32: a few roundings
    ours = llama3_factors(500000.0, 128, 8.0, 1.0, 4.0, 8192)
    assert np.max(np.abs(ours / theirs - 1)) < 2.0**-21


def _converted_like(config: dict, path: Path, factors: np.ndarray | None = None, **extra) -> str:
    """The GGUF llama.cpp's LlamaModel conversion writes for ``config`` (keys of conversion/llama.py
    set_gguf_parameters; Llama 3.x: rope_freqs.weight float32 and no scaling keys)."""
    n = config["num_attention_heads"]
    head = config.get("head_dim") or config["hidden_size"] // n
    kv = {"{arch}.context_length": config["max_position_embeddings"], "{arch}.embedding_length": config["hidden_size"],
          "{arch}.block_count": config["num_hidden_layers"], "{arch}.attention.head_count": n,
          "{arch}.attention.head_count_kv": config["num_key_value_heads"],
          "{arch}.rope.freq_base": config["rope_theta"],
          "{arch}.rope.dimension_count": head, "{arch}.attention.key_length": head}
    kv.update(extra)
    tensors = {"rope_freqs.weight": factors.astype(np.float32)} if factors is not None else {}
    return write_gguf(path, "llama", kv, tensors)


def corpus_config(rel: str) -> dict:
    p = CORPUS / rel
    if not p.is_file():
        if os.environ.get("ROPELAW_REQUIRE_CORPUS"):
            pytest.fail(f"corpus required and missing: {p}")
        pytest.skip(f"not in the corpus yet: {rel}")
    return json.loads(p.read_text())


def test_a_converted_llama32_reads_as_its_config_json(tmp_path, capsys):
    """Llama 3.2 1B's config.json and the GGUF its conversion makes (factors from transformers): the same d, base,
    scheme and parameters, lengths, bound and findings (none)."""
    config = corpus_config(LLAMA32)
    path = _converted_like(config, tmp_path / "llama32.gguf", transformers_llama3_factors(config))
    hf, g = load_config(str(CORPUS / LLAMA32)), load_config(path)
    for cfg in (hf, g):
        assert (cfg.layers[0].d.number(), cfg.layers[0].base.number(), cfg.layers[0].scheme.raw) == (64, 500000.0,
                                                                                                    "llama3")
        assert (cfg.train_len.number(), cfg.target.number()) == (8192, 131072)
    assert {k: v.number() for k, v in g.layers[0].params.items()} == {
        k: float(v) for k, v in config["rope_scaling"].items() if k != "rope_type"}
    code_hf, out_hf, _ = lint(capsys, "--verbose", str(CORPUS / LLAMA32), every_rule=False)  # the ok line: --verbose
    code_g, out_g, _ = lint(capsys, "--verbose", path, every_rule=False)
    assert code_hf == code_g == 0
    bound = out_hf.split("bound ")[1].split(")")[0]
    assert f"bound {bound})" in out_g and "semantics" not in out_g


def test_rv040_factors_for_another_base(tmp_path, capsys):
    """rope_freqs.weight made at base 500,000, the base edited to 1,000,000 after conversion: RV040, the factors
    not modelled (RV030), never plain RoPE."""
    path = llama31(tmp_path / "edited.gguf", **{"{arch}__rope__freq_base": 1000000.0})
    code, out, _ = lint(capsys, path)
    assert code == 1 and {"RV040", "RV030"} <= codes(out), out
    assert "not the Llama 3 formula at llama.rope.freq_base 1e+06" in out
    cfg = load_config(path)
    assert cfg.layers[0].scheme is None or cfg.layers[0].scheme.raw != "llama3"


def test_rv040_wrong_length_and_scaled_twice(tmp_path, capsys):
    short = write_gguf(tmp_path / "short.gguf", "llama", LLAMA31_8B,
                       {"rope_freqs.weight":
                        llama3_factors(500000.0, 128, 8.0, 1.0, 4.0, 8192)[:32].astype(np.float32)})
    code, out, _ = lint(capsys, short)
    assert code == 1 and "RV040" in codes(out) and "holds 32 factors" in out and "rotates 64 pairs" in out
    twice = llama31(tmp_path / "twice.gguf", **{"{arch}__rope__scaling__type": "linear",
                                                "{arch}__rope__scaling__factor": 2.0})
    code, out, _ = lint(capsys, twice)
    assert code == 1 and "RV040" in codes(out) and "llama.cpp applies both" in out


def test_clean_llama31_has_no_gguf_finding(tmp_path, capsys):
    code, out, _ = lint(capsys, llama31(tmp_path / "clean.gguf"), every_rule=False)
    assert not codes(out) & {"RV040", "RV041", "RV044", "RV045", "RP203", "RV030"}, out
    # Llama 3.1 8B at its advertised 131,072: RL102 as for its config.json (the bound of factor 8 is 65,750)
    assert codes(out) == {"RL102"} and "bound 65,750" in out


def test_rp203_rounded_factors(tmp_path, capsys):
    code, out, _ = lint(capsys, llama31(tmp_path / "f16.gguf", dtype=np.float16))
    assert code == 1 and "RP203" in codes(out) and "stored as float16" in out
    exact = llama3_factors(500000.0, 128, 8.0, 1.0, 4.0, 8192)
    path = write_gguf(tmp_path / "f32-of-f16.gguf", "llama", LLAMA31_8B,  # rounded, then stored as F32
                      {"rope_freqs.weight": exact.astype(np.float16).astype(np.float32)})
    code, out, _ = lint(capsys, path)
    assert "RP203" in codes(out) and "stored as float32 but every smooth factor is exactly a float16" in out
    # the largest deviation it reports is the rounding's: at most float16's unit roundoff
    dev = float(out.split("they are up to ")[1].split(" ")[0])
    assert dev == pytest.approx(np.max(np.abs(exact.astype(np.float16) / exact - 1)), rel=1e-2) and dev <= 2.0**-11


@pytest.mark.parametrize("kv, why", [
    ({"{arch}.rope.dimension_count": 64}, "is not the head dim 128 ('invalid n_rot'"),
    ({"{arch}.rope.scaling.type": "dynamic", "{arch}.rope.scaling.factor": 2.0}, "llama.cpp aborts on"),
    ({"{arch}.rope.scaling.type": "longrope"}, "without float rope_factors_long.weight"),
])
def test_rv041_llamacpp_refuses(tmp_path, capsys, kv, why):
    meta = dict(LLAMA31_8B)
    meta.update(kv)
    code, out, _ = lint(capsys, write_gguf(tmp_path / "r.gguf", "llama", meta))
    assert code == 1 and "RV041" in codes(out) and why in out, out


def test_rv041_not_for_partial_rotary_where_llamacpp_allows_it(tmp_path, capsys):
    """phi2 rotates 32 of 80 dims (partial_rotary_factor 0.4): llama.cpp loads it; no RV041."""
    kv = {"{arch}.context_length": 2048, "{arch}.embedding_length": 2560, "{arch}.attention.head_count": 32,
          "{arch}.rope.dimension_count": 32, "{arch}.block_count": 32}
    code, out, _ = lint(capsys, write_gguf(tmp_path / "phi2.gguf", "phi2", kv))
    assert "RV041" not in codes(out)
    cfg = load_config(str(tmp_path / "phi2.gguf"))
    assert (cfg.head_dim.number(), cfg.layers[0].d.number()) == (80, 32)


def test_yarn_attention_factor_is_transformers(tmp_path, capsys):
    """YaRN x4 from 32,768 (Qwen2.5's recipe): llama.cpp's magnitude 0.1 ln s + 1 is transformers' attention factor
    (its get_mscale with mscale 1); qwen2 loads no yarn_* key (only grok.cpp / mistral3.cpp / deepseek*.cpp do):
    a yarn_attn_factor or yarn_ext_factor in its file is passed over (RV044); in grok's, a yarn_attn_factor is
    overwritten (RV044) and an ext_factor other than 1 is not modelled (RV030)."""
    from transformers import Qwen2Config
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    hf = Qwen2Config(hidden_size=3584, num_attention_heads=28, max_position_embeddings=131072, rope_theta=1e6,
                     rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768})
    _, theirs = ROPE_INIT_FUNCTIONS["yarn"](hf, "cpu")
    kv = {"{arch}.context_length": 131072, "{arch}.embedding_length": 3584, "{arch}.attention.head_count": 28,
          "{arch}.rope.freq_base": 1e6, "{arch}.rope.scaling.type": "yarn", "{arch}.rope.scaling.factor": 4.0,
          "{arch}.rope.scaling.original_context_length": 32768}
    path = write_gguf(tmp_path / "yarn.gguf", "qwen2", kv)
    cfg = load_config(path)
    grp = cfg.layers[0]
    assert grp.scheme.raw == "yarn" and cfg.train_len.number() == 32768
    assert grp.params["attention_factor"].number() == pytest.approx(theirs, rel=1e-12)
    code, out, _ = lint(capsys, path)
    assert not codes(out) & {"RV044", "RV030"}, out
    meta = dict(kv, **{"{arch}.rope.scaling.yarn_attn_factor": 0.5, "{arch}.rope.scaling.yarn_ext_factor": 0.5})
    code, out, _ = lint(capsys, write_gguf(tmp_path / "yarn2.gguf", "qwen2", meta))
    assert "RV044" in codes(out) and "RV030" not in codes(out), out
    assert "llama.cpp's qwen2 does not read qwen2.rope.scaling.yarn_ext_factor" in out
    assert "does not read qwen2.rope.scaling.yarn_attn_factor (only the load_arch_hparams of src/models/grok.cpp" in out
    code, out, _ = lint(capsys, write_gguf(tmp_path / "grok.gguf", "grok", meta))
    assert {"RV044", "RV030"} <= codes(out) and "overwrites grok.rope.scaling.yarn_attn_factor" in out, out


def test_yarn_betas_only_where_llama_cpp_reads_them(tmp_path, capsys):
    """llama.cpp (llama-cpp-python 0.3.36) loads yarn_beta_fast / _slow only in grok.cpp and mistral3.cpp; grok's
    default beta_fast is 8 (grok.cpp 5); every other architecture runs 32 / 1 whatever its file says
    (tests/differential/test_diff_llamacpp_yarn.py reads this from the source)."""
    kv = {"{arch}.context_length": 131072, "{arch}.embedding_length": 4096, "{arch}.attention.head_count": 32,
          "{arch}.rope.freq_base": 1e6, "{arch}.rope.scaling.type": "yarn", "{arch}.rope.scaling.factor": 4.0,
          "{arch}.rope.scaling.original_context_length": 32768, "{arch}.rope.scaling.yarn_beta_fast": 16.0,
          "{arch}.rope.scaling.yarn_beta_slow": 2.0}
    betas = {}
    for arch in ("llama", "mistral3", "grok"):
        cfg = load_config(write_gguf(tmp_path / f"{arch}.gguf", arch, kv))
        betas[arch] = tuple(cfg.layers[0].params[k].number() for k in ("beta_fast", "beta_slow"))
    assert betas == {"llama": (32.0, 1.0), "mistral3": (16.0, 2.0), "grok": (16.0, 2.0)}
    code, out, _ = lint(capsys, str(tmp_path / "llama.gguf"))
    assert "does not read llama.rope.scaling.yarn_beta_fast" in out and "it runs beta_fast 32" in out
    plain = {k: v for k, v in kv.items() if "beta" not in k}
    cfg = load_config(write_gguf(tmp_path / "grok8.gguf", "grok", plain))
    assert cfg.layers[0].params["beta_fast"].number() == 8.0


def test_rv044_phi3_window_disabled(tmp_path, capsys):
    kv = {"{arch}.context_length": 4096, "{arch}.embedding_length": 3072, "{arch}.attention.head_count": 32,
          "{arch}.rope.dimension_count": 96, "{arch}.block_count": 32}
    code, out, _ = lint(capsys, write_gguf(tmp_path / "phi3.gguf", "phi3", dict(kv)))
    assert "RV044" not in codes(out)
    code, out, _ = lint(capsys, write_gguf(tmp_path / "phi3w.gguf", "phi3",
                                           dict(kv, **{"{arch}.attention.sliding_window": 2047})))
    assert "RV044" in codes(out) and "llama.cpp disables Phi's sliding window" in out


def test_rv045_unmodelled_windows_and_gemma2_modelled(tmp_path, capsys):
    base = {"{arch}.context_length": 8192, "{arch}.embedding_length": 4096, "{arch}.attention.head_count": 32,
            "{arch}.block_count": 8}
    code, out, _ = lint(capsys, write_gguf(tmp_path / "exaone4.gguf", "exaone4", dict(base)))
    assert "RV045" in codes(out), out
    g2 = write_gguf(tmp_path / "gemma2.gguf", "gemma2", dict(base, **{"{arch}.attention.sliding_window": 4096,
                                                                      "{arch}.attention.key_length": 256}))
    code, out, _ = lint(capsys, g2)
    assert "RV045" not in codes(out)
    cfg = load_config(g2)
    assert len(cfg.layers) == 2  # global and windowed layers (gemma2.cpp: pattern 2, window 4096)


def test_an_architecture_without_rope_is_skipped(tmp_path, capsys):
    path = write_gguf(tmp_path / "gpt2.gguf", "gpt2", {"{arch}.context_length": 1024, "{arch}.embedding_length": 768,
                                                       "{arch}.attention.head_count": 12})
    code, out, _ = lint(capsys, path)  # quiet by default: the skip is counted in the summary
    assert code == 0 and out == "No findings: no config analysed (1 file without RoPE settings).\n", out
    code, out, _ = lint(capsys, "--verbose", path)  # the reason with --verbose
    assert code == 0 and f"{path}: skipped: llama.cpp runs gpt2 without RoPE" in out, out


def test_ggml_rotary_is_float64_angles_within_float32():
    """ggml's float32 rope (audit/checkpoint_gguf.py) against cos/sin of the float64 angles p theta_i / f_i:
    within float32's rounding of an angle of that size."""
    from ropelaw.audit.checkpoint_gguf import ggml_rotary

    f = llama3_factors(500000.0, 128, 8.0, 1.0, 4.0, 8192)
    pos = np.array([0, 1, 2, 17, 1000, 4095])
    cos, sin = ggml_rotary(pos, 500000.0, 128, f.astype(np.float32))
    theta = 500000.0 ** (-np.arange(0, 128, 2) / 128)
    ang = pos[:, None] * theta[None, :] / f[None, :]
    tol = 64 * 2.0**-24 * np.maximum(1.0, ang)
    assert np.all(np.abs(cos - np.cos(ang)) <= tol) and np.all(np.abs(sin - np.sin(ang)) <= tol)


def test_audit_rp360_rp361_fire_on_rounded_factors_only(tmp_path, capsys):
    import ml_dtypes

    f = llama3_factors(500000.0, 128, 8.0, 1.0, 4.0, 8192)
    meta = dict(LLAMA31_8B, **{"{arch}.context_length": 131072})
    w_path = tmp_path / "bf16.gguf"
    w = gguf.GGUFWriter(str(w_path), "llama")
    for k, v in meta.items():
        k = k.replace("{arch}", "llama")
        (w.add_uint32 if isinstance(v, int) else w.add_float32)(k, v)
    w.add_tensor("rope_freqs.weight", f.astype(ml_dtypes.bfloat16).view(np.uint8),
                 raw_dtype=gguf.GGMLQuantizationType.BF16)
    w.write_header_to_file(), w.write_kv_data_to_file(), w.write_tensors_to_file(), w.close()
    code = main(["audit", "checkpoint", str(w_path)])
    out = capsys.readouterr().out
    assert code == 1 and "RP360" in out and "RP361" in out and "rounded to bfloat16" in out
    # the phase error it reports: position 131,071 x the largest frequency drift, from the float64 formula
    drift = np.max(np.abs(500000.0 ** (-np.arange(0, 128, 2) / 128) * (
        1 / f.astype(ml_dtypes.bfloat16).astype(np.float64) - 1 / f)))
    assert f"a phase error of {drift * 131071:.3g} rad" in out
    code = main(["audit", "checkpoint", llama31(tmp_path / "f32.gguf")])
    out = capsys.readouterr().out
    assert code == 0 and "RP36" not in out and "131,072 of 131,072 positions exact" in out, out


def test_audit_checkpoint_json_names_the_gguf(tmp_path, capsys):
    code = main(["audit", "checkpoint", "--format", "json", llama31(tmp_path / "l.gguf", dtype=np.float16)])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    text = json.dumps(data)
    assert '"gguf"' in text and "RP360" in text and "rope_freqs.weight" in text


def test_example_files_are_what_their_script_makes(tmp_path):
    """docs/lint/gguf.md's files come from tests/fixtures/gguf/make_examples.py, byte for byte."""
    import subprocess
    import sys

    folder = Path(__file__).resolve().parent / "fixtures" / "gguf"
    subprocess.run([sys.executable, str(folder / "make_examples.py"), str(tmp_path)], check=True)
    names = sorted(p.name for p in folder.glob("*.gguf"))
    assert names == sorted(p.name for p in tmp_path.glob("*.gguf")) and len(names) == 3
    for name in names:
        assert (tmp_path / name).read_bytes() == (folder / name).read_bytes(), name


# -- llama-server / llama-cli launch lines (ropelaw/lint/dialects/llamacpp_launch.py): semantics read from
# llama-cpp-python==0.3.36's vendored llama.cpp (common/arg.cpp, src/llama-context.cpp, tools/server/server.cpp,
# server-context.cpp n_ctx_slot); the expected numbers below are those formulas written out by hand


def pad256(n: int) -> int:
    return -(-n // 256) * 256


def launch(tmp_path: Path, line: str, gguf_name: str = "llama31-8b.gguf") -> str:
    """A launch script beside a copy of the docs' Llama 3.1 8B GGUF (context 131,072)."""
    import shutil

    src = Path(__file__).resolve().parent / "fixtures" / "gguf" / "llama31-8b.gguf"
    if not (tmp_path / gguf_name).exists():
        shutil.copy(src, tmp_path / gguf_name)
    script = tmp_path / "serve.sh"
    script.write_text(f"#!/bin/sh\nMODEL={gguf_name}\n{line}\n")
    return str(script)


def test_rv043_slots_divide_the_context(tmp_path, capsys):
    path = launch(tmp_path, "llama-server -m $MODEL -c 65536 -np 3 --port 8080")
    cfg = load_config(path)
    assert cfg.target.number() == pad256(65536 // 3) == 22016
    code, out, _ = lint(capsys, path)
    assert "RV043" in codes(out) and "each request gets 22,016 tokens, not the 65,536" in out
    assert ":3:24: RV043" in out  # at -c on line 3


def test_rv043_not_with_a_unified_cache_or_the_default_slots(tmp_path, capsys):
    for line in ("llama-server -m $MODEL -c 65536 -np 4 -kvu", "llama-server -m $MODEL -c 65536",
                 "llama-server -m $MODEL"):
        path = launch(tmp_path, line)
        code, out, _ = lint(capsys, path)
        assert "RV043" not in codes(out), (line, out)
        assert load_config(path).target.number() == (65536 if "65536" in line else 131072)


def test_rv043_capped_at_the_training_context_on_the_server_only(tmp_path, capsys):
    path = launch(tmp_path, "llama-server -m $MODEL -c 262144")
    assert load_config(path).target.number() == 131072
    code, out, _ = lint(capsys, path)
    assert "RV043" in codes(out) and "capped at the training context 131,072" in out
    path = launch(tmp_path, "llama-cli -m $MODEL -c 262144")  # one sequence, no cap
    assert load_config(path).target.number() == 262144
    assert "RV043" not in codes(lint(capsys, path)[1])


def test_rv042_flags_that_change_the_model(tmp_path, capsys):
    path = launch(tmp_path, "llama-server -m $MODEL --rope-freq-base 1000000")
    code, out, _ = lint(capsys, path)
    assert "RV042" in codes(out) and "--rope-freq-base 1000000 sets llama.rope.freq_base to 1000000.0; the GGUF has " \
                                     "500000.0" in out
    path = launch(tmp_path, "llama-server -m $MODEL --rope-freq-base 500000")  # the model's own value
    assert "RV042" not in codes(lint(capsys, path)[1])


def test_yarn_on_the_line_rescales_the_cap(tmp_path, capsys):
    """A 32,768-token qwen2 GGUF served with YaRN x4 from the line: n_ctx_train becomes 32,768 / (1/4) = 131,072
    (llama_init_from_model), so -c 131072 is one slot's context; the analysis runs YaRN x4 (RV042 says the line
    set it)."""
    kv = {"{arch}.context_length": 32768, "{arch}.embedding_length": 3584, "{arch}.attention.head_count": 28,
          "{arch}.rope.freq_base": 1e6, "{arch}.block_count": 28}
    write_gguf(tmp_path / "qwen.gguf", "qwen2", kv)
    path = launch(tmp_path, "llama-server -m qwen.gguf -c 131072 -np 1 --rope-scaling yarn --rope-scale 4 "
                            "--yarn-orig-ctx 32768", gguf_name="qwen.gguf")
    cfg = load_config(path)
    grp = cfg.layers[0]
    assert (grp.scheme.raw, grp.params["factor"].number(), cfg.train_len.number(), cfg.target.number()) == (
        "yarn", 4.0, 32768, 131072)
    code, out, _ = lint(capsys, path)
    assert "RV043" not in codes(out) and out.count("RV042") == 3, out


@pytest.mark.parametrize("line, why", [
    ("llama-cli -hf bartowski/Llama-3.1-8B-GGUF -c 8192", "downloaded by llama.cpp (--hf-repo"),
    ("llama-server -m elsewhere/model.gguf", "-m 'elsewhere/model.gguf' is not a file here"),
])
def test_rv031_model_not_here(tmp_path, capsys, line, why):
    code, out, _ = lint(capsys, launch(tmp_path, line))
    assert code == 1 and "RV031" in codes(out) and why in out, out


def test_model_config_names_the_gguf_and_rv041_flag_equals(tmp_path, capsys):
    path = launch(tmp_path, "llama-server -hf org/repo --ctx-size=8192")
    gguf_file = str(tmp_path / "llama31-8b.gguf")
    code, out, _ = lint(capsys, path, "--model-config", gguf_file)
    assert "RV031" not in codes(out) and "RV041" in codes(out) and "no --flag=value form" in out, out


# -- Ollama Modelfiles (ropelaw/lint/dialects/ollama.py): semantics read from ollama/ollama@fb3076099687
# (parser/parser.go ParseFile, api/types.go FormatParams, llm/server.go NewLlamaServer, llm/llama_server.go)


def modelfile(tmp_path: Path, text: str) -> str:
    import shutil

    src = Path(__file__).resolve().parent / "fixtures" / "gguf" / "llama31-8b.gguf"
    if not (tmp_path / "llama31-8b.gguf").exists():
        shutil.copy(src, tmp_path / "llama31-8b.gguf")
    (tmp_path / "Modelfile").write_text(text)
    return str(tmp_path / "Modelfile")


@pytest.mark.parametrize("text, commands", [
    ("FROM ./m.gguf", [("model", "./m.gguf")]),
    ("from   ./m.gguf   \nparameter num_ctx 4096\n", [("model", "./m.gguf"), ("num_ctx", "4096")]),
    ('# a comment\nFROM "./my model.gguf"\nSYSTEM """one\n  two"""\nMESSAGE user hi there\n',
     [("model", "./my model.gguf"), ("system", "one\n  two"), ("message", "user: hi there")]),
    ("PARAMETER stop <|eot|>\nFROM x\nPARAMETER stop </s>", [("stop", "<|eot|>"), ("model", "x"), ("stop", "</s>")]),
])
def test_modelfile_parsed_as_ollama_parses_it(text, commands):
    from ropelaw.lint.dialects.ollama import parse_modelfile

    assert [(c, a) for c, a, _ in parse_modelfile(text)] == commands


@pytest.mark.parametrize("text, why", [
    ("PARAMETER num_ctx 4096\n", "no FROM line"),
    ("FROM x\nBOGUS y\n", "command must be one of"),
    ('FROM x\nSYSTEM """never closed\n', "unexpected end of file"),
    ("FROM x\nMESSAGE robot hi\n", "message role must be one of"),
])
def test_modelfile_ollama_refuses_exits_2(tmp_path, capsys, text, why):
    path = modelfile(tmp_path, text)
    code = main(["lint", path])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and why in err, err


def test_rv043_num_ctx_capped_and_padded(tmp_path, capsys):
    path = modelfile(tmp_path, "FROM ./llama31-8b.gguf\nPARAMETER num_ctx 200000\n")
    assert load_config(path).target.number() == 131072
    code, out, _ = lint(capsys, path)
    assert "RV043" in codes(out) and "capped at the model's context_length 131,072" in out and ":2:1: RV043" in out
    path = modelfile(tmp_path, "FROM ./llama31-8b.gguf\nPARAMETER num_ctx 30000\n")
    assert load_config(path).target.number() == pad256(30000) == 30208
    assert "RV043" not in codes(lint(capsys, path)[1])


def test_modelfile_without_num_ctx_analyses_the_models_context(tmp_path):
    cfg = load_config(modelfile(tmp_path, "FROM ./llama31-8b.gguf\n"))
    assert cfg.target.number() == 131072
    assert any("OLLAMA_CONTEXT_LENGTH" in n for n in cfg.notes)


def test_rv041_unknown_parameter_and_deprecated_ignored(tmp_path, capsys):
    path = modelfile(tmp_path, "FROM ./llama31-8b.gguf\nPARAMETER rope_frequency_base 1000000\n")
    code, out, _ = lint(capsys, path)
    assert "RV041" in codes(out) and "PARAMETER rope_frequency_base: ollama create refuses" in out
    path = modelfile(tmp_path, "FROM ./llama31-8b.gguf\nPARAMETER mirostat 1\nPARAMETER num_ctx 8192\n")
    assert "RV041" not in codes(lint(capsys, path)[1])


def test_rv031_from_the_library_or_a_folder_and_model_config(tmp_path, capsys):
    code, out, _ = lint(capsys, modelfile(tmp_path, "FROM llama3.1:8b\nPARAMETER num_ctx 8192\n"))
    assert "RV031" in codes(out) and "a model from Ollama's library" in out
    (tmp_path / "hf-model").mkdir()
    code, out, _ = lint(capsys, modelfile(tmp_path, "FROM ./hf-model\n"))
    assert "RV031" in codes(out) and "a model folder Ollama converts" in out
    path = modelfile(tmp_path, "FROM llama3.1:8b\nPARAMETER num_ctx 8192\n")
    code, out, _ = lint(capsys, path, "--model-config", str(tmp_path / "llama31-8b.gguf"))
    assert "RV031" not in codes(out) and load_config(path, model_config=str(tmp_path / "llama31-8b.gguf")
                                                     ).target.number() == 8192


def test_rv041_block_count_llamacpp_refuses_is_never_walked(tmp_path, capsys):
    """A llama4 GGUF claiming 2^31 layers: llama.cpp asserts 0 < n_layer <= 512 (LLAMA_MAX_LAYERS); ropelaw says so
    (RV041) and builds no per-layer list of that length (it used to hang building the NoPE layers)."""
    kv = {"{arch}.context_length": 8192, "{arch}.embedding_length": 4096, "{arch}.attention.head_count": 32,
          "{arch}.block_count": 2**31}
    code, out, _ = lint(capsys, write_gguf(tmp_path / "l4.gguf", "llama4", kv))
    assert "RV041" in codes(out) and "llama.cpp refuses the model (0 < n_layer <= LLAMA_MAX_LAYERS = 512" in out
    cfg = load_config(write_gguf(tmp_path / "l4ok.gguf", "llama4", dict(kv, **{"{arch}.block_count": 48})))
    assert [len(g.indices) for g in cfg.layers] == [36, 12]  # NoPE on every 4th layer (llama4.cpp)
