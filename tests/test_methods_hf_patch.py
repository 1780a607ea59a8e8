"""patch_model on tiny random models of every supported architecture (no weights downloaded).

Independent facts used:
- with a window covering the whole input every relative position is inside the window
  (seed 000), so the patched model computes the unpatched logits, bit for bit;
- with a shorter window, the logits of patched generation (KV cache, far-key cache) equal a
  full forward of the same model in which the attention of every full-attention layer is
  seed 000's two-matrix attention, written below from the seed's equations with its own
  float64 rotation and frequencies read from the config (``seed_attention``);
- every layer of a Mistral / Phi-3 config with ``sliding_window`` s slides: query i sees key j
  iff 0 <= i - j < s (transformers' sliding mask); ReRoPE applies inside the window, so the
  reference is the same two-matrix attention under the model's own sliding mask;
- a left-padded row must give what the same prompt gives alone (masking);
- with T_train >= L the log-n factor is 1 (seed 000).
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from ropelaw.methods import patch_llama, patch_model, unpatch  # noqa: E402
from ropelaw.methods.hf_patch import ARCHITECTURES, ONLY_5  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.hf]

VOCAB = 97
COMMON = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
EXTRA = {  # the smallest config of each architecture; Gemma 2/3: layer 0 slides (window 6), layer 1 is full
    "llama": {},
    "mistral": {"sliding_window": None},
    "mixtral": {"sliding_window": None, "num_local_experts": 2, "num_experts_per_tok": 1},
    "qwen2": {},
    "qwen3": {"head_dim": 16},
    "qwen3_moe": {"head_dim": 16, "num_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 32},
    "gemma": {"head_dim": 16},
    "gemma2": {"head_dim": 16, "sliding_window": 6, "query_pre_attn_scalar": 16},  # soft-capped logits (50)
    "gemma3_text": {"head_dim": 16, "sliding_window": 6, "query_pre_attn_scalar": 16,
                    "layer_types": ["sliding_attention", "full_attention"]},
    # multimodal Gemma 3: this text model beside a tiny vision tower (text-only prompts)
    "gemma3": {"head_dim": 16, "sliding_window": 6, "query_pre_attn_scalar": 16,
               "layer_types": ["sliding_attention", "full_attention"]},
    "phi3": {"sliding_window": None, "partial_rotary_factor": 0.5},  # rotary on half of each head
    "olmo2": {},
    "granite": {},
    "starcoder2": {"sliding_window": None},
    "cohere": {},  # interleaved rotary pairs (x[2i], x[2i+1])
    "qwen2_moe": {"num_experts": 2, "num_experts_per_tok": 1, "moe_intermediate_size": 32,
                  "shared_expert_intermediate_size": 32},
    "stablelm": {"qk_layernorm": True},  # rotary on a quarter of each head (partial_rotary_factor 0.25)
    # every layer slides (window 8 < prompt 12: the cache drops keys, ReRoPE applies inside the window)
    "mistral+sliding": {"sliding_window": 8},
    "phi3+sliding": {"sliding_window": 8, "partial_rotary_factor": 0.5},
}
assert {name.split("+")[0] for name in EXTRA} == set(ARCHITECTURES)
HYBRID = ("gemma2", "gemma3_text", "gemma3")
INTERLEAVED = ("cohere",)
VISION = dict(hidden_size=32, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, image_size=28,
              patch_size=14)  # sliding and full layers: the sliding ones keep plain RoPE

METHODS = [("rerope", {"window": 5}), ("leaky_rerope", {"window": 5, "leaky_k": 4.0})]
P, NEW = 12, 4  # prompt length, generated tokens


def build(name: str, impl: str = "eager", **override):
    torch.manual_seed(0)
    kw = {**COMMON, **EXTRA[name], **override}
    if name == "gemma3":
        kw = dict(text_config=kw, vision_config=VISION, mm_tokens_per_image=4, image_token_index=96,
                  boi_token_index=95, eoi_token_index=94)
    cfg = transformers.AutoConfig.for_model(name.split("+")[0], **kw)
    return transformers.AutoModelForCausalLM.from_config(cfg, attn_implementation=impl).eval()


TF4 = transformers.__version__.startswith("4.")
SUPPORTED = sorted(name for name in EXTRA if not (TF4 and name in ONLY_5))  # 4.57: see test_only_5_refused_on_4


@pytest.fixture(scope="module", params=SUPPORTED)
def arch(request):
    eager = build(request.param, "eager")
    try:
        sdpa = build(request.param, "sdpa")
    except ValueError:  # transformers 5.23 has no sdpa for Gemma 2 (soft-capped logits)
        return request.param, eager, None
    sdpa.load_state_dict(eager.state_dict())
    return request.param, eager, sdpa


def pick(arch, impl: str):
    name, eager, sdpa = arch
    if impl == "eager":
        return eager
    if sdpa is None:
        pytest.skip(f"transformers {transformers.__version__} has no sdpa attention for {name}")
    return sdpa


def tokens(n: int, seed: int = 1, rows: int = 1):
    return torch.randint(3, VOCAB, (rows, n), generator=torch.Generator().manual_seed(seed))


def logits(model, x, **kw):
    with torch.no_grad():
        return model(x, **kw).logits


# --- seed 000's two-matrix attention, independent of ropelaw.methods ----------------------------


def rope_setup(cfg, sliding: bool) -> tuple[float, float]:
    """(base, rotary fraction) of a layer, from the config as each transformers version stores it."""
    rp = getattr(cfg, "rope_parameters", None)
    if rp:  # transformers 5
        if "full_attention" in rp:
            rp = rp["sliding_attention" if sliding else "full_attention"]
        return rp["rope_theta"], rp.get("partial_rotary_factor", getattr(cfg, "partial_rotary_factor", 1.0))
    base = cfg.rope_local_base_freq if sliding and getattr(cfg, "rope_local_base_freq", None) else cfg.rope_theta
    return base, getattr(cfg, "partial_rotary_factor", 1.0)


def rot(x, pos, base: float, rd: int, interleaved: bool = False):
    """RoPE of the first rd channels by complex multiplication, float64; pos (B, 1|H, S).

    Pairs (x[i], x[i + rd/2]) (rotate-half) or (x[2i], x[2i+1]) (interleaved, Cohere)."""
    theta = base ** (-torch.arange(0, rd, 2, dtype=torch.float64) / rd)  # (rd/2,)
    e = torch.polar(torch.ones((), dtype=torch.float64), pos.to(torch.float64)[..., None] * theta)
    if interleaved:
        z = torch.complex(x[..., 0:rd:2].double(), x[..., 1:rd:2].double()) * e
        return torch.cat((torch.stack((z.real, z.imag), dim=-1).flatten(-2), x[..., rd:].double()), dim=-1)
    z = torch.complex(x[..., : rd // 2].double(), x[..., rd // 2: rd].double()) * e
    return torch.cat((z.real, z.imag, x[..., rd:].double()), dim=-1)


def seed_attention(window: float, leaky_k: float | None, plain_sliding: bool = True):
    """An eager attention function for UN-rotated q, k (apply_rotary_pos_emb made the identity).

    Full-attention layers: a_ij = (R^i q)(R^j k) if p_i - p_j < w, else (R^w q) k (ReRoPE) or
    (R^((i-w)/k+w) q)(R^(j/k) k) (Leaky), seed 000; sliding layers: plain RoPE (a1 only) if
    ``plain_sliding``, else the same two matrices (the model's mask applies the window).
    No cache: the keys are the queries' positions.
    """
    def attend(module, q, k, v, attention_mask, scaling=None, dropout=0.0, softcap=None, sliding_window=None,
               position_ids=None, **kw):
        B, H, T, D = q.shape
        sliding = sliding_window is not None
        base, frac = rope_setup(module.config, sliding)
        rd = int(D * frac)
        pairs = {"interleaved": getattr(module.config, "model_type", None) in INTERLEAVED}
        p = position_ids.to(torch.float64)[:, None, :]  # (B, 1, T)
        k, v = (x.repeat_interleave(H // x.shape[1], dim=1) for x in (k, v))
        a = rot(q, p, base, rd, **pairs) @ rot(k, p, base, rd, **pairs).transpose(-1, -2)
        if not (sliding and plain_sliding):
            if leaky_k is None:
                a2 = rot(q, torch.full_like(p, float(window)), base, rd, **pairs) @ k.double().transpose(-1, -2)
            else:
                a2 = (rot(q, (p - window) / leaky_k + window, base, rd, **pairs)
                      @ rot(k, p / leaky_k, base, rd, **pairs).transpose(-1, -2))
            dist = p[..., :, None] - p[..., None, :]  # (B, 1, T, T)
            a = torch.where(dist < window, a, a2)
        a = a * scaling
        if softcap is not None:
            a = torch.tanh(a / softcap) * softcap
        m = attention_mask[:, :, :, :T]
        a = a + (m.double() if m.dtype != torch.bool else torch.where(m, 0.0, -math.inf).double())
        out = torch.softmax(a, dim=-1) @ v.double()
        return out.to(q.dtype).transpose(1, 2).contiguous(), None

    return attend


def reference_logits(model, x, monkeypatch, window, leaky_k=None, plain_sliding=True, **kw):
    """Full forward (no cache) of the eager ``model`` with seed 000's attention in every layer."""
    mod = __import__(type(model).__module__, fromlist=["_"])
    with monkeypatch.context() as mp:
        mp.setattr(mod, "apply_rotary_pos_emb", lambda q, k, cos, sin, *a, **k2: (q, k))
        mp.setattr(mod, "eager_attention_forward", seed_attention(window, leaky_k, plain_sliding))
        return logits(model, x, use_cache=False, **kw)


def generate(model, x, **kw):
    with torch.no_grad():
        out = model.generate(x, max_new_tokens=NEW, min_new_tokens=NEW, do_sample=False, output_logits=True,
                             return_dict_in_generate=True, pad_token_id=0, **kw)
    return out.sequences, torch.stack(out.logits, dim=1)  # (B, P + NEW), (B, NEW, V)


# --- tests ---------------------------------------------------------------------------------------


def test_reference_with_a_covering_window_is_the_model(arch, monkeypatch):
    # checks the reference itself: w >= L leaves a1 everywhere, i.e. the model's own attention
    name, eager, _ = arch
    x = tokens(P + NEW)
    torch.testing.assert_close(reference_logits(eager, x, monkeypatch, P + NEW), logits(eager, x), rtol=0, atol=1e-5)


@pytest.mark.parametrize("impl", ["eager", "sdpa"])
def test_window_covering_input_gives_unpatched_logits_exactly(arch, impl):
    model = pick(arch, impl)
    if "+sliding" in arch[0]:  # w >= L needs a sliding window above w (else refused, see below)
        model = build(arch[0], impl, sliding_window=P + NEW + 4)
    x = tokens(P + NEW)
    plain = logits(model, x)
    for method, kw in METHODS:
        with patch_model(model, method, **{**kw, "window": P + NEW}):
            assert torch.equal(logits(model, x), plain)


@pytest.mark.parametrize("method,kw", METHODS)
def test_generation_equals_seed_two_matrix_attention(arch, method, kw, monkeypatch):
    # decode with the KV cache + far-key cache (sdpa model) against a full two-matrix forward
    name, eager, sdpa = arch
    model = eager if sdpa is None else sdpa
    with patch_model(model, method, **kw) as patch:
        assert len(patch.modules) == (1 if name in HYBRID else 2)  # a hybrid model's sliding layer kept
        assert sorted(patch.sliding.values()) == ([8, 8] if "+sliding" in name else [])
        seq, step_logits = generate(model, tokens(P, rows=2))  # a batch without padding
    want = reference_logits(eager, seq, monkeypatch, kw["window"], kw.get("leaky_k"),
                            plain_sliding=name in HYBRID)[:, P - 1: -1]
    torch.testing.assert_close(step_logits, want, rtol=0, atol=2e-5)
    assert (step_logits - logits(eager, seq)[:, P - 1: -1]).abs().max() > 1e-4  # the method changed something


def test_each_row_of_a_padded_batch_equals_its_own_run(arch):
    # sdpa masks are boolean (or None); the eager float masks are covered on Llama below
    _, eager, sdpa = arch
    padded_rows_equal_own_runs(eager if sdpa is None else sdpa, *METHODS[1], lengths=(P, P - 5))


def test_each_row_of_a_padded_batch_equals_its_own_run_eager_masks(llama_eager):
    # the last row never reaches the window in its prompt (plain attention), only while generating
    padded_rows_equal_own_runs(llama_eager, *METHODS[0], lengths=(P, P - 4, 3))


def padded_rows_equal_own_runs(model, method, kw, lengths):
    x = torch.zeros(len(lengths), P, dtype=torch.long)
    mask = torch.zeros(len(lengths), P, dtype=torch.long)
    rows = [tokens(n, seed=10 + i) for i, n in enumerate(lengths)]
    for i, (n, r) in enumerate(zip(lengths, rows, strict=True)):
        x[i, P - n:], mask[i, P - n:] = r[0], 1
    with patch_model(model, method, **kw):
        seq, lg = generate(model, x, attention_mask=mask)
        for i, r in enumerate(rows):
            alone_seq, alone_lg = generate(model, r)
            assert torch.equal(seq[i, P:], alone_seq[0, r.shape[1]:])
            torch.testing.assert_close(lg[i], alone_lg[0], rtol=0, atol=2e-5)


# --- Llama: prefill paths, log-n, handle, errors ----------------------------------------------


@pytest.fixture(scope="module")
def llama():
    return build("llama", "sdpa")


@pytest.fixture(scope="module")
def llama_eager():
    return build("llama", "eager")


@pytest.mark.parametrize("kw", [{"method": "rerope", "window": 8}, {"method": "leaky_rerope", "window": 8,
                                                                       "leaky_k": 4.0},
                                {"method": "rerope", "window": 8, "train_len": 16},
                                {"method": "logn", "train_len": 16}])
def test_incremental_decoding_equals_full_forward(llama, kw):
    x = tokens(40)
    with patch_model(llama, **kw):
        full = logits(llama, x)
        with torch.no_grad():
            out = llama(x[:, :30], use_cache=True)
            cache = out.past_key_values
            step = llama(x[:, 30:31], past_key_values=cache, use_cache=True).logits  # decode path
            rest = llama(x[:, 31:], past_key_values=cache, use_cache=True).logits  # chunked prefill
    torch.testing.assert_close(out.logits, full[:, :30], rtol=0, atol=1e-5)
    torch.testing.assert_close(step[:, 0], full[:, 30], rtol=0, atol=1e-5)
    torch.testing.assert_close(rest, full[:, 31:], rtol=0, atol=1e-5)


def test_short_window_keeps_rows_inside_it_and_unpatch_restores(llama):
    x = tokens(40)
    plain = logits(llama, x)
    patch = patch_model(llama, "rerope", window=8)
    changed = logits(llama, x)
    # rows i < 8 see only distances i - j <= 7 < w: unchanged; rows i >= 8 reach the window
    torch.testing.assert_close(changed[:, :8], plain[:, :8], rtol=0, atol=1e-5)
    assert (changed[:, 8:] - plain[:, 8:]).abs().max() > 1e-4
    patch.undo()
    assert torch.equal(logits(llama, x), plain)


def test_logn_is_identity_inside_training_length(llama):
    x = tokens(40)
    plain = logits(llama, x)
    with patch_model(llama, "logn", train_len=40):
        torch.testing.assert_close(logits(llama, x), plain, rtol=0, atol=1e-6)
    with patch_model(llama, "logn", train_len=16):
        scaled = logits(llama, x)
    torch.testing.assert_close(scaled[:, :16], plain[:, :16], rtol=0, atol=1e-6)  # factor 1 for n <= 16
    assert (scaled[:, 16:] - plain[:, 16:]).abs().max() > 1e-4


def test_unpatch_function_double_patch_and_alias(llama):
    x = tokens(20)
    plain = logits(llama, x)
    patch_llama(llama, "rerope", window=4)  # the old name is an alias
    with pytest.raises(ValueError, match="already patched"):
        patch_model(llama, "rerope", window=4)
    assert unpatch(llama) == 2  # two layers
    assert unpatch(llama) == 0
    assert torch.equal(logits(llama, x), plain)


def test_a_cache_filled_while_patched_stays_a_standard_cache(llama):
    # the patch keeps rotated keys in the model's cache: unpatched decoding can continue from it
    x = tokens(20)
    with torch.no_grad():
        with patch_model(llama, "rerope", window=64):  # no pair reaches w: the model's own numbers
            cache = llama(x[:, :19], use_cache=True).past_key_values
        step = llama(x[:, 19:], past_key_values=cache, use_cache=True).logits
    torch.testing.assert_close(step[:, 0], logits(llama, x)[:, 19], rtol=0, atol=1e-5)


@pytest.mark.parametrize("kw,match", [
    ({"method": "rerope"}, "window"),
    ({"method": "leaky_rerope", "window": 4}, "leaky_k"),
    ({"method": "rerope", "window": 4, "leaky_k": 2.0}, "leaky_rerope"),
    ({"method": "logn"}, "train_len"),
    ({"method": "yarn", "window": 4}, "unknown method"),
    ({"method": "rerope", "window": 0}, "window"),
    ({"method": "rerope", "window": 4, "train_len": 1}, "train_len"),
    # k = 1 is plain RoPE, k < 1 stretches far distances past the trained range (same domain as schemes)
    ({"method": "leaky_rerope", "window": 4, "leaky_k": 1.0}, "k must be > 1"),
    ({"method": "leaky_rerope", "window": 4, "leaky_k": 0.5}, "k must be > 1"),
])
def test_bad_arguments(llama, kw, match):
    with pytest.raises(ValueError, match=match):
        patch_model(llama, **kw)
    assert unpatch(llama) == 0


def test_unsupported_architecture_is_refused_in_one_line():
    torch.manual_seed(0)
    gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=50))
    with pytest.raises(ValueError, match=r"^patch_model does not support GPT2LMHeadModel \(model_type 'gpt2'\)") as e:
        patch_model(gpt2, "rerope", window=4)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError, match="does not support Linear"):
        patch_model(torch.nn.Linear(2, 2), "rerope", window=4)


