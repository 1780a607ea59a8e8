"""Calling a rotary module the way it wants to be called and reading its per-pair (cos, sin).

:meth:`Probe.detect` tries the calls :func:`ropelaw.audit.conventions.plans_for` allows and keeps the
first that fits: its output, at 5 positions and 2 heads, is an encoding of distinct positions
starting from the identity, with both heads rotated alike (a layout read with seq and heads
swapped fails this). Outputs read: ``(cos, sin)``, angles, complex frequencies, ``cat(cos, sin)``,
stacked ``(cos, sin)`` on an axis of size 2, a rotated query or a ``(q, k)`` pair. The pair layout
(rotate-half, interleaved, per-pair) and rotary dim come from the output; rotated tensors are read
by feeding unit vectors, so a scale applied by the rotary (XPos) stays in the measured (cos, sin).
When nothing fits, the error lists each call tried with its layouts, head dims and first error,
in one line.

torch is imported inside the functions only.
"""

from __future__ import annotations

import contextlib
import inspect
from typing import Any
from collections.abc import Sequence

import numpy as np

from ..errors import UsageError
from .conventions import HEAD_DIM_CANDIDATES, LENGTH_NAMES, PROBE_HEADS, PROBE_N, ROLE_WORDS, SHORT_LAYOUT
from .conventions import Plan, parameter_roles, plans_for
from .target import head_dim_of

class ModuleMismatch(UsageError):
    """The user's module does not behave as a rotary called this way (a shape, a type, positions not
    found): the user's to fix (exit 2). Raised while trying calling conventions; the one that reaches the
    command says "unknown rotary convention" (:func:`user_errors`), and the list of what was tried gives
    these messages without a class name (they are ropelaw's words, not the module's exception)."""


class TableTooShort(ValueError):
    """A length-called rotary returned fewer rows than positions asked for: its table ends there
    (DeepSeek-V3's ``freqs_cis`` buffer of ``max_seq_len`` rows sliced ``[:seqlen]``)."""

    def __init__(self, rows: int, asked: int):
        super().__init__(f"returned a table of {rows:,} rows for {asked:,} positions")
        self.rows, self.asked = rows, asked


def first_line(exc: BaseException, limit: int = 90) -> str:
    text = (str(exc).strip().splitlines() or [""])[0]
    if not isinstance(exc, ModuleMismatch):
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _dtype_name(t) -> str:
    return str(t.dtype).replace("torch.", "")

