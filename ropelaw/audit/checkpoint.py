"""Checkpoint audit: rotary and ALiBi tensors stored in safetensors and torch files.

Never executes the file: safetensors are read from their JSON header and raw bytes (numpy,
bf16 and fp8 through ml_dtypes; no torch needed); torch files only through
``torch.load(path, weights_only=True, map_location="cpu")``. A pickle that needs more than
weights-only loading (a custom class, an ``os.system`` reduce) is refused with one line and
its payload never runs.

What is measured
- ``inv_freq`` (1-D), and 1-D ``freqs`` / ``bands`` / ``theta`` (name after the last '.' ending so;
  rotary-embedding-torch stores ``freqs = 1 / theta^(arange(0, d, 2) / d)`` as a parameter) whose
  values are a geometric sequence starting at 1 (:func:`geometric_frequencies`): dtype, rotary
  dim d = 2 len, base fitted to ln inv_freq_i = -(2i/d) ln base
  (:func:`ropelaw.audit.runtime.fit_base`; RoFormer, arXiv 2104.09864, eq. 34), and the largest
  relative deviation of the stored values from base^(-2i/d); a stored value within one unit of
  the stored dtype's roundoff (plus float32 evaluation error, 2^-24 (3 + ln base)) of the formula
  counts as the formula ("formula exact").
- cos/sin caches (``*cos_cached`` with its ``*sin_cached``, or ``cos``/``sin`` pairs) and complex
  ``freqs_cis``: row p is exact when its angle vector is closer to p * omega (omega the
  frequencies the cache itself uses, recovered from rows 1, 2, 4, ...; exact in binary floating
  point) than half the distance between the ideal encodings of p and p + 1: the same measure
  as the module audit (:class:`ropelaw.audit.runtime.EncodingStats`).
- ALiBi ``slopes`` against Press et al. 2022 (arXiv 2108.12409, sec. 3; BLOOM's extension for
  a head count that is not a power of two), and stored ALiBi biases column by column: column j
  is exact when (bias[h, j] - bias[h, 0]) / slope_h rounds to j for every head h.
"""

from __future__ import annotations

import json
import math
import os
import struct
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import UsageError
from ..findings import Finding
from ..results import Result
from .rules.checkpoint import (CHECKPOINT_ALIBI_LOW_PRECISION, CHECKPOINT_CACHE_INEXACT, CHECKPOINT_CACHE_NONFINITE,
                               CHECKPOINT_INV_FREQ_INVALID, CHECKPOINT_INV_FREQ_LOW_PRECISION)

__all__ = ["CheckpointAudit", "RotaryTensor", "audit_checkpoint", "read_checkpoint", "alibi_slopes",
           "geometric_frequencies"]

_LOW = {"bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"}
# unit roundoff 2^-p (p significant bits, formats.get_format(...).precision): the largest relative
# change of a round-to-nearest cast (half an ulp): bf16 2^-8, fp16 2^-11, e4m3 2^-4, e5m2 2^-3
_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24, "bfloat16": 2.0**-8, "float16": 2.0**-11,
             "float8_e4m3fn": 2.0**-4, "float8_e5m2": 2.0**-3}
# half the subnormal spacing, 2^(emin - p) with emin = 1 - bias: the largest ABSOLUTE change of a
# round-to-nearest cast below the smallest normal (fp16: 2^-25, under 2^-14 ~ 6.1e-5, where
# 10000^(-2i/128) lands for i >= 61), where the relative bound 2^-p no longer holds
_SUBNORMAL_HALF = {"float64": 2.0**-1075, "float32": 2.0**-150, "bfloat16": 2.0**-134, "float16": 2.0**-25,
                   "float8_e4m3fn": 2.0**-10, "float8_e5m2": 2.0**-17}


