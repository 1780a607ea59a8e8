"""Reading the syntax tree: dotted names, keywords, assignments followed one level, and the
constructions the checker recognises (frequency expressions, complex numbers, float32 values,
dtype checks). Functions of a node only: no checker state."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from .names import CLEAN_DTYPES, COMPLEX_CALLS, COMPLEX_DTYPES, LOW_DTYPES, NOT_FREQ_CALLS
from .values import DtypeSource, Val

Function = ast.FunctionDef | ast.AsyncFunctionDef

def dotted_name(node: ast.AST) -> str:
    """``torch.nn.functional`` for an Attribute chain of Names; "" otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def const_false(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def keyword_value(call: ast.Call, name: str) -> ast.AST | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def passed_argument(call: ast.Call, param: str, fn: Function) -> ast.AST | None:
    """What ``call`` passes for ``fn``'s parameter ``param``: by keyword, else by position (a method called as
    ``obj.m(...)`` does not pass ``self`` / ``cls``); None when it passes nothing there. A caller that passes
    ``*args`` / ``**kwargs`` cannot be matched: check :func:`unpacks` first."""
    arg = keyword_value(call, param)
    names = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    if arg is None and param in names:
        method = bool(names) and names[0] in ("self", "cls")
        i = names.index(param) - (1 if method and isinstance(call.func, ast.Attribute) else 0)
        arg = call.args[i] if 0 <= i < len(call.args) else None
    return arg


def unpacks(call: ast.Call) -> bool:
    """``call`` passes ``*args`` or ``**kwargs``: which parameter gets what cannot be read."""
    return any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)


def table_constructor(value: ast.AST | None) -> bool:
    """``torch.empty((L, d), ...)`` / ``torch.zeros(L, d)``: a tensor of two or more dimensions made to be
    filled with a table (cos/sin, angles), not a vector of frequencies."""
    if not isinstance(value, ast.Call) or call_leaf(value) not in ("empty", "zeros", "ones", "full", "randn", "rand"):
        return False
    shape = keyword_value(value, "size") or (value.args[0] if value.args else None)
    if isinstance(shape, (ast.Tuple, ast.List)):
        return len(shape.elts) >= 2
    if isinstance(shape, ast.BinOp) and any(isinstance(x, (ast.Tuple, ast.List)) for x in (shape.left, shape.right)):
        return True  # grid_dims + (encoding_dim,): a shape built from tuples
    return len([a for a in value.args if not isinstance(a, ast.Starred)]) >= 2 and call_leaf(value) != "full"


def float_argument(call: ast.Call) -> bool:
    """An ``arange`` argument that is a float: ``arange(8.0)``, ``arange(float(n))``, ``arange(n * 1.0)``
    (torch then makes the default dtype, not int64)."""
    for a in list(call.args) + [k.value for k in call.keywords if k.arg in ("start", "end", "step")]:
        for n in ast.walk(a):
            if isinstance(n, ast.Constant) and isinstance(n.value, float):
                return True
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "float":
                return True
    return False


def _subtree_has(node: ast.AST, test, memo: dict) -> bool:
    """Whether ``test`` holds for ``node`` or any node below it, remembered per node in ``memo`` (id ->
    bool): asked again at every level of a left-nested chain (``t * a * b * ...``), a walk of the whole
    operand each time was quadratic (8,000 factors: minutes); with the memo each node is tested once.
    Iterative (post-order), so a 40,000-deep chain needs no recursion."""
    hit = memo.get(id(node))
    if hit is not None:
        return hit
    stack: list = [(node, False)]
    while stack:
        n, expanded = stack.pop()
        if id(n) in memo:
            continue
        if expanded:
            memo[id(n)] = test(n) or any(memo[id(c)] for c in ast.iter_child_nodes(n))
            continue
        stack.append((n, True))
        stack.extend((c, False) for c in ast.iter_child_nodes(n) if id(c) not in memo)
    return memo[id(node)]


def _is_float_scalar(n: ast.AST) -> bool:
    """A float literal, ``math.log`` / ``math.sqrt`` / ``math.exp`` / ``float(...)`` or ``math.pi``."""
    if isinstance(n, ast.Constant):
        return isinstance(n.value, float)
    if isinstance(n, ast.Call):
        return dotted_name(n.func) in ("math.log", "math.sqrt", "math.exp", "float")
    return isinstance(n, ast.Attribute) and dotted_name(n) == "math.pi"


