"""What a cast does to a class's buffers: which buffers hold frequencies, which are complex, which
the class repairs after a cast (RP121, RP123); the dtype ``self.X`` has where it is read is
:meth:`~.dtypes.Dtypes._self_dtype`'s."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from ..rules import static_buffers as B
from .names import FREQ_BUFFER_NAME, FREQ_FUNC_NAME, NOT_FREQ_BUFFER, REPAIR_METHODS
from .structure import Structure
from .syntax import (Function, call_leaf, complex_construction, dotted_name, dtype_checked, explicit_float32,
                     float32_branch, frequency_expression, last_assignment, resolved_value, self_method_calls,
                     table_constructor, visibly_low)


# a registration with the class of the chain whose method makes it: (owner, *Registration)
OwnedRegistration = tuple[ast.ClassDef, str, ast.AST, ast.AST | None, Function]


class Buffers(Structure):
    """Mixin of :class:`~ropelaw.audit.static.checker.Checker`: a class's buffers before and after a cast."""

    def _is_frequency_buffer(self, name: str, value: ast.AST | None, meth: ast.AST) -> bool:
        """A buffer holds frequencies when named so (inv_freq, freqs, theta, omega, bands, periods;
        not cis/cos/sin/cache/emb/pos) or when its value (a local name followed to its assignment,
        a call followed into a function of the same file) builds them (:func:`frequency_expression`)."""
        if "cis" in name or NOT_FREQ_BUFFER.search(name) and "freq" not in name:
            return False
        if table_constructor(resolved_value(value, meth)):
            return False  # an (L, d) or (L, d/2, 2) table filled later (fairseq2's float32 sin/cos `freqs`)
        if FREQ_BUFFER_NAME.search(name):
            return True
        value = resolved_value(value, meth)
        if value is None:
            return False
        if isinstance(value, ast.Call):
            fname = dotted_name(value.func).split(".")[-1]
            if FREQ_FUNC_NAME.search(fname) and not NOT_FREQ_BUFFER.search(fname):
                return True
            target = self._module_funcs.get(fname)
            if target is not None:
                return any(frequency_expression(n.value, target) for n in ast.walk(target)
                           if isinstance(n, (ast.Return, ast.Assign)) and n.value is not None)
        return frequency_expression(value, meth)

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
            runs_at_construction = (meth.name in construction or not has_init) and meth.name not in REPAIR_METHODS
            how = self._complex_value(value, meth)
            if how:
                if runs_at_construction and name not in repaired and owner is cls:
                    kind = "parameter" if _registers_a_parameter(node) else "buffer"
                    self.report(B.COMPLEX_BUFFER_CAST_TO_REAL, node,
                                f"`{name}` is a complex {kind} (built with {how}): `model.to(torch.bfloat16)` "
                                "keeps only "
                                f"its real part, cos(m*theta), and drops the sine, so the encoding no longer rotates "
                                f"(`.bfloat16()` / `.half()` leave it complex)", buffer=name)
                continue
            if (node, value) in self._param_nodes:
                continue  # parameters: only their complex case is a rule here
            if not self._is_frequency_buffer(name, value, meth):
                continue
            found.add(name)
            if runs_at_construction:
                at_init[name] = at_init.get(name, True) and explicit_float32(value, meth)
            if name in repaired or owner is not cls:
                continue  # repaired after every cast; or registered by an in-file base (reported there)
            low = visibly_low(value)
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

    def _complex_value(self, value: ast.AST | None, fn: ast.AST | None, depth: int = 0) -> str:
        """How a registered value builds complex numbers (see :func:`complex_construction`), following a
        local name to its assignment, a function of the file (``precompute_freqs_cis(...)``) or a method
        ``self.m()`` implemented by any class of the file (a subclass's override counts: torchtitan's
        ``RoPE.__init__`` registers ``self._precompute_cache()``, which ``ComplexRoPE`` implements with
        ``torch.polar``) into its return values; "" when it does not."""
        if value is None or depth > 3:
            return ""
        how = complex_construction(value)
        if how:
            return how
        if isinstance(value, ast.Name):
            return self._complex_value(last_assignment(value.id, fn, getattr(value, "lineno", 1 << 30)), fn, depth + 1)
        if isinstance(value, ast.Call):
            leaf = call_leaf(value)
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

    def _repairs(self, cls: ast.ClassDef, chain: list[ast.ClassDef], regs: list[OwnedRegistration],
                 construction: frozenset[str]) -> set[str]:
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
        methods = {m.name: m for c in reversed(chain) for m in c.body
                   if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
        repaired = self._restored_after_cast(methods, regs)
        names = {name for _, name, _, _, _ in regs}
        # 3. lazy re-initialisation from forward
        repaired |= self._reinitialised_from_forward(methods, names)
        # 2. reads only behind a float32 dtype check
        later = self._reached(methods, (e for e in methods if e != "__init__"
                                        and (e not in construction or not e.startswith("_"))))
        return repaired | self._read_only_as_float32(methods, names - repaired, construction, later)

    def _reached(self, methods: dict[str, Function], start: Iterable[str]) -> set[str]:
        """The methods among ``methods`` that ``start`` reaches through ``self.m(...)`` calls (``start`` included)."""
        seen: set[str] = set()
        todo = list(start)
        while todo:
            m = todo.pop()
            if m in seen or m not in methods:
                continue
            seen.add(m)
            todo.extend(self_method_calls(methods[m], self.lines))
        return seen

    def _restored_after_cast(self, methods: dict[str, Function], regs: list[OwnedRegistration]) -> set[str]:
        """1. Buffers re-registered or reassigned (``self.X = <tensor>`` replaces a registered buffer too,
        ``Module.__setattr__``) from a fresh value in what an ``_apply`` / ``to`` / ``half`` ... override runs."""
        after_cast = self._reached(methods, (m for m in methods if m in REPAIR_METHODS))
        if not after_cast:
            return set()
        repaired = {name for _, name, _, value, meth in regs if meth.name in after_cast and _fresh(value, name)}
        repaired |= {t.attr for m in after_cast for n in ast.walk(methods[m]) if isinstance(n, ast.Assign)
                     for t in n.targets if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                     and t.value.id == "self" and _fresh(n.value, t.attr)}
        return repaired

    def _reinitialised_from_forward(self, methods: dict[str, Function], names: set[str]) -> set[str]:
        """3. Buffers among ``names`` that a method ``forward`` reaches (not ``__init__``) assigns or re-registers
        at its top level in explicit float32 from a fresh value."""
        repaired: set[str] = set()
        for m in self._reached(methods, ["forward"]) if "forward" in methods else ():
            if m == "__init__":
                continue
            for stmt in methods[m].body:
                if isinstance(stmt, ast.Assign):
                    for t in stmt.targets:
                        if (isinstance(t, ast.Attribute) and dotted_name(t) == f"self.{t.attr}" and t.attr in names
                                and _fresh(stmt.value, t.attr) and explicit_float32(stmt.value, methods[m])):
                            repaired.add(t.attr)
                elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                    name = _registered_name(stmt.value)
                    if (name in names and _fresh(stmt.value.args[1], name)
                            and explicit_float32(stmt.value.args[1], methods[m])):
                        repaired.add(name)
        return repaired

    def _read_only_as_float32(self, methods: dict[str, Function], pending: set[str], construction: frozenset[str],
                              later: set[str]) -> set[str]:
        """2. Buffers among ``pending`` whose every read (not of ``.dtype`` / ``.device`` / ``.shape`` /
        ``.ndim``) outside construction-only methods lies where a dtype check of it guarantees float32."""
        # one walk per method for every buffer name at once (a walk per name and method was
        # quadratic: 1,000 buffers read in forward took minutes)
        guarded_reads: dict[str, set[int]] = {name: set() for name in pending}
        reads: dict[str, set[int]] = {name: set() for name in pending}
        for mname, m in (methods.items() if pending else ()):
            if mname in construction and mname not in later:
                continue  # construction-only: no cast yet
            nodes = list(ast.walk(m))
            parents = {id(c): p for p in nodes for c in ast.iter_child_nodes(p)}
            for node in nodes:
                if isinstance(node, ast.If):
                    name = dtype_checked(node.test)
                    branch = float32_branch(node.test, name) if name is not None and name in pending else None
                    if name is not None and branch is not None:
                        for stmt in (node.orelse if branch == "else" else node.body):
                            guarded_reads[name].update(id(n) for n in ast.walk(stmt))
                        guarded_reads[name].update(id(n) for n in ast.walk(node.test))
                elif isinstance(node, ast.Attribute) and node.attr in pending \
                        and dotted_name(node) == f"self.{node.attr}" and isinstance(node.ctx, ast.Load):
                    parent = parents.get(id(node))
                    if isinstance(parent, ast.Attribute) and parent.attr in ("dtype", "device", "shape", "ndim"):
                        continue  # metadata, not the values
                    reads[node.attr].add(id(node))
        return {name for name in pending if reads[name] and reads[name] <= guarded_reads[name]}


def _fresh(value: ast.AST | None, name: str) -> bool:
    """Not visibly low precision and not computed from the (cast) buffer's values (its
    ``.device`` / ``.dtype`` may be read)."""
    if value is None or visibly_low(value):
        return False
    meta = {id(n.value) for n in ast.walk(value) if isinstance(n, ast.Attribute)
            and n.attr in ("device", "dtype", "shape", "ndim")}
    return not any(isinstance(n, ast.Attribute) and dotted_name(n) == f"self.{name}" and id(n) not in meta
                   for n in ast.walk(value))


def _registers_a_parameter(node: ast.AST) -> bool:
    """``self.X = nn.Parameter(...)`` or ``register_parameter(...)`` (not a buffer's registration)."""
    if isinstance(node, ast.Assign):
        return isinstance(node.value, ast.Call) and "Parameter" in dotted_name(node.value.func)
    return isinstance(node, ast.Call) and call_leaf(node) == "register_parameter"


def _registered_name(call: ast.Call) -> str | None:
    """X of ``register_buffer("X", value)`` (a name and a value given), None for any other call."""
    if (call_leaf(call) == "register_buffer" and len(call.args) >= 2 and isinstance(call.args[0], ast.Constant)
            and isinstance(call.args[0].value, str)):
        return call.args[0].value
    return None