@pytest.mark.parametrize("window", [8, 7.5, 100])
def test_a_sliding_window_not_above_w_is_refused_in_one_line(window):
    # window 8 shows distances 0..7; w > 7 (ceil(w) >= 8) leaves every one of them below w
    model = build("mistral+sliding")
    with pytest.raises(ValueError) as e:
        patch_model(model, "rerope", window=window)
    assert str(e.value) == (f"MistralForCausalLM (model_type 'mistral'): every attention layer has a sliding window "
                            f"of 8, which already keeps every relative position at most 7 < w = {window}; ReRoPE "
                            "would change nothing (use w < 8)")
    assert unpatch(model) == 0
    with patch_model(model, "rerope", window=7) as patch:  # distance 7 reaches w = 7: patched
        assert len(patch.modules) == 2


@pytest.fixture
def far_keys_made(monkeypatch):
    """The number of keys of each far-key rotation ``hf_patch`` makes, in order."""
    import ropelaw.methods.hf_patch as hp

    made = []
    real = hp.far_rotation

    def spy(x, positions, window, leaky_k, role, **kw):
        if role == "key":
            made.append(x.shape[2])
        return real(x, positions, window, leaky_k, role, **kw)

    monkeypatch.setattr(hp, "far_rotation", spy)
    return made