def _stored_tolerance(v: np.ndarray, dtype: str, ln_base: np.ndarray | float) -> np.ndarray:
    """Relative tolerance per stored value: dtype rounding (2^-p, or 2^(emin-p) / v when subnormal)
    plus float32 evaluation of base^(-2i/d), 2^-24 (3 + ln base) (exponent rounded: 2^-24 ln base;
    pow and reciprocal: an ulp each)."""
    v = np.abs(np.asarray(v, np.float64))
    with np.errstate(divide="ignore"):
        sub = _SUBNORMAL_HALF.get(dtype, 0.0) / v
    return _ROUNDOFF.get(dtype, 2.0**-24) + sub + 2.0**-24 * (3.0 + np.asarray(ln_base, np.float64))


# leaf names (after the last '.') of 1-D tensors that may hold rotary frequencies; all but
# inv_freq must also pass the geometric test (a `theta` or `freqs` may be something else)
_FREQ_SUFFIXES = ("inv_freq", "freqs", "bands", "theta")


# --------------------------------------------------------------------------- reading


def _np_dtype(code: str):
    import ml_dtypes

    table = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": ml_dtypes.bfloat16,
             "F8_E4M3": ml_dtypes.float8_e4m3fn, "F8_E5M2": ml_dtypes.float8_e5m2,
             "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8,
             "U16": np.uint16, "U32": np.uint32, "U64": np.uint64, "BOOL": np.bool_, "C64": np.complex64}
    return table.get(code)


def _dtype_name(dt) -> str:
    name = str(dt).replace("torch.", "")
    return {"complex64": "complex64", "bool": "bool"}.get(name, name)


