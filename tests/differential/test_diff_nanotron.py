"""nanotron: a read-the-code test standing in for a differential. PyPI's nanotron 0.4 (March 2024) is two years
before the corpus commit and cannot read its configs (its LlamaConfig has no rope_theta; it has no Qwen2Config,
no sliding window, no NoPE layers; its rotary is built on CUDA), and the commit is not released: CI cannot run
it. Its code was read at the corpus commit (huggingface/nanotron@2411b022, not committed here) and what it does
with a config is written out again below, line by line with its source, independently of ropelaw's dialect;
every nanotron YAML of the corpus (``frameworks-examples/nanotron``, with the rows kept elsewhere in the corpus)
is read both ways.

- ``get_config_from_file`` (``src/nanotron/config/config.py`` lines 609-650): dacite, strict; ``ModelArgs.
  model_config`` is ``Union[LlamaConfig, Starcoder2Config, Qwen2Config, Any]`` (``models_config.py`` line 292):
  the first class whose fields hold every key, else the dict, which ``ModelArgs.__post_init__`` passes to
  ``Qwen2Config(**dict)`` (config.py line 322): a key no class has raises TypeError (refused);
- Llama (``models/llama.py`` lines 398-410): ``d_qk = hidden_size // num_attention_heads``,
  ``LlamaRotaryEmbedding(dim=d_qk, end=max_position_embeddings, theta=rope_theta)``; ``rope_scaling`` is not
  referenced; ``rope_theta`` default 10000.0 (``models_config.py`` line 84);
- Qwen2 (``models/qwen.py`` lines 161-216, 272-300): ``head_dim = hidden_size // num_attention_heads``;
  ``FlashRotaryEmbedding(base=rope_theta, seq_len_interpolation_factor=...)`` (``_use_qkv_packed``, default
  true) scales positions by ``1 / factor`` (``nn/rotary.py`` line 203); layer i applies the rotary unless
  ``no_rope_layer`` and ``(i + 1) % no_rope_layer == 0``, and then also no window; ``sliding_window_size`` W is
  flash-attn's ``window_size=(W - 1, 0)``: W positions;
- the model trains at ``tokens.sequence_length``; ``max_position_embeddings`` sizes the RoPE cache (the target);
- a Mamba config (``is_mamba_config``) is built by ``examples/mamba``'s own trainer: no attention, no rotary.
"""

from __future__ import annotations

import corpus_examples as examples
import pytest
import yaml

from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import NotARopeConfig, UnreadConfig, load_config

# the dataclass fields at 2411b022 (src/nanotron/config/models_config.py: LlamaConfig line 62, Qwen2Config
# line 117, Starcoder2Config line 220)
LLAMA = {"bos_token_id", "eos_token_id", "hidden_act", "hidden_size", "initializer_range", "intermediate_size",
         "is_llama_config", "max_position_embeddings", "num_attention_heads", "num_hidden_layers", "attention_bias",
         "num_key_value_heads", "pad_token_id", "pretraining_tp", "rms_norm_eps", "rope_scaling", "rope_theta",
         "rope_interleaved", "tie_word_embeddings", "use_cache", "vocab_size", "_attn_implementation",
         "z_loss_enabled", "z_loss_coefficient"}
QWEN2 = {"bos_token_id", "eos_token_id", "hidden_act", "hidden_size", "initializer_range", "intermediate_size",
         "is_qwen2_config", "max_position_embeddings", "num_attention_heads", "num_hidden_layers",
         "num_key_value_heads", "pad_token_id", "pretraining_tp", "rms_norm_eps", "rope_scaling", "rope_theta",
         "rope_interleaved", "rope_seq_len_interpolation_factor", "tie_word_embeddings", "use_cache", "vocab_size",
         "_attn_implementation", "flex_attention_mask", "attention_bias", "sliding_window_size", "z_loss_enabled",
         "z_loss_coefficient", "no_rope_layer", "_fused_rotary_emb", "_fused_rms_norm", "_use_qkv_packed",
         "_use_doc_masking", "log_attn_probs", "ring_attn_heads_k_stride", "moe_config"}
STARCODER2 = {"activation_function", "attention_softmax_in_fp32", "attn_pdrop", "bos_token_id", "embd_pdrop",
              "eos_token_id", "global_attn_layers", "grouped_query", "hidden_size", "initializer_range",
              "intermediate_size", "is_starcoder2_config", "layer_norm_epsilon", "max_position_embeddings",
              "multi_query", "num_attention_heads", "num_hidden_layers", "num_kv_heads", "resid_pdrop", "rope_theta",
              "scale_attention_softmax_in_fp32", "scale_attn_weights", "sliding_window_size",
              "use_position_embeddings", "use_rotary_embeddings", "vocab_size", "_attn_implementation"}
# the one corpus file nanotron refuses: a key of none of the classes
REFUSED = {"examples/config_resume_training.yaml": "interleaved_rotary"}


