"""torchtune's builders as ``scripts/presets.py`` reads them (no torchtune import: its source, with :mod:`ast`): the
component builder that makes a model builder's language decoder, and a component builder's rotary as expressions
of its own parameters, which the torchtune dialect evaluates with a recipe's arguments."""

from __future__ import annotations

import ast
from typing import Any


def decoder_call(fn: ast.FunctionDef, family: str, components: dict) -> tuple[ast.Call | None, Any]:
    """The call of a component builder that makes a model builder's language decoder, and that component: the
    returned call (``return llama3_1(...)``), or, for a model that wraps its decoder (Llama 3.2 Vision:
    ``decoder = llama3_2_vision_decoder(...)``, ``return DeepFusionModel(encoder=..., decoder=decoder)``), the
    call assigned to ``decoder``."""
    def component(call) -> Any:
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            return None
        return components.get(f"{family}.{call.func.id}") or next(
            (c for k, c in sorted(components.items()) if k.endswith(f".{call.func.id}")), None)  # imported

    if not fn.body or not isinstance(fn.body[-1], ast.Return):
        return None, None
    call = fn.body[-1].value
    if component(call) is not None:
        return call, component(call)
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and [getattr(t, "id", None) for t in stmt.targets] == ["decoder"] \
                and component(stmt.value) is not None:
            return stmt.value, component(stmt.value)
    return None, None


def component_entry(fn: ast.FunctionDef, defaults: dict[str, Any], scaled_defaults: dict[str, Any], version: str,
                    family: str, ropes: dict[str, str]) -> dict[str, Any] | None:
    """A component builder a recipe may name with its own arguments (``torchtune.models.llama2.llama2`` with
    ``embed_dim``, ``num_heads`` ...): its defaults and the expressions of its rotary's arguments in terms of its
    own parameters (``"dim": "(embed_dim // num_heads)"``), for the torchtune dialect to evaluate with the YAML's
    values (:func:`ropelaw.lint.dialects.torchtune.component_values`); None when it builds no rotary this way."""
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    local: dict[str, str] = {}
    for stmt in fn.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        target = stmt.targets[0].id
        if target == "rope" and isinstance(stmt.value, ast.Call):
            cls = getattr(stmt.value.func, "id", None)
            if cls not in ropes:
                return None
            kw = {k.arg: expression(k.value, local, params) for k in stmt.value.keywords if k.arg}
            if None in kw.values() or "dim" not in kw:
                return None
            rope = {"rope_class": cls, "scheme": ropes[cls], "dim": kw["dim"], "base": kw.get("base", "10000"),
                    "max_seq_len": kw.get("max_seq_len", "4096")}
            if cls == "Llama3ScaledRoPE":
                for p in ("scale_factor", "low_freq_factor", "high_freq_factor", "old_context_len"):
                    rope[p] = kw.get(p, repr(scaled_defaults.get(p)))
            return {"defaults": {k: v for k, v in defaults.items() if isinstance(v, (int, float, str, bool))},
                    "rope": rope, "source": f"torchtune=={version} torchtune/models/{family}/_component_builders.py "
                                            f"{fn.name}()"}
        expr = expression(stmt.value, local, params)
        if expr is not None:
            local[target] = expr
    return None


def expression(node: ast.AST, local: dict[str, str], params: set[str]) -> str | None:
    """``node`` as arithmetic on the builder's parameters and literals (earlier local names substituted), or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return repr(node.value)
    if isinstance(node, ast.Name):
        return node.id if node.id in params else local.get(node.id)
    if isinstance(node, ast.BinOp) and type(node.op) in (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv):
        left, right = expression(node.left, local, params), expression(node.right, local, params)
        if left is None or right is None:
            return None
        return f"({left} {ast.unparse(ast.BinOp(ast.Name('a'), node.op, ast.Name('b'))).split()[1]} {right})"
    if isinstance(node, ast.IfExp):  # head_dim = head_dim if head_dim else embed_dim // num_heads
        return None
    return None