def _read_safetensors(path: str) -> tuple[dict[str, tuple[str, tuple, Callable[[], np.ndarray]]], int]:
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise UsageError(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
        (n,) = struct.unpack("<Q", head)
        if n < 2 or 8 + n > size:
            raise UsageError(f"{path}: not a safetensors file (header length {n} beyond the file)")
        try:
            header = json.loads(fh.read(n).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise UsageError(f"{path}: not a safetensors file (header is not JSON: {exc})") from None
    if not isinstance(header, dict):
        raise UsageError(f"{path}: not a safetensors file (header is not a JSON object)")
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or not isinstance(info, dict):
            continue
        code, shape, offs = info.get("dtype"), tuple(info.get("shape", ())), info.get("data_offsets")
        dt = _np_dtype(str(code))
        if dt is None or not isinstance(offs, list) or len(offs) != 2:
            out[name] = (str(code), shape, None)
            continue
        start, stop = 8 + n + int(offs[0]), 8 + n + int(offs[1])
        count = int(np.prod(shape)) if shape else 1
        if stop > size or stop - start != count * np.dtype(dt).itemsize:
            raise UsageError(f"{path}: tensor {name!r} has inconsistent offsets (truncated file?)")

        def load(start=start, count=count, dt=dt, shape=shape):
            return np.fromfile(path, dtype=dt, count=count, offset=start).reshape(shape)

        out[name] = (_dtype_name(np.dtype(dt)), shape, load)
    return out, len(out)


def _flatten(obj: Any, prefix: str, out: dict) -> None:
    import torch

    if isinstance(obj, torch.Tensor):
        out[prefix or "tensor"] = obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _flatten(v, f"{prefix}.{i}" if prefix else str(i), out)


_SAFE_PREFIXES = ("torch.", "collections.OrderedDict", "builtins.", "_codecs.encode", "numpy.core.multiarray._reconstruct")


def _pickle_globals(path: str) -> list[str]:
    """Names of the callables/classes a pickle references, read with pickletools (nothing runs).

    Best effort, for the refusal message: GLOBAL opcodes, and STACK_GLOBAL with the two strings
    pushed before it; names weights-only loading allows (torch.*, OrderedDict) are left out.
    """
    import pickletools
    import zipfile

    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                member = next((n for n in zf.namelist() if n.endswith("data.pkl")), None)
                data = zf.read(member) if member else b""
        else:
            with open(path, "rb") as fh:
                data = fh.read()
        found, strings = [], []
        for op, arg, _ in pickletools.genops(data):
            if op.name == "GLOBAL" and isinstance(arg, str):
                found.append(arg.replace(" ", "."))
            elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                found.append(f"{strings[-2]}.{strings[-1]}")
            if isinstance(arg, str) and ("UNICODE" in op.name or op.name.endswith("STRING")):
                strings.append(str(arg))
    except Exception:  # a malformed pickle: no names to show
        return []
    out = []
    for name in found:
        if not name.startswith(_SAFE_PREFIXES) and name not in out:
            out.append(name)
    return out


def _read_torch(path: str) -> tuple[dict[str, tuple[str, tuple, Callable[[], np.ndarray]]], int]:
    import pickle

    from ..errors import require

    torch = require("torch", "torch", "reading a torch checkpoint")
    import warnings

    try:
        with warnings.catch_warnings():  # torch warns about pickle protocols; the verdict is ours
            warnings.simplefilter("ignore")
            obj = torch.load(path, weights_only=True, map_location="cpu")
    except pickle.UnpicklingError:
        names = _pickle_globals(path)
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        raise UsageError(f"{path}: refused: this pickle needs more than weights-only loading"
                         f"{' (it references ' + shown + ')' if names else ''}; ropelaw never runs code from a "
                         "checkpoint (convert it to safetensors in a trusted environment)") from None
    except Exception as exc:
        raise UsageError(f"{path}: not a readable torch checkpoint ({type(exc).__name__}: "
                         f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''})") from None
    flat: dict[str, Any] = {}
    _flatten(obj, "", flat)
    out = {}
    for name, t in flat.items():
        def load(t=t):
            x = t.detach().cpu()
            if x.dtype in (torch.bfloat16, torch.float16) or str(x.dtype).startswith("torch.float8"):
                x = x.float()  # exact: every bf16 / fp16 / fp8 value is a float32
            return x.numpy()

        out[name] = (_dtype_name(t.dtype), tuple(t.shape), load)
    return out, len(out)


def read_checkpoint(path: str) -> tuple[str, dict[str, tuple[str, tuple, Callable[[], np.ndarray] | None]], int]:
    """(file format, {name: (dtype, shape, loader)}, tensor count). Never executes the file."""
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory (give one .safetensors or torch file)")
    with open(path, "rb") as fh:
        magic = fh.read(16)
    if path.endswith(".safetensors") or (len(magic) >= 9 and magic[8:9] == b"{"):
        tensors, n = _read_safetensors(path)
        return "safetensors", tensors, n
    if magic[:4] == b"PK\x03\x04" or magic[:1] == b"\x80":
        tensors, n = _read_torch(path)
        return "torch", tensors, n
    raise UsageError(f"{path}: not a checkpoint (neither safetensors nor a torch zip/pickle file)")


# --------------------------------------------------------------------------- results


@dataclass
class RotaryTensor(Result):
    """One rotary or ALiBi tensor found in a checkpoint, with what was measured."""

    name: str
    kind: str  # inv_freq | cos_sin_cache | freqs_cis | alibi_slopes | alibi_bias | cos_cache
    dtype: str
    shape: list[int]
    details: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        d = self.details
        shape = "x".join(map(str, self.shape))
        if self.kind == "inv_freq":
            base = d.get("base")
            b = "-" if base is None else (f"{base:,.0f}" if base == int(base) and base < 1e7 else f"{base:.6g}")
            return (f"{self.name}  inv_freq {self.dtype} [{shape}]: rotary dims {d['rotary_dim']}, base {b} "
                    f"(fit residual {d['fit_residual']:.1e}), max deviation from base^(-2i/d) "
                    f"{d['max_rel_deviation']:.1e}{' (formula exact)' if d['formula_exact'] else ''}")
        if self.kind in ("cos_sin_cache", "freqs_cis"):
            return (f"{self.name}  {self.kind} {self.dtype} [{shape}]: {d['exact']:,} of {d['rows']:,} rows exact "
                    f"({100 * d['exact_fraction']:.2f}%), {d['distinct']:,} distinct, {d['nonfinite']:,} non-finite, "
                    f"rotary dims {d['rotary_dim']}, {d['layout']}")
        if self.kind == "alibi_slopes":
            return (f"{self.name}  ALiBi slopes {self.dtype} [{shape}]: {d['heads']} heads, max deviation from "
                    f"2^(-8h/H) {d['max_rel_deviation']:.1e}")
        if self.kind == "alibi_bias":
            return (f"{self.name}  ALiBi bias {self.dtype} [{shape}]: {d['exact']:,} of {d['columns']:,} distances "
                    f"exact ({100 * d['exact_fraction']:.2f}%)")
        return f"{self.name}  {self.kind} {self.dtype} [{shape}]: {d.get('note', '')}"


@dataclass
class CheckpointAudit(Result):
    path: str
    file_format: str  # safetensors | torch
    tensor_count: int
    rotary: list[RotaryTensor]
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "file_format": self.file_format, "tensor_count": self.tensor_count,
                "rotary": [t.to_dict() for t in self.rotary], "findings": [f.to_dict() for f in self.findings]}


