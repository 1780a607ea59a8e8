"""The HF table engine's per-model rows (ropelaw/lint/table_rows.py): each cites its source, names model types that
exist (in a transformers version ropelaw follows, else in remote code its source names), and each effect is one
the engine reads (an effect no code asks for would be a row that silently does nothing)."""

from __future__ import annotations

import ast
import pathlib

from ropelaw.lint.dialects import hf
from ropelaw.lint.table_rows import EFFECTS, ROWS, row

# the modules that read the rows: the engine, the per-layer kinds it takes from the layer table and the layer groups
# it builds from them (the layer count of layers that run several times: HRM)
ENGINE = tuple(pathlib.Path(__file__).resolve().parents[1] / "ropelaw" / "lint" / f
               for f in ("table.py", "layers/__init__.py", "layer_groups.py"))


def asked_effects() -> set[str]:
    """The effects the engine asks for: the first argument of its ``row(...)`` / ``rows(...)`` calls."""
    trees = [ast.parse(f.read_text(encoding="utf-8")) for f in ENGINE]
    return {node.args[0].value for tree in trees for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("row", "rows")
            and node.args and isinstance(node.args[0], ast.Constant)}


def test_every_effect_is_read_by_the_engine():
    assert asked_effects() == set(EFFECTS)
    assert {r.effect for r in ROWS} == set(EFFECTS)


def test_every_row_cites_its_source_and_selects_something():
    for r in ROWS:
        assert len(r.source) > 40, r
        assert r.model_types or r.type_prefixes or r.architectures or r.keys or r.values.get("role"), r


def test_model_types_exist():
    for r in ROWS:
        for t in r.model_types:
            known = any(hf.known_model_type(t, v) for v in hf.SEMANTICS)
            assert known or "remote code" in r.source, (t, r.source)
        for p in r.type_prefixes:  # a prefix names at least one type transformers knows
            assert any(hf.known_model_type(t, v) for v in hf.SEMANTICS
                       for t in (p, f"{p}2", f"{p}_v1_dense")), p


def test_rows_select_as_the_branches_did():
    """The matches the engine's branches made (``arch == "chatglm" or "ChatGLM" in architectures or rope_ratio``,
    ``arch.startswith("gemma")``, ``arch.startswith("hunyuan")``), by the rows."""

    class Keys:
        def __init__(self, *keys):
            self.keys = keys

        def has(self, name):
            return name in self.keys

    assert row("rotates_half", "chatglm") and row("rotates_half", "", "ChatGLMModel")
    assert row("rotates_half", "glm", "", Keys("rope_ratio")) and not row("rotates_half", "glm", "", Keys())
    assert row("type_from_architectures", "", "QWenLMHeadModel").values["model_type"] == "qwen"
    assert row("type_from_architectures", "", "ChatGLMForConditionalGeneration QWenLMHeadModel").values[
        "model_type"] == "chatglm"  # the ChatGLM test came first
    assert row("class_head_dim", "gemma3_text") and not row("class_head_dim", "llama")
    assert row("ntk_alpha", "hunyuan_v1_dense") and not row("ntk_alpha", "llama")
    assert row("odd_dims_round_up", "phi3") and not row("odd_dims_round_up", "phimoe")
