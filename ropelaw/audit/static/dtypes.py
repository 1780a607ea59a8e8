"""Where a dtype expression comes from: ``x.dtype``, ``self.X.dtype``, ``torch.bfloat16``,
``torch.get_default_dtype()``, a local alias, a template tensor of ``.to`` / ``.type_as``, an array
constructor's ``dtype=``."""

from __future__ import annotations

import ast

from .names import (ARRAY_CTORS, CLEAN_DTYPES, FLOAT32_DEFAULTS, INT_DTYPES, INT_TENSOR, LOW_DTYPES, MODEL_DTYPE_ATTR,
                    POS_NAME)
from .structure import Structure
from .syntax import Function, dotted_name, keyword_value, passed_argument, unpacks
from .values import DtypeSource, Scope


class Dtypes(Structure):
    """Mixin of :class:`~ropelaw.audit.static.checker.Checker`: the dtype an expression names."""

    def _constructed_dtype(self, value: ast.AST, name: str, scope: Scope) -> DtypeSource | None:
        """dtype of an array built by a constructor: ``np.zeros(n, dtype=np.int64)`` (an integer
        array), ``np.arange(n)`` (numpy's default, int64 or float64: never bf16), ``torch.zeros(n,
        dtype=torch.int64)``; None when unknown (a torch constructor without dtype follows the default)."""
        if not isinstance(value, ast.Call):
            return None
        dotted = dotted_name(value.func)
        leaf = dotted.split(".")[-1]
        if leaf not in ARRAY_CTORS:
            return None
        numpy = dotted.startswith(("np.", "numpy."))
        if not (numpy or dotted.startswith("torch.")):
            return None
        dtype_node = keyword_value(value, "dtype")
        if dtype_node is None:
            numpy_default = numpy and not leaf.endswith("_like")
            return DtypeSource(None, f"`{name}` (a numpy array)", True) if numpy_default else None
        d = self._dtype(dtype_node, scope)
        if d.source is not None:
            return d
        if d.known and d.what in INT_DTYPES | {"int64", "uint32", "uint64"}:
            return DtypeSource(None, f"`{name}` (an integer array)", True)
        if numpy and d.known:
            return DtypeSource(None, f"`{name}` (a numpy array)", True)
        return None

    def _self_dtype(self, dotted: str, scope: Scope | None = None) -> DtypeSource:
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
                return DtypeSource(None, f"`{dotted}`", True)  # Module.to does not cast it (or nothing cast it yet)
        return DtypeSource("buffer", f"`{dotted}`", True)

    def _float32_default(self, fn: Function, param: str, default: ast.AST | None) -> bool:
        """A ``dtype`` parameter that defaults to float32/float64 and that no call in this file fills
        with anything else (Megatron's ``compute_rope_params(..., dtype=torch.float32)``).

        A call passes a risky dtype when its argument for ``param`` (by keyword, or by position; a
        method called as ``obj.m(...)`` does not pass ``self``) is not visibly float32/float64, or
        when it passes ``*args`` / ``**kwargs`` we cannot match. Callers in other files are not seen.
        """
        if default is None:
            return False
        d = self._dtype(default, Scope())
        if d.source is not None or not d.known or d.what not in FLOAT32_DEFAULTS:
            return False
        for call in self._calls_to(fn.name):
            if unpacks(call):
                return False
            arg = passed_argument(call, param, fn)
            if arg is None:
                continue
            d = self._dtype(arg, Scope())
            if d.source is not None or not d.known or d.what not in FLOAT32_DEFAULTS:
                return False
        return True

    def _dtype(self, node: ast.AST | None, scope: Scope) -> DtypeSource:
        """Where a dtype expression comes from (``source`` None when clean or unknown)."""
        if node is None:
            return DtypeSource(None)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            t = node.value.replace("torch.", "")
            if t in LOW_DTYPES:
                return DtypeSource("low", t, True)
            return DtypeSource(None, t, t in CLEAN_DTYPES)
        if isinstance(node, ast.Attribute):
            if node.attr == "dtype":
                base = node.value
                while isinstance(base, ast.Subscript):
                    base = base.value
                dotted = dotted_name(base)
                if dotted.startswith("self."):
                    return self._self_dtype(dotted, scope)
                if isinstance(base, ast.Name) and base.id == "self" and self._float_dtype_attribute():
                    # self.dtype set in __init__ from a `dtype` argument asserted to be float32 / float64
                    # (audiocraft's RotaryEmbedding): not the model's precision, not an input's
                    return DtypeSource(None, "`self.dtype` (asserted float32 / float64)", True)
                if isinstance(base, ast.Name):
                    if base.id in scope.self_aliases:
                        return self._self_dtype(f"self.{scope.self_aliases[base.id]}", scope)
                    if base.id in scope.arrays:  # annotated or constructed with a known dtype
                        return scope.arrays[base.id]
                    held = scope.names.get(base.id)
                    if held is not None and held.kinds & {"pos", "angle"}:
                        return DtypeSource(held.source, held.what, True)  # positions' own dtype: as they are
                    if held is not None and "freq" in held.kinds and held.source is None:
                        return DtypeSource(None, f"`{base.id}`", True)
                    if INT_TENSOR.search(base.id) or POS_NAME.match(base.id):
                        return DtypeSource(None, f"`{base.id}`", True)  # an integer tensor's dtype
                    return DtypeSource("input", f"`{base.id}`", True)
                if dotted:
                    return DtypeSource("input", f"`{dotted}`", True)
                return DtypeSource(None)
            dotted = dotted_name(node)
            if dotted.startswith("self.") and dotted.count(".") == 1 and MODEL_DTYPE_ATTR.match(node.attr):
                # self.precision / self.params_dtype / self.dtype: the precision the model runs in (bf16 in a
                # bf16 run), whatever its value is at construction
                return DtypeSource("model", f"`{dotted}`", True)
            if dotted.startswith(("torch.", "np.", "numpy.", "jnp.")) or dotted in LOW_DTYPES:
                leaf = node.attr
                if leaf in LOW_DTYPES:
                    return DtypeSource("low", leaf, True)
                if leaf in CLEAN_DTYPES:
                    return DtypeSource(None, leaf, True)
            return DtypeSource(None)
        if isinstance(node, ast.Call):
            if dotted_name(node.func).endswith("get_default_dtype"):
                return DtypeSource("default", "`torch.get_default_dtype()`", True)
            return DtypeSource(None)
        if isinstance(node, ast.Name):
            if node.id in scope.dtypes:
                return scope.dtypes[node.id]
            if node.id in LOW_DTYPES:
                return DtypeSource("low", node.id, True)
            return DtypeSource(None)
        return DtypeSource(None)

    def _float_dtype_attribute(self) -> bool:
        """The class's ``__init__`` sets ``self.dtype = p`` from its argument ``p`` and asserts ``p in
        [torch.float64, torch.float32]`` (or ``p == torch.float32``): ``self.dtype`` is float32 / float64."""
        cls = self._class
        init = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None) \
            if cls is not None else None
        if init is None:
            return False
        params = {a.arg for a in [*init.args.args, *init.args.kwonlyargs]}
        source = next((n.value.id for n in ast.walk(init) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
                       and n.value.id in params and any(dotted_name(t) == "self.dtype" for t in n.targets)), None)
        if source is None:
            return False
        for n in ast.walk(init):
            if (isinstance(n, ast.Assert) and isinstance(n.test, ast.Compare) and len(n.test.ops) == 1
                    and isinstance(n.test.left, ast.Name) and n.test.left.id == source):
                right = n.test.comparators[0]
                allowed = right.elts if isinstance(n.test.ops[0], ast.In) \
                    and isinstance(right, (ast.List, ast.Tuple, ast.Set)) \
                    else [right] if isinstance(n.test.ops[0], ast.Eq) else []
                if allowed and all(dotted_name(e) in ("torch.float32", "torch.float64", "torch.float", "torch.double")
                                   for e in allowed):
                    return True
        return False

    def _tensor_dtype(self, node: ast.AST, scope: Scope) -> DtypeSource:
        """dtype of a tensor used as a template (``type_as(T)``, ``to(T)``)."""
        dotted = dotted_name(node)
        if dotted.startswith("self."):
            return self._self_dtype(dotted, scope)
        if isinstance(node, ast.Name):
            if node.id in scope.self_aliases:
                return self._self_dtype(f"self.{scope.self_aliases[node.id]}", scope)
            held = scope.names.get(node.id)
            if held is not None and (held.kinds & {"pos", "angle"} or "freq" in held.kinds):
                return DtypeSource(held.source, held.what, True)
            if "device" in node.id:
                return DtypeSource(None)
            return DtypeSource("input", f"`{node.id}`", True)
        return DtypeSource(None)

    def _cast_dtype(self, call: ast.Call, method: str, scope: Scope) -> DtypeSource | None:
        """The dtype a ``.to/.type/.type_as/.half/...`` call converts to; None if not a cast."""
        if method in ("half",):
            return DtypeSource("low", "float16", True)
        if method in ("bfloat16",):
            return DtypeSource("low", "bfloat16", True)
        if method in ("float", "double", "long", "int"):
            return DtypeSource(None, method, True)
        if method == "type_as" and call.args:
            return self._tensor_dtype(call.args[0], scope)
        if method in ("to", "type"):
            kw = keyword_value(call, "dtype")
            if kw is not None:
                return self._dtype(kw, scope)
            for arg in call.args:
                d = self._dtype(arg, scope)
                if d.known:
                    return d
            if (method == "to" and call.args and isinstance(call.args[0], ast.Name)
                    and call.args[0].id not in scope.dtypes):
                # .to(other_tensor): dtype and device of that tensor; .to(device): neither known
                name = call.args[0].id
                if "device" not in name and name not in ("dev", "device_type"):
                    return self._tensor_dtype(call.args[0], scope)
            target = call.args[0] if call.args else None
            if method == "to" and isinstance(target, ast.Attribute) and dotted_name(target).startswith("self.") \
                    and dotted_name(target).count(".") == 1 and not MODEL_DTYPE_ATTR.match(target.attr) \
                    and "device" not in target.attr:
                # .to(self.decay): the dtype (and device) of that buffer, bf16 after a cast (torchscale RetNet's
                # `torch.arange(slen).to(self.decay)`, then sin(index * angle): 293 of 2,048 exact in bf16)
                return self._tensor_dtype(target, scope)
            return None
        return None