# --------------------------------------------------------------------------- measurements


def alibi_slopes(heads: int) -> np.ndarray:
    """ALiBi head slopes (Press et al. 2022, arXiv 2108.12409, sec. 3): 2^(-8h/n), h = 1..n, n = 2^k.

    For a head count H that is not a power of two, BLOOM's extension: the n = 2^floor(log2 H)
    slopes, then every other slope of the 2n sequence (2^(-4h/n), h = 1, 3, 5, ...) for the rest.
    """
    if heads < 1:
        raise ValueError("heads must be >= 1")
    n = 1 << (heads.bit_length() - 1)
    slopes = [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]
    if n != heads:
        slopes += [2.0 ** (-4.0 * h / n) for h in range(1, 2 * (heads - n), 2)]
    return np.asarray(slopes, np.float64)


def _inv_freq_details(values: np.ndarray, dtype: str) -> dict[str, Any]:
    from .runtime import fit_base

    v = np.asarray(values, np.float64).reshape(-1)
    n = v.size
    base, residual = fit_base(v)
    d = 2 * n
    if base is None:
        return {"rotary_dim": d, "base": None, "fit_residual": math.inf, "max_rel_deviation": math.inf,
                "formula_exact": False}
    # stored rounding + float32 evaluation: the exponent 2i/d rounded to float32 (relative 2^-24)
    # moves base^(-2i/d) by up to 2^-24 ln(base) relative; pow and reciprocal add an ulp each
    tol = _stored_tolerance(v, dtype, math.log(base))  # (d/2,)
    # a rounded inv_freq pulls the fit off a round base: prefer the simplest base (fewest
    # significant digits) whose formula the stored values match within the stored rounding
    for digits in (1, 2, 3, 4, 5, 6):
        simple = float(f"{base:.{digits}g}")
        if simple > 1 and np.all(np.abs(v / simple ** (-2.0 * np.arange(n) / d) - 1.0) <= tol):
            base = simple
            break
    tol = _stored_tolerance(v, dtype, math.log(base))
    formula = base ** (-2.0 * np.arange(n) / d)  # (d/2,) float64
    rel = np.abs(v / formula - 1.0)  # (d/2,)
    dev = float(np.max(rel))
    return {"rotary_dim": d, "base": base, "fit_residual": residual, "max_rel_deviation": dev,
            "formula_exact": bool(np.all(rel <= tol))}


