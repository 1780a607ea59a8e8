"""When the rules fire: a position cast (RP101-RP104, RP115), angles cast or computed in low precision
(RP111, RP114), an angle product autocast lowers (RP112, RP113, read against
:mod:`ropelaw.audit.policy`), ALiBi (RP131, RP132), a cache rebuilt after a cast (RP122); and the
numbers in their messages (:func:`ropelaw.formats.exact_positions` at the checker's length)."""

from __future__ import annotations

import ast

from ...findings import Rule
from .. import policy
from ..rules import static_alibi as A
from ..rules import static_defaults as DF
from ..rules import static_positions as P
from ..rules import static_products as X
from .dtypes import Dtypes
from .names import CACHE_METHOD
from .state import path_suffix
from .values import DtypeSource, Scope, Val

# the trainer precision that sets the default dtype to bf16 (Lightning/Fabric 'bf16-true'), named by the policy
_BF16_TRUE = policy.default_dtype_precisions("bf16")[0]

_SOURCE_RULE = {"buffer": P.POSITIONS_IN_BUFFER_DTYPE, "input": P.POSITIONS_IN_INPUT_DTYPE,
                "model": P.POSITIONS_IN_INPUT_DTYPE,
                "caller": P.POSITIONS_IN_INPUT_DTYPE, "default": P.POSITIONS_IN_DEFAULT_DTYPE,
                "low": P.POSITIONS_IN_LOW_PRECISION}

def _product_words(product: str, device: str) -> str:
    """How a lowered product is named in messages: why autocast reaches it."""
    op = policy.PYTHON_PRODUCTS.get(product, product)
    where = "CUDA" if device == "cuda" else "CPU"
    shown = "`@`" if product == "@" else f"`{product}`"
    if op == "einsum" and device == "cuda":
        return (f"{shown} (on CUDA autocast's lower-precision list, {policy.HEADER}, whatever its equation: "
                "an outer-product einsum too)")
    return (f"{shown} (on {where} autocast's lower-precision list, "
            f"{policy.HEADER if device == 'cuda' else policy.SOURCE})")


def _format_of(source: str | None, what: str) -> str:
    """The format a low-precision source stands for in messages (bf16 unless named)."""
    if source == "low":
        return {"float16": "fp16", "half": "fp16", "float8_e4m3fn": "fp8_e4m3",
                "float8_e5m2": "fp8_e5m2"}.get(what, "bf16")
    return "bf16"


def _phrase(source: str | None, what: str) -> str:
    if source == "model":
        return f"in the model's precision {what} (bf16 when the model runs in bf16)"
    return f"in {what}" if source == "low" else f"in the dtype of {what}"


def _used_in(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "a call")
        return f"`{name}`"
    if isinstance(node, ast.BinOp):
        return "`@`" if isinstance(node.op, ast.MatMult) else "`*`"
    return "an expression"


