"""Bidirectional attention as transformers runs it, against ropelaw's per-layer groups: Gemma 3's
``use_bidirectional_attention`` (the ``bidirectional_flag`` row of ``ropelaw/lint/table_rows.py``).

Gemma3TextConfig (4.57.1 ``__init__``, 5.23.0 ``__post_init__``) sets ``sliding_window = sliding_window // 2 + 1``
when the flag is true, and Gemma3TextModel.forward ORs every key into the full layers' mask and
``abs(q_idx - kv_idx) < sliding_window`` into the sliding layers'. ropelaw reads the full layers as attending every
key both ways and the sliding ones as a window of ``sliding_window // 2 + 1`` keys both ways (JSON ``bidirectional``;
the largest |m - n| is ``sliding_window // 2``, where the causal window of the file's own value reached
``sliding_window - 1``). The real file (Gemma 3 270M's, written false) is changed and run shrunk in place through
transformers' forward (``tests/test_hf_files.py`` ``differential``: every layer's rotary and span, now causal or
bidirectional, compared with ropelaw's reading), and each layer's mask as the probe recorded it is checked against
the runtime's own config object (its ``layer_types`` and ``sliding_window``). The mask classifier itself is checked
on brute-force masks. Under either installed transformers version; the real-file tests skip, naming the file, when
the corpus does not hold it.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
import hf_compare  # noqa: E402

CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", REPO.parent / "shared" / "corpus"))
LABEL = "heldout-r3/hub/varun00391__local-finetuned-model__gemma-3-270m__gemma-3-270m-it__config.json"

CHANGES = {  # name -> the keys changed in the real file (sliding_window 512 is made 5 by the differential)
    "true": {"use_bidirectional_attention": True},
    "true, window 9 (odd: 9 // 2 + 1 = 5)": {"use_bidirectional_attention": True, "sliding_window": 9},
    "true, window 4 (4 // 2 + 1 = 3)": {"use_bidirectional_attention": True, "sliding_window": 4},
    "1 (Python truth)": {"use_bidirectional_attention": 1},
    "false": {"use_bidirectional_attention": False},
}


def real_file() -> dict:
    import test_hf_top_keys

    data = test_hf_top_keys.corpus_file(LABEL)  # sha256 checked against tests/corpus/hf_files.json
    if data is None:
        pytest.skip(f"{LABEL} is not in {CORPUS} yet")
    return data


def brute_span(allowed: list[list[bool]]) -> tuple[str, int | None]:
    """The span of a boolean mask by enumeration (independent of ``observed.span_of``'s tensor algebra)."""
    n = len(allowed)
    pairs = {(q, k) for q in range(n) for k in range(n) if allowed[q][k]}
    if all((q, k) in pairs for q in range(n) for k in range(n)):
        return "bidirectional", None
    for w in range(1, n + 1):  # the diagonal alone (w = 1) is causal: no later key
        if pairs == {(q, k) for q in range(n) for k in range(n) if 0 <= q - k < w}:
            return ("window", w) if w < n else ("full", None)
        if pairs == {(q, k) for q in range(n) for k in range(n) if abs(q - k) < w}:
            return "bidirectional", w
    return "other", None


def test_span_of_both_ways():
    torch = pytest.importorskip("torch")
    from ropelaw.lint.layers.observed import span_of

    n = 12
    i = torch.arange(n)
    masks = [(i[:, None] - i[None, :]).abs() < w for w in range(1, n + 2)]
    masks += [((i[:, None] - i[None, :]) >= 0) & ((i[:, None] - i[None, :]) < w) for w in range(1, n + 1)]
    masks.append((i[:, None] - i[None, :]).abs() <= 1)
    masks.append((i[:, None] - i[None, :]).abs() < 3)
    odd = (i[:, None] - i[None, :]).abs() < 3
    odd[0, 5] = True  # one extra pair: no span ropelaw models
    masks.append(odd)
    seen = set()
    for m in masks:
        got = span_of(m[None, None], None, n)
        assert got == brute_span(m.tolist()), m.int()
        seen.add(got[0])
    assert seen == {"bidirectional", "window", "full", "other"}
    # a float mask (0 / finfo.min), as the eager path hands it
    m = torch.where((i[:, None] - i[None, :]).abs() < 4, 0.0, torch.finfo(torch.float32).min)
    assert span_of(m[None, None], None, n) == ("bidirectional", 4)


def lint_json(mapping: dict, tmp_path: pathlib.Path) -> dict:
    import test_hf_files

    path = tmp_path / "config.json"
    path.write_text(json.dumps(mapping))
    return test_hf_files.ropelaw_reading(mapping, str(path))


@pytest.mark.parametrize("name", CHANGES)
def test_reading(name, tmp_path):
    """ropelaw's groups of the changed file (no transformers): the flag's Python truth decides, the sliding layers'
    window is sliding_window // 2 + 1 both ways, the global layers every key both ways, no RV025 on the flag."""
    changed = dict(real_file(), **CHANGES[name])
    reading = lint_json(changed, tmp_path)
    both = bool(CHANGES[name]["use_bidirectional_attention"])
    w = changed["sliding_window"]
    assert "RV025" not in reading["codes"], reading["findings"]
    strict = reading["result"]["semantics"].startswith("transformers 5.")  # Gemma3TextConfig's field: bool | None
    refused = strict and not isinstance(CHANGES[name]["use_bidirectional_attention"], bool)
    assert (reading["codes"].get("RV021") == "error") is refused, reading["findings"]
    groups = {tuple(g["kinds"]): g for g in reading["result"]["layers"]}
    assert set(groups) == {("full_attention",), ("sliding_attention",)}
    for g in groups.values():
        assert g["bidirectional"] is both
        assert g["indices"] == [j for j, t in enumerate(changed["layer_types"]) if t == g["kinds"][0]]
    assert groups[("full_attention",)]["window"] is None
    assert groups[("sliding_attention",)]["window"] == (w // 2 + 1 if both else w)
    assert groups[("sliding_attention",)]["length"] == (w // 2 + 1 if both else w)


def runtime_spans(mapping: dict) -> tuple[list, list[str], int | None]:
    """``(the probe's layers, the runtime config's layer_types, its sliding_window)`` of ``mapping`` with its spans
    made short as the differential makes them, loaded as users load it."""
    import hf_runtime

    from ropelaw.lint.layers import shrunk

    small, _ = shrunk.with_small_spans(mapping)
    run = shrunk.run_file(small)
    assert run.problem is None and run.refused is None, (run.problem, run.refused)
    tc = hf_runtime.text_config(hf_runtime.load_config(small))
    return run.probe.layers, list(tc.layer_types), tc.sliding_window


@hf_compare.REAL_FILES_STEP
@pytest.mark.parametrize("composite", [False, True], ids=["gemma3_text", "gemma3 composite"])
@pytest.mark.parametrize("name", CHANGES)
def test_changed_real_file_as_transformers_runs_it(name, composite, tmp_path):
    import test_hf_files

    changed = dict(real_file(), **CHANGES[name])
    if composite:  # the multimodal wrapper: the same text model under text_config
        changed = {"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"], "text_config": changed}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(changed))
    verdict, detail = test_hf_files.differential(path)
    flag = CHANGES[name]["use_bidirectional_attention"]
    if not isinstance(flag, bool) and test_hf_files.installed().startswith("5."):
        # 5.23.0's strict dataclass refuses 1 (StrictDataclassFieldValidationError), and ropelaw says so (RV021)
        assert verdict == "refused" and "use_bidirectional_attention" in detail, (verdict, detail)
        return
    assert verdict == "right", detail
    layers, types, window = runtime_spans(changed)
    text = changed["text_config"] if composite else changed
    small_w = min(text["sliding_window"], 5) if text["sliding_window"] > 24 else text["sliding_window"]
    both = bool(CHANGES[name]["use_bidirectional_attention"])
    assert window == (small_w // 2 + 1 if both else small_w)  # the config class's own halving
    assert [o.index for o in layers] == list(range(len(types)))
    for o in layers:
        if types[o.index] == "full_attention":
            assert (o.span, o.size) == (("bidirectional", None) if both else ("full", None)), o.index
        else:
            assert (o.span, o.size) == (("bidirectional" if both else "window"), window), o.index
    from ropelaw.lint.layers import shrunk

    small, _ = shrunk.with_small_spans(changed)
    reading = lint_json(small, tmp_path)["result"]
    sliding = next(g for g in reading["layers"] if g["kinds"] == ["sliding_attention"])
    assert sliding["window"] == window and sliding["bidirectional"] is both


def sees_later(model_type: str, impl: str, flag: bool) -> bool | None:
    """Whether a tiny model's first position's output changes with the last token (it attends later keys), under
    attention implementation ``impl``; None where the model refuses ``impl`` (Gemma 2 and sdpa under 5.23.0)."""
    torch = pytest.importorskip("torch")
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = AutoConfig.for_model(model_type, hidden_size=64, intermediate_size=128, num_attention_heads=2,
                               num_key_value_heads=1, head_dim=32, num_hidden_layers=2, vocab_size=128,
                               use_bidirectional_attention=flag)
    torch.manual_seed(0)
    try:
        model = AutoModelForCausalLM.from_config(cfg, attn_implementation=impl).eval()
    except ValueError:
        return None
    a = torch.arange(10)[None] + 3
    b = a.clone()
    b[0, -1] = 100
    with torch.no_grad():
        return not torch.equal(model(a).logits[0, 0], model(b).logits[0, 0])


@pytest.mark.parametrize("model_type", ["gemma", "gemma2"])
def test_gemma_flag_depends_on_the_implementation(model_type, tmp_path):
    """Gemma / Gemma 2 read the flag as the attention modules' is_causal only: under 5.23.0 Gemma's sdpa attends later
    keys, eager does not (RV025 says so, spans read causal); under 4.57.1 the flag changes nothing (no finding)."""
    pytest.importorskip("transformers")
    from ropelaw.lint.layers import shrunk  # noqa: F401  (transformers importable)

    eager = sees_later(model_type, "eager", True)
    sdpa = sees_later(model_type, "sdpa", True)
    assert eager is False and sees_later(model_type, "eager", False) is False
    mapping = {"model_type": model_type, "hidden_size": 64, "num_attention_heads": 2, "head_dim": 32,
               "num_hidden_layers": 2, "max_position_embeddings": 8192, "rope_theta": 10000.0,
               "use_bidirectional_attention": True}
    reading = lint_json(mapping, tmp_path)
    installed = reading["result"]["semantics"].removeprefix("transformers ")
    if installed.startswith("5."):
        assert sdpa is (True if model_type == "gemma" else None)  # Gemma 2 refuses sdpa
        assert reading["codes"].get("RV025") == "warning", reading["findings"]
    else:
        assert sdpa is False  # 4.57.1: the flag is not read
        assert "RV025" not in reading["codes"], reading["findings"]
    assert all(g["bidirectional"] is False for g in reading["result"]["layers"])