def geometric_frequencies(values: np.ndarray, dtype: str) -> bool:
    """True when ``values`` are rotary frequencies theta_i = r^i, i = 0 .. n-1, r in (0, 1), as stored.

    RoPE frequencies (RoFormer, arXiv 2104.09864, eq. 34) are theta_i = base^(-2i/d): a geometric
    sequence through theta_0 = 1 with ratio r = base^(-2/d). Stored in ``dtype`` (unit roundoff u,
    2^-p; below the smallest normal an absolute 2^(emin - p)) after a float32 evaluation, each
    value is within tol_i = u + 2^-24 (3 + |ln theta_i|) (relative) of r^i (pow's exponent rounded
    in float32 moves the result by 2^-24 |ln theta_i|, pow and reciprocal an ulp each). The test
    is exact, not a fit: theta_0 must be 1 within tol_0, and the intervals for ln r allowed by each i >= 1, [(ln v_i - e_i) / i, (ln v_i + e_i) / i]
    with e_i = -ln(1 - tol_i), must intersect, entirely below 0 (r < 1 for every fit, so base > 1).
    Needs n >= 3 (two positive values are always "geometric"); non-finite or non-positive values
    are not frequencies.
    """
    v = np.asarray(values, np.float64).reshape(-1)
    n = v.size
    if n < 3 or not np.all(np.isfinite(v)) or np.any(v <= 0):
        return False
    lv = np.log(v)  # (n,)
    tol = _stored_tolerance(v, dtype, np.abs(lv))  # (n,) relative tolerance per value
    if np.any(tol >= 0.5):
        return False  # values so deep in the subnormals that any sequence would pass
    if abs(v[0] - 1.0) > tol[0]:
        return False
    e = -np.log1p(-tol)  # (n,) log-space half-widths, >= tol
    i = np.arange(1, n, dtype=np.float64)
    lo = float(np.max((lv[1:] - e[1:]) / i))
    hi = float(np.min((lv[1:] + e[1:]) / i))
    return lo <= hi and hi < 0.0  # a ratio < 1 for every fit: base > 1


def _cache_details(cos: np.ndarray, sin: np.ndarray, layout: str, inv_freq: np.ndarray | None,
                   dtype: str = "bfloat16") -> dict[str, Any]:
    """Row-by-row exactness of a cache given per-pair cos/sin ``(L, d/2)``."""
    from .runtime import EncodingStats, effective_frequencies, frequency_uncertainty, resolve_frequencies

    rows, k = cos.shape
    p2, p = [], 1
    while p < rows:
        p2.append(p)
        p *= 2
    out: dict[str, Any] = {"rows": rows, "rotary_dim": 2 * k, "layout": layout}
    if not p2:
        out.update(exact=rows, exact_fraction=1.0, distinct=rows, nonfinite=0, first_inexact=None,
                   frequency_source="n/a")
        return out
    measured = effective_frequencies(p2, cos[p2], sin[p2])
    unc = frequency_uncertainty(measured, p2[-1], dtype if dtype in ("float32", "float64", "float16") else "bfloat16")
    omega, source = resolve_frequencies(measured, unc, [("inv_freq in file", inv_freq)])
    stats = EncodingStats(omega, omega, None, rows)
    for start in range(0, rows, 32768):
        stop = min(start + 32768, rows)
        stats.update(np.arange(start, stop), cos[start:stop], sin[start:stop])
    out.update(exact=stats.exact, exact_fraction=stats.exact / rows, distinct=stats.distinct(),
               nonfinite=stats.nonfinite, first_inexact=stats.first_inexact, frequency_source=source)
    return out