class Probe:
    """Calls a rotary module or callable and returns its per-pair cos/sin at given positions.

    Build with :meth:`detect` on a float32 build: it tries the plans its signature allows
    (inputs: a length, x, position ids, positions + q + k; query layouts :data:`LAYOUTS`; head
    dims from ``head_dim``, the object's attributes, else common sizes) and keeps the first whose
    output is an encoding of distinct positions: ``(cos, sin)``, angles, complex frequencies,
    ``cos|sin`` concatenated, a rotated query or a ``(q, k)`` pair. Rotated outputs are read
    by feeding unit vectors (each pair (1, 0) -> (cos, sin), times any scale the rotary applies);
    the pair layout (rotate-half, interleaved, per-pair) and the rotary dim come from the output.
    :meth:`like` calls another build (a precision scenario) the same way without re-detecting,
    so a scenario that breaks the encoding is measured, not refused. :meth:`rows` returns float32
    ``(cos, sin)`` of shape ``(n, d/2)`` for positions ``[start, stop)``; :meth:`at` for a list.
    """

    def __init__(self, obj: Any, plan: Plan, output: str, layout: str, rotary_dim: int,
                 head_dim: int | None, x_dtype, length: int, seq_axis: int | None = None):
        self.obj = obj
        self.plan = plan
        self.output = output  # (cos, sin) | angles | complex | cos|sin | rotated | (q, k)
        self.layout = layout  # pair layout: rotate-half | interleaved | per-pair
        self.rotary_dim = rotary_dim
        self.head_dim = head_dim
        self.x_dtype = x_dtype
        self.length = length
        self.seq_axis = seq_axis  # axis of positions in a (cos, sin) / angles / complex output
        self.pair_axis: int | None = None  # a stacked output's axis of size 2 holding (cos, sin)
        self._full = None  # cached full (cos, sin) for whole-sequence plans
        self.output_dtype = "?"
        self.imaginary_dropped = False  # a complex output came back real

    # -- naming --------------------------------------------------------------

    @property
    def tensor_layout(self) -> str | None:
        """The query's layout, for outputs read from a rotated query (else None: x gives only the dtype)."""
        rotated = self.output in ("rotated", "(q, k)")
        return self.plan.layout if self.plan.uses_q and rotated else None

    @property
    def inputs(self) -> str:
        kind = self.plan.kind
        if kind == "length":
            return "x + a length" if self.plan.uses_q else "a length"
        if kind == "positions":
            return "positions + q + k" if self.plan.with_k else "x + position ids"
        return "q + k" if self.plan.with_k else "q"

    @property
    def convention(self) -> str:
        """hf-legacy | hf-current | rotate-callable | length | positions-rotate."""
        kind, rotated = self.plan.kind, self.output in ("rotated", "(q, k)")
        if kind == "length":
            return "hf-legacy" if self.plan.uses_q else "length"
        if kind == "positions":
            return "positions-rotate" if rotated else "hf-current"
        return "rotate-callable"

    @property
    def call_form(self) -> str:
        """How the module is called, e.g. ``forward(x, seq_len=L) -> (cos, sin)``."""
        fn = self._fn()
        name = getattr(fn, "__name__", None) if (inspect.isfunction(fn) or inspect.ismethod(fn)) else None
        if name in (None, "__call__", "<lambda>"):
            name = "f"
        out = {"rotated": "rotated q", "angles": "angles", "complex": "complex freqs",
               "cos|sin": "cat(cos, sin)", "stacked": f"stack(cos, sin) on axis {self.pair_axis}",
               "matrix": "2x2 rotation matrices [[cos, -sin], [sin, cos]]"}.get(
            self.output, self.output)
        where = f" on q {self.tensor_layout}" if self.tensor_layout else ""
        return f"{self.plan.describe(name)} -> {out}{where}"

    # -- calling -------------------------------------------------------------

    def _fn(self):
        import torch

        return self.obj.forward if isinstance(self.obj, torch.nn.Module) else self.obj

    def _caller(self):
        return self.obj if callable(self.obj) else self._fn()

    def _query(self, n: int, heads: int, fill: str = "first"):
        """A query in the plan's layout: pair first components 1 (``first``), or dim 0 only (``e0``)."""
        import torch

        plan = self.plan
        shape_of = plan.query_layout()[0]
        d = plan.head_dim or self.head_dim or 2
        q = torch.zeros(shape_of(n, heads, d), dtype=self.x_dtype)
        if fill == "e0":
            q[..., 0] = 1
        elif fill == "even":
            q[..., 0::2] = 1
        else:
            k = self.rotary_dim // 2
            if self.layout == "interleaved":
                q[..., 0:2 * k:2] = 1
            else:
                q[..., :k] = 1
        return q

    def _positions(self, pos):
        import torch

        p = torch.as_tensor(np.asarray(pos), dtype=torch.int64)
        if self.plan.layout == "(tokens, heads, dim)":
            return p  # (n,) int64: flat tokens
        return p[None, :]  # (1, n) int64

    def _call(self, pos: Sequence[int] | np.ndarray, heads: int = 1, fill: str = "first"):
        """Call the plan for positions ``pos`` (consecutive from 0 unless the plan takes positions)."""
        n = len(pos)
        q = self._query(n, heads, fill) if self.plan.uses_q else None
        positions = self._positions(pos) if self.plan.kind == "positions" else None
        args, kwargs = self.plan.args(n, q, positions)
        return self._caller()(*args, **kwargs), q

    # -- output handling -----------------------------------------------------

    def _classify(self, out, q) -> str:
        import torch

        if (isinstance(out, (tuple, list)) and len(out) >= 2 and isinstance(out[0], torch.Tensor)
                and out[0].is_complex() and not self.plan.with_k):
            return "complex"  # (rope, cos, sin) with the complex rope first (OpenNMT-py 3.5 rotaryembeddings)
        if isinstance(out, (tuple, list)) and len(out) >= 2 and all(isinstance(t, torch.Tensor) for t in out[:2]):
            if self.plan.with_k:
                if q is not None and tuple(out[0].shape) == tuple(q.shape):
                    return "(q, k)"
                raise ModuleMismatch(f"returned tensors of shape {tuple(out[0].shape)}, not the query's")
            return "(cos, sin)"
        if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor) and q is not None:
            out = out[0]
        if not isinstance(out, torch.Tensor):
            raise ModuleMismatch(f"returned {type(out).__name__}, not a tensor or a pair of tensors")
        if q is not None and tuple(out.shape) == tuple(q.shape):
            return "rotated"
        if out.is_complex():
            return "complex"
        if q is not None and self.plan.kind == "tensor":
            raise ModuleMismatch(f"returned a tensor of shape {tuple(out.shape)}, not the query's")
        return "angles"  # or cos|sin, decided from position 0 (:meth:`_detect_table`)

    def _rotated_rows(self, out, q):
        """(n, head_dim) rows of head 0 of a rotated output (or the first of a (q, k) pair)."""
        import torch

        t = out[0] if isinstance(out, (tuple, list)) else out
        if not isinstance(t, torch.Tensor) or tuple(t.shape) != tuple(q.shape):
            raise ModuleMismatch("did not return a tensor of the query's shape")
        self.output_dtype = _dtype_name(t)
        _, seq_ax, head_ax = self.plan.query_layout()
        t = t.movedim(seq_ax, 0)  # (n, ...) positions first
        while t.dim() > 2:
            t = t.select(1, 0)  # batch 0, head 0
        return t  # (n, head_dim)

    def _table_rows(self, t, n: int, seq_axis: int | None = None):
        """(n, width) rows of a (cos, sin) / angles / complex output along its positions axis."""
        axis = self.seq_axis if seq_axis is None else seq_axis
        if axis is not None and axis < t.dim() and 2 <= t.shape[axis] < n and self.plan.kind == "length":
            raise TableTooShort(int(t.shape[axis]), n)
        if axis is None or axis >= t.dim() or t.shape[axis] < n or (
                t.shape[axis] > n and not self._whole_cache()):
            raise ModuleMismatch(f"returned shape {tuple(t.shape)}, expected {n} positions on axis {axis}")
        t = t.movedim(axis, 0)[:n]
        while t.dim() > 2:
            t = t.select(1, 0)
        if t.dim() == 1:
            t = t[:, None]
        return t

    def _pairs(self, out, q, n: int):
        """Per-pair (cos, sin) float32 numpy ``(n, d/2)`` from one call's output."""
        import torch

        k = self.rotary_dim // 2
        if self.output in ("rotated", "(q, k)"):
            r = self._rotated_rows(out, q).float()
            if self.layout == "interleaved":
                c, s = r[:, 0:2 * k:2], r[:, 1:2 * k:2]
            else:
                c, s = r[:, :k], r[:, k:2 * k]
            return c.numpy(), s.numpy()
        if self.output == "(cos, sin)":
            if not (isinstance(out, (tuple, list)) and len(out) >= 2):
                raise ModuleMismatch(f"returned {type(out).__name__}, expected (cos, sin)")
            cos, sin = self._table_rows(out[0], n), self._table_rows(out[1], n)
            self.output_dtype = _dtype_name(out[0])
        elif self.output in ("stacked", "matrix"):
            t = out[0] if isinstance(out, (tuple, list)) else out
            if self.output == "matrix" and isinstance(t, torch.Tensor) and t.dim() >= 3:
                t = t.select(-1, 0)  # the first column (cos, sin) of each [[cos, -sin], [sin, cos]]
            if not isinstance(t, torch.Tensor) or self.pair_axis is None or self.pair_axis >= t.dim():
                raise ModuleMismatch("did not return the stacked (cos, sin) tensor of the float32 build")
            self.output_dtype = _dtype_name(t)
            c, s = self._stacked_rows(t, n)
            return self._split_table(c.float().numpy(), s.float().numpy(), k)
        else:
            t = out[0] if isinstance(out, (tuple, list)) else out
            if not isinstance(t, torch.Tensor):
                raise ModuleMismatch(f"returned {type(t).__name__}, expected a tensor")
            self.output_dtype = _dtype_name(t)
            rows = self._table_rows(t, n)
            if self.output == "complex":
                if rows.is_complex():
                    return self._split_table(rows.real.float().numpy(), rows.imag.float().numpy(), k)
                self.imaginary_dropped = True  # a cast made the complex frequencies real: the sine is gone
                c = rows.float().numpy()
                return self._split_table(c, np.zeros_like(c), k)
            if self.output == "angles":
                a = rows.double().numpy()  # (n, width) float64 from the module's angles
                cos, sin = np.cos(a), np.sin(a)
                return self._split_table(cos, sin, k)
            half = rows.shape[-1] // 2  # cos|sin concatenated
            cos, sin = rows[:, :half], rows[:, half:]
        return self._split_table(cos.float().numpy(), sin.float().numpy(), k)

    def _stacked_rows(self, t, n: int, pair_axis: int | None = None):
        """(cos, sin) ``(n, d/2)`` rows of a stacked table: ``t.select(pair_axis, 0 / 1)``.

        gpt-fast ``precompute_freqs_cis`` (``torch.stack([freqs_cis.real, freqs_cis.imag], -1)``,
        ``(L, d/2, 2)``), lit-llama and torchtune (``torch.stack([cos, sin], -1)``), older lit-llama
        (``torch.stack((cos, sin), dim=0)``, ``(2, 1, 1, L, d)``): one pair per row entry.
        """
        ax = self.pair_axis if pair_axis is None else pair_axis
        if ax is None or self.seq_axis is None:
            raise ModuleMismatch("read as a stacked (cos, sin) table before its positions and pair axes were found")
        seq = self.seq_axis - (1 if ax < self.seq_axis else 0)
        return self._table_rows(t.select(ax, 0), n, seq), self._table_rows(t.select(ax, 1), n, seq)

    def _detect_stacked(self, t, n: int) -> bool:
        """A real tensor holding (cos, sin) on an axis of size 2 (not the positions axis): the last axis
        first, then a leading one; position 0 must read cos = 1, sin = 0 on every pair."""
        import torch

        if t.dim() < 3:
            return False  # (L, 2): one pair, read as cat(cos, sin) with the same result
        for ax in [t.dim() - 1] + list(range(t.dim() - 1)):
            if ax == self.seq_axis or t.shape[ax] != 2:
                continue
            try:
                c, s = self._stacked_rows(t, n, ax)
            except (ValueError, IndexError):
                continue
            c, s = c.float(), s.float()
            if c.shape == s.shape and torch.all(c[0] == 1) and torch.all(s[0] == 0):
                self.pair_axis = ax
                return True
        return False

    def _rotation_matrices(self, t, n: int) -> bool:
        """A real tensor ``(..., L, d/2, 2, 2)`` of 2x2 rotation matrices [[cos, -sin], [sin, cos]] (Flux):
        the last two axes are 2 x 2 (not the positions axis), every matrix has m00 = m11 and m01 = -m10,
        and position 0 is the identity on every pair."""
        import torch

        if t.dim() < 4 or tuple(t.shape[-2:]) != (2, 2) or self.seq_axis >= t.dim() - 2:
            return False
        m = t.float()
        if not (torch.equal(m[..., 0, 0], m[..., 1, 1]) and torch.equal(m[..., 0, 1], -m[..., 1, 0])):
            return False
        try:
            c, s = self._stacked_rows(m.select(-1, 0), n, m.dim() - 2)
        except (ValueError, IndexError):
            return False
        return bool(torch.all(c[0] == 1) and torch.all(s[0] == 0))

    def _split_table(self, cos: np.ndarray, sin: np.ndarray, k: int):
        if self.layout == "rotate-half":
            c, s = cos[:, :k], sin[:, :k]
        elif self.layout == "interleaved":
            c, s = cos[:, 0:2 * k:2], sin[:, 0:2 * k:2]
        else:
            c, s = cos, sin
        return np.asarray(c, np.float32), np.asarray(s, np.float32)

    # -- detection -----------------------------------------------------------

    @classmethod
    def detect(cls, obj: Any, x_dtype, length: int, head_dim: int | None = None,
               base: float | None = None) -> Probe:
        """Find how to call ``obj`` (see the class docstring); ModuleMismatch listing what was tried.

        A parameter named like the RoPE base (:data:`BASE_NAMES`) gets ``base`` (``--base``); a
        required one without it is refused with a UsageError naming the flag (mistral-inference's
        ``precompute_freqs_cis(dim, end, theta)`` has no default base).
        """
        import torch

        from ..errors import UsageError

        fn = obj.forward if isinstance(obj, torch.nn.Module) else obj
        if not callable(fn):
            raise UsageError(f"the factory returned {type(obj).__name__}, which is not callable")
        hd = head_dim or head_dim_of(obj)
        roles = parameter_roles(fn)[0]
        fname = getattr(fn, "__name__", None) or "f"
        needs_base = [p.name for p, r in roles if r == "base" and p.default is inspect.Parameter.empty]
        if needs_base and base is None:
            raise UsageError(f"{fname}({', '.join(p.name for p, _ in roles)}): `{needs_base[0]}` is the RoPE base "
                             f"and has no default: give it with --base (e.g. --base 1e6)")
        plans = plans_for(fn, [hd] if hd else HEAD_DIM_CANDIDATES, base)
        if not plans:
            unsupplied = [p.name for p, r in roles if r == "unsupplied"]
            read = "; ".join(f"{p.name}: {ROLE_WORDS.get(r, 'no role') if r else 'no role'}"
                             + ("" if p.default is inspect.Parameter.empty else " (has a default)")
                             for p, r in roles) or "no parameters"
            if unsupplied:
                why = f"required parameters {', '.join(unsupplied)} are none of a length, x/q, key, position ids, " \
                      "an offset, a dim or the base"
            else:
                why = "no parameter takes a length, positions or a query"
            raise UsageError(f"cannot call {fname}: {why} (parameters read: {read}); length names: "
                             f"{', '.join(LENGTH_NAMES[:8])}, ...")
        tried: dict[tuple[str, str], tuple[list[str], list[int]]] = {}  # (call, error) -> layouts, head dims
        with torch.no_grad():
            for plan in plans:
                probe = cls(obj, plan, "?", "rotate-half", 0, plan.head_dim or hd, x_dtype, length)
                try:
                    probe._detect()
                except Exception as exc:  # this plan does not fit: try the next one
                    desc = plan.describe(getattr(fn, "__name__", None) or "f")
                    if plan.head_dim and not hd:
                        desc = desc.replace(f"={plan.head_dim}", "=d")
                    layouts, dims = tried.setdefault((desc, first_line(exc, 80)), ([], []))
                    if plan.layout and SHORT_LAYOUT[plan.layout] not in layouts:
                        layouts.append(SHORT_LAYOUT[plan.layout])
                    if plan.head_dim and not hd and plan.head_dim not in dims:
                        dims.append(plan.head_dim)
                    continue
                return probe
        parts = []
        for (desc, err), (layouts, dims) in list(tried.items())[:6]:
            where = (f" on {','.join(layouts)}" if layouts else "") + (
                f" with d={','.join(map(str, dims))}" if dims else "")
            parts.append(f"{desc}{where} -> {err}")
        more = f" (+{len(tried) - 6} more)" if len(tried) > 6 else ""
        raise ModuleMismatch(f"no calling convention fits; tried {'; '.join(parts)}{more}")

    def _detect(self) -> None:
        n = PROBE_N
        out, q = self._call(list(range(n)), heads=PROBE_HEADS, fill="e0")
        self.output = self._classify(out, q)
        if self.output in ("rotated", "(q, k)"):
            self._detect_rotation(out, q)
        else:
            self._detect_table(out, n)
        if self.head_dim is None:
            self.head_dim = self.rotary_dim
        c, s = self.at_fresh(list(range(n)))
        if not (np.all(np.isfinite(c)) and np.all(np.isfinite(s))):
            raise ModuleMismatch("non-finite encoding in float32")
        ang = np.arctan2(s, c)
        if np.any(np.abs(ang[0]) > 1e-3):
            raise ModuleMismatch("position 0 is not the identity rotation")
        if any(np.array_equal(ang[i], ang[i + 1]) for i in range(n - 1)):
            raise ModuleMismatch("consecutive positions share one encoding: not the positions axis")

    def at_fresh(self, pos):
        out, q = self._call(pos)
        return self._pairs(out, q, len(pos))

    def _whole_cache(self) -> bool:
        """A length-called table may be the module's whole cache, longer than the length asked for.

        transformers <= 4.31 GPT-NeoX ``RotaryEmbedding.forward(x, seq_len)`` returns
        ``self.cos_cached[:seq_len, ...]`` on a ``(1, 1, max_positions, dim)`` cache: the slice is on
        the batch axis, so it returns every row, and the attention indexes the rows by position ids
        (``cos.squeeze(1).squeeze(0)[position_ids]``). Rows 0 .. L-1 are then positions 0 .. L-1.
        Only for a length call: a table answering explicit positions has one row per position.
        """
        return self.plan.kind == "length"

    def _detect_table(self, out, n: int) -> None:
        import torch

        t = out[0] if isinstance(out, (tuple, list)) else out
        axes = [i for i in range(t.dim() - 1) if t.shape[i] == n]
        if not axes and self._whole_cache():  # its whole cache, longer than asked (GPT-NeoX <= 4.31)
            axes = [i for i in range(t.dim() - 1) if t.shape[i] > n]
        if not axes:
            raise ModuleMismatch(f"returned shape {tuple(t.shape)}: no axis of {n} positions")
        self.seq_axis = axes[0]
        rows = self._table_rows(t, n)
        if self.output == "complex":
            width = int(rows.shape[-1])
            if width % 2 == 0 and torch.equal(rows[:, :width // 2], rows[:, width // 2:]):
                # cat((rope, rope), 1): real / imag are rotate-half cos / sin (OpenNMT-py 3.5.1)
                self.layout, self.rotary_dim = "rotate-half", width
            else:
                self.layout, self.rotary_dim = "per-pair", 2 * width
            return
        if self.output == "angles" and self._rotation_matrices(t, n):
            # (..., L, d/2, 2, 2) [[cos, -sin], [sin, cos]] (Flux `rope`): read as the stacked first column;
            # not as cat(cos, sin) of 2 values (which gave "rotary dims 2" and a drift of 2 in every scenario)
            self.output, self.pair_axis = "matrix", t.dim() - 2
            c, _ = self._stacked_rows(t.select(-1, 0), n)
            self.layout, self.rotary_dim = "per-pair", 2 * int(c.shape[-1])
            return
        if self.output == "angles" and self._detect_stacked(t, n):
            self.output = "stacked"
            c, s = self._stacked_rows(t, n)
            width = int(c.shape[-1])
            if width % 2 == 0 and torch.equal(c[:, :width // 2], c[:, width // 2:]):
                self.layout, self.rotary_dim = "rotate-half", width  # (2, 1, 1, L, d): cos and sin of cat(freqs, freqs)
            elif width % 2 == 0 and torch.equal(c[:, 0::2], c[:, 1::2]):
                self.layout, self.rotary_dim = "interleaved", width
            else:
                self.layout, self.rotary_dim = "per-pair", 2 * width  # (L, d/2, 2): one (cos, sin) per pair
            return
        if self.output == "angles":
            r = rows.float()
            width = int(r.shape[-1])
            half = width // 2
            if torch.all(r[0] == 0):
                pass  # angles: zero at position 0
            elif width % 2 == 0 and torch.all(r[0, :half] == 1) and torch.all(r[0, half:] == 0):
                self.output = "cos|sin"
                width, half = half, half // 2
                r = r[:, :width]
            else:
                raise ModuleMismatch("a single real tensor that is neither angles (0 at position 0) nor cat(cos, sin)")
            c = r
        else:
            c = self._table_rows(out[0], n).float()
            width, half = int(c.shape[-1]), int(c.shape[-1]) // 2
        if width % 2 == 0 and torch.equal(c[:, :half], c[:, half:]):
            self.layout, self.rotary_dim = "rotate-half", width
        elif width % 2 == 0 and torch.equal(c[:, 0::2], c[:, 1::2]):
            self.layout, self.rotary_dim = "interleaved", width
        else:  # one value per pair
            self.layout, self.rotary_dim = "per-pair", 2 * width

    def _detect_rotation(self, out, q) -> None:
        rows = self._rotated_rows(out, q).float()  # (n, head_dim), input e0 at every position
        t = out[0] if isinstance(out, (tuple, list)) else out
        _, seq_ax, head_ax = self.plan.query_layout()
        if head_ax is not None and t.shape[head_ax] > 1:
            h0, h1 = t.select(head_ax, 0), t.select(head_ax, 1)
            if not bool((h0 == h1).all()):
                raise ModuleMismatch("heads rotated differently: positions read from another axis")
        dim = int(rows.shape[-1])
        moved = np.nonzero(rows[1, 1:].abs().numpy() > 0)[0]
        if moved.size == 0:
            raise ModuleMismatch("did not rotate the first dimension at position 1")
        partner = int(moved[0]) + 1
        if partner == 1:
            self.layout = "interleaved"
            out2, q2 = self._call(list(range(PROBE_N)), heads=1, fill="even")
            o = self._rotated_rows(out2, q2).float()
            rot = (o[1, 1::2] != 0)
            self.rotary_dim = 2 * max(int(rot.int().cumprod(0).sum()), 1)
        else:
            self.layout, self.rotary_dim = "rotate-half", 2 * partner
        self.head_dim = dim

    # -- another build, called the same way ----------------------------------

    @classmethod
    def like(cls, ref: Probe, obj: Any, x_dtype, length: int) -> Probe:
        """A probe calling ``obj`` exactly as ``ref`` calls its build (no detection)."""
        probe = cls(obj, ref.plan, ref.output, ref.layout, ref.rotary_dim, ref.head_dim, x_dtype, length,
                    ref.seq_axis)
        probe.pair_axis = ref.pair_axis
        return probe

    # -- evaluation ----------------------------------------------------------

    @property
    def chunked(self) -> bool:
        """Positions are passed explicitly and the output is a table: any chunk of positions."""
        return self.plan.kind == "positions" and self.output not in ("rotated", "(q, k)")

    def prepare(self) -> None:
        """Evaluate whole-sequence plans once at the full length."""
        import torch

        if not self.chunked:
            with torch.no_grad():
                self._full = self.at_fresh(list(range(self.length)))

    def rows(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        import torch

        if self._full is not None:
            c, s = self._full
            return c[start:stop], s[start:stop]
        with torch.no_grad():
            return self.at_fresh(np.arange(start, stop))

    def at(self, positions: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        import torch

        if self._full is not None:
            idx = np.asarray(list(positions), dtype=np.int64)
            c, s = self._full
            return c[idx], s[idx]
        with torch.no_grad():
            return self.at_fresh(list(positions))


_CONVENTIONS = "the conventions recognised are listed by `ropelaw audit module --help`"


@contextlib.contextmanager
def user_errors(prefix: str):
    """Errors raised while calling the user's module become one-line UsageErrors (exit 2)."""
    from ..errors import UsageError

    try:
        yield
    except ModuleMismatch as exc:
        raise UsageError(f"{prefix}unknown rotary convention: {exc}; {_CONVENTIONS}") from None
    except (UsageError, TableTooShort):
        raise  # says itself what to give (--base, a shorter --length)
    except ValueError as exc:
        raise UsageError(f"{prefix}unknown rotary convention: {exc}; {_CONVENTIONS}") from None
    except Exception as exc:
        raise UsageError(f"{prefix}the module raised {type(exc).__name__}: "
                         f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''} "
                         f"(unknown rotary convention? {_CONVENTIONS})") from None
