"""Static scan of model code: an AST checker for rotary / ALiBi precision bugs (RP1xx, RE0xx).

pyflakes' split: :class:`Checker` walks one module's AST and only appends
:class:`~ropelaw.findings.Finding` objects; the rules (codes, names, documentation, message
helpers) live in ``ropelaw/audit/rules/static_*.py``; :mod:`ropelaw.report` formats.

A little dataflow, within one function, in statement order: each local name carries the
*kinds* of value it holds (``pos`` integer positions, ``freq`` rotary frequencies / ALiBi
slopes, ``angle`` their product) and, once a low-precision dtype reached it, the *source* of
that dtype (``buffer`` a module attribute's dtype, ``input`` an argument tensor's dtype,
``caller`` a ``dtype`` parameter, ``default`` ``torch.get_default_dtype()``, ``low`` an
explicit float16/bfloat16/fp8). Positions come from ``arange`` (without a step: a step marks
the frequency exponents ``arange(0, dim, 2)``), ``position_ids``, ``cache_position`` and
similar names, ``cumsum`` in ALiBi code, and names assigned from them; frequencies from
``inv_freq``-like names (``slopes`` in ALiBi code).

Where a position cast is reported: at once in rotary / ALiBi code (the function or class name
mentions rotary, rope, rotate or alibi, the class registers a frequency buffer, or the
function mentions ``inv_freq``); elsewhere only once the cast positions meet frequencies in
a product or reach ``sin``/``cos``/``exp`` (an ``arange`` in the input dtype that builds a
mask is not an encoding). An ``arange`` over a feature dimension (its stop mentions dim,
head, feat, hidden, embed, channel or ``d``) holds exponents, not positions; the dtype of a
tensor named like an integer (lengths, ids, mask, ...) is taken to be an integer dtype.
``self.X.dtype`` follows a model cast unless ``X`` is a plain attribute of the class that is
never registered as a buffer or parameter.

Frequency buffers (RP121) are buffers registered with ``register_buffer`` or ``self.X =
nn.Buffer(...)`` that hold frequencies: named so (``inv_freq``, ``freq(s)``, ``theta``, ``omega``,
``bands``, ``periods``) or built so (:func:`_frequency_expression`: ``base ** (arange/dim)``,
``1 / base ** ...``, ``exp(-log(base) * arange/dim)``, ``logspace``, ``2 ** linspace``, ``linspace *
pi``, also through a function of the same file). When the dtype of ``self.X`` is bf16 depends on
*when* the code runs:

- *construction-only* code (``__init__``, and private methods that only ``__init__`` calls, by name
  over the file, :meth:`Checker._call_graph`) runs before any ``model.to(dtype)`` can: a buffer
  registered there with an explicit float32 value (``.float()``, ``torch.float32``) is float32,
  so ``arange(n, dtype=self.inv_freq.dtype)`` there is exact (transformers 4.28 Llama's
  ``__init__``). The same line in a method that ``forward`` also calls is the seed 004 bug. A
  public method called from ``__init__`` counts as later code (a user may call it after a cast);
- a ``register_buffer("X", <explicit float32>)`` earlier in the same function (even under an
  ``if``: dynamic NTK re-registers exactly on the long-sequence path that rebuilds the cache)
  makes ``self.X`` float32 below it;
- a class (or an in-file base) whose ``_apply`` / ``to`` override re-registers or reassigns
  ``X`` (timm 1.0's pattern) restores it after every cast: ``X`` is never reported and its dtype
  is float32.

RP121 is reported at registrations that run at construction (``__init__`` or what it calls); a
registration that runs only later, or again after ``__init__`` created the buffer, replaces
whatever a cast left with a freshly computed tensor: a repair, not reported unless its value is
visibly low precision. ``register_buffer("X", None)`` has nothing to round.

Type promotion: integer positions (``arange`` without a dtype, ``position_ids``) multiplied with
a castable frequency buffer take the buffer's dtype (``int64 * bf16 -> bf16``), so a cast rounds
the positions too (RP101 at the product). A tensor of unknown kind converted to a risky dtype
(``t.type_as(self.inv_freq)``) is positions once it meets frequencies in a product.

Repairs (no RP121/RP122, and ``self.X.dtype`` counts as float32): an ``_apply`` / ``to`` override
that re-registers ``X`` from a fresh computation; every read of ``self.X`` after construction inside
the float32 branch of ``if self.X.dtype != torch.float32`` (flash-attn); a method ``forward`` calls
that reassigns ``X`` in explicit float32 at its top level (nanotron's lazy re-initialisation). See
:meth:`Checker._repairs`.

Complex (RP123, RP114): a buffer or parameter whose value builds complex numbers (``torch.polar``,
``view_as_complex``, ``torch.complex``, a complex dtype or literal; followed through local names,
functions of the file and ``self.m()`` implemented by any class of the file) is made real by
``model.to(dtype)``; a cast of angles right inside a complex constructor is RP114.

Dtypes known not to be low precision: numpy and integer arrays (annotated or constructed, see
:func:`_annotation_dtype`, :meth:`Checker._constructed_dtype`), and a ``dtype`` parameter whose
float32 default no call in the file overrides (:meth:`Checker._float32_default`).

Numbers in messages come from :func:`ropelaw.formats.exact_positions` at ``length``
(default 8,192, the seed's context).
"""

from __future__ import annotations

import ast
import io
import os
import re
import sys
import tokenize
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import UsageError
from ..findings import Finding, Rule, select_findings
from . import policy
from .rules import static_alibi as A
from .rules import static_buffers as B
from .rules import static_defaults as DF
from .rules import static_io as IO
from .rules import static_positions as P
from .rules import static_products as X

__all__ = ["Checker", "scan_source", "scan_file", "scan_paths", "python_files", "ScanResult", "DEFAULT_LENGTH"]

DEFAULT_LENGTH = 8192  # the seed's context: bf16 keeps 896 of 8,192 positions

# names that hold integer positions
_POS_NAME = re.compile(r"^(position_ids?|pos_ids?|positions?|pos|cache_positions?|seq_idx|seq_ids|"
                       r"position_ids_expanded|position_ids_expanded_float|positions_ids|token_positions?|"
                       r"context_position|memory_position|relative_position|distances?)$")
# names that hold rotary frequencies (inv_freq, theta) -- not "freqs", which HF uses for angles
_FREQ_NAME = re.compile(r"(inv_freq|^theta$|^freq$|^frequencies$|^inv_freqs$|_inv_freq)")
_SLOPES_NAME = re.compile(r"slopes?$")
_CACHE_METHOD = re.compile(r"cache", re.I)
_ROTARY_NAME = re.compile(r"rotary|rope|alibi|rotate|rotemb", re.I)
# an arange over a feature dimension holds frequency exponents, not positions
_DIM_WORDS = re.compile(r"dim|feat|head|d_model|hidden|channel|embed|^d$", re.I)
# tensors whose dtype is an integer dtype: arange(..., dtype=lengths.dtype) stays exact
_INT_TENSOR = re.compile(r"(^|_)(len|lens|length|lengths|ind|inds|idx|index|indices|ids|id|mask|count|counts|duration)s?$")
_LOW_DTYPES = {"float16", "half", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
               "float8_e5m2fnuz"}
_CLEAN_DTYPES = {"float32", "float", "float64", "double", "int64", "long", "int32", "int", "int16",
                 "int8", "uint8", "complex64", "complex128", "cfloat", "cdouble", "bool"}
_PRESERVING = {"expand", "expand_as", "reshape", "view", "unsqueeze", "squeeze", "transpose", "permute",
               "repeat", "contiguous", "clone", "detach", "flatten", "to_dense", "requires_grad_",
               "cuda", "cpu", "narrow", "roll", "flip", "repeat_interleave", "masked_fill", "clamp",
               "clamp_min", "clamp_max", "abs", "neg", "t", "mT"}
_TRIG = {"cos", "sin", "exp", "polar", "cos_", "sin_", "tan", "sigmoid", "softmax"}
_MATMUL_FUNCS = {"matmul", "mm", "bmm", "mv"}
_ADD_PRODUCTS = {"addr", "baddbmm", "addmm", "addbmm", "addmv"}
_NON_TORCH_ARRAYS = ("np.", "numpy.", "jnp.", "jax.", "mx.", "mlx.", "tf.", "ops.", "keras.")
# decorators that run the function with autocast off (x-transformers' @disable_autocast)
_AUTOCAST_OFF_DECORATOR = re.compile(r"(disable|no|without)_?autocast|autocast_?(off|disabled)", re.I)
_ELEMENTWISE_PRODUCTS = {"outer", "ger", "mul", "multiply"}
# a file or function with none of these words cannot hold a finding: skip its walk (speed)
_TRIGGERS = ("arange", "position", "freq", "autocast", "alibi", "register_buffer", "Buffer(", "cumsum", "theta",
             "polar", "complex")
# buffers named like frequencies (RP121): inv_freq, freq(s), theta, omega, bands, periods ...
_FREQ_BUFFER_NAME = re.compile(r"(inv_freq|^(freqs?|frequencies|thetas?|omegas?|periods|inv_freqs)$|bands$)")
_NOT_FREQ_BUFFER = re.compile(r"cis|cos|sin|cache|emb|pos", re.I)
# functions whose name says they return frequencies: pixel_freq_bands, _compute_inv_freq, ...
_FREQ_FUNC_NAME = re.compile(r"freq|band|theta|omega", re.I)
# calls that turn frequencies into something else (angles, tables): a buffer built with them is not frequencies
_NOT_FREQ_CALLS = {"sin", "cos", "polar", "outer", "einsum", "matmul", "mm", "bmm", "ger", "sin_", "cos_"}
# overrides that run after every cast of the module: buffers they re-register are repaired
_REPAIR_METHODS = {"_apply", "to", "half", "bfloat16", "float", "type"}
# a stop mentioning these is a position count even if it also says "embed" (max_position_embeddings)
_INT_DTYPES = {"int64", "long", "int32", "int", "int16", "int8", "uint8"}
# complex dtypes and the calls that build complex tensors (RP123, RP114)
_COMPLEX_DTYPES = {"complex64", "complex128", "cfloat", "cdouble", "complex32", "chalf"}
_COMPLEX_CALLS = {"polar", "view_as_complex"}
# array constructors whose dtype keyword (or numpy's default) gives the dtype of what they build
_ARRAY_CTORS = {"zeros", "empty", "full", "ones", "arange", "array", "asarray", "tensor", "zeros_like",
                "empty_like", "full_like", "ones_like"}
_FLOAT32_DEFAULTS = {"float32", "float", "float64", "double"}
_INT_POS_ARG = re.compile(r"^(position_ids|pos_ids?|cache_position)$")
_POSITION_WORDS = re.compile(r"position|seq|len|ctx|context|token", re.I)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the line ends of Python's tokenizer (universal newlines)
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.I)

# attributes that hold the model's precision (a torch dtype): gpt-neox `self.precision`, Megatron `params_dtype`
_MODEL_DTYPE_ATTR = re.compile(r"^(precision|dtype|params_dtype|compute_dtype|torch_dtype|model_dtype|_dtype)$")

_SOURCE_RULE = {"buffer": P.POSITIONS_IN_BUFFER_DTYPE, "input": P.POSITIONS_IN_INPUT_DTYPE, "model": P.POSITIONS_IN_INPUT_DTYPE,
                "caller": P.POSITIONS_IN_INPUT_DTYPE, "default": P.POSITIONS_IN_DEFAULT_DTYPE,
                "low": P.POSITIONS_IN_LOW_PRECISION}


@dataclass(frozen=True)
class Val:
    """What an expression holds: kinds (``pos``/``freq``/``angle``) and a low-precision source."""

    kinds: frozenset = frozenset()
    source: str | None = None  # buffer | input | caller | default | low
    what: str = ""  # the dtype's origin, for messages: "`self.inv_freq`", "`x`", "bfloat16"
    reported: bool = False  # a finding already covers this value (do not report it again downstream)
    # findings held back outside rotary code until the value meets frequencies or cos/sin
    pending: tuple = field(default=(), compare=False)
    integer: bool = False  # positions still in an integer dtype (arange without dtype, position_ids)
    buffer: str = ""  # frequencies still in the dtype of this castable buffer of the class (self.<buffer>)
    # an unknown tensor converted to a risky dtype: positions if it meets frequencies in a product
    maybe: tuple = field(default=(), compare=False)
    # a float tensor in torch's default dtype (made without a dtype: arange of a float, int64 / k,
    # linspace): bf16 under Lightning 'bf16-true' (ropelaw.audit.policy.TRAINER_PRECISIONS)
    default: bool = False


_NONE = Val()


@dataclass
class _Dtype:
    source: str | None  # None: clean or not a dtype we know
    what: str = ""
    known: bool = False  # True when we recognised the expression as a dtype (clean or not)


