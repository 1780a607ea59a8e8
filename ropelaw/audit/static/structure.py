"""The file's structure as the checker needs it: which methods run at construction (the call graph
by name), a class's in-file bases, the buffers and parameters it registers, who calls a function
and with what dtype, and which ``with`` / decorator turns autocast on or off."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from .names import AUTOCAST_OFF_DECORATOR, INT_DTYPES, INT_TENSOR, POS_NAME
from .state import CheckerState, Registration
from .syntax import (Function, call_leaf, const_false, dotted_name, float_argument, keyword_value, passed_argument,
                     self_method_calls, unpacks)


class Structure(CheckerState):
    """Mixin of :class:`~ropelaw.audit.static.checker.Checker`: facts about the file, computed once."""

    def _call_graph(self) -> tuple[frozenset, frozenset]:
        """(methods that run at construction, methods that run only at construction), by name.

        Construction: ``__init__`` and the methods it calls as ``self.m(...)``, transitively (by
        name, over every class in the file, so a subclass's override counts). Later: every other
        method (``forward``, ``_apply``, ...) and what they call; a public method that ``__init__``
        calls counts as construction (torchtune's ``rope_init``: called again, it recomputes in float32).
        Construction-only = construction - later. No cast can have happened while construction-only code
        runs: ``model.to(dtype)`` needs a built module.
        """
        if self._graph is None:
            calls: dict[str, set[str]] = {}
            for cls in self._classes.values():
                for m in cls.body:
                    if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        calls.setdefault(m.name, set()).update(self_method_calls(m, self.lines))

            def closure(start: Iterable[str]) -> set[str]:
                seen, todo = set(), list(start)
                while todo:
                    m = todo.pop()
                    if m not in seen:
                        seen.add(m)
                        todo.extend(calls.get(m, ()))
                return seen

            construction = closure(["__init__"])
            # a public method that __init__ calls (torchtune's rope_init / build_rope_cache) is construction
            # too: it may be called again later, but then from the float32 recompute it does itself (issue 33:
            # torchtune's cache built only at construction was flagged 10 times). Entries are the methods
            # __init__ does not reach: forward, _apply, hooks, helpers only they call.
            entries = [m for m in calls if m != "__init__" and m not in construction]
            later = closure(entries)
            self._graph = (frozenset(construction), frozenset(construction - later))
        return self._graph

    def _class_chain(self, cls: ast.ClassDef) -> list[ast.ClassDef]:
        """The class and its base classes defined in the same file (nearest first)."""
        out: list[ast.ClassDef] = []
        todo = [cls]
        while todo:
            c = todo.pop(0)
            if c in out or len(out) > 20:
                continue
            out.append(c)
            todo.extend(self._classes[b.id] for b in c.bases if isinstance(b, ast.Name) and b.id in self._classes)
        return out

    def _family(self, owner: ast.ClassDef) -> list[ast.ClassDef]:
        """``owner``'s in-file subclasses (those with ``owner`` among their :meth:`_class_chain`, 20 levels
        at most) and its chain. The subclass index is built once: testing every class of the file for
        every owner was quadratic (4,000 classes: minutes)."""
        if self._subclasses is None:
            self._subclasses = {}
            for c in self._classes.values():
                for b in c.bases:
                    if isinstance(b, ast.Name) and b.id in self._classes and self._classes[b.id] is not c:
                        self._subclasses.setdefault(b.id, []).append(c)
        below: list[ast.ClassDef] = []
        seen, level = {id(owner)}, [owner]
        for _ in range(20):
            level = [s for c in level for s in self._subclasses.get(c.name, ()) if id(s) not in seen]
            seen.update(id(c) for c in level)
            below.extend(level)
            if not level:
                break
        return below + self._class_chain(owner)

    def _registrations(self, cls: ast.ClassDef) -> list[Registration]:
        """(buffer name, registering node, value, method) for each buffer the class's methods register:
        ``self.register_buffer("X", value)`` and ``self.X = nn.Buffer(value)`` (PyTorch >= 2.5). Computed
        once per class (every integer division asks, :meth:`Flow._tensor_attribute_operand`)."""
        hit = self._registrations_of.get(id(cls))
        if hit is None:
            hit = self._registrations_of[id(cls)] = self._registrations_walk(cls)
        return hit

    def _registrations_walk(self, cls: ast.ClassDef) -> list[Registration]:
        out: list[Registration] = []
        for meth in cls.body:
            if not isinstance(meth, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(meth):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "register_buffer" and node.args
                        and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                    value = node.args[1] if len(node.args) > 1 else keyword_value(node, "tensor")
                    out.append((node.args[0].value, node, value, meth))
                elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                      and dotted_name(node.value.func).split(".")[-1] == "Buffer"):
                    value = node.value.args[0] if node.value.args else keyword_value(node.value, "data")
                    for t in node.targets:
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                            out.append((t.attr, node, value, meth))
        return out

    def _plain_attrs_of(self, cls: ast.ClassDef) -> frozenset:
        """Attributes ``self.X = ...`` of the class and its in-file bases that are neither buffers nor parameters.

        ``Module.to(dtype)`` leaves them alone, so their dtype does not follow a cast. The bases count: an
        attribute a base's ``__init__`` assigns (TGI's ``PositionRotaryEmbedding.inv_freq``, read by its subclass
        ``RotaryPositionEmbeddingMultimodalSections``) is as plain in the subclass.
        """
        assigned: set[str] = set()
        registered: set[str] = set()
        for node in (n for c in self._class_chain(cls) for n in ast.walk(c)):
            if isinstance(node, ast.Assign):
                value = node.value
                is_param = isinstance(value, ast.Call) and dotted_name(value.func).split(".")[-1] in (
                    "Parameter", "Linear", "Embedding", "Buffer")
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        (registered if is_param else assigned).add(t.attr)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("register_buffer", "register_parameter") and node.args
                  and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                registered.add(node.args[0].value)
        return frozenset(assigned - registered)

    def _has_later_methods(self, owner: ast.ClassDef) -> bool:
        """The class family defines code that runs after construction (``forward``, a public method): only
        then can "nothing reads the buffer" be seen; a class of ``__init__`` alone is used from elsewhere."""
        _, construction_only = self._call_graph()
        family = self._family(owner)
        return any(isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name not in construction_only
                   and m.name != "__init__" for c in family for m in c.body)

    def _read_after_construction(self, owner: ast.ClassDef) -> frozenset:
        """Attributes ``X`` whose values a method of ``owner``'s family (its in-file bases and subclasses)
        reads as ``self.X`` outside construction-only code (``self.X.dtype`` / ``.device`` / ``.shape`` are
        metadata, not values). A buffer nobody reads after ``__init__`` cannot carry a cast into the encoding."""
        if owner.name not in self._read_later:
            _, construction_only = self._call_graph()
            family = self._family(owner)
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
                            if isinstance(parent, ast.Attribute) \
                                    and parent.attr in ("dtype", "device", "shape", "ndim"):
                                continue
                            reads.add(node.attr)
            self._read_later[owner.name] = frozenset(reads)
        return self._read_later[owner.name]

    def _parameters(self, cls: ast.ClassDef) -> list[Registration]:
        """(name, node, value, method) for ``self.X = nn.Parameter(v)`` and ``register_parameter("X", ...)``
        (computed once per class)."""
        hit = self._parameters_of.get(id(cls))
        if hit is None:
            hit = self._parameters_of[id(cls)] = self._parameters_walk(cls)
        return hit

    def _parameters_walk(self, cls: ast.ClassDef) -> list[Registration]:
        out: list[Registration] = []
        for meth in cls.body:
            if not isinstance(meth, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(meth):
                if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                        and dotted_name(node.value.func).split(".")[-1] == "Parameter"):
                    value = node.value.args[0] if node.value.args else keyword_value(node.value, "data")
                    for t in node.targets:
                        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                            out.append((t.attr, node, value, meth))
                elif (isinstance(node, ast.Call) and call_leaf(node) == "register_parameter" and len(node.args) >= 2
                      and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                    out.append((node.args[0].value, node, node.args[1], meth))
        self._param_nodes.update((n, v) for _, n, v, _ in out)
        return out

    def _calls_to(self, name: str) -> list[ast.Call]:
        """Every call ``name(...)`` / ``obj.name(...)`` in the file (index built once)."""
        if self._calls is None:
            calls: dict[str, list[ast.Call]] = {}
            for n in ast.walk(self._tree):
                if isinstance(n, ast.Call):
                    leaf = call_leaf(n)
                    if leaf:
                        calls.setdefault(leaf, []).append(n)
            self._calls = calls
        return self._calls.get(name, [])

    def _disables_autocast(self, dec: ast.AST) -> bool:
        """A decorator that runs the function with autocast off: ``autocast(..., enabled=False)`` called as a
        decorator, a name like ``disable_autocast``, or a function of this file whose body enters
        ``autocast(..., enabled=False)`` (x-transformers 2.31's ``disable_autocast``)."""
        if isinstance(dec, ast.Call):
            return self._autocast_state(dec) == "off"
        name = dotted_name(dec).split(".")[-1]
        if AUTOCAST_OFF_DECORATOR.search(name):
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
                        names = {call_leaf(n) for n in ast.walk(m)
                                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
                        (at_build if m.name in construction_only else elsewhere).update(names)
            for stmt in self._tree.body:  # module-level code and functions: not construction
                if id(stmt) in methods or isinstance(stmt, ast.ClassDef):
                    continue
                elsewhere.update(call_leaf(n) for n in ast.walk(stmt)
                                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Name))
            self._build_only = frozenset(at_build - elsewhere)
        return self._build_only

    def _integer_from_callers(self, fn: Function, param: str) -> bool:
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
            if unpacks(call):
                return False
            arg = passed_argument(call, param, fn)
            if arg is None:
                return False
            if isinstance(arg, ast.Attribute) and arg.attr == "dtype" and isinstance(arg.value, ast.Name) \
                    and (INT_TENSOR.search(arg.value.id) or POS_NAME.match(arg.value.id)):
                continue
            if isinstance(arg, ast.Attribute) and dotted_name(arg).startswith("torch.") and arg.attr in INT_DTYPES:
                continue
            return False
        return True

    def _integer_from_holders(self, fn: Function, param: str, cls: ast.ClassDef | None) -> bool:
        """``forward``'s ``param`` is an integer tensor in every call of this file: the module is held in an
        attribute (``self.rotary_pos_emb = RotaryEmbedding(...)``) and every ``self.rotary_pos_emb(q_pos)`` passes
        an expression built from ``arange`` without a dtype, integer constants and ``.shape`` entries
        (recurrent-memory-transformer: ``q_pos = pos + 10000``, ``pos = torch.arange(n)``). Needs one call at least;
        anything else (an argument of the caller, a float, ``*args``) makes it unknown."""
        if cls is None or getattr(fn, "name", "") != "forward":
            return False
        names = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]][1:]
        if param not in names:
            return False
        holders = set()
        for n in ast.walk(self._tree):
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Attribute) \
                    and isinstance(n.targets[0].value, ast.Name) and n.targets[0].value.id == "self":
                v = n.value.body if isinstance(n.value, ast.IfExp) else n.value
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == cls.name:
                    holders.add(n.targets[0].attr)
        if not holders:
            return False
        found = False
        for caller in ast.walk(self._tree):
            if not isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for call in ast.walk(caller):
                if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                        and call.func.attr in holders and isinstance(call.func.value, ast.Name)
                        and call.func.value.id == "self"):
                    continue
                if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                    return False
                arg = keyword_value(call, param)
                i = names.index(param)
                arg = arg if arg is not None else (call.args[i] if i < len(call.args) else None)
                if arg is None or not _integer_expr(arg, caller, frozenset()):
                    return False
                found = True
        return found

    def _autocast_state(self, expr: ast.AST) -> str | None:
        """"on" / "off" / "unknown" for an autocast context manager, None for anything else."""
        if not isinstance(expr, ast.Call):
            return None
        dotted = dotted_name(expr.func)
        if not (dotted.endswith("autocast") or dotted.split(".")[-1] == "autocast"):
            return None
        enabled = keyword_value(expr, "enabled")
        dev = keyword_value(expr, "device_type") or (expr.args[0] if expr.args else None)
        on = "on-cpu" if isinstance(dev, ast.Constant) and dev.value == "cpu" else "on"
        if enabled is None:
            return on
        if const_false(enabled):
            return "off"
        if isinstance(enabled, ast.Constant) and enabled.value is True:
            return on
        return "unknown"