def test_sliding_cache_decode_rotates_only_the_new_key(far_keys_made):
    # the cache keeps the last 7 keys (window 8): the far keys follow it, one new key per step
    model = build("mistral+sliding", "sdpa")
    with patch_model(model, "leaky_rerope", window=5, leaky_k=4.0) as patch:
        generate(model, tokens(P))
        cache_lengths = sorted({far.n for layers in patch._far.values() for far in layers.values()})
    assert far_keys_made == [P, P] + [1, 1] * (NEW - 1)
    assert cache_lengths == [8]  # the keys of the last step: 7 cached + the new one


def test_right_padding_is_refused(llama):
    x = tokens(12, rows=2)
    mask = torch.ones(2, 12, dtype=torch.long)
    mask[1, 9:] = 0
    with patch_model(llama, "rerope", window=4), pytest.raises(ValueError, match="left padding"):
        logits(llama, x, attention_mask=mask)


def test_beam_search_equals_seed_reference(llama_eager, monkeypatch):
    # beam search reorders the cache every step: the far keys must follow (they are rebuilt)
    x = tokens(P)
    kw = dict(max_new_tokens=NEW, min_new_tokens=NEW, num_beams=3, do_sample=False, pad_token_id=0)
    with patch_model(llama_eager, "leaky_rerope", window=5, leaky_k=4.0), torch.no_grad():
        got = llama_eager.generate(x, **kw)
    mod = __import__(type(llama_eager).__module__, fromlist=["_"])
    with monkeypatch.context() as mp, torch.no_grad():
        mp.setattr(mod, "apply_rotary_pos_emb", lambda q, k, cos, sin, *a, **k2: (q, k))
        mp.setattr(mod, "eager_attention_forward", seed_attention(5, 4.0))
        want = llama_eager.generate(x, use_cache=False, **kw)
    assert torch.equal(got, want)