@dataclass
class _Scope:
    names: dict[str, Val] = field(default_factory=dict)
    dtypes: dict[str, _Dtype] = field(default_factory=dict)  # local aliases of dtypes: dtype = x.dtype
    params: set[str] = field(default_factory=set)
    self_aliases: dict[str, str] = field(default_factory=dict)  # inv_freq = self.inv_freq
    alibi: bool = False
    rotary: bool = False  # rotary / ALiBi code: report position casts at once, not only when they reach an angle
    freq_buffers: frozenset = frozenset()  # buffers of the enclosing class holding frequencies
    construction: bool = False  # code that runs only while the module is built (no cast can precede it)
    build_only: bool = False  # a method only __init__ calls: no autocast region wraps it
    repaired: set = field(default_factory=set)  # buffers re-registered in float32 earlier in this function
    # arrays / tensors whose dtype is known from an annotation or their constructor (out: np.ndarray,
    # buf = np.zeros(n, dtype=np.int64)): ``X.dtype`` is that dtype, not an input's
    arrays: dict[str, "_Dtype"] = field(default_factory=dict)


def _dotted(node: ast.AST) -> str:
    """``torch.nn.functional`` for an Attribute chain of Names; "" otherwise."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _const_false(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _kw(call: ast.Call, name: str) -> ast.AST | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def _table_constructor(value: ast.AST | None) -> bool:
    """``torch.empty((L, d), ...)`` / ``torch.zeros(L, d)``: a tensor of two or more dimensions made to be
    filled with a table (cos/sin, angles), not a vector of frequencies."""
    if not isinstance(value, ast.Call) or _leaf(value) not in ("empty", "zeros", "ones", "full", "randn", "rand"):
        return False
    shape = _kw(value, "size") or (value.args[0] if value.args else None)
    if isinstance(shape, (ast.Tuple, ast.List)):
        return len(shape.elts) >= 2
    if isinstance(shape, ast.BinOp) and any(isinstance(x, (ast.Tuple, ast.List)) for x in (shape.left, shape.right)):
        return True  # grid_dims + (encoding_dim,): a shape built from tuples
    return len([a for a in value.args if not isinstance(a, ast.Starred)]) >= 2 and _leaf(value) != "full"


def _float_argument(call: ast.Call) -> bool:
    """An ``arange`` argument that is a float: ``arange(8.0)``, ``arange(float(n))``, ``arange(n * 1.0)``
    (torch then makes the default dtype, not int64)."""
    for a in list(call.args) + [k.value for k in call.keywords if k.arg in ("start", "end", "step")]:
        for n in ast.walk(a):
            if isinstance(n, ast.Constant) and isinstance(n.value, float):
                return True
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "float":
                return True
    return False


def _float_scalar_operand(node: ast.AST, a: "Val", b: "Val") -> bool:
    """The other operand of a product with an integer tensor is a Python float (a float literal, ``math.log``
    / ``math.pi`` in it): int64 * float gives torch's default dtype."""
    if not isinstance(node, ast.BinOp):
        return False
    other = node.right if a.integer else node.left
    for n in ast.walk(other):
        if isinstance(n, ast.Constant) and isinstance(n.value, float):
            return True
        if isinstance(n, ast.Call) and _dotted(n.func) in ("math.log", "math.sqrt", "math.exp", "float"):
            return True
        if _dotted(n) == "math.pi":
            return True
    return False


def _float_tensor_operand(node: ast.AST, a: "Val", b: "Val") -> bool:
    """True when the other operand of an integer true division is visibly a float tensor (a ``.float()``,
    a tensor with an explicit dtype): the quotient then takes that dtype, not the default one."""
    if not isinstance(node, ast.BinOp):
        return False
    other = node.right if a.integer else node.left
    for n in ast.walk(other):
        if isinstance(n, ast.Call) and _leaf(n) in ("float", "double", "tensor", "ones", "zeros", "full") \
                and (_leaf(n) in ("float", "double") or _kw(n, "dtype") is not None):
            return True
    return False


def _product_words(product: str, device: str) -> str:
    """How a lowered product is named in messages: why autocast reaches it."""
    op = policy.PYTHON_PRODUCTS.get(product, product)
    where = "CUDA" if device == "cuda" else "CPU"
    shown = "`@`" if product == "@" else f"`{product}`"
    if op == "einsum" and device == "cuda":
        return (f"{shown} (on CUDA autocast's lower-precision list, {policy.HEADER}, whatever its equation: "
                "an outer-product einsum too)")
    return f"{shown} (on {where} autocast's lower-precision list, {policy.HEADER if device == 'cuda' else policy.SOURCE})"


def _einsum_contracts(call: ast.Call) -> bool:
    """True when an ``einsum`` equation sums an index (evaluated with bmm, autocast-eligible)."""
    if not call.args or not isinstance(call.args[0], ast.Constant) or not isinstance(call.args[0].value, str):
        return True  # unknown equation: assume a contraction
    eq = call.args[0].value.replace(" ", "")
    if "->" not in eq:
        ins = [c for c in eq if c.isalpha()]
        return any(ins.count(c) > 1 for c in set(ins))
    lhs, rhs = eq.split("->", 1)
    return any(c.isalpha() and c not in rhs for c in lhs)


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


def _self_method_calls(fn: ast.AST, lines: Sequence[str]) -> set[str]:
    """Names ``M`` of the calls ``self.M(...)`` in a function body (read from its source text without
    comments: much faster than walking the tree; a mention in a string only adds an edge)."""
    return set(_SELF_CALL.findall("\n".join(_code_part(x) for x in lines[fn.lineno - 1:fn.end_lineno])))


_ASSIGNMENTS: "dict[int, tuple[ast.AST, dict[str, list[ast.Assign]]]]" = {}  # id(fn) -> (fn, index)


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


def _last_assignment(name: str, fn: ast.AST | None, before: int) -> ast.AST | None:
    """The value last assigned to the local ``name`` in ``fn`` before line ``before`` (None if none)."""
    if fn is None:
        return None
    best = None
    for n in _assignments(fn).get(name, ()):
        if n.lineno < before and (best is None or n.lineno > best.lineno):
            best = n
    return best.value if best is not None else None


def _resolved(value: ast.AST | None, fn: ast.AST | None) -> ast.AST | None:
    """A registered value, with a local name replaced by its last assignment (one level)."""
    if isinstance(value, ast.Name):
        return _last_assignment(value.id, fn, getattr(value, "lineno", 1 << 30)) or value
    return value


def _visibly_low(value: ast.AST | None) -> bool:
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
                    and (a.attr == "dtype" or _dotted(a).startswith("torch."))]
        for d in dts:
            if isinstance(d, ast.Attribute):  # x.dtype (another tensor's: bf16 in a bf16 model), torch.X
                if d.attr == "dtype" or d.attr not in _CLEAN_DTYPES:
                    return True
            elif isinstance(d, ast.Constant) and isinstance(d.value, str):
                if d.value.replace("torch.", "") not in _CLEAN_DTYPES:
                    return True
            elif isinstance(d, ast.Name) and d.id in _LOW_DTYPES:
                return True  # a `dtype` variable or call: unknown, not visibly low
    return False


def _explicit_float32(value: ast.AST | None, fn: ast.AST | None) -> bool:
    """True when a registered value is visibly float32: it passes through ``.float()``,
    ``torch.float32`` / ``torch.float`` or ``dtype="float32"`` and through no low-precision cast
    (a local name is followed to its last assignment in the same function)."""
    value = _resolved(value, fn)
    if value is None or _visibly_low(value):
        return False
    for n in ast.walk(value):
        if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "float"
                and not n.args):
            return True
        if isinstance(n, ast.Attribute) and _dotted(n) in ("torch.float32", "torch.float"):
            return True
        if isinstance(n, ast.Constant) and n.value == "float32":
            return True
    return False


def _frequency_exponent(node: ast.AST, fn: ast.AST | None) -> bool:
    """An exponent ``arange(...) / dim``, ``-(...)`` or ``linspace(...)`` (a local name is followed
    one level): fractional or negative powers; ``2 ** arange(bits)`` (integer powers) is not one."""
    node = _resolved(node, fn) if isinstance(node, ast.Name) else node
    if node is None:
        return False
    leaves = {(c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", ""))
              for c in ast.walk(node) if isinstance(c, ast.Call)}
    if "linspace" in leaves:
        return True
    return "arange" in leaves and any(isinstance(n, (ast.BinOp, ast.UnaryOp)) and isinstance(n.op, (ast.Div, ast.USub))
                                      for n in ast.walk(node))


def _frequency_expression(node: ast.AST, fn: ast.AST | None = None) -> bool:
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
    if leaves & _NOT_FREQ_CALLS:
        return False
    if "logspace" in leaves:
        return True
    for n in ast.walk(node):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow):
            if _frequency_exponent(n.right, fn) or (_frequency_exponent(n.left, fn) and "linspace" in leaves):
                return True
        if isinstance(n, ast.Call) and (getattr(n.func, "attr", None) or getattr(n.func, "id", "")) == "exp":
            inner = {(c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", ""))
                     for c in ast.walk(n) if isinstance(c, ast.Call)}
            if "arange" in inner and "log" in inner:
                return True
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult) and "linspace" in leaves:
            if any(isinstance(x, ast.Attribute) and x.attr == "pi" or isinstance(x, ast.Name) and x.id == "pi"
                   for x in (n.left, n.right)):
                return True
    return False


