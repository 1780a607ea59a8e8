"""The checker: walks one module's statements and dispatches each to its visitor; the dtype flow
(:mod:`.flow`, :mod:`.dtypes`), the file's structure (:mod:`.structure`), buffers (:mod:`.buffers`)
and the rule triggers (:mod:`.triggers`) are its mixins, each inheriting the ones it uses, and all of them
:class:`~.state.CheckerState`, where their shared state is declared. It only appends findings (pyflakes'
role split); :mod:`ropelaw.report` formats them."""

from __future__ import annotations

import ast
import sys
from collections.abc import Sequence

from .flow import Flow, visitor
from .names import FREQ_NAME, INT_POS_ARG, POS_NAME, ROTARY_NAME, TRIGGERS
from .state import path_suffix
from .syntax import annotation_dtype
from .values import NOTHING, DtypeSource, Scope, Val

DEFAULT_LENGTH = 8192  # the seed's context: bf16 keeps 896 of 8,192 positions


class Checker(Flow):
    """Walks one module and appends findings to :attr:`findings` (pyflakes' role split)."""

    def __init__(self, tree: ast.Module, path: str = "-", source: str = "", *, length: int = DEFAULT_LENGTH):
        super().__init__(tree, path, source, length)
        # each level of a nested expression is two frames, _expr and its visit_<Type>: the walk gets twice
        # the caller's recursion limit, so that limit still counts levels (scan's _DEEP_RECURSION)
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(2 * limit)
        try:
            self._module(tree)
        except RecursionError:
            self.incomplete = True  # an absurdly deep expression: never a silent all-clear
        finally:
            sys.setrecursionlimit(limit)

    def _relevant(self, node: ast.AST) -> bool:
        """Cheap text test: does the node's source mention any trigger word?"""
        start, end = getattr(node, "lineno", 1), getattr(node, "end_lineno", None) or len(self.lines)
        text = "\n".join(self.lines[start - 1:end])
        return any(w in text for w in TRIGGERS)

    # ------------------------------------------------------------------ structure
    def _module(self, tree: ast.Module) -> None:
        self._tree = tree
        self._calls = None  # by callee name, built when first needed
        self._classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        self._module_funcs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self._graph = None
        scope = Scope()
        self._block(tree.body, scope)

    def _class_def(self, node: ast.ClassDef) -> None:
        if not self._relevant(node):
            return
        saved = (self._class, self._class_buffers, self._plain_attrs, self._repaired, self._float32_at_init)
        self._class = node
        self._plain_attrs = None  # computed by _self_dtype when first needed (speed)
        self._class_buffers = self._buffers_of(node)
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._function(stmt, Scope(), method=True)
            elif isinstance(stmt, ast.ClassDef):
                self._class_def(stmt)
        (self._class, self._class_buffers, self._plain_attrs, self._repaired, self._float32_at_init) = saved

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope, method: bool = False) -> None:
        # a method of a class with a frequency buffer may rebuild a cache (RP122) without a trigger word
        if not self._class_buffers and not self._relevant(node):
            return
        inner = Scope()
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        # the defaults belong to the last positional parameters, and kw_defaults pairs with kwonlyargs (None: no
        # default): equal lengths by the syntax tree's construction
        defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults,
                            strict=True))
        defaults.update((a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None)
        for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if a is not None:
                inner.params.add(a.arg)
                ann = annotation_dtype(a.annotation, a.arg)
                if ann is not None:
                    inner.arrays[a.arg] = ann
                if a.arg == "dtype" or a.arg.endswith("_dtype"):
                    if self._float32_default(node, a.arg, defaults.get(a.arg)):
                        inner.dtypes[a.arg] = DtypeSource(None, f"the `{a.arg}` argument (float32 by default; no "
                                                          f"call in this file passes another dtype)", True)
                    elif self._integer_from_callers(node, a.arg):
                        # every caller passes an integer dtype (lit-llama: dtype=idx.dtype of int64 token ids)
                        inner.dtypes[a.arg] = DtypeSource(None, "int64", True)
                    else:
                        inner.dtypes[a.arg] = DtypeSource("caller", f"the `{a.arg}` argument", True)
                elif POS_NAME.match(a.arg):
                    # position_ids / cache_position arguments are integer tensors by convention (LongTensor)
                    integer = bool(INT_POS_ARG.match(a.arg)) or self._integer_from_holders(node, a.arg, self._class)
                    inner.names[a.arg] = Val(frozenset({"pos"}), integer=integer,
                                             origin=(node.lineno, f"the argument `{a.arg}` of `{node.name}`"))
                elif FREQ_NAME.search(a.arg):
                    inner.names[a.arg] = Val(frozenset({"freq"}))
        cls_name = self._class.name if self._class is not None else ""
        inner.alibi = scope.alibi or "alibi" in node.name.lower() or "alibi" in cls_name.lower()
        inner.rotary = (scope.rotary or inner.alibi or bool(self._class_buffers)
                        or bool(ROTARY_NAME.search(node.name) or ROTARY_NAME.search(cls_name))
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
        saved_deferred, self._deferred = self._deferred, []
        self._block(node.body, inner)
        for rule, at, msg, fix, data in self._deferred:  # cast positions this function never used: returned
            self.report(rule, at, msg + path_suffix(data), fix, **data)
        self._deferred = saved_deferred
        self._autocast, self._fn = saved, saved_fn

    def _block(self, body: Sequence[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            self._stmt(stmt, scope)

    def _stmt(self, stmt: ast.stmt, scope: Scope) -> None:
        """Dispatch a statement to its ``visit_<Type>``; statements without one hold nothing to follow."""
        visit = visitor(type(self), type(stmt))
        if visit is not None:
            visit(self, stmt, scope)

    # ------------------------------------------------------------------ statements
    def visit_FunctionDef(self, stmt: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope) -> None:
        for d in stmt.decorator_list:
            self._expr(d, scope)
        self._function(stmt, scope)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, stmt: ast.ClassDef, scope: Scope) -> None:
        self._class_def(stmt)

    def visit_Assign(self, stmt: ast.Assign, scope: Scope) -> None:
        val = self._expr(stmt.value, scope)
        for t in stmt.targets:
            self._bind(t, val, stmt.value, scope)

    def visit_AnnAssign(self, stmt: ast.AnnAssign, scope: Scope) -> None:
        if stmt.value is not None:
            self._bind(stmt.target, self._expr(stmt.value, scope), stmt.value, scope)

    def visit_AugAssign(self, stmt: ast.AugAssign, scope: Scope) -> None:
        val = self._expr(stmt.value, scope)
        if isinstance(stmt.target, ast.Name):
            old = scope.names.get(stmt.target.id, NOTHING)
            scope.names[stmt.target.id] = self._combine(old, val, stmt, scope, op=stmt.op)

    def visit_With(self, stmt: ast.With | ast.AsyncWith, scope: Scope) -> None:
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

    visit_AsyncWith = visit_With

    def visit_If(self, stmt: ast.If | ast.While, scope: Scope) -> None:
        self._expr(stmt.test, scope)
        self._block(stmt.body, scope)
        self._block(stmt.orelse, scope)

    visit_While = visit_If

    def visit_For(self, stmt: ast.For | ast.AsyncFor, scope: Scope) -> None:
        self._expr(stmt.iter, scope)
        self._block(stmt.body, scope)
        self._block(stmt.orelse, scope)

    visit_AsyncFor = visit_For

    def visit_Try(self, stmt: ast.Try, scope: Scope) -> None:
        self._block(stmt.body, scope)
        for h in stmt.handlers:
            self._block(h.body, scope)
        self._block(stmt.orelse, scope)
        self._block(stmt.finalbody, scope)

    visit_TryStar = visit_Try

    def visit_Return(self, stmt: ast.Return | ast.Expr, scope: Scope) -> None:
        if stmt.value is not None:
            self._expr(stmt.value, scope)

    visit_Expr = visit_Return

    def visit_Match(self, stmt, scope: Scope) -> None:
        self._expr(stmt.subject, scope)
        for case in stmt.cases:
            self._block(case.body, scope)
