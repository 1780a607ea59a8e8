"""The dtype flow: what each expression holds (positions, frequencies, angles; integer, default
dtype, a low-precision source), how binary operations promote it and what a call does to it (casts,
products, ``arange``, cos/sin). Where a value meets a rule, it hands over to :mod:`.triggers`."""

from __future__ import annotations

import ast
from dataclasses import replace
from collections.abc import Iterable

from ..conventions import LENGTH_NAMES
from ..rules import static_buffers as B
from ..rules import static_defaults as DF
from ..rules import static_positions as P
from .buffers import Buffers
from .names import (ADD_PRODUCTS, COMPLEX_CALLS, DIM_WORDS, ELEMENTWISE_PRODUCTS, FREQ_NAME, INT_DTYPES, MATMUL_FUNCS,
                    NON_TORCH_ARRAYS, POSITION_WORDS, POS_NAME, PRESERVING, SLOPES_NAME, TRIG)
from .syntax import (call_leaf, complex_construction, dotted_name, einsum_contracts, explicit_float32, float_argument,
                     float_scalar_operand, float_tensor_operand, frequency_expression, keyword_value)
from .triggers import Triggers
from .values import NOTHING, DtypeSource, Scope, Val


_VISITORS: dict = {}  # (checker class, node type) -> its visit_<Type> function or None
# a length argument (``forward(self, slen)``): ``slen - 1`` is the last position (conventions' names, RetNet's slen)
_LENGTH_ARGS = frozenset(LENGTH_NAMES) | {"slen"}


def visitor(cls: type, node_type: type):
    """The ``visit_<Type>`` of a checker class for a node type (looked up once: the walk's hot path)."""
    key = (cls, node_type)
    try:
        return _VISITORS[key]
    except KeyError:
        _VISITORS[key] = fn = getattr(cls, "visit_" + node_type.__name__, None)
        return fn



def _half_last_axis(stop: ast.AST | None) -> bool:
    """``x.shape[-1] // 2`` or ``x.size(-1) // 2``: half the last axis of a tensor, the number of rotary pairs of
    a query or key (recurrentgemma's ``_apply_rope``), never a count of positions."""
    if not (isinstance(stop, ast.BinOp) and isinstance(stop.op, ast.FloorDiv)
            and isinstance(stop.right, ast.Constant) and stop.right.value == 2):
        return False
    x = stop.left

    def minus_one(n: ast.AST) -> bool:
        return (isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub) and isinstance(n.operand, ast.Constant)
                and n.operand.value == 1)

    if isinstance(x, ast.Subscript) and isinstance(x.value, ast.Attribute) and x.value.attr == "shape":
        return minus_one(x.slice)
    return (isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute) and x.func.attr == "size"
            and len(x.args) == 1 and minus_one(x.args[0]))