def _leaf(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")


def _complex_construction(node: ast.AST | None) -> str:
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
            leaf = _leaf(n)
            if leaf in ("view_as_real", "abs", "angle", "is_complex"):
                continue
            if leaf in _COMPLEX_CALLS or _dotted(n.func) == "torch.complex":
                return f"`torch.{leaf}`"
        elif isinstance(n, ast.Attribute):
            if n.attr in ("real", "imag"):
                continue
            if n.attr in _COMPLEX_DTYPES and _dotted(n).startswith("torch."):
                return f"`{_dotted(n)}`"
        elif isinstance(n, ast.Constant) and isinstance(n.value, complex):
            return "a complex literal"
        todo.extend(ast.iter_child_nodes(n))
    return ""


def _annotation_dtype(ann: ast.AST | None, name: str) -> "_Dtype | None":
    """dtype of a parameter from its annotation: numpy arrays (``np.ndarray``, ``npt.NDArray[np.int64]``)
    and integer tensors (``torch.LongTensor``); None when the annotation says nothing about it."""
    if ann is None:
        return None
    text = ast.unparse(ann) if hasattr(ast, "unparse") else ""
    if re.search(r"float16|half|bfloat16", text):
        return _Dtype("low", "float16" if "bfloat16" not in text else "bfloat16", True)
    if re.search(r"\b(ndarray|NDArray)\b", text):
        return _Dtype(None, f"`{name}` (a numpy array)", True)
    if re.search(r"\b(LongTensor|IntTensor)\b", text) or re.search(r"\bnp\.u?int\d*\b", text):
        return _Dtype(None, f"`{name}` (an integer tensor)", True)
    return None


def _dtype_checked(test: ast.AST) -> str | None:
    """X of a comparison ``self.X.dtype <op> ...`` (either side), the only name for which
    :func:`_float32_branch` can be other than None; None for any other test."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    for side in (test.left, test.comparators[0]):
        dotted = _dotted(side)
        if dotted.startswith("self.") and dotted.endswith(".dtype") and dotted.count(".") == 2:
            return dotted[5:-6]
    return None


def _float32_branch(test: ast.AST, name: str) -> str | None:
    """For ``if self.X.dtype != torch.float32`` the branch where X is float32 ("else"); for ``==``
    ("body"); None when the test is not such a check."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right = test.left, test.comparators[0]
    if _dotted(right) == f"self.{name}.dtype":
        left, right = right, left
    if _dotted(left) != f"self.{name}.dtype" or _dotted(right) not in ("torch.float32", "torch.float"):
        return None
    if isinstance(test.ops[0], (ast.NotEq, ast.IsNot)):
        return "else"
    if isinstance(test.ops[0], (ast.Eq, ast.Is)):
        return "body"
    return None


def _format_of(source: str | None, what: str) -> str:
    """The format a low-precision source stands for in messages (bf16 unless named)."""
    if source == "low":
        return {"float16": "fp16", "half": "fp16", "float8_e4m3fn": "fp8_e4m3", "float8_e5m2": "fp8_e5m2"}.get(what, "bf16")
    return "bf16"


def _phrase(source: str | None, what: str) -> str:
    if source == "model":
        return f"in the model's precision {what} (bf16 when the model runs in bf16)"
    return f"in {what}" if source == "low" else f"in the dtype of {what}"


class Checker:
    """Walks one module and appends findings to :attr:`findings` (pyflakes' role split)."""

    def __init__(self, tree: ast.Module, path: str = "-", source: str = "", *, length: int = DEFAULT_LENGTH):
        self.path = path
        self.length = length
        self.source = source
        self.lines = _LINE_BREAK.split(source)  # Python's own lines (str.splitlines also splits at \f,
        # \x1c-\x1e, NEL and U+2028, which shifted the `# noqa` lookup of every later line by one)
        self.findings: list[Finding] = []
        self._seen: set[tuple[str, int, int]] = set()
        self._autocast: list[str] = []  # stack of "on" / "off" / "unknown"
        self._class: ast.ClassDef | None = None
        self._class_buffers: frozenset = frozenset()
        # self.X assigned a plain tensor and never registered (computed on first use: None until then)
        self._plain_attrs: frozenset | None = frozenset()
        self._repaired: frozenset = frozenset()  # buffers an _apply/to override restores after every cast
        self._float32_at_init: frozenset = frozenset()  # buffers registered in explicit float32 at construction
        self._classes: dict[str, ast.ClassDef] = {}
        self._module_funcs: dict[str, ast.AST] = {}
        self._graph: tuple[frozenset, frozenset] | None = None
        self._fn: ast.AST | None = None  # the function being walked (to follow local names)
        self._complex_args: set[int] = set()  # ids of calls inside the arguments of a complex constructor
        self._param_nodes: set = set()  # (node, value) of parameter registrations (RP123 only)
        self._notes: dict[str, str] = {}
        self._angle_attrs: dict[tuple[str, str], bool] = {}  # (class, attribute) assigned float32 angles
        self._read_later: dict[str, frozenset] = {}  # class -> self.X read outside construction-only code
        self._build_only: frozenset | None = None  # module functions only construction calls
        self.incomplete = False  # True when the walk stopped early: scan_source reports RE004
        try:
            self._module(tree)
        except RecursionError:
            self.incomplete = True  # an absurdly deep expression: never a silent all-clear

    # ------------------------------------------------------------------ reporting
    def _note(self, dtype: str) -> str:
        if dtype not in self._notes:
            self._notes[dtype] = P.collision_note(dtype, self.length)
        return self._notes[dtype]

    def report(self, rule: Rule, node: ast.AST, message: str, fix: str | None = None, **data) -> None:
        line, col = getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1
        key = (rule.code, line, col)
        if key in self._seen:
            return
        self._seen.add(key)
        self.findings.append(Finding.of(rule, message, path=self.path, line=line, column=col, fix=fix, **data))

    def _relevant(self, node: ast.AST) -> bool:
        """Cheap text test: does the node's source mention any trigger word?"""
        start, end = getattr(node, "lineno", 1), getattr(node, "end_lineno", None) or len(self.lines)
        text = "\n".join(self.lines[start - 1:end])
        return any(w in text for w in _TRIGGERS)

    # ------------------------------------------------------------------ structure
    def _module(self, tree: ast.Module) -> None:
        self._tree = tree
        self._calls: dict[str, list[ast.Call]] | None = None  # by callee name, built when first needed
        self._classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        self._module_funcs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self._graph: tuple[frozenset, frozenset] | None = None
        scope = _Scope()
        self._block(tree.body, scope)

    # ------------------------------------------------------------------ construction time
    def _call_graph(self) -> tuple[frozenset, frozenset]:
        """(methods that run at construction, methods that run only at construction), by name.

        Construction: ``__init__`` and the methods it calls as ``self.m(...)``, transitively (by
        name, over every class in the file, so a subclass's override counts). Later: every other
        method (``forward``, ``_apply``, ...), every public method (a user may call it after a
        cast) and what they call. Construction-only = construction - later. No cast can have
        happened while construction-only code runs: ``model.to(dtype)`` needs a built module.
        """
        if self._graph is None:
            calls: dict[str, set[str]] = {}
            for cls in self._classes.values():
                for m in cls.body:
                    if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        calls.setdefault(m.name, set()).update(_self_method_calls(m, self.lines))

            def closure(start: Iterable[str]) -> set[str]:
                seen, todo = set(), list(start)
                while todo:
                    m = todo.pop()
                    if m not in seen:
                        seen.add(m)
                        todo.extend(calls.get(m, ()))
                return seen

            construction = closure(["__init__"])
            entries = [m for m in calls if m != "__init__" and (m not in construction or not m.startswith("_"))]
            later = closure(entries)
            self._graph = (frozenset(construction), frozenset(construction - later))
        return self._graph

    def _class_chain(self, cls: ast.ClassDef) -> list[ast.ClassDef]:
        """The class and its base classes defined in the same file (nearest first)."""
        out, todo = [], [cls]
        while todo:
            c = todo.pop(0)
            if c in out or len(out) > 20:
                continue
            out.append(c)
            todo.extend(self._classes[b.id] for b in c.bases if isinstance(b, ast.Name) and b.id in self._classes)
        return out

    def _registrations(self, cls: ast.ClassDef) -> list[tuple[str, ast.AST, ast.AST | None, ast.AST]]:
        """(buffer name, registering node, value, method) for each buffer the class's methods register:
        ``self.register_buffer("X", value)`` and ``self.X = nn.Buffer(value)`` (PyTorch >= 2.5)."""
        out = []
        for meth in cls.body:
            if not isinstance(meth, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(meth):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "register_buffer" and node.args
                        and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                    value = node.args[1] if len(node.args) > 1 else _kw(node, "tensor")
                    out.append((node.args[0].value, node, value, meth))
                elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                      and _dotted(node.value.func).split(".")[-1] == "Buffer"):
                    value = node.value.args[0] if node.value.args else _kw(node.value, "data")
                    for t in node.targets:
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                            out.append((t.attr, node, value, meth))
        return out

    def _class_def(self, node: ast.ClassDef) -> None:
        if not self._relevant(node):
            return
        saved = (self._class, self._class_buffers, self._plain_attrs, self._repaired, self._float32_at_init)
        self._class = node
        self._plain_attrs = None  # computed by _self_dtype when first needed (speed)
        self._class_buffers = self._buffers_of(node)
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._function(stmt, _Scope(), method=True)
            elif isinstance(stmt, ast.ClassDef):
                self._class_def(stmt)
        (self._class, self._class_buffers, self._plain_attrs, self._repaired, self._float32_at_init) = saved

    def _plain_attrs_of(self, cls: ast.ClassDef) -> frozenset:
        """Attributes ``self.X = ...`` of the class that are neither buffers nor parameters.

        ``Module.to(dtype)`` leaves them alone, so their dtype does not follow a cast.
        """
        assigned, registered = set(), set()
        for node in ast.walk(cls):
            if isinstance(node, ast.Assign):
                value = node.value
                is_param = isinstance(value, ast.Call) and _dotted(value.func).split(".")[-1] in (
                    "Parameter", "Linear", "Embedding", "Buffer")
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        (registered if is_param else assigned).add(t.attr)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("register_buffer", "register_parameter") and node.args
                  and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                registered.add(node.args[0].value)
        return frozenset(assigned - registered)

    def _self_dtype(self, dotted: str, scope: _Scope | None = None) -> _Dtype:
        """dtype of ``self.X...``: follows a model cast unless X is a plain (unregistered) attribute,
        a buffer the class restores after every cast (``_apply``/``to`` override), a buffer this
        function re-registered in float32 above, or a float32 buffer read at construction time."""
        parts = dotted.split(".")
        if len(parts) == 2:
            x = parts[1]
            if self._plain_attrs is None:
                self._plain_attrs = self._plain_attrs_of(self._class) if self._class is not None else frozenset()
            if (x in self._plain_attrs or x in self._repaired
                    or (scope is not None and (x in scope.repaired
                                               or (scope.construction and x in self._float32_at_init)))):
                return _Dtype(None, f"`{dotted}`", True)  # Module.to does not cast it (or nothing cast it yet)
        return _Dtype("buffer", f"`{dotted}`", True)

    def _is_frequency_buffer(self, name: str, value: ast.AST | None, meth: ast.AST) -> bool:
        """A buffer holds frequencies when named so (inv_freq, freqs, theta, omega, bands, periods;
        not cis/cos/sin/cache/emb/pos) or when its value (a local name followed to its assignment,
        a call followed into a function of the same file) builds them (:func:`_frequency_expression`)."""
        if "cis" in name or _NOT_FREQ_BUFFER.search(name) and "freq" not in name:
            return False
        if _table_constructor(_resolved(value, meth)):
            return False  # an (L, d) or (L, d/2, 2) table filled later (fairseq2's float32 sin/cos `freqs`)
        if _FREQ_BUFFER_NAME.search(name):
            return True
        value = _resolved(value, meth)
        if value is None:
            return False
        if isinstance(value, ast.Call):
            fname = _dotted(value.func).split(".")[-1]
            if _FREQ_FUNC_NAME.search(fname) and not _NOT_FREQ_BUFFER.search(fname):
                return True
            target = self._module_funcs.get(fname)
            if target is not None:
                return any(_frequency_expression(n.value, target) for n in ast.walk(target)
                           if isinstance(n, (ast.Return, ast.Assign)) and n.value is not None)
        return _frequency_expression(value, meth)

    def _buffers_of(self, cls: ast.ClassDef) -> frozenset:
        """Names of frequency buffers the class registers; reports RP121 where a cast can round them
        and RP123 where a cast makes a complex buffer or parameter real.

        Reported: a registration in code that runs at construction (``__init__`` and what it calls,
        see :meth:`_call_graph`), since ``model.to(bfloat16)`` comes later and rounds it. Not
        reported: ``register_buffer("X", None)`` (nothing to round yet); a registration in code
        that runs later (``forward`` helpers, dynamic-scaling updates) whose value is not visibly
        low precision: it replaces whatever a cast left with a freshly computed tensor, a repair;
        and every buffer the class repairs (:meth:`_repairs`): re-registered in an ``_apply`` /
        ``to`` override (timm), read only behind a float32 dtype check (flash-attn), or lazily
        re-initialised in float32 from ``forward`` (nanotron).
        """
        self._repaired, self._float32_at_init = frozenset(), frozenset()
        text = "\n".join(self.lines[cls.lineno - 1:cls.end_lineno])
        if "register_buffer" not in text and "Buffer(" not in text and "Parameter" not in text:
            return frozenset()
        construction, _ = self._call_graph()
        chain = self._class_chain(cls)
        has_init = any(isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == "__init__"
                       for c in chain for m in c.body)
        regs = [(c, *r) for c in chain for r in self._registrations(c)]
        repaired = self._repairs(cls, chain, regs, construction)
        self._repaired = frozenset(repaired)
        found = set()
        at_init: dict[str, bool] = {}
        created_in_init = {name for _, name, _, value, meth in regs if meth.name == "__init__"
                           and not (isinstance(value, ast.Constant) and value.value is None)}
        for owner, name, node, value, meth in regs + [(c, *r) for c in chain for r in self._parameters(c)]:
            if isinstance(value, ast.Constant) and value.value is None:
                continue  # register_buffer("inv_freq", None): filled lazily, nothing to round here
            runs_at_construction = (meth.name in construction or not has_init) and meth.name not in _REPAIR_METHODS
            how = self._complex_value(value, meth)
            if how:
                if runs_at_construction and name not in repaired and owner is cls:
                    if isinstance(node, ast.Assign):
                        kind = "parameter" if "Parameter" in _dotted(node.value.func) else "buffer"
                    else:
                        kind = "parameter" if _leaf(node) == "register_parameter" else "buffer"
                    self.report(B.COMPLEX_BUFFER_CAST_TO_REAL, node,
                                f"`{name}` is a complex {kind} (built with {how}): `model.to(torch.bfloat16)` keeps only "
                                f"its real part, cos(m*theta), and drops the sine, so the encoding no longer rotates "
                                f"(`.bfloat16()` / `.half()` leave it complex)", buffer=name)
                continue
            if (node, value) in self._param_nodes:
                continue  # parameters: only their complex case is a rule here
            if not self._is_frequency_buffer(name, value, meth):
                continue
            found.add(name)
            if runs_at_construction:
                at_init[name] = at_init.get(name, True) and _explicit_float32(value, meth)
            if name in repaired or owner is not cls:
                continue  # repaired after every cast; or registered by an in-file base (reported there)
            low = _visibly_low(value)
            if low:
                self.report(B.INV_FREQ_FLOAT_BUFFER, node,
                            f"`{name}` is registered with a value converted to a low-precision dtype: every "
                            f"frequency is rounded (bf16: by up to 2^-8 relative), even if the product runs in float32",
                            buffer=name)
                continue
            if not runs_at_construction or (meth.name != "__init__" and name in created_in_init):
                continue  # re-registered later (or again, after __init__ created it) in float32: a repair
            if self._has_later_methods(cls) and name not in self._read_after_construction(cls):
                continue  # forward and the methods after construction never read it (gpt-neox's inv_freq)
            self.report(B.INV_FREQ_FLOAT_BUFFER, node,
                        f"`{name}` is a float buffer: `model.to(torch.bfloat16)` rounds every frequency by up to "
                        f"2^-8 relative (0.39%); a frequency in [0.5, 1) moves by up to 2^-9, "
                        f"{(self.length - 1) / 512:.0f} rad of phase at position {self.length - 1:,}, even if the "
                        f"product runs in float32",
                        buffer=name)
        self._float32_at_init = frozenset(n for n, ok in at_init.items() if ok)
        return frozenset(found)

    def _has_later_methods(self, owner: ast.ClassDef) -> bool:
        """The class family defines code that runs after construction (``forward``, a public method): only
        then can "nothing reads the buffer" be seen; a class of ``__init__`` alone is used from elsewhere."""
        _, construction_only = self._call_graph()
        family = [c for c in self._classes.values() if owner in self._class_chain(c)] + self._class_chain(owner)
        return any(isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name not in construction_only
                   and m.name != "__init__" for c in family for m in c.body)

    def _read_after_construction(self, owner: ast.ClassDef) -> frozenset:
        """Attributes ``X`` whose values a method of ``owner``'s family (its in-file bases and subclasses)
        reads as ``self.X`` outside construction-only code (``self.X.dtype`` / ``.device`` / ``.shape`` are
        metadata, not values). A buffer nobody reads after ``__init__`` cannot carry a cast into the encoding."""
        if owner.name not in self._read_later:
            _, construction_only = self._call_graph()
            family = [c for c in self._classes.values() if owner in self._class_chain(c)] + self._class_chain(owner)
            reads: set[str] = set()
            for cls in family:
                for m in cls.body:
                    if not isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) or m.name in construction_only:
                        continue
                    parents = {id(c): p for p in ast.walk(m) for c in ast.iter_child_nodes(p)}
                    for node in ast.walk(m):
                        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                                and node.value.id == "self" and isinstance(node.ctx, ast.Load)):
                            parent = parents.get(id(node))
                            if isinstance(parent, ast.Attribute) and parent.attr in ("dtype", "device", "shape", "ndim"):
                                continue
                            reads.add(node.attr)
            self._read_later[owner.name] = frozenset(reads)
        return self._read_later[owner.name]

    def _parameters(self, cls: ast.ClassDef) -> list[tuple[str, ast.AST, ast.AST | None, ast.AST]]:
        """(name, node, value, method) for ``self.X = nn.Parameter(v)`` and ``register_parameter("X", ...)``."""
        out = []
        for meth in cls.body:
            if not isinstance(meth, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(meth):
                if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                        and _dotted(node.value.func).split(".")[-1] == "Parameter"):
                    value = node.value.args[0] if node.value.args else _kw(node.value, "data")
                    for t in node.targets:
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                            out.append((t.attr, node, value, meth))
                elif (isinstance(node, ast.Call) and _leaf(node) == "register_parameter" and len(node.args) >= 2
                      and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                    out.append((node.args[0].value, node, node.args[1], meth))
        self._param_nodes.update((n, v) for _, n, v, _ in out)
        return out

    def _complex_value(self, value: ast.AST | None, fn: ast.AST | None, depth: int = 0) -> str:
        """How a registered value builds complex numbers (see :func:`_complex_construction`), following a
        local name to its assignment, a function of the file (``precompute_freqs_cis(...)``) or a method
        ``self.m()`` implemented by any class of the file (a subclass's override counts: torchtitan's
        ``RoPE.__init__`` registers ``self._precompute_cache()``, which ``ComplexRoPE`` implements with
        ``torch.polar``) into its return values; "" when it does not."""
        if value is None or depth > 3:
            return ""
        how = _complex_construction(value)
        if how:
            return how
        if isinstance(value, ast.Name):
            return self._complex_value(_last_assignment(value.id, fn, getattr(value, "lineno", 1 << 30)), fn, depth + 1)
        if isinstance(value, ast.Call):
            leaf = _leaf(value)
            if leaf in ("view_as_real", "abs", "angle", "float", "to", "type"):
                return ""
            targets = []
            if isinstance(value.func, ast.Name) and leaf in self._module_funcs:
                targets.append((self._module_funcs[leaf], leaf))
            elif isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name) \
                    and value.func.value.id == "self":
                targets += [(m, f"{c.name}.{leaf}") for c in self._classes.values() for m in c.body
                            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == leaf]
            for target, label in targets:
                for n in ast.walk(target):
                    if isinstance(n, ast.Return) and n.value is not None:
                        how = self._complex_value(n.value, target, depth + 1)
                        if how:
                            return f"{how} in `{label}`" if " in `" not in how else how
        return ""

    def _repairs(self, cls: ast.ClassDef, chain: list[ast.ClassDef], regs: list, construction: frozenset) -> set[str]:
        """Buffers the class restores to float32 whenever it uses them after a cast.

        1. re-registered or reassigned in an ``_apply`` / ``to`` / ``half`` ... override (runs after
           every cast; timm 1.0), with a value not taken from the cast buffer itself;
        2. read, outside construction, only where a dtype check guarantees float32: in the ``else``
           of ``if self.X.dtype != torch.float32:`` (whose body recomputes), or the body of ``if
           self.X.dtype == torch.float32:`` (flash-attn 2.8.3's ``_update_cos_sin_cache``);
        3. lazily re-initialised: a method that ``forward`` calls assigns or re-registers ``self.X``
           in explicit float32, from a fresh computation (not from ``self.X``), unconditionally at its
           top level (after early returns) (nanotron 0.4's ``init_rotary_embeddings``). A cast made
           after the first forward is not seen (the re-initialisation ran before it).
        """
        methods = {m.name: m for c in reversed(chain) for m in c.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}

        def reach(start: Iterable[str]) -> set[str]:
            seen, todo = set(), list(start)
            while todo:
                m = todo.pop()
                if m in seen or m not in methods:
                    continue
                seen.add(m)
                todo.extend(_self_method_calls(methods[m], self.lines))
            return seen

        def fresh(value: ast.AST | None, name: str) -> bool:
            """Not visibly low precision and not computed from the (cast) buffer's values (its
            ``.device`` / ``.dtype`` may be read)."""
            if value is None or _visibly_low(value):
                return False
            meta = {id(n.value) for n in ast.walk(value) if isinstance(n, ast.Attribute)
                    and n.attr in ("device", "dtype", "shape", "ndim")}
            return not any(isinstance(n, ast.Attribute) and _dotted(n) == f"self.{name}" and id(n) not in meta
                           for n in ast.walk(value))

        repaired: set[str] = set()
        after_cast = reach(m for m in methods if m in _REPAIR_METHODS)
        if after_cast:
            repaired |= {name for _, name, _, value, meth in regs if meth.name in after_cast and fresh(value, name)}
            # self.X = <tensor> on a registered buffer replaces the buffer too (Module.__setattr__)
            repaired |= {t.attr for m in after_cast for n in ast.walk(methods[m]) if isinstance(n, ast.Assign)
                         for t in n.targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                         and t.value.id == "self" and fresh(n.value, t.attr)}
        names = {name for _, name, _, _, _ in regs}
        # 3. lazy re-initialisation from forward
        for m in reach(["forward"]) if "forward" in methods else ():
            if m == "__init__":
                continue
            for stmt in methods[m].body:
                if isinstance(stmt, ast.Assign):
                    for t in stmt.targets:
                        if (isinstance(t, ast.Attribute) and _dotted(t) == f"self.{t.attr}" and t.attr in names
                                and fresh(stmt.value, t.attr) and _explicit_float32(stmt.value, methods[m])):
                            repaired.add(t.attr)
                elif (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                      and _leaf(stmt.value) == "register_buffer" and len(stmt.value.args) >= 2
                      and isinstance(stmt.value.args[0], ast.Constant) and stmt.value.args[0].value in names
                      and fresh(stmt.value.args[1], stmt.value.args[0].value)
                      and _explicit_float32(stmt.value.args[1], methods[m])):
                    repaired.add(stmt.value.args[0].value)
        # 2. reads only behind a float32 dtype check
        later = reach(e for e in methods if e != "__init__" and (e not in construction or not e.startswith("_")))
        pending = names - repaired
        # one walk per method for every buffer name at once (a walk per name and method was
        # quadratic: 1,000 buffers read in forward took minutes)
        guarded_reads: dict[str, set] = {name: set() for name in pending}
        reads: dict[str, set] = {name: set() for name in pending}
        for mname, m in (methods.items() if pending else ()):
            if mname in construction and mname not in later:
                continue  # construction-only: no cast yet
            nodes = list(ast.walk(m))
            parents = {id(c): p for p in nodes for c in ast.iter_child_nodes(p)}
            for node in nodes:
                if isinstance(node, ast.If):
                    name = _dtype_checked(node.test)
                    branch = _float32_branch(node.test, name) if name in pending else None
                    if branch is not None:
                        for stmt in (node.orelse if branch == "else" else node.body):
                            guarded_reads[name].update(id(n) for n in ast.walk(stmt))
                        guarded_reads[name].update(id(n) for n in ast.walk(node.test))
                elif isinstance(node, ast.Attribute) and node.attr in pending \
                        and _dotted(node) == f"self.{node.attr}" and isinstance(node.ctx, ast.Load):
                    parent = parents.get(id(node))
                    if isinstance(parent, ast.Attribute) and parent.attr in ("dtype", "device", "shape", "ndim"):
                        continue  # metadata, not the values
                    reads[node.attr].add(id(node))
        repaired |= {name for name in pending if reads[name] and reads[name] <= guarded_reads[name]}
        return repaired

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: _Scope, method: bool = False) -> None:
        # a method of a class with a frequency buffer may rebuild a cache (RP122) without a trigger word
        if not self._class_buffers and not self._relevant(node):
            return
        inner = _Scope()
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
        defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if a is not None:
                inner.params.add(a.arg)
                ann = _annotation_dtype(a.annotation, a.arg)
                if ann is not None:
                    inner.arrays[a.arg] = ann
                if a.arg == "dtype" or a.arg.endswith("_dtype"):
                    if self._float32_default(node, a.arg, defaults.get(a.arg)):
                        inner.dtypes[a.arg] = _Dtype(None, f"the `{a.arg}` argument (float32 by default; no "
                                                           f"call in this file passes another dtype)", True)
                    elif self._integer_from_callers(node, a.arg):
                        # every caller passes an integer dtype (lit-llama: dtype=idx.dtype of int64 token ids)
                        inner.dtypes[a.arg] = _Dtype(None, "int64", True)
                    else:
                        inner.dtypes[a.arg] = _Dtype("caller", f"the `{a.arg}` argument", True)
                elif _POS_NAME.match(a.arg):
                    # position_ids / cache_position arguments are integer tensors by convention (LongTensor)
                    inner.names[a.arg] = Val(frozenset({"pos"}), integer=bool(_INT_POS_ARG.match(a.arg)))
                elif _FREQ_NAME.search(a.arg):
                    inner.names[a.arg] = Val(frozenset({"freq"}))
        cls_name = self._class.name if self._class is not None else ""
        inner.alibi = scope.alibi or "alibi" in node.name.lower() or "alibi" in cls_name.lower()
        inner.rotary = (scope.rotary or inner.alibi or bool(self._class_buffers)
                        or bool(_ROTARY_NAME.search(node.name) or _ROTARY_NAME.search(cls_name))
                        or "inv_freq" in "\n".join(self.lines[node.lineno - 1:node.end_lineno]))
        inner.freq_buffers = self._class_buffers
        inner.construction = method and node.name in self._call_graph()[1] if self._class_buffers else False
        # built before any autocast region can wrap it (autocast wraps forward): no RP112/RP113 there
        inner.build_only = bool(method and self._class is not None and node.name in self._call_graph()[1]) or (
            not method and node.name in self._build_only_functions())
        saved, saved_fn = self._autocast, self._fn
        self._autocast = []  # a function body is not lexically inside the caller's `with`
        if any(self._disables_autocast(d) for d in node.decorator_list):
            self._autocast = ["off"]  # @autocast("cuda", enabled=False), @disable_autocast
        self._fn = node
        self._block(node.body, inner)
        self._autocast, self._fn = saved, saved_fn

    # ------------------------------------------------------------------ callers
    def _calls_to(self, name: str) -> list[ast.Call]:
        """Every call ``name(...)`` / ``obj.name(...)`` in the file (index built once)."""
        if self._calls is None:
            calls: dict[str, list[ast.Call]] = {}
            for n in ast.walk(self._tree):
                if isinstance(n, ast.Call):
                    leaf = _leaf(n)
                    if leaf:
                        calls.setdefault(leaf, []).append(n)
            self._calls = calls
        return self._calls.get(name, [])

    def _float32_default(self, fn: ast.AST, param: str, default: ast.AST | None) -> bool:
        """A ``dtype`` parameter that defaults to float32/float64 and that no call in this file fills
        with anything else (Megatron's ``compute_rope_params(..., dtype=torch.float32)``).

        A call passes a risky dtype when its argument for ``param`` (by keyword, or by position; a
        method called as ``obj.m(...)`` does not pass ``self``) is not visibly float32/float64, or
        when it passes ``*args`` / ``**kwargs`` we cannot match. Callers in other files are not seen.
        """
        if default is None:
            return False
        d = self._dtype(default, _Scope())
        if d.source is not None or not d.known or d.what not in _FLOAT32_DEFAULTS:
            return False
        names = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        method = bool(names) and names[0] in ("self", "cls")
        for call in self._calls_to(fn.name):
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return False
            arg = _kw(call, param)
            if arg is None and param in names:
                i = names.index(param) - (1 if method and isinstance(call.func, ast.Attribute) else 0)
                arg = call.args[i] if 0 <= i < len(call.args) else None
            if arg is None:
                continue
            d = self._dtype(arg, _Scope())
            if d.source is not None or not d.known or d.what not in _FLOAT32_DEFAULTS:
                return False
        return True

    def _disables_autocast(self, dec: ast.AST) -> bool:
        """A decorator that runs the function with autocast off: ``autocast(..., enabled=False)`` called as a
        decorator, a name like ``disable_autocast``, or a function of this file whose body enters
        ``autocast(..., enabled=False)`` (x-transformers 2.31's ``disable_autocast``)."""
        if isinstance(dec, ast.Call):
            return self._autocast_state(dec) == "off"
        name = _dotted(dec).split(".")[-1]
        if _AUTOCAST_OFF_DECORATOR.search(name):
            return True
        target = self._module_funcs.get(name)
        return target is not None and any(
            isinstance(n, ast.withitem) and self._autocast_state(n.context_expr) == "off" for n in ast.walk(target))

    def _build_only_functions(self) -> frozenset:
        """Module-level functions called only from construction-only methods (``__init__`` and what only it
        calls): transformers' GPT-J ``create_sinusoidal_positions``. No autocast region wraps them."""
        if self._build_only is None:
            _, construction_only = self._call_graph()
            at_build: set[str] = set()
            elsewhere: set[str] = set()
            methods = {id(m) for c in self._classes.values() for m in c.body
                       if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
            for c in self._classes.values():
                for m in c.body:
                    if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        names = {_leaf(n) for n in ast.walk(m) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
                        (at_build if m.name in construction_only else elsewhere).update(names)
            for stmt in self._tree.body:  # module-level code and functions: not construction
                if id(stmt) in methods or isinstance(stmt, ast.ClassDef):
                    continue
                elsewhere.update(_leaf(n) for n in ast.walk(stmt) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
            self._build_only = frozenset(at_build - elsewhere)
        return self._build_only

    def _integer_from_callers(self, fn: ast.AST, param: str) -> bool:
        """Every call of ``fn`` in this file passes an integer dtype for ``param``: ``idx.dtype`` of a tensor
        named like integers (ids, idx, positions...), ``torch.int64`` / ``torch.long``. Needs one call at least;
        a call that leaves it out, or passes ``*args`` / ``**kwargs``, makes it unknown."""
        names = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        method = bool(names) and names[0] in ("self", "cls")
        # a method's callers write obj.m(...), a module function's f(...): `self.build_rope_cache(idx)` is
        # another function than lit-llama's module-level build_rope_cache(seq_len, ..., dtype=idx.dtype)
        calls = [c for c in self._calls_to(fn.name) if isinstance(c.func, ast.Attribute) == method]
        if not calls:
            return False
        for call in calls:
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return False
            arg = _kw(call, param)
            if arg is None and param in names:
                i = names.index(param) - (1 if method and isinstance(call.func, ast.Attribute) else 0)
                arg = call.args[i] if 0 <= i < len(call.args) else None
            if arg is None:
                return False
            if isinstance(arg, ast.Attribute) and arg.attr == "dtype" and isinstance(arg.value, ast.Name) \
                    and (_INT_TENSOR.search(arg.value.id) or _POS_NAME.match(arg.value.id)):
                continue
            if isinstance(arg, ast.Attribute) and _dotted(arg).startswith("torch.") and arg.attr in _INT_DTYPES:
                continue
            return False
        return True

    def _block(self, body: Sequence[ast.stmt], scope: _Scope) -> None:
        for stmt in body:
            self._stmt(stmt, scope)

    def _stmt(self, stmt: ast.stmt, scope: _Scope) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in stmt.decorator_list:
                self._expr(d, scope)
            self._function(stmt, scope)
        elif isinstance(stmt, ast.ClassDef):
            self._class_def(stmt)
        elif isinstance(stmt, ast.Assign):
            val = self._expr(stmt.value, scope)
            for t in stmt.targets:
                self._bind(t, val, stmt.value, scope)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self._bind(stmt.target, self._expr(stmt.value, scope), stmt.value, scope)
        elif isinstance(stmt, ast.AugAssign):
            val = self._expr(stmt.value, scope)
            if isinstance(stmt.target, ast.Name):
                old = scope.names.get(stmt.target.id, _NONE)
                scope.names[stmt.target.id] = self._combine(old, val, stmt, scope, op=stmt.op)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            pushed = 0
            for item in stmt.items:
                state = self._autocast_state(item.context_expr)
                if state is None:
                    self._expr(item.context_expr, scope)
                else:
                    self._autocast.append(state)
                    pushed += 1
            self._block(stmt.body, scope)
            for _ in range(pushed):
                self._autocast.pop()
        elif isinstance(stmt, (ast.If, ast.While)):
            self._expr(stmt.test, scope)
            self._block(stmt.body, scope)
            self._block(stmt.orelse, scope)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self._expr(stmt.iter, scope)
            self._block(stmt.body, scope)
            self._block(stmt.orelse, scope)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self._block(stmt.body, scope)
            for h in stmt.handlers:
                self._block(h.body, scope)
            self._block(stmt.orelse, scope)
            self._block(stmt.finalbody, scope)
        elif isinstance(stmt, (ast.Return, ast.Expr)):
            if stmt.value is not None:
                self._expr(stmt.value, scope)
        elif hasattr(ast, "Match") and isinstance(stmt, ast.Match):
            self._expr(stmt.subject, scope)
            for case in stmt.cases:
                self._block(case.body, scope)

    def _bind(self, target: ast.AST, val: Val, value: ast.AST, scope: _Scope) -> None:
        if isinstance(target, ast.Name):
            name = target.id
            dt = self._dtype(value, scope)
            if dt.known and isinstance(value, (ast.Attribute, ast.Call, ast.Name)):
                scope.dtypes[name] = dt
            if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
                scope.self_aliases[name] = value.attr
            arr = self._constructed_dtype(value, name, scope)
            if arr is not None:
                scope.arrays[name] = arr
            else:
                scope.arrays.pop(name, None)
            kinds = set(val.kinds)
            if "angle" not in kinds:
                if _FREQ_NAME.search(name) or (scope.alibi and _SLOPES_NAME.search(name)):
                    kinds.discard("pos")
                    kinds.add("freq")
                elif _POS_NAME.match(name):
                    kinds.add("pos")
            scope.names[name] = replace(val, kinds=frozenset(kinds))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                if isinstance(elt, ast.Name):
                    scope.names.pop(elt.id, None)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            # self.inv_freq = ...: a plain attribute, not cast by Module.to; on a registered buffer (or
            # nn.Buffer(...)) it replaces the buffer: float32 from here on when the value is float32
            if target.attr in scope.freq_buffers and _explicit_float32(value, self._fn):
                scope.repaired.add(target.attr)
            if self._class is not None and "angle" in val.kinds and not val.source:
                # self.emb = <float32 angles>: other methods of the class read them as angles (gpt-neox get_emb)
                self._angle_attrs[(self._class.name, target.attr)] = True

    # ------------------------------------------------------------------ dtypes
    def _constructed_dtype(self, value: ast.AST, name: str, scope: _Scope) -> _Dtype | None:
        """dtype of an array built by a constructor: ``np.zeros(n, dtype=np.int64)`` (an integer
        array), ``np.arange(n)`` (numpy's default, int64 or float64: never bf16), ``torch.zeros(n,
        dtype=torch.int64)``; None when unknown (a torch constructor without dtype follows the default)."""
        if not isinstance(value, ast.Call):
            return None
        dotted = _dotted(value.func)
        leaf = dotted.split(".")[-1]
        if leaf not in _ARRAY_CTORS:
            return None
        numpy = dotted.startswith(("np.", "numpy."))
        if not (numpy or dotted.startswith("torch.")):
            return None
        dtype_node = _kw(value, "dtype")
        if dtype_node is None:
            return _Dtype(None, f"`{name}` (a numpy array)", True) if numpy and not leaf.endswith("_like") else None
        d = self._dtype(dtype_node, scope)
        if d.source is not None:
            return d
        if d.known and d.what in _INT_DTYPES | {"int64", "uint32", "uint64"}:
            return _Dtype(None, f"`{name}` (an integer array)", True)
        if numpy and d.known:
            return _Dtype(None, f"`{name}` (a numpy array)", True)
        return None

    def _dtype(self, node: ast.AST | None, scope: _Scope) -> _Dtype:
        """Where a dtype expression comes from (``source`` None when clean or unknown)."""
        if node is None:
            return _Dtype(None)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            t = node.value.replace("torch.", "")
            if t in _LOW_DTYPES:
                return _Dtype("low", t, True)
            return _Dtype(None, t, t in _CLEAN_DTYPES)
        if isinstance(node, ast.Attribute):
            if node.attr == "dtype":
                base = node.value
                while isinstance(base, ast.Subscript):
                    base = base.value
                dotted = _dotted(base)
                if dotted.startswith("self."):
                    return self._self_dtype(dotted, scope)
                if isinstance(base, ast.Name):
                    if base.id in scope.self_aliases:
                        return self._self_dtype(f"self.{scope.self_aliases[base.id]}", scope)
                    if base.id in scope.arrays:  # annotated or constructed with a known dtype
                        return scope.arrays[base.id]
                    held = scope.names.get(base.id)
                    if held is not None and held.kinds & {"pos", "angle"}:
                        return _Dtype(held.source, held.what, True)  # positions' own dtype: as they are
                    if held is not None and "freq" in held.kinds and held.source is None:
                        return _Dtype(None, f"`{base.id}`", True)
                    if _INT_TENSOR.search(base.id) or _POS_NAME.match(base.id):
                        return _Dtype(None, f"`{base.id}`", True)  # an integer tensor's dtype
                    return _Dtype("input", f"`{base.id}`", True)
                if dotted:
                    return _Dtype("input", f"`{dotted}`", True)
                return _Dtype(None)
            dotted = _dotted(node)
            if dotted.startswith("self.") and dotted.count(".") == 1 and _MODEL_DTYPE_ATTR.match(node.attr):
                # self.precision / self.params_dtype / self.dtype: the precision the model runs in (bf16 in a
                # bf16 run), whatever its value is at construction
                return _Dtype("model", f"`{dotted}`", True)
            if dotted.startswith(("torch.", "np.", "numpy.", "jnp.")) or dotted in _LOW_DTYPES:
                leaf = node.attr
                if leaf in _LOW_DTYPES:
                    return _Dtype("low", leaf, True)
                if leaf in _CLEAN_DTYPES:
                    return _Dtype(None, leaf, True)
            return _Dtype(None)
        if isinstance(node, ast.Call):
            if _dotted(node.func).endswith("get_default_dtype"):
                return _Dtype("default", "`torch.get_default_dtype()`", True)
            return _Dtype(None)
        if isinstance(node, ast.Name):
            if node.id in scope.dtypes:
                return scope.dtypes[node.id]
            if node.id in _LOW_DTYPES:
                return _Dtype("low", node.id, True)
            return _Dtype(None)
        return _Dtype(None)

    def _tensor_dtype(self, node: ast.AST, scope: _Scope) -> _Dtype:
        """dtype of a tensor used as a template (``type_as(T)``, ``to(T)``)."""
        dotted = _dotted(node)
        if dotted.startswith("self."):
            return self._self_dtype(dotted, scope)
        if isinstance(node, ast.Name):
            if node.id in scope.self_aliases:
                return self._self_dtype(f"self.{scope.self_aliases[node.id]}", scope)
            held = scope.names.get(node.id)
            if held is not None and (held.kinds & {"pos", "angle"} or "freq" in held.kinds):
                return _Dtype(held.source, held.what, True)
            if "device" in node.id:
                return _Dtype(None)
            return _Dtype("input", f"`{node.id}`", True)
        return _Dtype(None)

    def _cast_dtype(self, call: ast.Call, method: str, scope: _Scope) -> _Dtype | None:
        """The dtype a ``.to/.type/.type_as/.half/...`` call converts to; None if not a cast."""
        if method in ("half",):
            return _Dtype("low", "float16", True)
        if method in ("bfloat16",):
            return _Dtype("low", "bfloat16", True)
        if method in ("float", "double", "long", "int"):
            return _Dtype(None, method, True)
        if method == "type_as" and call.args:
            return self._tensor_dtype(call.args[0], scope)
        if method in ("to", "type"):
            kw = _kw(call, "dtype")
            if kw is not None:
                return self._dtype(kw, scope)
            for arg in call.args:
                d = self._dtype(arg, scope)
                if d.known:
                    return d
            if method == "to" and call.args and isinstance(call.args[0], ast.Name) and call.args[0].id not in scope.dtypes:
                # .to(other_tensor): dtype and device of that tensor; .to(device): neither known
                name = call.args[0].id
                if "device" not in name and name not in ("dev", "device_type"):
                    return self._tensor_dtype(call.args[0], scope)
            return None
        return None

    # ------------------------------------------------------------------ expressions
    def _expr(self, node: ast.AST | None, scope: _Scope) -> Val:
        if node is None:
            return _NONE
        if isinstance(node, ast.Name):
            held = scope.names.get(node.id)
            if held is not None:
                return held
            if _POS_NAME.match(node.id):
                return Val(frozenset({"pos"}))
            if _FREQ_NAME.search(node.id) or (scope.alibi and _SLOPES_NAME.search(node.id)):
                return Val(frozenset({"freq"}))
            return _NONE
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                if node.attr in scope.freq_buffers:
                    # still in the buffer's dtype: bf16 after a cast, unless restored / not yet cast
                    castable = self._self_dtype(f"self.{node.attr}", scope).source == "buffer"
                    return Val(frozenset({"freq"}), buffer=node.attr if castable else "")
                if _FREQ_NAME.search(node.attr) or (scope.alibi and _SLOPES_NAME.search(node.attr)):
                    return Val(frozenset({"freq"}))
                if self._class is not None and (self._class.name, node.attr) in self._angle_attrs:
                    return Val(frozenset({"angle"}))
                return _NONE
            inner = self._expr(node.value, scope)
            if node.attr in ("shape", "dtype", "device", "ndim", "size"):
                return _NONE
            return inner if node.attr in ("T", "mT", "real") else _NONE
        if isinstance(node, ast.Subscript):
            self._expr(node.slice, scope)
            return self._expr(node.value, scope)
        if isinstance(node, ast.Call):
            return self._call(node, scope)
        if isinstance(node, ast.BinOp):
            left = self._expr(node.left, scope)
            right = self._expr(node.right, scope)
            if isinstance(node.op, ast.Pow):
                # base ** (arange(0, d, 2) / d): frequency construction; in the default dtype when its
                # exponent is (the finding held on the exponent travels with the frequencies)
                if right.default or left.default:
                    return Val(frozenset(), pending=left.pending + right.pending, default=True)
                return _NONE
            return self._combine(left, right, node, scope, op=node.op)
        if isinstance(node, ast.UnaryOp):
            return self._expr(node.operand, scope)
        if isinstance(node, ast.IfExp):
            self._expr(node.test, scope)
            a, b = self._expr(node.body, scope), self._expr(node.orelse, scope)
            return a if a.kinds else b
        if isinstance(node, (ast.Tuple, ast.List)):
            return self._union([self._expr(e, scope) for e in node.elts])
        if isinstance(node, (ast.Lambda, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
            return _NONE
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._expr(child, scope)
        return _NONE

    def _combine(self, a: Val, b: Val, node: ast.AST, scope: _Scope, *, op: ast.AST | None = None,
                 spelling: str | None = None) -> Val:
        """Result of a binary operation; an angle when positions meet frequencies.

        ``spelling``: the spelling of a product call (``einsum``, ``matmul``, ``addr``, ``outer``...), read
        against the autocast policy (:func:`ropelaw.audit.policy.product_lowered`); ``@`` is ``matmul``."""
        product = isinstance(op, (ast.Mult, ast.MatMult)) or op is None
        if product and "freq" in a.kinds and "castpos" in b.kinds and "pos" not in b.kinds:
            b = self._as_positions(b)
        elif product and "freq" in b.kinds and "castpos" in a.kinds and "pos" not in a.kinds:
            a = self._as_positions(a)
        if product and (("pos" in a.kinds and "freq" in b.kinds) or ("freq" in a.kinds and "pos" in b.kinds)):
            pos, freq = (a, b) if "pos" in a.kinds else (b, a)
            return self._angle(node, pos, freq, scope, "@" if isinstance(op, ast.MatMult) else spelling)
        if isinstance(op, (ast.Mult, ast.Div, ast.FloorDiv, ast.Add, ast.Sub, ast.Mod, ast.MatMult)) or op is None:
            kinds = a.kinds | b.kinds
            if "angle" in kinds:
                kinds = frozenset({"angle"})
            src = a if a.source else b
            # int64 stays int64 under + - * // % with integers; true division gives a float
            integer = ((a.integer or b.integer) and not isinstance(op, ast.Div) and "angle" not in kinds
                       and not (isinstance(op, ast.Mult) and _float_scalar_operand(node, a, b)))
            pending = a.pending + b.pending
            default = a.default or b.default
            if ((isinstance(op, ast.Div) or (isinstance(op, ast.Mult) and _float_scalar_operand(node, a, b)))
                    and (a.integer or b.integer) and not (a.source or b.source)
                    and not (a.kinds | b.kinds) & {"freq", "angle"} and not _float_tensor_operand(node, a, b)
                    and not self._tensor_attribute_operand(node, a)):
                # int64 / k: true division gives a float in torch's default dtype (no dtype to follow)
                default = True
                pending = pending + (self._default_dtype_finding(node, a.kinds | b.kinds),)
            return Val(kinds, src.source, src.what, src.reported or a.reported or b.reported, pending,
                       integer=integer, buffer=a.buffer or b.buffer, maybe=a.maybe + b.maybe, default=default)
        return _NONE

    def _tensor_attribute_operand(self, node: ast.AST, a: Val) -> bool:
        """The other operand of an integer division is ``self.X`` with X a buffer or parameter of the class:
        a tensor, whose dtype the quotient takes (not the default one)."""
        if not isinstance(node, ast.BinOp) or self._class is None:
            return False
        other = node.right if a.integer else node.left
        dotted = _dotted(other)
        if not dotted.startswith("self.") or dotted.count(".") != 1:
            return False
        regs = {name for c in self._class_chain(self._class) for name, *_ in self._registrations(c)}
        regs |= {name for c in self._class_chain(self._class) for name, *_ in self._parameters(c)}
        return dotted.split(".")[1] in regs

    def _default_dtype_finding(self, node: ast.AST, kinds) -> tuple:
        """A finding held back (``Val.pending``) on a value made in torch's default dtype: RP115 for
        positions, RP116 for frequency exponents; reported when the value reaches an angle or cos/sin."""
        mech = policy.default_dtype_mechanism("bf16")
        if "expo" in kinds and "pos" not in kinds:
            msg = (f"rotary frequencies are computed from exponents made without a dtype, so they take torch's "
                   f"default dtype, which is bf16 under {mech}: every frequency is rounded by up to 2^-8 "
                   f"(relative), {(self.length - 1) / 512:.0f} rad of phase at position {self.length - 1:,} for a "
                   f"frequency in [0.5, 1)")
            return (DF.FREQUENCIES_IN_IMPLICIT_DEFAULT_DTYPE, node, msg,
                    "name the dtype: torch.arange(0, d, 2, dtype=torch.float32) / d (or .float() before dividing)",
                    {"dtype_source": "default", "mechanism": "bf16-true", "length": self.length})
        msg = (f"positions made without a dtype take torch's default dtype, which is bf16 under {mech}: "
               f"{self._note('bf16')}")
        return (DF.POSITIONS_IN_IMPLICIT_DEFAULT_DTYPE, node, msg,
                "name the dtype: torch.arange(n, dtype=torch.float32) / k (or .float() before dividing)",
                {"dtype_source": "default", "mechanism": "bf16-true", "length": self.length})

    def _as_positions(self, v: Val) -> Val:
        """An unknown tensor cast to a risky dtype that meets frequencies in a product: positions."""
        for rule, node, msg, fix, data in v.maybe:
            self.report(rule, node, msg, fix, **data)
        return Val((v.kinds - {"castpos"}) | {"pos"}, v.source, v.what, True, v.pending)

    def _angle(self, node: ast.AST, pos: Val, freq: Val, scope: _Scope, product: str | None,
               einsum_contracts: bool = True) -> Val:
        """An angle product: check its precision (RP111/RP131) and autocast (RP112/RP113).

        ``product``: how it is written (``@``, ``einsum``, ``addr``, ``outer``, ``mul``; None for ``*``).
        Autocast lowers it when the policy says so (:mod:`ropelaw.audit.policy`): CUDA's list (the runs
        people make: ``bf16-mixed`` on a GPU) holds ``@``/``matmul``/``mm``/``bmm``, every ``einsum``,
        ``addr``, ``baddbmm``, ``addmm``, ``mv``...; inside an explicit ``torch.autocast("cpu")`` CPU's list."""
        self._flush(pos, freq)
        reported = pos.reported
        source, what = None, ""
        if pos.integer and not pos.source and freq.default and not freq.source and not scope.alibi:
            # int64 positions * frequencies in the default dtype: type promotion gives the product that dtype
            mech = policy.default_dtype_mechanism("bf16")
            self.report(DF.POSITIONS_IN_IMPLICIT_DEFAULT_DTYPE, node,
                        f"integer positions are multiplied with frequencies in torch's default dtype: type promotion "
                        f"gives the product that dtype, bf16 under {mech}, so the positions are rounded to bf16: "
                        f"{self._note('bf16')}",
                        fix="make the frequencies float32 (torch.arange(0, d, 2, dtype=torch.float32) / d) and the "
                            "positions too (torch.arange(n, dtype=torch.float32))",
                        dtype_source="default", mechanism="bf16-true", length=self.length)
            return Val(frozenset({"angle"}), "default", "torch's default dtype", True)
        if pos.integer and not pos.source and freq.buffer and not freq.source and not scope.alibi:
            # int64 positions * a float buffer: type promotion takes the buffer's dtype (bf16 after a cast)
            self.report(P.POSITIONS_IN_BUFFER_DTYPE, node,
                        f"integer positions are multiplied with the float buffer `self.{freq.buffer}`: type promotion "
                        f"gives the product the buffer's dtype, which `model.to(bfloat16)` turns into bf16, so the "
                        f"positions are rounded to bf16: {self._note('bf16')}",
                        fix=P.FIX_POSITIONS, dtype_source="buffer", length=self.length)
            return Val(frozenset({"angle"}), "buffer", f"`self.{freq.buffer}`", True)
        if freq.source and not freq.reported:
            source, what = freq.source, freq.what
            fmt = _format_of(freq.source, what)
            if scope.alibi:
                self.report(A.ALIBI_DISTANCES_IN_MODEL_DTYPE, node,
                            f"ALiBi slopes * positions is computed with slopes {_phrase(source, what)}, so the "
                            f"integer positions are rounded to {fmt} too: {self._note(fmt)}",
                            fix="keep the slopes float32 (slopes.float()) and cast only the finished bias")
            else:
                self.report(X.ANGLES_IN_LOW_PRECISION, node,
                            f"the angle position * inv_freq is computed with frequencies {_phrase(source, what)}: "
                            f"in {fmt} the angle at position {self.length - 1:,} is off by up to "
                            f"{self._half_spacing(self.length - 1, fmt):g} rad for a frequency near 1",
                            fix="compute the product in float32 (positions.float() * inv_freq.float()); "
                                "cast only cos/sin to x.dtype")
            reported = True
        elif pos.source:
            source, what = pos.source, pos.what
        state = self._autocast[-1] if self._autocast else None
        device = "cpu" if state == "on-cpu" else "cuda"
        if (product and not scope.alibi and not (scope.build_only and state is None)
                and policy.product_lowered(product, device, einsum_contracts)):
            what = _product_words(product, device)
            if state in ("on", "on-cpu"):
                self.report(X.ANGLE_PRODUCT_IN_AUTOCAST, node,
                            f"the angle product {what} inside an enabled `torch.autocast` region: it runs in "
                            f"bf16/fp16, off by up to {self._half_spacing(self.length - 1):g} rad at position "
                            f"{self.length - 1:,} in bf16", op=policy.PYTHON_PRODUCTS.get(product, product))
            elif state is None:
                self.report(X.ANGLE_PRODUCT_AUTOCAST_ELIGIBLE, node,
                            f"the angle product {what} outside `torch.autocast(..., enabled=False)`: under a "
                            f"caller's bf16 autocast (Lightning 'bf16-mixed' on a GPU) it runs in bf16, off by up "
                            f"to {self._half_spacing(self.length - 1):g} rad at position {self.length - 1:,}",
                            fix=("wrap it: with torch.autocast(device_type=x.device.type, enabled=False): ...; or "
                                 "multiply element-wise (torch.outer(t, inv_freq), t[:, None] * inv_freq), which "
                                 "autocast leaves in float32"),
                            op=policy.PYTHON_PRODUCTS.get(product, product))
        return Val(frozenset({"angle"}), source, what, reported or bool(source))

    def _half_spacing(self, p: int, fmt: str = "bf16") -> float:
        """Largest rounding error of a value near ``p`` in ``fmt``: half the spacing there."""
        from ..formats import exact_positions

        s = exact_positions(fmt, p + 1).spacing_at_end
        return (s or 0.0) / 2

    def _call(self, call: ast.Call, scope: _Scope) -> Val:
        func = call.func
        dotted = _dotted(func)
        leaf = func.attr if isinstance(func, ast.Attribute) else (func.id if isinstance(func, ast.Name) else "")
        # method call on a tensor expression: receiver.method(...)
        receiver = None
        if isinstance(func, ast.Attribute) and not dotted.startswith(("torch.", "np.", "numpy.", "F.", "math.")):
            receiver = func.value
        complex_ctor = (leaf in _COMPLEX_CALLS or dotted == "torch.complex"
                        or (leaf == "exp" and any(_complex_construction(a) == "a complex literal" for a in call.args)))
        if complex_ctor:  # casts of angles right inside it are reported as RP114 (see _angles_cast)
            self._complex_args.update(id(n) for a in call.args for n in ast.walk(a) if isinstance(n, ast.Call))
        args = [self._expr(a, scope) for a in call.args]
        for k in call.keywords:
            if k.arg != "dtype":
                self._expr(k.value, scope)

        if leaf in ("arange", "linspace") and dotted.startswith(_NON_TORCH_ARRAYS) and _kw(call, "dtype") is None:
            # numpy / jax arrays without a dtype: int64 / k is float64 there, no torch default dtype
            # (mesh-transformer-jax); with a dtype the rules below apply (np.arange(n, dtype=np.float16))
            return Val(frozenset({"pos"})) if leaf == "arange" and len(call.args) < 3 else _NONE
        if leaf == "arange" and (receiver is None or dotted.endswith(".arange")):
            has_step = len(call.args) >= 3 or _kw(call, "step") is not None
            if has_step and not (len(call.args) >= 3 and isinstance(call.args[2], ast.Constant) and call.args[2].value == 1):
                # arange(0, dim, 2): frequency exponents, not positions; an integer tensor unless a dtype or a
                # float argument says otherwise (then torch's default dtype)
                dtype_node = _kw(call, "dtype")
                if dtype_node is None:
                    if _float_argument(call):
                        return Val(frozenset({"expo"}), default=True,
                                   pending=(self._default_dtype_finding(call, {"expo"}),))
                    return Val(frozenset({"expo"}), integer=True)
                dt = self._dtype(dtype_node, scope)
                return Val(frozenset({"expo"}), integer=dt.known and dt.what in _INT_DTYPES)
            stop = call.args[1] if len(call.args) >= 2 else (call.args[0] if call.args else _kw(call, "end"))
            words = [n.id if isinstance(n, ast.Name) else n.attr
                     for n in ast.walk(stop) if isinstance(n, (ast.Name, ast.Attribute))] if stop is not None else []
            if any(_DIM_WORDS.search(w) and not _POSITION_WORDS.search(w) for w in words):
                return _NONE  # arange(head_dim // 2): over a feature dimension, not positions
            dtype_node = _kw(call, "dtype")
            dt = self._dtype(dtype_node, scope)
            if dt.source == "input" and dotted.startswith(("np.", "numpy.")):
                # numpy.arange accepts only numpy dtypes: X in dtype=X.dtype is a numpy array, not a
                # model activation (numpy has no bfloat16); vLLM's np.arange(..., dtype=out.dtype)
                dt = _Dtype(None, f"{dt.what} (a numpy array)", True)
            if dt.source:
                return self._positions_cast(call, Val(frozenset({"pos"})), dt, scope, created=True)
            # int64 unless a dtype is given or an argument is a float (then the default dtype)
            if dtype_node is None and _float_argument(call):
                return Val(frozenset({"pos"}), default=True, pending=(self._default_dtype_finding(call, {"pos"}),))
            integer = dt.what in _INT_DTYPES if dtype_node is not None else True
            return Val(frozenset({"pos"}), integer=integer)
        if leaf == "linspace" and (receiver is None or dotted.endswith(".linspace")) and _kw(call, "dtype") is None:
            # linspace without a dtype: torch's default dtype (positions or exponents, said when it meets an angle)
            return Val(frozenset({"expo"}), default=True,
                       pending=(self._default_dtype_finding(call, {"expo"}),))
        if receiver is None and leaf in ("einsum",):
            ops = args[1:]
            freq = next((v for v in ops if "freq" in v.kinds), None)
            pos = next((v for v in ops if "pos" in v.kinds), None)
            if pos is None and freq is not None:
                pos = next((self._as_positions(v) for v in ops if "castpos" in v.kinds), None)
            if pos is not None and freq is not None:
                torch_op = not dotted.startswith(_NON_TORCH_ARRAYS)  # np.einsum: no autocast reaches it
                return self._angle(call, pos, freq, scope, "einsum" if torch_op else None,
                                   einsum_contracts=_einsum_contracts(call))
            return self._union(ops)
        if receiver is None and (leaf in _MATMUL_FUNCS or leaf in _ELEMENTWISE_PRODUCTS) and len(args) >= 2:
            return self._combine(args[0], args[1], call, scope, op=None,
                                 spelling=None if dotted.startswith(_NON_TORCH_ARRAYS) else leaf)
        if receiver is None and leaf in _ADD_PRODUCTS and len(args) >= 3:
            # addr(M, v1, v2), baddbmm(M, b1, b2), addmm, addbmm, addmv: M + v1 (x) v2, on CUDA autocast's list
            return self._combine(args[1], args[2], call, scope, op=None, spelling=leaf)
        if receiver is None and leaf in ("cat", "stack", "concat", "concatenate", "broadcast_to", "where"):
            return self._union(args)
        if receiver is None and leaf in _TRIG:
            if leaf == "exp" and (_frequency_expression(call) or any(
                    isinstance(n, ast.Call) and _leaf(n) == "log" for a in call.args for n in ast.walk(a))):
                # exp(k * -log(base) / n) = base^(-k/n): frequency construction (fairseq2's sin table), not an
                # encoding: its arange holds exponents, so only a default dtype there is a finding (RP116)
                held = tuple(self._default_dtype_finding(p[1], {"expo"}) for a in args for p in a.pending
                             if p[0] in (DF.POSITIONS_IN_IMPLICIT_DEFAULT_DTYPE, DF.FREQUENCIES_IN_IMPLICIT_DEFAULT_DTYPE))
                return Val(frozenset({"freq"}), pending=held, default=any(a.default for a in args))
            self._flush(*args)
            return _NONE
        if receiver is None and leaf in ("get_default_dtype",):
            return _NONE

        if receiver is not None:
            base = self._expr(receiver, scope)
            method = func.attr
            if method in _TRIG:
                self._flush(base)
                return _NONE
            if method == "cumsum" and scope.alibi:
                return Val(frozenset({"pos"}), base.source, base.what, base.reported)
            if method in ("matmul", "mm", "bmm", "mul", "outer", "ger", "mv") and args:
                return self._combine(base, args[0], call, scope, op=None, spelling=method)
            if method in _ADD_PRODUCTS and len(args) >= 2:  # M.addr(v1, v2), M.baddbmm(b1, b2)
                return self._combine(args[0], args[1], call, scope, op=None, spelling=method)
            if method in ("to", "type", "type_as", "half", "bfloat16", "float", "double", "long", "int"):
                dt = self._cast_dtype(call, method, scope)
                if dt is None:
                    return base  # .to(device)
                if not dt.known:
                    return base
                if dt.source is None:
                    # converted to a clean dtype: no new rounding from here on (an earlier one stays)
                    return Val(base.kinds - {"castpos"}, None, "", base.reported, base.pending,
                               integer=dt.what in _INT_DTYPES, default=False)
                if "pos" in base.kinds and "angle" not in base.kinds:
                    return self._positions_cast(call, base, dt, scope, created=False)
                if "angle" in base.kinds:
                    return self._angles_cast(call, base, dt, scope)
                if "freq" in base.kinds:
                    return Val(base.kinds, dt.source, dt.what, False)
                if not scope.alibi and not base.kinds:
                    # t.type_as(self.inv_freq) on an argument of unknown kind: positions if it meets
                    # frequencies in a product (x-transformers' RotaryEmbedding.forward(t))
                    rule, msg, data = self._position_finding(dt, created=False)
                    return Val(frozenset({"castpos"}), dt.source, dt.what, False,
                               maybe=((rule, call, msg, P.FIX_POSITIONS, data),))
                return _NONE
            if method in _PRESERVING or method in ("__getitem__",):
                return base
            if method == "register_buffer":
                # re-registered in float32 (dynamic scaling after a cast): the buffer is float32 below
                if (len(call.args) >= 2 and isinstance(call.args[0], ast.Constant)
                        and call.args[0].value in scope.freq_buffers and _explicit_float32(call.args[1], self._fn)):
                    scope.repaired.add(call.args[0].value)
                return _NONE
            if self._is_cache_rebuild(call, method, receiver, scope):
                self.report(B.CACHE_REBUILT_AFTER_CAST, call,
                            f"`self.{method}(...)` rebuilds the cos/sin cache with the input's dtype from the float "
                            f"buffer `{sorted(scope.freq_buffers - self._repaired)[0]}`, after `model.to(bfloat16)` has rounded it")
            return _NONE
        return _NONE

    def _union(self, vals: Iterable[Val]) -> Val:
        vals = list(vals)
        kinds = frozenset().union(*[v.kinds for v in vals]) if vals else frozenset()
        src = next((v for v in vals if v.source), None)
        pending = tuple(p for v in vals for p in v.pending)
        return Val(kinds, src.source if src else None, src.what if src else "", bool(src and src.reported), pending)

    def _flush(self, *vals: Val) -> None:
        """Report the findings a value held back: it has reached an angle or cos/sin."""
        for v in vals:
            for rule, node, msg, fix, data in v.pending:
                self.report(rule, node, msg, fix, **data)

    def _is_cache_rebuild(self, call: ast.Call, method: str, receiver: ast.AST, scope: _Scope) -> bool:
        if not (isinstance(receiver, ast.Name) and receiver.id == "self" and _CACHE_METHOD.search(method)):
            return False
        if not scope.freq_buffers - self._repaired:
            return False  # every frequency buffer is restored to float32 after a cast
        cands = [k.value for k in call.keywords if k.arg == "dtype"] + list(call.args)
        return any(self._dtype(c, scope).source in ("input", "caller") for c in cands)

    def _positions_cast(self, call: ast.Call, val: Val, dt: _Dtype, scope: _Scope, created: bool) -> Val:
        if val.reported and val.source:
            return Val(val.kinds, dt.source, dt.what, True)
        verb = "are created with" if created else "are converted to"
        if scope.alibi:
            rule = A.ALIBI_DISTANCES_IN_MODEL_DTYPE
            fmt = _format_of(dt.source, dt.what)
            self.report(rule, call, f"ALiBi positions {verb} {'' if dt.source == 'low' else 'the dtype of '}"
                        f"{dt.what}: in {fmt} {self._note(fmt)}",
                        dtype_source=dt.source)
            return Val(val.kinds, dt.source, dt.what, True)
        rule, msg, data = self._position_finding(dt, created)
        if scope.rotary:
            self.report(rule, call, msg, fix=P.FIX_POSITIONS, **data)
            return Val(val.kinds, dt.source, dt.what, True)
        # outside rotary code an arange may be anything: report only if it reaches an angle or cos/sin
        return Val(val.kinds, dt.source, dt.what, True, val.pending + ((rule, call, msg, P.FIX_POSITIONS, data),))

    def _position_finding(self, dt: _Dtype, created: bool) -> tuple[Rule, str, dict]:
        """Rule, message and data for positions created with / converted to a risky dtype."""
        verb = "are created with" if created else "are converted to"
        rule = _SOURCE_RULE[dt.source]
        if dt.source == "buffer" and "scale" in dt.what.lower() and "freq" not in dt.what.lower():
            # a scale buffer (flash-attn's XPos `self.scale`): the positions set a magnitude, not angles
            msg = (f"positions take the dtype of {dt.what}, a scale buffer that `model.to(bfloat16)` turns into "
                   f"bf16: the scale built from them (XPos zeta^(p/gamma), arXiv 2212.10554) is computed from bf16 "
                   f"positions and changes the encoding's magnitude, not its angles (flash-attn 2.8.3, "
                   f"scale_base=512: 9.08% at 8,192 positions); `ropelaw audit module` measures it (RP306)")
        elif dt.source == "buffer":
            msg = (f"positions take the dtype of {dt.what}, which `model.to(bfloat16)` turns into bf16: "
                   f"{self._note('bf16')}")
        elif dt.source == "input":
            msg = (f"positions {verb} the dtype of the input {dt.what}, bf16 in a bf16 model: {self._note('bf16')} "
                   f"(fp16: {self._note('fp16')})")
        elif dt.source == "model":
            msg = (f"positions {verb} the model's precision {dt.what}, bf16 when the model runs in bf16: "
                   f"{self._note('bf16')}")
        elif dt.source == "caller":
            msg = (f"positions {verb} {dt.what}, which the caller fills with the input's dtype: in bf16 "
                   f"{self._note('bf16')}")
        elif dt.source == "default":
            msg = (f"positions {verb} `torch.get_default_dtype()`, bf16 under `torch.set_default_dtype(torch.bfloat16)`: "
                   f"{self._note('bf16')}")
        else:
            fmt = _format_of(dt.source, dt.what)
            msg = f"positions {verb} {dt.what}: {self._note(fmt)}"
        return rule, msg, {"dtype_source": dt.source, "length": self.length}

    def _angles_cast(self, call: ast.Call, val: Val, dt: _Dtype, scope: _Scope) -> Val:
        if val.reported:
            return Val(val.kinds, dt.source, dt.what, True)
        if scope.alibi:
            self.report(A.ALIBI_BIAS_IN_MODEL_DTYPE, call,
                        f"the ALiBi bias slopes * positions is converted to the dtype of {dt.what}: in bf16 the bias "
                        f"at key position {self.length - 1:,} has a spacing of {self._half_spacing(self.length - 1) * 2:g} "
                        f"x slope, so neighbouring keys there share one bias")
        elif id(call) in self._complex_args:
            fmt = _format_of(dt.source, dt.what)
            self.report(X.COMPLEX_FROM_LOW_PRECISION_ANGLES, call,
                        f"complex rotary numbers are built from angles converted "
                        f"{_phrase(dt.source, dt.what).replace('in ', 'to ', 1)}: in {fmt} the angle at position "
                        f"{self.length - 1:,} is off by up to {self._half_spacing(self.length - 1, fmt):g} rad for a "
                        f"frequency near 1, and so is the rotation",
                        fix="build the complex numbers from float32 angles (complex64): torch.polar(ones, freqs.float())")
        else:
            fmt = _format_of(dt.source, dt.what)
            self.report(X.ANGLES_IN_LOW_PRECISION, call,
                        f"angles (position * inv_freq) are converted {_phrase(dt.source, dt.what).replace('in ', 'to ', 1)} "
                        f"before cos/sin: in {fmt} the angle at position {self.length - 1:,} is off by up to "
                        f"{self._half_spacing(self.length - 1, fmt):g} rad for a frequency near 1",
                        fix="take cos/sin in float32 and cast those: emb.cos().to(x.dtype)")
        return Val(val.kinds, dt.source, dt.what, True)

    # ------------------------------------------------------------------ autocast
    def _autocast_state(self, expr: ast.AST) -> str | None:
        """"on" / "off" / "unknown" for an autocast context manager, None for anything else."""
        if not isinstance(expr, ast.Call):
            return None
        dotted = _dotted(expr.func)
        if not (dotted.endswith("autocast") or dotted.split(".")[-1] == "autocast"):
            return None
        enabled = _kw(expr, "enabled")
        dev = _kw(expr, "device_type") or (expr.args[0] if expr.args else None)
        on = "on-cpu" if isinstance(dev, ast.Constant) and dev.value == "cpu" else "on"
        if enabled is None:
            return on
        if _const_false(enabled):
            return "off"
        if isinstance(enabled, ast.Constant) and enabled.value is True:
            return on
        return "unknown"


# ---------------------------------------------------------------------- files

@dataclass
class ScanResult:
    findings: list[Finding]
    files: int  # files checked (including those reported as unreadable)


def _noqa_filter(findings: list[Finding], lines: list[str]) -> list[Finding]:
    out = []
    for f in findings:
        text = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
        m = _NOQA.search(text) if "#" in text else None
        if m is None:
            out.append(f)
            continue
        codes = m.group("codes")
        if codes is None:
            continue  # bare noqa: everything on the line
        if f.code.upper() not in {c.strip().upper() for c in codes.split(",")}:
            out.append(f)
    return out


# Names and numbers (runs of [A-Za-z0-9_]) a file may hold to be parsed: Python's syntax tree takes
# about 1 KB per node (2 GB for a 4 MB list of 2 million numbers) and real code has 1.2-1.6 nodes per
# word and 11 bytes per word (transformers 4.57.1's largest modeling files: 13,000-18,000 words), so
# 400,000 words (a 4 MiB file of real code) stays near 600 MB. Counted in C before parsing.
MAX_AST_WORDS = 400_000
_WORD = re.compile(r"[A-Za-z0-9_]+")

MAX_FILE_BYTES = 4 * 1024 * 1024
"""Default per-file size limit of ``audit code`` (``--max-file-size``): the AST of Python source
takes ~150 bytes of memory per source byte, so 4 MiB stays well under 1 GB; the largest
modeling file of transformers is ~0.3 MB. A larger file is reported as RE004, not read."""

# Deep expressions (a 2,900-term sum is a 2,900-deep left-nested BinOp) are walked in a thread
# with a large stack and a raised recursion limit; beyond it the file is reported as RE004.
_DEEP_RECURSION = 40_000
_DEEP_STACK = 512 * 1024 * 1024  # virtual: only the pages a deep walk touches become memory


def _run_deep(fn):
    """``fn()`` in a thread whose stack and recursion limit fit deeply nested ASTs."""
    import threading

    if threading.current_thread().name == "ropelaw-ast":
        return fn()  # already on the deep stack (scan_paths runs every file there)
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc

    old_limit = sys.getrecursionlimit()
    try:
        old_stack = threading.stack_size(_DEEP_STACK)
    except (ValueError, RuntimeError):  # platform without adjustable stacks: run in place
        return fn()
    try:
        sys.setrecursionlimit(max(old_limit, _DEEP_RECURSION))
        t = threading.Thread(target=target, name="ropelaw-ast", daemon=True)  # ^C in join() ends ropelaw
        t.start()
        t.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]
    return box["value"]


# frameworks whose dtype rules the scan does not model (it follows torch's): module -> what to call it
_OTHER_FRAMEWORKS = {"keras": "keras (keras.ops)", "keras_nlp": "keras-nlp (keras.ops)", "keras_hub": "keras-hub (keras.ops)",
                     "keras_core": "keras-core (keras.ops)", "tf_keras": "tf-keras", "jax": "jax (jax.numpy)",
                     "flax": "flax (jax.numpy)", "mlx": "mlx (mlx.core)", "tensorflow": "TensorFlow",
                     "paddle": "paddle"}
# words that say a file holds position / rotary code worth a note
_POSITION_CODE = re.compile(r"rotary|rope|RoPE|sinusoid|position|inv_freq|max_wavelength|alibi", re.I)


def _framework_note(tree: ast.Module, text: str, path: str) -> list[Finding]:
    """RP117 (info) once per file that imports a framework the scan does not analyse and holds position
    code: at the first such import. Never silent, never an error."""
    if not _POSITION_CODE.search("\n".join(_code_part(x) for x in text.splitlines())):
        return []  # (comments do not count)
    for node in ast.walk(tree):
        mods: list[str] = []
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            mods = [node.module]
        for mod in mods:
            top = mod.split(".")[0]
            if top in _OTHER_FRAMEWORKS:
                return [Finding.of(
                    DF.FRAMEWORK_NOT_ANALYSED,
                    f"this file computes with {_OTHER_FRAMEWORKS[top]} (line {node.lineno} imports `{mod}`), whose "
                    f"dtype rules the static scan does not model (it follows torch's): its rotary / position code "
                    f"was not analysed, and any finding here comes from names alone",
                    path=path, line=node.lineno, column=node.col_offset + 1, framework=top)]
    return []


def _parse_quietly(text: str, path: str) -> ast.Module:
    """``ast.parse`` with the compiler's warnings silenced: an invalid escape sequence is a SyntaxWarning,
    which a process running with warnings as errors (``-W error``, pytest) would turn into a syntax error of
    a valid file (modded-nanogpt's train_gpt2.py)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, filename=path)


def scan_source(source: "str | bytes", path: str = "-", *, length: int = DEFAULT_LENGTH) -> list[Finding]:
    """Findings for one module's source (bytes are decoded per PEP 263). Never raises on bad code.

    A file that parses but whose walk stops early (nesting beyond even the deep-stack thread's
    limit) gets RE004 with what was found before it: never a silent all-clear.
    """
    if isinstance(source, bytes):
        try:
            enc, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
            text = source.decode(enc)
        except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
            return [Finding.of(IO.UNDECODABLE_FILE, f"cannot decode the file: {exc}", path=path)]
        if text.startswith("\ufeff"):
            text = text[1:]
    else:
        text = source
    words = sum(1 for _ in _WORD.finditer(text)) if len(text) > MAX_AST_WORDS else 0
    if words > MAX_AST_WORDS:
        return [Finding.of(IO.INCOMPLETE_ANALYSIS, f"not analysed: {words:,} names and numbers, more than the "
                           f"{MAX_AST_WORDS:,} whose syntax tree fits in memory (about 1 KB a node)", path=path)]
    try:  # always parse: a syntax error is reported even in a file with nothing else to find
        tree = _run_deep(lambda: _parse_quietly(text, path))
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = exc.offset or 1
        return [Finding.of(IO.SYNTAX_ERROR, f"cannot parse: {exc.msg}", path=path, line=line, column=max(col, 1))]
    except RecursionError:
        return [Finding.of(IO.INCOMPLETE_ANALYSIS, "not analysed: the parser ran out of recursion depth (nesting "
                           "deeper than any real code)", path=path)]
    except MemoryError:
        return [Finding.of(IO.INCOMPLETE_ANALYSIS, "not analysed: the parser gave up (MemoryError: nesting deeper "
                           "than any real code, or too large)", path=path)]
    except ValueError as exc:  # null bytes
        return [Finding.of(IO.SYNTAX_ERROR, f"cannot parse: {exc}", path=path)]
    note = _framework_note(tree, text, path)
    if not any(w in text for w in _TRIGGERS):
        return note  # no trigger word: nothing can match, skip the walk
    try:
        checker = _run_deep(lambda: Checker(tree, path, text, length=length))
    except (RecursionError, MemoryError) as exc:
        return [Finding.of(IO.INCOMPLETE_ANALYSIS, f"not analysed: the checker failed ({type(exc).__name__})",
                           path=path)]
    findings = _noqa_filter(checker.findings + note, checker.lines)
    if checker.incomplete:
        findings.append(Finding.of(
            IO.INCOMPLETE_ANALYSIS, f"analysis stopped early: an expression nested deeper than "
            f"{_DEEP_RECURSION:,} levels; findings after it may be missing", path=path))
    return findings


def scan_file(path: "str | os.PathLike", *, length: int = DEFAULT_LENGTH, display: str | None = None,
              max_bytes: int = MAX_FILE_BYTES) -> list[Finding]:
    """Findings for one file; never an exception.

    A path that is not a regular file (a FIFO, a device, also behind a symlink such as a ``.py``
    linked to ``/dev/zero``) or cannot be read gives RE003 before anything is read; a file over
    ``max_bytes`` gives RE004 and is not parsed.
    """
    from ..safeio import open_regular

    shown = display if display is not None else str(path)
    try:
        with open_regular(str(path)) as fh:
            data = fh.read(max_bytes + 1)
    except UsageError as exc:
        why = str(exc)
        why = why[len(str(path)) + 2:] if why.startswith(f"{path}: ") else why
        return [Finding.of(IO.UNREADABLE_FILE, f"cannot read the file: {why}", path=shown)]
    except OSError as exc:
        return [Finding.of(IO.UNREADABLE_FILE, f"cannot read the file: {exc.strerror or exc}", path=shown)]
    if len(data) > max_bytes:
        from ..safeio import fmt_bytes

        return [Finding.of(IO.INCOMPLETE_ANALYSIS, f"not analysed: larger than the {fmt_bytes(max_bytes)} limit "
                           "(--max-file-size to raise it)", path=shown)]
    return scan_source(data, shown, length=length)


def python_files(paths: Sequence["str | os.PathLike"], unscanned: list | None = None) -> list[Path]:
    """The .py files named or found (recursively, sorted) under ``paths``.

    ``UsageError`` for a missing path, for a file given explicitly that is not ``.py``, for a
    named path that is not a regular file (a FIFO, a device; checked with ``stat`` before any
    read), and for a directory with no .py file in it (nothing to check is almost always a wrong
    path). Inside directories such files are listed and reported as RE003 by :func:`scan_file`.
    Hidden directories and virtual environments' ``site-packages`` below a given directory are
    entered like any other (the user chose the directory), except ``__pycache__`` and ``.git``.
    Directories that could not be entered (unreadable, a path over PATH_MAX, symbolic links,
    which are not followed) are appended to ``unscanned`` as ``(path, why)``
    (:func:`ropelaw.safeio.walk_files`: iterative, any depth).
    """
    from ..safeio import regular_file, walk_files

    out: list[Path] = []
    if not paths:
        raise UsageError("no paths given")
    for raw in paths:
        if not str(raw).strip():  # Path("") is ".": an empty argument (unset variable) would scan the cwd
            raise UsageError("empty path given (say `.` to scan the current directory)")
        p = Path(raw)
        if not p.exists() and not p.is_symlink():
            raise UsageError(f"no such file or directory: {raw}")
        if p.is_dir():
            gaps: list = []
            found = [Path(f) for f in walk_files(str(p), (".py",), lambda d: d in ("__pycache__", ".git"), gaps)]
            if not found and not gaps:
                raise UsageError(f"no Python files found in {raw}")
            out.extend(found)
            if unscanned is not None:
                unscanned.extend(gaps)
        elif p.suffix == ".py":
            regular_file(str(p))
            out.append(p)
        else:
            raise UsageError(f"not a Python file: {raw} (audit code reads .py files; for a checkpoint "
                             f"use `ropelaw audit checkpoint`)")
    return out


def scan_paths(paths: Sequence["str | os.PathLike"], *, length: int = DEFAULT_LENGTH,
               select: list[str] | None = None, ignore: list[str] | None = None,
               progress: bool = False, max_bytes: int = MAX_FILE_BYTES) -> ScanResult:
    """Scan files and directories (see :func:`python_files`) and filter the findings.

    A directory that could not be entered is an RE005 finding. The whole scan runs in one thread
    with the deep-recursion stack (:func:`_run_deep`), not one thread per file: creating two
    512 MiB-stack threads for every file cost 1 ms a file."""
    unscanned: list = []
    files = python_files(paths, unscanned)
    iterator: Iterable[Path] = files
    if progress and len(files) > 1:
        from tqdm import tqdm

        iterator = tqdm(files, desc="scanning", unit="file", file=sys.stderr, leave=False, mininterval=0.25)

    def scan_all() -> list[Finding]:
        found: list[Finding] = []
        for f in iterator:
            found.extend(scan_file(f, length=length, max_bytes=max_bytes))
        return found

    findings = _run_deep(scan_all)
    findings.extend(Finding.of(IO.DIRECTORY_NOT_SCANNED, f"not scanned: {why}", path=path) for path, why in unscanned)
    return ScanResult(select_findings(findings, select, ignore), len(files))