def _pairs_of(cos: np.ndarray, sin: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """(L, width) cos/sin -> per-pair (L, width/2) arrays and the layout."""
    w = cos.shape[-1]
    h = w // 2
    if w % 2 == 0 and np.array_equal(cos[:, :h], cos[:, h:], equal_nan=True):
        return cos[:, :h], sin[:, :h], "rotate-half"
    if w % 2 == 0 and np.array_equal(cos[:, 0::2], cos[:, 1::2], equal_nan=True):
        return cos[:, 0::2], sin[:, 0::2], "interleaved"
    return cos, sin, "per-pair"


def _as_rows(a: np.ndarray) -> np.ndarray:
    """Drop leading singleton axes: (1, 1, L, d) -> (L, d)."""
    while a.ndim > 2 and a.shape[0] == 1:
        a = a[0]
    return a.reshape(-1, a.shape[-1]) if a.ndim > 2 else a


def _leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower()


def audit_checkpoint(path: str) -> CheckpointAudit:
    """Find and measure the rotary / ALiBi tensors of a checkpoint (see the module docstring)."""
    file_format, tensors, count = read_checkpoint(path)
    found: list[RotaryTensor] = []
    findings: list[Finding] = []
    inv_freqs: dict[str, np.ndarray] = {}
    for name, (dtype, shape, load) in tensors.items():
        leaf = _leaf(name)
        if load is None:
            continue
        if leaf.endswith(_FREQ_SUFFIXES) and len([s for s in shape if s != 1]) == 1:
            v = np.asarray(load(), np.float64).reshape(-1)
            if not leaf.endswith("inv_freq"):
                if not geometric_frequencies(v, dtype):
                    continue  # a `freqs` / `theta` that is not base^(-2i/d): not claimed
            inv_freqs[name] = v
            det = _inv_freq_details(v, dtype)
            det["recognised_by"] = "name" if leaf.endswith("inv_freq") else "name and geometric values"
            found.append(RotaryTensor(name, "inv_freq", dtype, list(shape), det))
            bad = int(np.count_nonzero(~(np.isfinite(v) & (v > 0))))
            if bad:
                findings.append(Finding.of(
                    CHECKPOINT_INV_FREQ_INVALID,
                    f"{name} ({dtype}): {bad:,} of {v.size:,} frequencies are inf, NaN, zero or negative "
                    f"(inf: {int(np.count_nonzero(np.isinf(v)))}, NaN: {int(np.count_nonzero(np.isnan(v)))}, "
                    f"<= 0: {int(np.count_nonzero(v <= 0))})",
                    path=path, name_in_file=name, invalid=bad, size=int(v.size)))
                continue  # no base fits such values: the precision finding would only repeat it
            if dtype in _LOW:
                u = _ROUNDOFF[dtype]
                findings.append(Finding.of(
                    CHECKPOINT_INV_FREQ_LOW_PRECISION,
                    f"{name} is stored in {dtype}: its {det['rotary_dim'] // 2} frequencies deviate up to "
                    f"{det['max_rel_deviation']:.2e} (relative) from base^(-2i/d), base {det['base']:.6g} "
                    f"(a round-to-nearest {dtype} cast moves each by up to 2^-{round(-math.log2(u))} = {u:.2e})",
                    path=path, name_in_file=name, dtype=dtype, max_rel_deviation=det["max_rel_deviation"]))
    for name, (dtype, shape, load) in tensors.items():
        leaf = _leaf(name)
        if load is None:
            continue
        kind = None
        if "freqs_cis" in leaf:
            kind = "freqs_cis"
        elif "cos" in leaf and ("cache" in leaf or leaf in ("cos", "cos_cached", "cos_emb")):
            kind = "cos_sin_cache"
        elif "slopes" in leaf:
            kind = "alibi_slopes"
        elif "alibi" in leaf and len(shape) >= 2:
            kind = "alibi_bias"
        if kind is None:
            continue
        if kind in ("cos_sin_cache", "freqs_cis"):
            if kind == "freqs_cis":
                a = load()
                if np.iscomplexobj(a):
                    z = _as_rows(a)
                    c, s, layout = np.real(z).astype(np.float64), np.imag(z).astype(np.float64), "complex"
                elif a.shape[-1] == 2:  # view_as_real layout (..., d/2, 2)
                    z = _as_rows(a[..., 0]), _as_rows(a[..., 1])
                    c, s, layout = np.asarray(z[0], np.float64), np.asarray(z[1], np.float64), "complex"
                else:
                    continue
            else:
                sin_name = name[: len(name) - len(leaf)] + leaf.replace("cos", "sin")
                if sin_name not in tensors or tensors[sin_name][2] is None:
                    found.append(RotaryTensor(name, "cos_cache", dtype, list(shape),
                                              {"note": f"no matching sin tensor ({sin_name}); not measured"}))
                    continue
                cos = _as_rows(np.asarray(load(), np.float64))
                sin = _as_rows(np.asarray(tensors[sin_name][2](), np.float64))
                if cos.shape != sin.shape:
                    continue
                c, s, layout = _pairs_of(cos, sin)
            inv = next((v for v in inv_freqs.values() if v.size == c.shape[1]), None)
            det = _cache_details(c, s, layout, inv, "float32" if dtype == "complex64" else dtype)
            found.append(RotaryTensor(name, kind, dtype, list(shape), det))
            if det["exact"] + det["nonfinite"] < det["rows"]:
                findings.append(Finding.of(
                    CHECKPOINT_CACHE_INEXACT,
                    f"{name} ({dtype}): {det['exact']:,} of {det['rows']:,} rows ({100 * det['exact_fraction']:.2f}%) "
                    f"are the encoding of their position; first inexact row {det['first_inexact']}, "
                    f"{det['distinct']:,} distinct rows",
                    path=path, name_in_file=name, exact=det["exact"], rows=det["rows"]))
            if det["nonfinite"]:
                findings.append(Finding.of(
                    CHECKPOINT_CACHE_NONFINITE, f"{name} ({dtype}): {det['nonfinite']:,} of {det['rows']:,} rows "
                    "hold inf/NaN", path=path, name_in_file=name, nonfinite=det["nonfinite"]))
        elif kind == "alibi_slopes":
            v = np.asarray(load(), np.float64).reshape(-1)
            ref = alibi_slopes(v.size)
            dev = float(np.max(np.abs(v / ref - 1.0)))
            found.append(RotaryTensor(name, kind, dtype, list(shape), {"heads": int(v.size), "max_rel_deviation": dev}))
            if dtype in _LOW and dev > 4 * 2.0**-24:
                findings.append(Finding.of(
                    CHECKPOINT_ALIBI_LOW_PRECISION,
                    f"{name}: ALiBi slopes stored in {dtype}, up to {dev:.2e} (relative) from 2^(-8h/H)",
                    path=path, name_in_file=name, max_rel_deviation=dev))
        elif kind == "alibi_bias":
            a = np.asarray(load(), np.float64)
            b = a.reshape(-1, a.shape[-1])  # (heads, L)
            if b.shape[1] < 2:
                continue
            slope = b[:, 1] - b[:, 0]  # (heads,) distance 1 is exact in every format
            good = slope != 0
            dist = (b[good] - b[good, :1]) / slope[good, None]  # (heads, L)
            j = np.arange(b.shape[1])
            col_ok = np.all(np.abs(dist - j) < 0.5, axis=0) & np.all(np.isfinite(b), axis=0)
            exact = int(col_ok.sum())
            det = {"columns": int(b.shape[1]), "exact": exact, "exact_fraction": exact / b.shape[1],
                   "first_inexact": None if col_ok.all() else int(np.argmin(col_ok))}
            found.append(RotaryTensor(name, kind, dtype, list(shape), det))
            if exact < b.shape[1]:
                findings.append(Finding.of(
                    CHECKPOINT_ALIBI_LOW_PRECISION,
                    f"{name} ({dtype}): {exact:,} of {b.shape[1]:,} ALiBi distances recoverable "
                    f"({100 * exact / b.shape[1]:.2f}%); first lost distance {det['first_inexact']}",
                    path=path, name_in_file=name, exact=exact, columns=int(b.shape[1])))
    return CheckpointAudit(path=path, file_format=file_format, tensor_count=count, rotary=found, findings=findings)