def nanotron_reading(data: dict) -> dict | str:
    """What nanotron at 2411b022 builds from a config: the rotary setup, or why there is none."""
    mc = (data.get("model") or {}).get("model_config") or {}
    if mc.get("is_mamba_config"):
        return "no attention"
    keys = set(mc)
    cls = "llama" if keys <= LLAMA else "starcoder2" if keys <= STARCODER2 else "qwen2" if keys <= QWEN2 else None
    if cls is None:
        return "refused: " + ", ".join(sorted(keys - QWEN2))
    assert cls != "starcoder2", "no Starcoder2 config in the corpus: write its rotary out before reading one"
    head = mc.get("hidden_size", 4096) // mc.get("num_attention_heads", 32)
    out = {"d": head, "base": float(mc.get("rope_theta", 10000.0)), "train": data["tokens"]["sequence_length"],
           "target": mc.get("max_position_embeddings", 2048), "scheme": "default", "factor": None, "window": None,
           "nope": ()}
    if cls == "qwen2":
        if mc.get("_use_qkv_packed") is False:  # qwen.py line 210: config.rope_seq_len_scaling_factor, no field
            return "refused: _use_qkv_packed false (AttributeError)"
        if mc.get("rope_seq_len_interpolation_factor") is not None:
            out["scheme"], out["factor"] = "linear", mc["rope_seq_len_interpolation_factor"]
        out["window"] = mc.get("sliding_window_size")
        k = mc.get("no_rope_layer")
        if k:
            out["nope"] = tuple(i for i in range(mc.get("num_hidden_layers", 32)) if (i + 1) % k == 0)
    return out


def ropelaw_reading(r) -> dict:
    main = next(g for g in r.layers if g.group.rope)
    nope = next((g.group.indices for g in r.layers if not g.group.rope), ())
    s = main.spec
    return {"d": s.d, "base": s.base, "train": s.train_len, "target": r.config.target.raw,
            "scheme": s.scheme, "factor": s.param_dict().get("factor"), "window": main.window, "nope": nope}


@pytest.mark.parametrize("key", [k for k in examples.keys("nanotron", {}) if not k.endswith(".py")]
                         or ["(no corpus)"])
def test_nanotron_file(key):
    if key == "(no corpus)":
        pytest.skip(f"no {examples.SOURCES} (ROPELAW_CORPUS)")
    path = examples.path_of("nanotron", key, {})
    want = nanotron_reading(yaml.safe_load(path.read_text()) or {})
    try:
        r = lint_config(load_config(str(path)))
    except UnreadConfig as exc:
        raise AssertionError((key, want, str(exc))) from None
    except NotARopeConfig as exc:
        assert want == "no attention" and "no attention, no rotary" in str(exc), (key, want, str(exc))
        return
    if isinstance(want, str) and want.startswith("refused"):
        # nanotron refuses it; ropelaw must not read it as if it ran: it names the key as unread (RV030)
        assert key in REFUSED and REFUSED[key] in want, (key, want)
        assert [v.key.rsplit(".", 1)[-1] for v in r.config.unread] == [REFUSED[key]], key
        return
    assert isinstance(want, dict), (key, want, r.ok_line())
    assert not r.config.unread, (key, r.config.unread)
    assert ropelaw_reading(r) == want, key


def test_read_the_code_semantics_on_written_configs(tmp_path):
    """The Qwen2 paths the corpus does not exercise, both ways: interpolation factor, NoPE layers, a window."""
    data = {"model": {"dtype": "bfloat16", "model_config": {
        "is_qwen2_config": True, "hidden_size": 2048, "num_attention_heads": 16, "num_hidden_layers": 8,
        "no_rope_layer": 4, "sliding_window_size": 512, "rope_seq_len_interpolation_factor": 4.0,
        "max_position_embeddings": 16384, "rope_theta": 100000.0, "_attn_implementation": "flash_attention_2"}},
        "tokens": {"sequence_length": 4096}}
    p = tmp_path / "qwen.yaml"
    p.write_text(yaml.safe_dump(data))
    want = nanotron_reading(data)
    assert want["nope"] == (3, 7) and want["scheme"] == "linear"
    assert ropelaw_reading(lint_config(load_config(str(p)))) == want
    data["model"]["model_config"].pop("is_qwen2_config")  # a Qwen2-only key still makes it a Qwen2Config
    p.write_text(yaml.safe_dump(data))
    assert ropelaw_reading(lint_config(load_config(str(p)))) == nanotron_reading(data)


def test_a_key_of_no_class_is_refused_and_never_read(tmp_path):
    """``head_dim`` is a field of no nanotron model config: nanotron refuses the file (Qwen2Config(**dict):
    TypeError); ropelaw names it unread (RV030) and takes the head from hidden_size // num_attention_heads."""
    data = {"model": {"model_config": {"hidden_size": 2048, "num_attention_heads": 16, "head_dim": 64,
                                       "max_position_embeddings": 4096}},
            "tokens": {"sequence_length": 4096}}
    p = tmp_path / "head_dim.yaml"
    p.write_text(yaml.safe_dump(data))
    assert nanotron_reading(data) == "refused: head_dim"
    r = lint_config(load_config(str(p)))
    assert [v.key for v in r.config.unread] == ["model.model_config.head_dim"]
    assert r.layers[0].spec.d == 2048 // 16
    assert "RV030" in {f.code for f in r.findings}


def test_unpacked_qwen2_is_refused_and_never_read(tmp_path):
    """``_use_qkv_packed: false`` makes Qwen2Attention build ``RotaryEmbedding(seq_len_scaling_factor=config.
    rope_seq_len_scaling_factor)`` (qwen.py line 210), no field of Qwen2Config: nanotron stops with
    AttributeError; ropelaw names the key unread (RV030)."""
    data = {"model": {"model_config": {"is_qwen2_config": True, "_use_qkv_packed": False, "hidden_size": 1024,
                                       "num_attention_heads": 8, "max_position_embeddings": 4096}},
            "tokens": {"sequence_length": 4096}}
    p = tmp_path / "unpacked.yaml"
    p.write_text(yaml.safe_dump(data))
    assert nanotron_reading(data).startswith("refused: _use_qkv_packed")
    r = lint_config(load_config(str(p)))
    assert [v.key for v in r.config.unread] == ["model.model_config._use_qkv_packed"]
    assert "RV030" in {f.code for f in r.findings}