def _is_float_tensor(n: ast.AST) -> bool:
    """A ``.float()`` / ``.double()`` or a constructor with an explicit dtype (``torch.ones(n, dtype=...)``)."""
    if not isinstance(n, ast.Call):
        return False
    leaf = call_leaf(n)
    return leaf in ("float", "double") or (leaf in ("tensor", "ones", "zeros", "full")
                                           and keyword_value(n, "dtype") is not None)


def float_scalar_operand(node: ast.AST, a: Val, b: Val, memo: dict) -> bool:
    """The other operand of a product with an integer tensor is a Python float (a float literal, ``math.log``
    / ``math.pi`` in it): int64 * float gives torch's default dtype. ``memo``: see :func:`_subtree_has`."""
    if not isinstance(node, ast.BinOp) or not (a.integer or b.integer):
        return False
    return _subtree_has(node.right if a.integer else node.left, _is_float_scalar, memo)


def float_tensor_operand(node: ast.AST, a: Val, b: Val, memo: dict) -> bool:
    """True when the other operand of an integer true division is visibly a float tensor (a ``.float()``,
    a tensor with an explicit dtype): the quotient then takes that dtype, not the default one."""
    if not isinstance(node, ast.BinOp) or not (a.integer or b.integer):
        return False
    return _subtree_has(node.right if a.integer else node.left, _is_float_tensor, memo)


def einsum_contracts(call: ast.Call) -> bool:
    """True when an ``einsum`` equation sums an index (evaluated with bmm, autocast-eligible)."""
    if not call.args or not isinstance(call.args[0], ast.Constant) or not isinstance(call.args[0].value, str):
        return True  # unknown equation: assume a contraction
    eq = call.args[0].value.replace(" ", "")
    if "->" not in eq:
        ins = [c for c in eq if c.isalpha()]
        return any(ins.count(c) > 1 for c in set(ins))
    lhs, rhs = eq.split("->", 1)
    kept = set(rhs)  # a set: `c not in rhs` per letter was quadratic in a 1.5M-character equation
    return any(c.isalpha() and c not in kept for c in set(lhs))


_SELF_CALL = re.compile(r"\bself\.([A-Za-z_]\w*)\s*\(")


def _code_part(line: str) -> str:
    """A source line without its comment (a ``#`` outside quotes ends the code)."""
    if "#" not in line:
        return line
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return line[:i]
    return line


def self_method_calls(fn: Function, lines: Sequence[str]) -> set[str]:
    """Names ``M`` of the calls ``self.M(...)`` in a function body (read from its source text without
    comments: much faster than walking the tree; a mention in a string only adds an edge)."""
    return set(_SELF_CALL.findall("\n".join(_code_part(x) for x in lines[fn.lineno - 1:fn.end_lineno])))


_ASSIGNMENTS: dict[int, tuple[ast.AST, dict[str, list[ast.Assign]]]] = {}  # id(fn) -> (fn, index)


def _assignments(fn: ast.AST) -> dict[str, list[ast.Assign]]:
    """``name -> [single-target assignments to it]`` of ``fn``, in walk order; built once per function
    and kept for the last few functions (one walk per lookup was quadratic: 2,000 buffers
    registered from locals in one ``__init__`` took minutes)."""
    hit = _ASSIGNMENTS.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    index: dict[str, list[ast.Assign]] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            index.setdefault(n.targets[0].id, []).append(n)
    if len(_ASSIGNMENTS) >= 16:
        _ASSIGNMENTS.pop(next(iter(_ASSIGNMENTS)))
    _ASSIGNMENTS[id(fn)] = (fn, index)
    return index


def last_assignment(name: str, fn: ast.AST | None, before: int) -> ast.AST | None:
    """The value last assigned to the local ``name`` in ``fn`` before line ``before`` (None if none)."""
    if fn is None:
        return None
    best = None
    for n in _assignments(fn).get(name, ()):
        if n.lineno < before and (best is None or n.lineno > best.lineno):
            best = n
    return best.value if best is not None else None


_RESHAPES = {"unsqueeze", "repeat", "flatten", "reshape", "view", "expand", "repeat_interleave", "contiguous",
             "squeeze", "transpose", "permute", "t", "clone", "detach", "to"}