class Triggers(Dtypes):
    """Mixin of :class:`~ropelaw.audit.static.checker.Checker`: reporting what the dtype flow found."""

    def _note(self, dtype: str) -> str:
        if dtype not in self._notes:
            self._notes[dtype] = P.collision_note(dtype, self.length)
        return self._notes[dtype]

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
                    {"dtype_source": "default", "mechanism": _BF16_TRUE, "length": self.length})
        msg = (f"positions made without a dtype take torch's default dtype, which is bf16 under {mech}: "
               f"{self._note('bf16')}")
        return (DF.POSITIONS_IN_IMPLICIT_DEFAULT_DTYPE, node, msg,
                "name the dtype: torch.arange(n, dtype=torch.float32) / k (or .float() before dividing)",
                {"dtype_source": "default", "mechanism": _BF16_TRUE, "length": self.length})

    def _as_positions(self, v: Val) -> Val:
        """An unknown tensor cast to a risky dtype that meets frequencies in a product: positions."""
        for rule, node, msg, fix, data in v.maybe:
            self.report(rule, node, msg, fix, **data)
        return Val((v.kinds - {"castpos"}) | {"pos"}, v.source, v.what, True, v.pending)

    def _scalar_position_angle(self, node: ast.AST, pos: Val, freq: Val) -> Val:
        """A Python-number position times the castable buffer (RetNet's ``slen - 1``): the product is computed in
        the buffer's dtype (the number is not rounded first, the angle is): bf16 after a cast."""
        self.report(X.ANGLES_IN_LOW_PRECISION, node,
                    f"the angle position * inv_freq is computed with frequencies in the dtype of the float "
                    f"buffer `self.{freq.buffer}` (bf16 after `model.to(bfloat16)`), position {pos.origin[1]} a "
                    f"Python number: in bf16 the angle at position {self.length - 1:,} is off by up to "
                    f"{self._half_spacing(self.length - 1, 'bf16'):g} rad for a frequency near 1",
                    fix="compute the product in float32 (self.inv_freq.float() * position); cast only cos/sin")
        return Val(frozenset({"angle"}), "buffer", f"`self.{freq.buffer}`", True)

    def _angle(self, node: ast.AST, pos: Val, freq: Val, scope: Scope, product: str | None,
               einsum_contracts: bool = True) -> Val:
        """An angle product: check its precision (RP111/RP131) and autocast (RP112/RP113).

        ``product``: how it is written (``@``, ``einsum``, ``addr``, ``outer``, ``mul``; None for ``*``).
        Autocast lowers it when the policy says so (:mod:`ropelaw.audit.policy`): CUDA's list (the runs
        people make: ``bf16-mixed`` on a GPU) holds ``@``/``matmul``/``mm``/``bmm``, every ``einsum``,
        ``addr``, ``baddbmm``, ``addmm``, ``mv``...; inside an explicit ``torch.autocast("cpu")`` CPU's list."""
        self._flush(pos, freq, at=node)
        reported = pos.reported
        source, what = None, ""
        if (pos.integer and not pos.source and freq.default and not freq.source and not scope.alibi
                and pos.bound is not None and pos.bound <= 257):
            # positions 0 .. 256 are integers bf16 holds exactly: nothing to lose (diffusers' 32-position
            # SinusoidalPositionalEmbedding under bf16-true, issue 33); the frequencies' own rounding is RP116
            return Val(frozenset({"angle"}), "default", "torch's default dtype", True)
        if pos.integer and not pos.source and freq.default and not freq.source and not scope.alibi:
            # int64 positions * frequencies in the default dtype: type promotion gives the product that dtype
            mech = policy.default_dtype_mechanism("bf16")
            self.report(DF.POSITIONS_IN_IMPLICIT_DEFAULT_DTYPE, node,
                        f"integer positions are multiplied with frequencies in torch's default dtype: type promotion "
                        f"gives the product that dtype, bf16 under {mech}, so the positions are rounded to bf16: "
                        f"{self._note('bf16')}",
                        fix="make the frequencies float32 (torch.arange(0, d, 2, dtype=torch.float32) / d) and the "
                            "positions too (torch.arange(n, dtype=torch.float32))",
                        dtype_source="default", mechanism=_BF16_TRUE, length=self.length, **self._use_path(pos, node))
            return Val(frozenset({"angle"}), "default", "torch's default dtype", True)
        if pos.scalar and freq.buffer and not freq.source and not scope.alibi:
            return self._scalar_position_angle(node, pos, freq)
        if pos.integer and not pos.source and freq.buffer and not freq.source and not scope.alibi:
            # int64 positions * a float buffer: type promotion takes the buffer's dtype (bf16 after a cast)
            self.report(P.POSITIONS_IN_BUFFER_DTYPE, node,
                        f"integer positions are multiplied with the float buffer `self.{freq.buffer}`: type promotion "
                        f"gives the product the buffer's dtype, which `model.to(bfloat16)` turns into bf16, so the "
                        f"positions are rounded to bf16: {self._note('bf16')}",
                        fix=P.FIX_POSITIONS, dtype_source="buffer", length=self.length, **self._use_path(pos, node))
            # without a cast the buffer is float32, but a caller's autocast still runs a listed product (einsum,
            # matmul) on a bf16 copy of it, and int64 positions times it are bf16 there too: checked below
            source, what, reported = "buffer", f"`self.{freq.buffer}`", True
        elif freq.source and not freq.reported:
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

    def _use_path(self, pos: Val, node: ast.AST) -> dict:
        """made_at / made_by / used_at / used_in of positions promoted in a product (finding data)."""
        out = {"used_at": getattr(node, "lineno", 0), "used_in": _used_in(node)}
        if pos.origin:
            out.update(made_at=pos.origin[0], made_by=pos.origin[1])
        return out

    def _half_spacing(self, p: int, fmt: str = "bf16") -> float:
        """Largest rounding error of a value near ``p`` in ``fmt``: half the spacing there."""
        from ...formats import exact_positions

        s = exact_positions(fmt, p + 1).spacing_at_end
        return (s or 0.0) / 2

    def _flush(self, *vals: Val, at: ast.AST | None = None) -> None:
        """Report the findings a value held back: it has reached an angle or cos/sin (``at``: where)."""
        for v in vals:
            for rule, node, msg, fix, data in v.pending:
                if at is not None and "cast_at" in data:
                    data = {**data, "used_at": getattr(at, "lineno", 0), "used_in": _used_in(at)}
                    msg = msg + path_suffix(data)
                self.report(rule, node, msg, fix, **data)

    def _is_cache_rebuild(self, call: ast.Call, method: str, receiver: ast.AST, scope: Scope) -> bool:
        if not (isinstance(receiver, ast.Name) and receiver.id == "self" and CACHE_METHOD.search(method)):
            return False
        if not scope.freq_buffers - self._repaired:
            return False  # every frequency buffer is restored to float32 after a cast
        cands = [k.value for k in call.keywords if k.arg == "dtype"] + list(call.args)
        return any(self._dtype(c, scope).source in ("input", "caller") for c in cands)

    def _positions_cast(self, call: ast.Call, val: Val, dt: DtypeSource, scope: Scope, created: bool) -> Val:
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
        data = {**data, "cast_at": call.lineno}
        if val.origin:
            data.update(made_at=val.origin[0], made_by=val.origin[1])
        item = (rule, call, msg, P.FIX_POSITIONS, data)
        if scope.rotary:
            # reported where the positions are used (its path says where), or at the function's end
            self._deferred.append(item)
            return Val(val.kinds, dt.source, dt.what, True, val.pending + (item,), origin=val.origin)
        # outside rotary code an arange may be anything: report only if it reaches an angle or cos/sin
        return Val(val.kinds, dt.source, dt.what, True, val.pending + (item,), origin=val.origin)

    def _position_finding(self, dt: DtypeSource, created: bool) -> tuple[Rule, str, dict]:
        """Rule, message and data for positions created with / converted to a risky dtype."""
        verb = "are created with" if created else "are converted to"
        if dt.source is None:
            raise RuntimeError(f"no position finding for {dt.what or 'a dtype'} that is not low precision")
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
            msg = (f"positions {verb} `torch.get_default_dtype()`, bf16 under "
                   "`torch.set_default_dtype(torch.bfloat16)`: "
                   f"{self._note('bf16')}")
        else:
            fmt = _format_of(dt.source, dt.what)
            msg = f"positions {verb} {dt.what}: {self._note(fmt)}"
        return rule, msg, {"dtype_source": dt.source, "length": self.length}

    def _angles_cast(self, call: ast.Call, val: Val, dt: DtypeSource, scope: Scope) -> Val:
        if val.reported:
            return Val(val.kinds, dt.source, dt.what, True)
        if scope.alibi:
            self.report(A.ALIBI_BIAS_IN_MODEL_DTYPE, call,
                        f"the ALiBi bias slopes * positions is converted to the dtype of {dt.what}: in bf16 the bias "
                        f"at key position {self.length - 1:,} has a spacing of "
                        f"{self._half_spacing(self.length - 1) * 2:g} "
                        f"x slope, so neighbouring keys there share one bias")
        elif id(call) in self._complex_args:
            fmt = _format_of(dt.source, dt.what)
            self.report(X.COMPLEX_FROM_LOW_PRECISION_ANGLES, call,
                        f"complex rotary numbers are built from angles converted "
                        f"{_phrase(dt.source, dt.what).replace('in ', 'to ', 1)}: in {fmt} the angle at position "
                        f"{self.length - 1:,} is off by up to {self._half_spacing(self.length - 1, fmt):g} rad for a "
                        f"frequency near 1, and so is the rotation",
                        fix="build the complex numbers from float32 angles (complex64): torch.polar(ones, "
                            "freqs.float())")
        else:
            fmt = _format_of(dt.source, dt.what)
            self.report(X.ANGLES_IN_LOW_PRECISION, call,
                        "angles (position * inv_freq) are converted "
                        f"{_phrase(dt.source, dt.what).replace('in ', 'to ', 1)} "
                        f"before cos/sin: in {fmt} the angle at position {self.length - 1:,} is off by up to "
                        f"{self._half_spacing(self.length - 1, fmt):g} rad for a frequency near 1",
                        fix="take cos/sin in float32 and cast those: emb.cos().to(x.dtype)")
        return Val(val.kinds, dt.source, dt.what, True)