def test_decode_rotates_only_the_new_key(llama, far_keys_made):
    # O(1) extra work per step: after the prefill, each step and layer makes one far key
    with patch_model(llama, "leaky_rerope", window=5, leaky_k=4.0):
        generate(llama, tokens(P))
    assert far_keys_made == [P, P] + [1, 1] * (NEW - 1)  # two layers: the prompt once, then one key per step


def test_static_cache_is_refused(llama):
    # a static cache holds empty slots after the newest token: the far keys could not be tracked
    with patch_model(llama, "rerope", window=5), pytest.raises(ValueError, match="DynamicCache only"):
        generate(llama, tokens(P), cache_implementation="static")


@pytest.mark.skipif(not TF4, reason="the 4.57 refusal; under 5.23 these models are patched (SUPPORTED)")
@pytest.mark.parametrize("name,cls", [("qwen2_moe", "Qwen2Moe"), ("stablelm", "StableLm")])
def test_only_5_refused_on_4(name, cls):
    model = build(name, "sdpa", qk_layernorm=False) if name == "stablelm" else build(name, "sdpa")  # 4.57.1
    # cannot initialise StableLM's bias-free q/k LayerNorm (_init_weights zeroes a None bias)
    with pytest.raises(ValueError) as e:
        patch_model(model, "rerope", window=4)
    assert str(e.value) == (f"patch_model supports {cls}ForCausalLM (model_type {name!r}) under transformers 5.23 "
                            f"only: in {transformers.__version__} {cls}Attention computes its attention itself, not "
                            "through the attention interface")