def resolved_value(value: ast.AST | None, fn: ast.AST | None) -> ast.AST | None:
    """A registered value, with a local name replaced by its last assignment; an assignment that only
    reshapes the same name (``angle = angle.unsqueeze(-1).repeat(1, 2).flatten()``, torchscale RetNet) is
    followed to the one before it (a few levels)."""
    for _ in range(4):
        if not isinstance(value, ast.Name):
            return value
        prev = last_assignment(value.id, fn, getattr(value, "lineno", 1 << 30))
        if prev is None:
            return value
        inner = prev
        while (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
               and inner.func.attr in _RESHAPES):
            inner = inner.func.value
        if isinstance(inner, ast.Name) and inner.id == value.id and inner is not prev:
            value = ast.copy_location(ast.Name(id=value.id, ctx=ast.Load()), prev)  # earlier than this line
            continue
        return prev
    return value


def visibly_low(value: ast.AST | None) -> bool:
    """True when an expression converts to a dtype that is not float32/float64 (or an unknown one).

    ``.half()``, ``.bfloat16()``, ``.type_as(t)``, ``.to(x.dtype)``, ``dtype=torch.bfloat16``: the
    value may be bf16/fp16. Device moves (``.to(device)``) and float32 conversions are not.
    """
    if value is None:
        return False
    for n in ast.walk(value):
        if not isinstance(n, ast.Call):
            continue
        leaf = n.func.attr if isinstance(n.func, ast.Attribute) else ""
        if leaf in ("half", "bfloat16", "type_as"):
            return True
        dts = [k.value for k in n.keywords if k.arg == "dtype"]
        if leaf in ("to", "type"):
            dts += [a for a in n.args if isinstance(a, ast.Attribute)
                    and (a.attr == "dtype" or dotted_name(a).startswith("torch."))]
        for d in dts:
            if isinstance(d, ast.Attribute):  # x.dtype (another tensor's: bf16 in a bf16 model), torch.X
                if d.attr == "dtype" or d.attr not in CLEAN_DTYPES:
                    return True
            elif isinstance(d, ast.Constant) and isinstance(d.value, str):
                if d.value.replace("torch.", "") not in CLEAN_DTYPES:
                    return True
            elif isinstance(d, ast.Name) and d.id in LOW_DTYPES:
                return True  # a `dtype` variable or call: unknown, not visibly low
    return False


def explicit_float32(value: ast.AST | None, fn: ast.AST | None, depth: int = 2) -> bool:
    """True when a registered value is visibly float32: it passes through ``.float()``,
    ``torch.float32`` / ``torch.float`` or ``dtype="float32"`` and through no low-precision cast
    (a local name is followed to its last assignment in the same function). An operand name of the value
    is followed too (``depth`` levels) when it is itself visibly float32: a tensor op with a float32 operand is
    float32 (torch's promotion), as YaRN's ``inv_freq = inv_freq_interpolation * (1 - inv_freq_mask) + ...``
    of ``.float()`` names (issue 33: a construction-time buffer read as cast)."""
    value = resolved_value(value, fn)
    if value is None or visibly_low(value):
        return False
    for n in ast.walk(value):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "float"
                and not n.args):
            return True
        if isinstance(n, ast.Attribute) and dotted_name(n) in ("torch.float32", "torch.float"):
            return True
        if isinstance(n, ast.Constant) and n.value == "float32":
            return True
    if depth and isinstance(value, ast.BinOp):
        return any(isinstance(n, ast.Name) and explicit_float32(n, fn, depth - 1)
                   for n in ast.walk(value) if n is not value)
    return False


def _frequency_exponent(node: ast.AST, fn: ast.AST | None) -> bool:
    """An exponent ``arange(...) / dim``, ``-(...)`` or ``linspace(...)`` (a local name is followed
    one level): fractional or negative powers; ``2 ** arange(bits)`` (integer powers) is not one."""
    exponent = resolved_value(node, fn) if isinstance(node, ast.Name) else node
    if exponent is None:
        return False
    leaves = {(c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", ""))
              for c in ast.walk(exponent) if isinstance(c, ast.Call)}
    if "linspace" in leaves:
        return True
    # a fraction of the dimension (arange / dim): `2 ** (-5 - arange(heads))` is a negative INTEGER power, a
    # per-head decay or slope (torchscale RetNet's `decay`), not frequencies
    return "arange" in leaves and any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)
                                      for n in ast.walk(exponent))