class Flow(Buffers, Triggers):
    """Mixin of :class:`~ropelaw.audit.static.checker.Checker`: expressions to values."""

    def _bind(self, target: ast.AST, val: Val, value: ast.AST, scope: Scope) -> None:
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
                if kinds == {"expo"} and val.integer:
                    pass  # integer pair indices named `freq` (recurrentgemma): still exponents, not frequencies
                elif FREQ_NAME.search(name) or (scope.alibi and SLOPES_NAME.search(name)):
                    kinds.discard("pos")
                    kinds.add("freq")
                elif POS_NAME.match(name):
                    kinds.add("pos")
            scope.names[name] = replace(val, kinds=frozenset(kinds))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                if isinstance(elt, ast.Name):
                    scope.names.pop(elt.id, None)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            # self.inv_freq = ...: a plain attribute, not cast by Module.to; on a registered buffer (or
            # nn.Buffer(...)) it replaces the buffer: float32 from here on when the value is float32
            if target.attr in scope.freq_buffers and explicit_float32(value, self._fn):
                scope.repaired.add(target.attr)
            if self._class is not None and "angle" in val.kinds and not val.source:
                # self.emb = <float32 angles>: other methods of the class read them as angles (gpt-neox get_emb)
                self._angle_attrs[(self._class.name, target.attr)] = True

    def _expr(self, node: ast.AST | None, scope: Scope) -> Val:
        """Dispatch an expression to its ``visit_<Type>``; one without a visitor holds nothing itself, but
        what is inside it is followed (a call in an f-string, a comparison's operands)."""
        if node is None:
            return NOTHING
        visit = visitor(type(self), type(node))
        if visit is not None:
            return visit(self, node, scope)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._expr(child, scope)
        return NOTHING

    # ------------------------------------------------------------------ expressions
    def visit_Name(self, node: ast.Name, scope: Scope) -> Val:
        held = scope.names.get(node.id)
        if held is not None:
            return held
        if POS_NAME.match(node.id):
            return Val(frozenset({"pos"}))
        if FREQ_NAME.search(node.id) or (scope.alibi and SLOPES_NAME.search(node.id)):
            return Val(frozenset({"freq"}))
        return NOTHING

    def visit_Attribute(self, node: ast.Attribute, scope: Scope) -> Val:
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            if node.attr in scope.freq_buffers:
                # still in the buffer's dtype: bf16 after a cast, unless restored / not yet cast
                castable = self._self_dtype(f"self.{node.attr}", scope).source == "buffer"
                return Val(frozenset({"freq"}), buffer=node.attr if castable else "")
            if FREQ_NAME.search(node.attr) or (scope.alibi and SLOPES_NAME.search(node.attr)):
                return Val(frozenset({"freq"}))
            if self._class is not None and (self._class.name, node.attr) in self._angle_attrs:
                return Val(frozenset({"angle"}))
            return NOTHING
        inner = self._expr(node.value, scope)
        if node.attr in ("shape", "dtype", "device", "ndim", "size"):
            return NOTHING
        return inner if node.attr in ("T", "mT", "real") else NOTHING

    def visit_Subscript(self, node: ast.Subscript, scope: Scope) -> Val:
        self._expr(node.slice, scope)
        return self._expr(node.value, scope)

    def visit_BinOp(self, node: ast.BinOp, scope: Scope) -> Val:
        left = self._expr(node.left, scope)
        right = self._expr(node.right, scope)
        if isinstance(node.op, ast.Pow):
            # base ** (arange(0, d, 2) / d): frequency construction; in the default dtype when its
            # exponent is (the finding held on the exponent travels with the frequencies)
            if right.default or left.default:
                return Val(frozenset(), pending=left.pending + right.pending, default=True)
            return NOTHING
        if (isinstance(node.op, ast.Sub) and isinstance(node.left, ast.Name) and not left.kinds
                and isinstance(node.right, ast.Constant) and type(node.right.value) is int
                and node.left.id in _LENGTH_ARGS and node.left.id in self._own_parameters()):
            # `slen - 1` of a length argument: the last position, a Python int (RetNet's recurrent step)
            return Val(frozenset({"pos"}), scalar=True, origin=(node.lineno, f"`{node.left.id} - {node.right.value}`"))
        return self._combine(left, right, node, scope, op=node.op)

    def _own_parameters(self) -> set[str]:
        """The names of the enclosing function's parameters."""
        fn = self._fn
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return set()
        return {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}

    def visit_UnaryOp(self, node: ast.UnaryOp, scope: Scope) -> Val:
        return self._expr(node.operand, scope)

    def visit_IfExp(self, node: ast.IfExp, scope: Scope) -> Val:
        self._expr(node.test, scope)
        a, b = self._expr(node.body, scope), self._expr(node.orelse, scope)
        return a if a.kinds else b

    def visit_Tuple(self, node: ast.Tuple | ast.List, scope: Scope) -> Val:
        return self._union([self._expr(e, scope) for e in node.elts])

    visit_List = visit_Tuple

    def _opaque(self, node: ast.AST, scope: Scope) -> Val:
        """A lambda or comprehension: its own scope, not followed."""
        return NOTHING

    visit_Lambda = visit_GeneratorExp = visit_ListComp = visit_SetComp = visit_DictComp = _opaque

    def _combine(self, a: Val, b: Val, node: ast.AST, scope: Scope, *, op: ast.AST | None = None,
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
            scalar = isinstance(op, ast.Mult) and float_scalar_operand(node, a, b, self._float_scalar_memo)
            # int64 stays int64 under + - * // % with integers; true division gives a float
            integer = (a.integer or b.integer) and not isinstance(op, ast.Div) and "angle" not in kinds and not scalar
            pending = a.pending + b.pending
            default = a.default or b.default
            if ((isinstance(op, ast.Div) or scalar) and (a.integer or b.integer) and not (a.source or b.source)
                    and not default  # one finding per value: a chain `1.5 * t * t * ...` is made default once
                    and not (a.kinds | b.kinds) & {"freq", "angle"}
                    and not float_tensor_operand(node, a, b, self._float_tensor_memo)
                    and not self._tensor_attribute_operand(node, a)):
                # int64 / k: true division gives a float in torch's default dtype (no dtype to follow)
                default = True
                pending = pending + (self._default_dtype_finding(node, a.kinds | b.kinds),)
            bound = (a.bound if "pos" in a.kinds else b.bound) if isinstance(op, (ast.Sub, ast.FloorDiv)) else None
            return Val(kinds, src.source, src.what, src.reported or a.reported or b.reported, pending,
                       integer=integer, buffer=a.buffer or b.buffer, maybe=a.maybe + b.maybe, default=default,
                       bound=bound, origin=a.origin if "pos" in a.kinds else b.origin)
        return NOTHING

    def _position_bound(self, call: ast.Call) -> int | None:
        """How many positions ``arange(stop)`` (one argument) makes, when the file says: a constant, or a
        parameter of the enclosing function whose constant default no call in the file overrides with
        anything but a constant (diffusers' ``SinusoidalPositionalEmbedding(embed_dim, max_seq_length=32)``).
        None when unknown; callers in other files are not seen."""
        if len(call.args) != 1 or call.keywords and any(k.arg not in ("device", "dtype") for k in call.keywords):
            return None
        stop = call.args[0]
        if isinstance(stop, ast.Constant) and isinstance(stop.value, int) and not isinstance(stop.value, bool):
            return stop.value
        fn = self._fn
        if not isinstance(stop, ast.Name) or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        names = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
        # equal lengths by the syntax tree's construction (see Checker._function)
        defaults = dict(zip(names[len(names) - len(fn.args.defaults):], fn.args.defaults, strict=True))
        defaults.update((a.arg, d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True)
                        if d is not None)
        default = defaults.get(stop.id)
        if not (isinstance(default, ast.Constant) and isinstance(default.value, int)):
            return None
        bound = default.value
        cls = self._class if fn.name == "__init__" else None
        init = cls is not None
        callee = cls.name if cls is not None else fn.name
        method = bool(names) and names[0] in ("self", "cls")
        for c in self._calls_to(callee):
            if any(isinstance(a, ast.Starred) for a in c.args) or any(k.arg is None for k in c.keywords):
                return None
            arg = keyword_value(c, stop.id)
            if arg is None and stop.id in names:
                i = names.index(stop.id) - (1 if method and (init or isinstance(c.func, ast.Attribute)) else 0)
                arg = c.args[i] if 0 <= i < len(c.args) else None
            if arg is None:
                continue
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, int)):
                return None
            bound = max(bound, arg.value)
        return bound

    def _tensor_attribute_operand(self, node: ast.AST, a: Val) -> bool:
        """The other operand of an integer division is ``self.X`` with X a buffer or parameter of the class:
        a tensor, whose dtype the quotient takes (not the default one)."""
        if not isinstance(node, ast.BinOp) or self._class is None:
            return False
        other = node.right if a.integer else node.left
        dotted = dotted_name(other)
        if not dotted.startswith("self.") or dotted.count(".") != 1:
            return False
        regs = {name for c in self._class_chain(self._class) for name, *_ in self._registrations(c)}
        regs |= {name for c in self._class_chain(self._class) for name, *_ in self._parameters(c)}
        return dotted.split(".")[1] in regs

    def _arange(self, call: ast.Call, dotted: str, leaf: str, scope: Scope) -> Val:
        """A torch ``arange``: frequency exponents (with a step), a query's pair indices, a feature axis, or
        positions, with the dtype they are made in."""
        has_step = len(call.args) >= 3 or keyword_value(call, "step") is not None
        if has_step and not (len(call.args) >= 3 and isinstance(call.args[2], ast.Constant)
                             and call.args[2].value == 1):
            # arange(0, dim, 2): frequency exponents, not positions; an integer tensor unless a dtype or a
            # float argument says otherwise (then torch's default dtype)
            dtype_node = keyword_value(call, "dtype")
            if dtype_node is None:
                if float_argument(call):
                    return Val(frozenset({"expo"}), default=True,
                               pending=(self._default_dtype_finding(call, {"expo"}),))
                return Val(frozenset({"expo"}), integer=True)
            dt = self._dtype(dtype_node, scope)
            return Val(frozenset({"expo"}), integer=dt.known and dt.what in INT_DTYPES)
        stop = call.args[1] if len(call.args) >= 2 else (call.args[0] if call.args else keyword_value(call, "end"))
        words = [n.id if isinstance(n, ast.Name) else n.attr
                 for n in ast.walk(stop) if isinstance(n, (ast.Name, ast.Attribute))] if stop is not None else []
        if _half_last_axis(stop) and not (dotted.startswith(NON_TORCH_ARRAYS)
                                          or keyword_value(call, "dtype") is not None or float_argument(call)):
            # arange(x.shape[-1] // 2): the pair indices of a query's last axis, exponents as arange(0, d, 2)
            # holds them (2 * i / d takes the default dtype: RP116; recurrentgemma's _apply_rope)
            return Val(frozenset({"expo"}), integer=True)
        if any(DIM_WORDS.search(w) and not POSITION_WORDS.search(w) for w in words):
            # arange(head_dim // 2): over a feature dimension, not positions. Not read as exponents: it also
            # builds embeddings of values that are not positions (BS-RoFormer's flow time), a false RP116 there
            return NOTHING
        dtype_node = keyword_value(call, "dtype")
        dt = self._dtype(dtype_node, scope)
        if dt.source == "input" and dotted.startswith(("np.", "numpy.")):
            # numpy.arange accepts only numpy dtypes: X in dtype=X.dtype is a numpy array, not a
            # model activation (numpy has no bfloat16); vLLM's np.arange(..., dtype=out.dtype)
            dt = DtypeSource(None, f"{dt.what} (a numpy array)", True)
        if dt.source:
            return self._positions_cast(call, Val(frozenset({"pos"}), origin=(call.lineno, f"`{dotted or leaf}`")),
                                        dt, scope, created=True)
        # int64 unless a dtype is given or an argument is a float (then the default dtype)
        if dtype_node is None and float_argument(call):
            return Val(frozenset({"pos"}), default=True, pending=(self._default_dtype_finding(call, {"pos"}),))
        integer = dt.what in INT_DTYPES if dtype_node is not None else True
        return Val(frozenset({"pos"}), integer=integer, bound=self._position_bound(call),
                   origin=(call.lineno, f"`{dotted or leaf}`"))

    def visit_Call(self, call: ast.Call, scope: Scope) -> Val:
        """What a call does to its values: ``arange`` / ``linspace``, products, cos/sin, casts, buffers."""
        func = call.func
        dotted = dotted_name(func)
        leaf = func.attr if isinstance(func, ast.Attribute) else (func.id if isinstance(func, ast.Name) else "")
        # method call on a tensor expression: receiver.method(...)
        receiver = None
        if isinstance(func, ast.Attribute) and not dotted.startswith(("torch.", "F.", "math.") + NON_TORCH_ARRAYS):
            receiver = func.value
        complex_ctor = (leaf in COMPLEX_CALLS or dotted == "torch.complex"
                        or (leaf == "exp" and any(complex_construction(a) == "a complex literal" for a in call.args)))
        if complex_ctor:  # casts of angles right inside it are reported as RP114 (see _angles_cast)
            self._complex_args.update(id(n) for a in call.args for n in ast.walk(a) if isinstance(n, ast.Call))
        args = [self._expr(a, scope) for a in call.args]
        for k in call.keywords:
            if k.arg != "dtype":
                self._expr(k.value, scope)
        made = self._range_call(call, dotted, leaf, receiver is not None, scope)
        if made is not None:
            return made
        if receiver is not None and isinstance(func, ast.Attribute):
            return self._method_call(call, func, args, scope)
        return self._function_call(call, dotted, leaf, args, scope)

    def _range_call(self, call: ast.Call, dotted: str, leaf: str, method: bool, scope: Scope) -> Val | None:
        """What ``arange`` / ``linspace`` make (``method``: called on a tensor expression); None for other calls."""
        if (leaf in ("arange", "linspace") and dotted.startswith(NON_TORCH_ARRAYS)
                and keyword_value(call, "dtype") is None):
            # numpy / jax arrays without a dtype: int64 / k is float64 there, no torch default dtype
            # (mesh-transformer-jax); with a dtype the rules below apply (np.arange(n, dtype=np.float16))
            return Val(frozenset({"pos"})) if leaf == "arange" and len(call.args) < 3 else NOTHING
        if leaf == "arange" and (not method or dotted.endswith(".arange")):
            return self._arange(call, dotted, leaf, scope)
        if (leaf == "linspace" and (not method or dotted.endswith(".linspace"))
                and keyword_value(call, "dtype") is None):
            # linspace without a dtype: torch's default dtype (positions or exponents, said when it meets an angle)
            return Val(frozenset({"expo"}), default=True,
                       pending=(self._default_dtype_finding(call, {"expo"}),))
        return None

    def _function_call(self, call: ast.Call, dotted: str, leaf: str, args: list[Val], scope: Scope) -> Val:
        """What a function call (``torch.f(...)``, ``f(...)``) does to its arguments' values: products, joins,
        cos/sin."""
        if leaf in ("einsum",):
            return self._einsum(call, dotted, args[1:], scope)
        if (leaf in MATMUL_FUNCS or leaf in ELEMENTWISE_PRODUCTS) and len(args) >= 2:
            return self._combine(args[0], args[1], call, scope, op=None,
                                 spelling=None if dotted.startswith(NON_TORCH_ARRAYS) else leaf)
        if leaf in ADD_PRODUCTS and len(args) >= 3:
            # addr(M, v1, v2), baddbmm(M, b1, b2), addmm, addbmm, addmv: M + v1 (x) v2, on CUDA autocast's list
            return self._combine(args[1], args[2], call, scope, op=None, spelling=leaf)
        if leaf in ("cat", "stack", "concat", "concatenate", "broadcast_to", "where"):
            return self._union(args)
        if leaf in TRIG:
            if leaf == "exp" and (frequency_expression(call) or any(
                    isinstance(n, ast.Call) and call_leaf(n) == "log" for a in call.args for n in ast.walk(a))):
                # exp(k * -log(base) / n) = base^(-k/n): frequency construction (fairseq2's sin table), not an
                # encoding: its arange holds exponents, so only a default dtype there is a finding (RP116)
                held = tuple(self._default_dtype_finding(p[1], {"expo"}) for a in args for p in a.pending
                             if p[0] in (DF.POSITIONS_IN_IMPLICIT_DEFAULT_DTYPE,
                                         DF.FREQUENCIES_IN_IMPLICIT_DEFAULT_DTYPE))
                return Val(frozenset({"freq"}), pending=held, default=any(a.default for a in args))
            self._flush(*args, at=call)
        return NOTHING

    def _einsum(self, call: ast.Call, dotted: str, ops: list[Val], scope: Scope) -> Val:
        """An ``einsum`` of its operands' values ``ops``: an angle when positions meet frequencies."""
        freq = next((v for v in ops if "freq" in v.kinds), None)
        pos = next((v for v in ops if "pos" in v.kinds), None)
        if pos is None and freq is not None:
            pos = next((self._as_positions(v) for v in ops if "castpos" in v.kinds), None)
        if pos is not None and freq is not None:
            torch_op = not dotted.startswith(NON_TORCH_ARRAYS)  # np.einsum: no autocast reaches it
            return self._angle(call, pos, freq, scope, "einsum" if torch_op else None,
                               einsum_contracts=einsum_contracts(call))
        return self._union(ops)

    def _method_call(self, call: ast.Call, func: ast.Attribute, args: list[Val], scope: Scope) -> Val:
        """What ``receiver.method(...)`` on a tensor expression does: cos/sin, products, casts, re-registrations,
        a cache rebuilt after a cast (RP122)."""
        base = self._expr(func.value, scope)
        method = func.attr
        if method in TRIG:
            self._flush(base, at=call)
            return NOTHING
        if method == "cumsum" and scope.alibi:
            return Val(frozenset({"pos"}), base.source, base.what, base.reported)
        if (method in MATMUL_FUNCS or method in ELEMENTWISE_PRODUCTS) and args:
            # t.matmul / mm / bmm / mv / outer / ger / mul / multiply (policy.PYTHON_PRODUCTS' spellings)
            return self._combine(base, args[0], call, scope, op=None, spelling=method)
        if method in ADD_PRODUCTS and len(args) >= 2:  # M.addr(v1, v2), M.baddbmm(b1, b2)
            return self._combine(args[0], args[1], call, scope, op=None, spelling=method)
        if method in ("to", "type", "type_as", "half", "bfloat16", "float", "double", "long", "int"):
            return self._cast(call, method, base, scope)
        if method in PRESERVING or method in ("__getitem__",):
            return base
        if method == "register_buffer":
            # re-registered in float32 (dynamic scaling after a cast): the buffer is float32 below
            if (len(call.args) >= 2 and isinstance(call.args[0], ast.Constant)
                    and call.args[0].value in scope.freq_buffers and explicit_float32(call.args[1], self._fn)):
                scope.repaired.add(call.args[0].value)
            return NOTHING
        if self._is_cache_rebuild(call, method, func.value, scope):
            self.report(B.CACHE_REBUILT_AFTER_CAST, call,
                        f"`self.{method}(...)` rebuilds the cos/sin cache with the input's dtype from the float "
                        f"buffer `{sorted(scope.freq_buffers - self._repaired)[0]}`, after `model.to(bfloat16)` "
                        f"has rounded it")
        return NOTHING

    def _cast(self, call: ast.Call, method: str, base: Val, scope: Scope) -> Val:
        """What ``base.to / .type / .type_as / .half / .float ...(...)`` holds: positions or angles cast to a risky
        dtype are reported (:meth:`_positions_cast`, :meth:`_angles_cast`)."""
        dt = self._cast_dtype(call, method, scope)
        if dt is None:
            return base  # .to(device)
        if not dt.known:
            return base
        if dt.source is None:
            # converted to a clean dtype: no new rounding from here on (an earlier one stays)
            return Val(base.kinds - {"castpos"}, None, "", base.reported, base.pending,
                       integer=dt.what in INT_DTYPES, default=False)
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
        return NOTHING

    def _union(self, vals: Iterable[Val]) -> Val:
        vals = list(vals)
        kinds = frozenset().union(*[v.kinds for v in vals]) if vals else frozenset()
        src = next((v for v in vals if v.source), None)
        pending = tuple(p for v in vals for p in v.pending)
        return Val(kinds, src.source if src else None, src.what if src else "", bool(src and src.reported), pending)
