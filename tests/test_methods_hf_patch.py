"""patch_llama on a tiny random Llama (no weights downloaded): ReRoPE / Leaky ReRoPE / log-n.

Independent facts used: with a window covering the whole input every relative position is
inside the window (seed 000), so the patched model computes the unpatched logits; with
T_train >= L the log-n factor is 1 (seed 000); incremental decoding with a cache must give
the logits of the full forward pass (causality).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from ropelaw.methods import patch_llama, unpatch  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.hf]

L = 40


@pytest.fixture(scope="module", params=["sdpa", "eager"])
def model(request):
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=101, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                   attn_implementation=request.param)
    return transformers.LlamaForCausalLM(cfg).eval()


@pytest.fixture(scope="module")
def tokens():
    return torch.randint(0, 101, (1, L), generator=torch.Generator().manual_seed(1))


def logits(model, x, **kw):
    with torch.no_grad():
        return model(x, **kw).logits


def test_window_covering_input_gives_unpatched_logits(model, tokens):
    plain = logits(model, tokens)
    with patch_llama(model, "rerope", window=L):
        torch.testing.assert_close(logits(model, tokens), plain, rtol=0, atol=1e-5)
    with patch_llama(model, "leaky_rerope", window=L, leaky_k=8.0):
        torch.testing.assert_close(logits(model, tokens), plain, rtol=0, atol=1e-5)


@pytest.mark.parametrize("method,kw", [("rerope", {"window": 8}), ("leaky_rerope", {"window": 8, "leaky_k": 4.0})])
def test_short_window_changes_logits_and_unpatch_restores(model, tokens, method, kw):
    plain = logits(model, tokens)
    patch = patch_llama(model, method, **kw)
    changed = logits(model, tokens)
    # rows i < 8 see only distances i - j <= 7 < w: unchanged; rows i >= 8 reach the window
    torch.testing.assert_close(changed[:, :8], plain[:, :8], rtol=0, atol=1e-5)
    assert (changed[:, 8:] - plain[:, 8:]).abs().max() > 1e-4
    patch.undo()
    assert torch.equal(logits(model, tokens), plain)


@pytest.mark.parametrize("kw", [{"method": "rerope", "window": 8}, {"method": "leaky_rerope", "window": 8,
                                                                       "leaky_k": 4.0},
                                {"method": "rerope", "window": 8, "train_len": 16}, {"method": "logn",
                                                                                     "train_len": 16}])
def test_incremental_decoding_equals_full_forward(model, tokens, kw):
    with patch_llama(model, **kw):
        full = logits(model, tokens)
        with torch.no_grad():
            out = model(tokens[:, :30], use_cache=True)
            cache = out.past_key_values
            step = model(tokens[:, 30:31], past_key_values=cache, use_cache=True).logits  # decode path
            rest = model(tokens[:, 31:], past_key_values=cache, use_cache=True).logits  # chunked prefill
    torch.testing.assert_close(out.logits, full[:, :30], rtol=0, atol=1e-5)
    torch.testing.assert_close(step[:, 0], full[:, 30], rtol=0, atol=1e-5)
    torch.testing.assert_close(rest, full[:, 31:], rtol=0, atol=1e-5)


def test_logn_is_identity_inside_training_length(model, tokens):
    plain = logits(model, tokens)
    with patch_llama(model, "logn", train_len=L):
        torch.testing.assert_close(logits(model, tokens), plain, rtol=0, atol=1e-6)
    with patch_llama(model, "logn", train_len=16):
        scaled = logits(model, tokens)
    torch.testing.assert_close(scaled[:, :16], plain[:, :16], rtol=0, atol=1e-6)  # factor 1 for n <= 16
    assert (scaled[:, 16:] - plain[:, 16:]).abs().max() > 1e-4


def test_unpatch_function_and_double_patch(model, tokens):
    plain = logits(model, tokens)
    patch_llama(model, "rerope", window=4)
    with pytest.raises(ValueError, match="already patched"):
        patch_llama(model, "rerope", window=4)
    assert unpatch(model) == 2  # two layers
    assert unpatch(model) == 0
    assert torch.equal(logits(model, tokens), plain)


def test_bad_arguments(model):
    with pytest.raises(ValueError, match="window"):
        patch_llama(model, "rerope")
    with pytest.raises(ValueError, match="leaky_k"):
        patch_llama(model, "leaky_rerope", window=4)
    with pytest.raises(ValueError, match="leaky_rerope"):
        patch_llama(model, "rerope", window=4, leaky_k=2.0)
    with pytest.raises(ValueError, match="train_len"):
        patch_llama(model, "logn")
    with pytest.raises(ValueError, match="unknown method"):
        patch_llama(model, "yarn", window=4)
    with pytest.raises(ValueError, match="LlamaAttention"):
        patch_llama(torch.nn.Linear(2, 2), "rerope", window=4)


def test_padded_batch_is_refused(model):
    x = torch.randint(0, 101, (2, 10))
    mask = torch.ones(2, 10, dtype=torch.long)
    mask[1, :3] = 0
    with patch_llama(model, "rerope", window=4), pytest.raises(ValueError, match="causal|position"):
        logits(model, x, attention_mask=mask)