@pytest.mark.parametrize("version", ["4.56.2", "5.0.0", "6.1.0"])
def test_other_transformers_versions_are_refused(llama, monkeypatch, version):
    import types

    import ropelaw.methods.hf_patch as hp

    monkeypatch.setattr(hp, "_transformers", lambda: types.SimpleNamespace(__version__=version))
    with pytest.raises(ValueError, match=rf"not {version}; cannot patch LlamaForCausalLM"):
        patch_model(llama, "rerope", window=5)


def test_sliding_window_over_a_cache_that_keeps_every_key(monkeypatch):
    # a DynamicCache built without the config keeps all keys; the sliding mask must still hide
    # distances >= 8 in the decode step and the chunked prefill: equal to the seed's full forward
    model = build("mistral+sliding", "sdpa")
    x = tokens(20)
    with patch_model(model, "leaky_rerope", window=5, leaky_k=4.0), torch.no_grad():
        cache = transformers.DynamicCache()
        first = model(x[:, :12], past_key_values=cache, use_cache=True).logits
        step = model(x[:, 12:13], past_key_values=cache, use_cache=True).logits  # decode path
        rest = model(x[:, 13:], past_key_values=cache, use_cache=True).logits  # chunked prefill
        assert cache.get_seq_length() == 20 and cache.layers[0].keys.shape[2] == 20
    want = reference_logits(build("mistral+sliding"), x, monkeypatch, 5, 4.0, plain_sliding=False)
    torch.testing.assert_close(torch.cat((first, step, rest), dim=1), want, rtol=0, atol=2e-5)


def test_gemma3_image_tokens_are_refused_in_one_line():
    # image tokens attend to each other both ways (token_type_ids): not a causal mask
    model = build("gemma3", "sdpa")
    x = torch.tensor([[1, 5, 6, 95, 96, 96, 96, 96, 94, 7, 8, 9, 10, 11, 12, 13]])  # 96: the 4 image tokens
    with patch_model(model, "rerope", window=5), pytest.raises(ValueError) as e, torch.no_grad():
        model(input_ids=x, pixel_values=torch.randn(1, 3, 28, 28), token_type_ids=(x == 96).long())
    assert str(e.value) == ("Gemma3ForConditionalGeneration (model_type 'gemma3'): the attention mask lets tokens see "
                            "later tokens (bidirectional attention, e.g. Gemma 3's image tokens); ReRoPE is causal: "
                            "text-only prompts are supported")