def _integer_expr(e: ast.AST, fn: ast.AST, seen: frozenset[str]) -> bool:
    """``e`` is an integer tensor or number by construction in function ``fn``: an int constant, a ``.shape``
    entry, ``arange`` without a dtype or a float argument, ``+ - * //`` of such, ``cat`` / ``pad`` of such (pad's
    value an integer), or a name every assignment of which in ``fn`` is such (a name assigned from itself adds
    nothing; a parameter or a loop variable is unknown)."""
    if isinstance(e, ast.Constant):
        return type(e.value) is int
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        return _integer_expr(e.operand, fn, seen)
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
        return True
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        return _integer_expr(e.left, fn, seen) and _integer_expr(e.right, fn, seen)
    if isinstance(e, ast.Call):
        leaf = call_leaf(e)
        if leaf == "arange":
            dtype = keyword_value(e, "dtype")
            if dtype is not None:
                return isinstance(dtype, ast.Attribute) and dtype.attr in INT_DTYPES
            return not float_argument(e)  # int64 unless an argument is a float (the flow's rule)
        if leaf == "pad" and e.args:
            value = keyword_value(e, "value")
            return _integer_expr(e.args[0], fn, seen) and (value is None or _integer_expr(value, fn, seen))
        if leaf in ("cat", "concat") and e.args and isinstance(e.args[0], (ast.Tuple, ast.List)):
            return all(_integer_expr(x, fn, seen) for x in e.args[0].elts)
        return False
    if isinstance(e, ast.Name):
        if e.id in seen:
            return True
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and e.id in {
                a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}:
            return False
        seen = seen | {e.id}
        values = []
        for n in ast.walk(fn):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Name) and t.id == e.id:
                        values.append(n.value)
                    elif isinstance(t, (ast.Tuple, ast.List)) and any(
                            isinstance(x, ast.Name) and x.id == e.id for x in ast.walk(t)):
                        return False  # unpacked: not followed
            elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id == e.id:
                values.append(n.value)
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)) and any(
                    isinstance(x, ast.Name) and x.id == e.id for x in ast.walk(n.target)):
                return False
        return bool(values) and all(_integer_expr(v, fn, seen) for v in values)
    return False