def frequency_expression(node: ast.AST, fn: ast.AST | None = None) -> bool:
    """True when an expression builds rotary / sinusoidal frequencies (not angles or tables).

    Recognised constructions (RoFormer, arXiv 2104.09864, eq. 15: theta_i = base^(-2(i-1)/d);
    Vaswani et al. 2017, arXiv 1706.03762, section 3.5):
    ``base ** (arange(...) / dim)``, ``base ** -(...)`` and ``1.0 / (base ** ...)`` (a power whose
    exponent is a fractional or negative ``arange``, see :func:`_frequency_exponent`, or a
    ``linspace``: ``2 ** linspace(...)``), ``exp(arange(...) * -log(base) / dim)``,
    ``logspace(...)``, ``linspace(...) * pi``. An expression that also takes sin/cos, an outer
    product or an einsum holds angles or a table, not frequencies.
    """
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    leaves = {(c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "")) for c in calls}
    if leaves & NOT_FREQ_CALLS:
        return False
    if "logspace" in leaves:
        return True
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) and (
                _frequency_exponent(n.right, fn) or (_frequency_exponent(n.left, fn) and "linspace" in leaves)):
            return True
        if isinstance(n, ast.Call) and (getattr(n.func, "attr", None) or getattr(n.func, "id", "")) == "exp":
            inner = {(c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", ""))
                     for c in ast.walk(n) if isinstance(c, ast.Call)}
            if "arange" in inner and "log" in inner:
                return True
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and "linspace" in leaves and any(
                isinstance(x, ast.Attribute) and x.attr == "pi" or isinstance(x, ast.Name) and x.id == "pi"
                for x in (n.left, n.right)):
            return True
    return False


def call_leaf(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")


def complex_construction(node: ast.AST | None) -> str:
    """How an expression builds complex numbers ("`torch.polar`", "`complex64`", ...), "" if it does not.

    ``torch.polar``, ``torch.view_as_complex``, ``torch.complex``, a complex dtype (``complex64``,
    ``cfloat``, ...) or a complex literal (``torch.exp(1j * angles)``). Sub-expressions that turn
    complex numbers back into real ones (``view_as_real``, ``.real``, ``.imag``, ``.abs()``,
    ``.angle()``) are not entered.
    """
    if node is None:
        return ""
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Call):
            leaf = call_leaf(n)
            if leaf in ("view_as_real", "abs", "angle", "is_complex"):
                continue
            if leaf in COMPLEX_CALLS or dotted_name(n.func) == "torch.complex":
                return f"`torch.{leaf}`"
        elif isinstance(n, ast.Attribute):
            if n.attr in ("real", "imag"):
                continue
            if n.attr in COMPLEX_DTYPES and dotted_name(n).startswith("torch."):
                return f"`{dotted_name(n)}`"
        elif isinstance(n, ast.Constant) and isinstance(n.value, complex):
            return "a complex literal"
        todo.extend(ast.iter_child_nodes(n))
    return ""


def annotation_dtype(ann: ast.AST | None, name: str) -> DtypeSource | None:
    """dtype of a parameter from its annotation: numpy arrays (``np.ndarray``, ``npt.NDArray[np.int64]``)
    and integer tensors (``torch.LongTensor``); None when the annotation says nothing about it."""
    if ann is None:
        return None
    text = ast.unparse(ann) if hasattr(ast, "unparse") else ""
    if re.search(r"float16|half|bfloat16", text):
        return DtypeSource("low", "float16" if "bfloat16" not in text else "bfloat16", True)
    if re.search(r"\b(ndarray|NDArray)\b", text):
        return DtypeSource(None, f"`{name}` (a numpy array)", True)
    if re.search(r"\b(LongTensor|IntTensor)\b", text) or re.search(r"\bnp\.u?int\d*\b", text):
        return DtypeSource(None, f"`{name}` (an integer tensor)", True)
    return None


def dtype_checked(test: ast.AST) -> str | None:
    """X of a comparison ``self.X.dtype <op> ...`` (either side), the only name for which
    :func:`float32_branch` can be other than None; None for any other test."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    for side in (test.left, test.comparators[0]):
        dotted = dotted_name(side)
        if dotted.startswith("self.") and dotted.endswith(".dtype") and dotted.count(".") == 2:
            return dotted[5:-6]
    return None


def float32_branch(test: ast.AST, name: str) -> str | None:
    """For ``if self.X.dtype != torch.float32`` the branch where X is float32 ("else"); for ``==``
    ("body"); None when the test is not such a check."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right = test.left, test.comparators[0]
    if dotted_name(right) == f"self.{name}.dtype":
        left, right = right, left
    if dotted_name(left) != f"self.{name}.dtype" or dotted_name(right) not in ("torch.float32", "torch.float"):
        return None
    if isinstance(test.ops[0], (ast.NotEq, ast.IsNot)):
        return "else"
    if isinstance(test.ops[0], (ast.Eq, ast.Is)):
        return "body"
    return None

