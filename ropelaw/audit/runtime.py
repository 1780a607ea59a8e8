"""Runtime audit of rotary modules: run the real code, recover its encoding, measure it.

The ground truth for the seed 004 bug (Baichuan: positions or angles pass through bf16/fp16):
the module is built and called the way a training stack holds it, and the cos/sin it
produces are compared with the ideal encoding.

Conventions recognised (:class:`Probe`)
- Hugging Face legacy: ``forward(x, seq_len=L) -> (cos, sin)`` (transformers <= 4.37 and kin);
- Hugging Face current: ``forward(x, position_ids) -> (cos, sin)`` (transformers >= 4.38);
- a callable rotating a query ``(batch, heads, seq, dim)`` (or ``(batch, seq, dim)``) and
  returning it rotated (optionally taking a key too and returning ``(q, k)``, with
  ``past_key_values_length`` / ``position_ids`` when its signature names them, as Falcon's
  ``forward(query, key, past_key_values_length, position_ids)`` on ``(batch*heads, seq, dim)``
  in transformers <= 4.34): probed with unit basis vectors, the pair layout (rotate-half or
  interleaved) and rotary dim detected.

Legacy classes build a cos/sin cache at init (``max_position_embeddings`` rows, float32) and
rebuild it in forward beyond that length, often in a cast ``inv_freq``'s dtype: the audit
reports the init cache's rows and notes when it covers the audited length (the rebuild path
was not run); ``audit_hf`` builds such classes with ``length // 4`` positions instead
(:func:`rebuild_max_positions`) unless max_position_embeddings is given.

Precision scenarios (how the bug is triggered in practice)
- ``cast``: built in float32, then ``.to(dtype)`` (``model.bfloat16()``, DeepSpeed);
- ``default``: built and run under ``torch.set_default_dtype(dtype)`` (restored in a finally);
- ``autocast``: built in float32, called inside ``torch.autocast("cpu", dtype)``.
In every scenario the input ``x`` has the scenario dtype (activations are low precision).

Measurement (per position p in [0, L), rotary pairs i = 0 .. d/2-1)
- produced angle phi_i(p) = atan2(sin_i(p), cos_i(p)) in (-pi, pi];
- effective frequency omega_i: recovered from phi at p = 1, 2, 4, ..., 2^k < L by successive
  unwrapping (omega_i = phi_i(1); then omega_i <- [p omega_i + wrap(phi_i(p) - p omega_i)] / p).
  Multiplying by a power of two is exact in binary floating point, so neither a rounded
  position nor a rounded product p * theta can show at these positions: omega is exactly the
  (possibly rounded) inv_freq the module multiplies by;
- error e(p) = wrap(phi(p) - p omega) (wrap into (-pi, pi]), spacing s = ||wrap(omega)||_2 (the
  distance between the ideal angle vectors of p and p + 1, the same for every p);
- p is *exact* iff ||e(p)||_2 < s / 2: the produced encoding is closer to the ideal encoding of
  p than half the distance to the ideal encoding of its neighbour;
- p is *explained by rounded positions* iff ||wrap(phi(p) - r(p) omega)||_2 < s / 2 for r(p) one of
  the two values of the scenario's dtype next to p (:func:`neighbours_in_format`; any rounding
  mode: ``.to(bf16)`` rounds to nearest even, ``torch.arange(n, dtype=torch.bfloat16)`` does not
  always, e.g. 4113 -> 4096). When only
  positions are rounded, phi(p) = r(p) omega (+ float32 noise) and since r(p) - p is a nonzero
  integer k for every inexact p, ||wrap(k omega)|| > s / 2 for RoPE frequency sets, so the exact
  fraction equals the format's exact-position fraction (896 / 8,192 in bf16 at 8,192:
  seed 004, checked in tests/test_audit_runtime.py);
- frequency drift = max_i |omega_i / theta_i - 1| against the nominal theta_i = base^(-2i/d)
  (RoFormer, arXiv 2104.09864, eq. 34), base given or fitted to a float32 build;
- max phase error = max |p (omega_i - theta_i) + e_i(p)| in radians: the frequency part
  accumulated (unwrapped), the per-position part wrapped.
Evidence path: "product rounded" when inexact positions are not all explained by rounded
positions; "positions rounded" when they are; otherwise "frequencies rounded" when the drift
exceeds :data:`DRIFT_TOLERANCE`; otherwise "clean".

torch is imported inside the functions only.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..findings import Finding
from ..results import Result
from .rules.runtime import (RUNTIME_FREQUENCIES_ROUNDED, RUNTIME_NONFINITE, RUNTIME_POSITIONS_ROUNDED,
                            RUNTIME_PRODUCT_ROUNDED)

__all__ = ["SCENARIOS", "DRIFT_TOLERANCE", "ModuleAudit", "ScenarioResult", "EncodingStats", "Probe",
           "audit_module", "audit_hf", "load_factory", "hf_rotary_factory", "effective_frequencies",
           "fit_base", "canonical_dtype", "neighbours_in_format", "frequency_uncertainty", "resolve_frequencies",
           "runtime_findings", "init_cache_length", "convention_of", "rebuild_max_positions", "unit_roundoff"]

SCENARIOS = ("cast", "default", "autocast")
TWO_PI = 2.0 * math.pi
# Frequencies computed in float32 deviate from base^(-2i/d) by a few float32 ulps (2^-24 ~ 6e-8
# each, pow and reciprocal). A round-to-nearest cast to a format with p significant bits moves a
# value x by at most half an ulp, 2^(e-p) for x in [2^e, 2^(e+1)): at most 2^-p relative
# (:func:`unit_roundoff`; Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., thm 2.2):
# fp16 (p = 11) 2^-11 ~ 4.9e-4, bf16 (p = 8) 2^-8 ~ 3.9e-3 (3.65e-3 measured for base 10,000,
# d = 128, above 2^-9). 1e-5 separates float32 noise from either by more than an order of magnitude.
DRIFT_TOLERANCE = 1e-5
MAX_RUNTIME_LENGTH = 1 << 23  # 8,388,608 positions: a (L, 128) float32 cache is 4 GiB; 1M takes ~10 s per scenario
DEFAULT_CHUNK = 32768  # rows per measurement chunk: (chunk, d/2) float64 arrays of ~16 MB at d=128

_DTYPES = {
    "bf16": "bfloat16", "bfloat16": "bfloat16", "torch.bfloat16": "bfloat16",
    "fp16": "float16", "float16": "float16", "half": "float16", "torch.float16": "float16", "torch.half": "float16",
    "fp32": "float32", "float32": "float32", "float": "float32", "torch.float32": "float32", "torch.float": "float32",
}
_SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


def canonical_dtype(name: str) -> str:
    """``bf16`` / ``fp16`` / ``fp32`` for any accepted alias; ValueError otherwise."""
    key = str(name).strip().lower()
    if key not in _DTYPES:
        raise ValueError(f"runtime audit supports bf16, fp16 and fp32, not {name!r} "
                         "(torch cannot run a module in fp8 or tf32 as a default dtype)")
    return _SHORT[_DTYPES[key]]


def _torch_dtype(name: str):
    import torch

    return getattr(torch, _DTYPES[canonical_dtype(name)])


def _wrap(x: np.ndarray) -> np.ndarray:
    """Wrap angles into [-pi, pi] (x - 2 pi round(x / 2 pi)), in place."""
    x -= TWO_PI * np.round(x * (1.0 / TWO_PI))
    return x


# --------------------------------------------------------------------------- frequencies, base


def effective_frequencies(positions: Sequence[int], cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Per-pair frequencies recovered from the encodings at positions 1, 2, 4, ... (ascending).

    ``cos``, ``sin``: ``(len(positions), d/2)``. omega_i = phi_i(1), then for each next power of
    two p: omega_i <- [p omega_i + wrap(phi_i(p) - p omega_i)] / p (successive unwrapping; the
    prediction error stays at twice the angle-measurement error, far below pi). Pairs whose
    encoding is not finite at some p keep their previous estimate. Returns float64 ``(d/2,)``.
    Domain: positions[0] must be 1 and omega_i in (-pi, pi] (every RoPE variant in use).
    """
    if not positions or positions[0] != 1:
        raise ValueError("effective_frequencies needs the encoding at position 1 first")
    phi = np.arctan2(np.asarray(sin, np.float64), np.asarray(cos, np.float64))  # (k, d/2)
    omega = phi[0].copy()
    for row, p in zip(phi[1:], positions[1:]):
        ok = np.isfinite(row) & np.isfinite(omega)
        pred = p * omega
        new = (pred + _wrap(row - pred)) / p
        omega = np.where(ok, new, omega)
    return omega


def unit_roundoff(dtype: str) -> float:
    """u = 2^-p, p the format's significant bits (``formats.get_format(dtype).precision``).

    The largest relative change a round-to-nearest cast makes to a finite, normal value (half an
    ulp; Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., thm 2.2): bf16 2^-8,
    fp16 2^-11, fp32 2^-24, fp8 e4m3 2^-4, e5m2 2^-3; float64 2^-53.
    """
    from ..formats import get_format

    name = str(dtype).replace("torch.", "").lower()
    if name in ("float64", "double", "fp64"):
        return 2.0**-53
    return 2.0 ** -get_format({"float8_e4m3fn": "fp8_e4m3", "float8_e5m2": "fp8_e5m2"}.get(name, name)).precision


_ROUNDOFF = {name: unit_roundoff(name) for name in ("bfloat16", "float16", "float32", "float64")}


def frequency_uncertainty(omega: np.ndarray, p_max: int, output_dtype: str) -> np.ndarray:
    """Bound on the error of :func:`effective_frequencies` per pair (radians per position).

    The angle at p_max is measured to within 2u (cos and sin each rounded to the output dtype,
    unit roundoff u = 2^-P; atan2 turns an error u in both into at most ~1.4u in angle) plus the
    module's float32 evaluation (p_max |omega| 2^-23 for the angle, 2^-22 for cos/sin); the
    unwrapped estimate divides by p_max.
    """
    u = _ROUNDOFF.get(output_dtype.replace("torch.", ""), 2.0**-8)
    return (2 * u + p_max * np.abs(omega) * 2.0**-23 + 2.0**-22) / p_max


def resolve_frequencies(measured: np.ndarray, uncertainty: np.ndarray,
                        candidates: Sequence[tuple[str, np.ndarray | None]]) -> tuple[np.ndarray, str]:
    """The candidate frequency vector the measurement is consistent with, else the measurement.

    A candidate c (e.g. the module's own inv_freq, the float32 build's frequencies, those rounded
    to the scenario dtype) is accepted when |measured_i - c_i| <= uncertainty_i for every pair;
    among accepted ones the closest (in max |measured - c| / uncertainty) wins. Exact candidate
    values make the ideal encoding, the drift and the phase error exact rather than estimated.
    """
    best, best_name, best_score = measured, "measured", math.inf
    for name, cand in candidates:
        if cand is None or cand.shape != measured.shape or not np.all(np.isfinite(cand)):
            continue
        score = float(np.max(np.abs(measured - cand) / uncertainty))
        if score <= 1.0 and score < best_score:
            best, best_name, best_score = np.asarray(cand, np.float64), name, score
    return best, best_name


def fit_base(omega: np.ndarray) -> tuple[float | None, float]:
    """Fit theta_i = base^(-2i/d), d = 2 len(omega), to frequencies; returns (base, residual).

    Least squares of ln omega_i = -(2i/d) ln base through the origin (theta_0 = 1 in RoFormer,
    arXiv 2104.09864 eq. 34): ln base = -sum x_i y_i / sum x_i^2 with x_i = 2i/d, y_i = ln omega_i.
    A base within 1e-6 (relative) of an integer is snapped to it (float32 frequencies carry
    ~1e-7 noise). ``residual`` = max_i |omega_i / base^(-x_i) - 1|. Returns (None, inf) when the
    frequencies are not positive or there is a single pair.
    """
    omega = np.asarray(omega, np.float64)
    n = omega.size
    if n < 2 or not np.all(np.isfinite(omega)) or np.any(omega <= 0):
        return None, math.inf
    x = 2.0 * np.arange(n) / (2 * n)
    y = np.log(omega)
    ln_b = -float(np.dot(x, y) / np.dot(x, x))
    base = math.exp(ln_b)
    if base > 1 and abs(base - round(base)) <= 1e-6 * base:
        base = float(round(base))
    residual = float(np.max(np.abs(omega / base ** (-x) - 1.0)))
    return base, residual


# --------------------------------------------------------------------------- measurement core


def neighbours_in_format(pos: np.ndarray, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """The representable neighbours of non-negative integers ``pos`` in ``dtype``: (down, up).

    For p >= 1 with p = f 2^e (frexp, f in [0.5, 1)), the spacing of the format's binade holding p
    is 2^(e - P) with P the precision (significant bits); down = floor(p / s) s, up = ceil(p / s) s,
    both exact in float64 (power-of-two scaling). Values above the format's largest finite value
    become inf. Positions below 2^P are their own neighbours.
    """
    from ..formats import get_format

    fmt = get_format(dtype)
    p = np.asarray(pos, np.float64)
    _, e = np.frexp(np.maximum(p, 1.0))
    step = np.ldexp(1.0, np.maximum(e - fmt.precision, 0))  # (m,) spacing, >= 1 for integers
    down = np.floor(p / step) * step
    up = np.ceil(p / step) * step
    down[down > fmt.max_finite] = np.inf
    up[up > fmt.max_finite] = np.inf
    return down, up


class EncodingStats:
    """Streaming measurement of produced encodings against the ideal ones (see module docstring).

    Feed chunks with :meth:`update` (positions ascending, any chunk size); read the totals with
    :meth:`summary`. Memory: a 64-bit hash per row for the distinct count, the rest per chunk.
    """

    def __init__(self, omega: np.ndarray, nominal: np.ndarray, dtype: str | None, length: int):
        self.omega = np.asarray(omega, np.float64)  # (d/2,) effective frequencies
        self.nominal = np.asarray(nominal, np.float64)  # (d/2,) nominal frequencies
        self.dtype = dtype  # format positions are rounded to for the "positions rounded" test
        self.length = length
        spacing = float(np.linalg.norm(_wrap(self.omega.copy())))
        self.spacing = spacing
        self.tau2 = (spacing / 2.0) ** 2
        self.count = 0
        self.exact = 0
        self.nonfinite = 0
        self.unexplained = 0  # inexact, finite, not explained by rounded positions
        self.first_inexact: int | None = None
        self.max_phase_error = 0.0
        self.max_phase_error_at: int | None = None
        self.max_distance = 0.0
        self._hashes: list[np.ndarray] = []
        rng = np.random.default_rng(0x5EED004)
        self._w = rng.integers(1, 2**63, size=2 * self.omega.size, dtype=np.uint64) | np.uint64(1)  # odd

    def update(self, positions: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> None:
        """positions ``(n,)`` int; cos, sin ``(n, d/2)`` float32 (bf16/fp16/fp32 outputs convert exactly).

        Angles come from a float32 atan2 (error below 4e-7 rad, three orders of magnitude under
        the bf16 output rounding the module itself applies); everything that involves p is float64.
        """
        cos = np.asarray(cos, np.float32)  # (n, d/2) float32
        sin = np.asarray(sin, np.float32)  # (n, d/2) float32
        pos = np.asarray(positions, np.float64)  # (n,) float64, exact below 2^53
        n = pos.size
        self.count += n
        bits = np.concatenate([cos, sin], axis=1).view(np.uint32)  # (n, d) uint32: a 64-bit hash per row
        self._hashes.append((bits * self._w).sum(axis=1, dtype=np.uint64))
        finite = np.isfinite(cos).all(axis=1) & np.isfinite(sin).all(axis=1)  # (n,) bool
        self.nonfinite += int(n - finite.sum())
        phi = np.arctan2(sin, cos).astype(np.float64)  # (n, d/2) float64 from float32 atan2
        err = phi - pos[:, None] * self.omega  # (n, d/2) float64
        _wrap(err)
        dist2 = np.einsum("ij,ij->i", err, err)  # (n,)
        exact = finite & (dist2 < self.tau2)
        self.exact += int(exact.sum())
        inexact = ~exact
        if inexact.any():
            if self.first_inexact is None:
                self.first_inexact = int(pos[np.argmax(inexact)])
            sel = inexact & finite
            if sel.any():
                self.unexplained += self._unexplained(pos[sel], phi[sel])
        if finite.any():
            self.max_distance = max(self.max_distance, float(np.sqrt(dist2[finite].max())))
            err += pos[:, None] * (self.omega - self.nominal)  # phase error against nominal
            np.abs(err, out=err)
            row_max = np.where(finite, err.max(axis=1), -1.0)
            k = int(np.argmax(row_max))
            if row_max[k] > self.max_phase_error:
                self.max_phase_error = float(row_max[k])
                self.max_phase_error_at = int(pos[k])

    def _unexplained(self, pos: np.ndarray, phi: np.ndarray) -> int:
        """How many of these inexact rows are NOT the ideal encoding of a rounded position.

        A rounded position is either neighbour of p in the format (the largest representable
        value <= p or the smallest >= p), so any rounding mode counts: round-to-nearest-even
        (``.to(bf16)``) and the truncation ``torch.arange(n, dtype=torch.bfloat16)`` performs
        (4113 -> 4096 in bf16, where round-to-nearest gives 4128).
        """
        if self.dtype is None:
            return int(pos.size)
        down, up = neighbours_in_format(pos, self.dtype)  # (m,) float64 each, inf on overflow
        explained = np.zeros(pos.size, dtype=bool)
        for q in (down, up):
            ok = np.isfinite(q)
            err = phi - np.where(ok, q, 0.0)[:, None] * self.omega
            _wrap(err)
            explained |= ok & (np.einsum("ij,ij->i", err, err) < self.tau2)
        return int((~explained).sum())

    def distinct(self) -> int:
        """Number of distinct produced encodings (rows compared through a 64-bit hash)."""
        if not self._hashes:
            return 0
        h = np.concatenate(self._hashes)  # (count,) uint64
        h.sort()
        return int(1 + np.count_nonzero(h[1:] != h[:-1]))

    def path(self, drift: float) -> str:
        """Which dtype path the evidence points to (see module docstring)."""
        inexact_finite = self.count - self.exact - self.nonfinite
        if inexact_finite > 0 or self.nonfinite > 0:
            return "product rounded" if self.unexplained > 0 else "positions rounded"
        if drift > DRIFT_TOLERANCE:
            return "frequencies rounded"
        return "clean"


# --------------------------------------------------------------------------- results


@dataclass
class ScenarioResult(Result):
    """One precision scenario's measurements (see the module docstring for definitions)."""

    scenario: str  # cast | default | autocast
    dtype: str  # bf16 | fp16 | fp32
    length: int  # positions 0 .. length-1
    exact: int  # positions whose encoding is exact
    exact_fraction: float
    distinct: int  # distinct encodings produced
    distinct_fraction: float
    nonfinite: int  # positions with inf / NaN in cos or sin
    first_inexact: int | None  # smallest inexact position (None if all exact)
    frequency_drift: float  # max_i |omega_i / theta_i - 1|
    max_phase_error: float  # radians, against the nominal encoding
    max_phase_error_at: int | None  # position where it occurs
    path: str  # product rounded | positions rounded | frequencies rounded | clean
    output_dtype: str  # dtype of the cos/sin the module returned
    frequency_source: str  # which exact frequency vector the measurement matched, or "measured"
    effective_frequencies: list[float] = field(default_factory=list, repr=False)

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.pop("effective_frequencies")
        # JSON has no inf/NaN: a measurement that could not be made is null
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


@dataclass
class ModuleAudit(Result):
    """The runtime audit of one rotary module: per-scenario results and findings."""

    target: str
    convention: str  # hf-legacy | hf-current | rotate-callable
    layout: str  # rotate-half | interleaved
    rotary_dim: int
    head_dim: int | None
    base: float | None  # nominal base (None: nominal frequencies are the float32 build's own)
    base_source: str  # given | inferred | float32 build
    base_fit_residual: float
    dtype: str
    length: int
    scenarios: list[ScenarioResult]
    findings: list[Finding] = field(default_factory=list)
    path: str = "-"  # file of the factory / class, for findings
    line: int = 1
    call: str = ""  # how the module was called (Probe.call_form)
    init_cache_length: int | None = None  # rows of a cos/sin cache built at init (None: none)
    max_position_embeddings: int | None = None  # audit hf: the value the module was built with
    notes: list[str] = field(default_factory=list)  # what the audit did not exercise, and why

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "convention": self.convention, "layout": self.layout,
            "rotary_dim": self.rotary_dim, "head_dim": self.head_dim, "base": self.base,
            "base_source": self.base_source,
            "base_fit_residual": self.base_fit_residual if math.isfinite(self.base_fit_residual) else None,
            "dtype": self.dtype, "length": self.length, "call": self.call,
            "init_cache_length": self.init_cache_length, "max_position_embeddings": self.max_position_embeddings,
            "notes": list(self.notes),
            "scenarios": [s.to_dict() for s in self.scenarios],
            "findings": [f.to_dict() for f in self.findings],
        }

    def scenario(self, name: str) -> ScenarioResult:
        for s in self.scenarios:
            if s.scenario == name:
                return s
        raise KeyError(name)


# --------------------------------------------------------------------------- loading the target


def load_factory(target: str) -> tuple[Callable[[], Any], str, int]:
    """``path/to/file.py:NAME`` or ``package.module:NAME`` -> (factory, source path, line).

    Runs the named file or imports the named module (the user asked for it), nothing else.
    Raises UsageError (one line) for a missing file, a non-Python file, a missing name.
    """
    from ..errors import UsageError

    if ":" not in target:
        raise UsageError(f"{target}: expected path/to/file.py:NAME or package.module:NAME")
    where, _, name = target.rpartition(":")
    if not name.isidentifier():
        raise UsageError(f"{target}: {name!r} is not a Python name")
    if where.endswith(".py") or os.sep in where or "/" in where:
        if not os.path.isfile(where):
            raise UsageError(f"{where}: no such file")
        if not where.endswith(".py"):
            raise UsageError(f"{where}: not a Python file (expected a .py file)")
        mod_name = "_ropelaw_target_" + "".join(c if c.isalnum() else "_" for c in os.path.abspath(where))
        spec = importlib.util.spec_from_file_location(mod_name, where)
        if spec is None or spec.loader is None:
            raise UsageError(f"{where}: cannot be loaded as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        try:
            spec.loader.exec_module(module)
        except SyntaxError as exc:
            raise UsageError(f"{where}:{exc.lineno}: syntax error: {exc.msg}") from None
        except Exception as exc:  # the user's file raised while loading
            raise UsageError(f"{where}: raised {type(exc).__name__} while loading: {exc}") from None
    else:
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())  # like `python -m`: modules of the working directory
        try:
            module = importlib.import_module(where)
        except ImportError as exc:
            raise UsageError(f"{where}: cannot import module: {exc}") from None
        except Exception as exc:
            raise UsageError(f"{where}: raised {type(exc).__name__} while importing: {exc}") from None
    if not hasattr(module, name):
        raise UsageError(f"{target}: module has no attribute {name!r}")
    factory = getattr(module, name)
    if not callable(factory):
        raise UsageError(f"{target}: {name!r} is not callable (expected a zero-argument factory)")
    path, line = _source_of(factory)
    return factory, path or where, line


def _source_of(obj: Any) -> tuple[str | None, int]:
    try:
        path = inspect.getsourcefile(obj)
        line = inspect.getsourcelines(obj)[1]
        return (os.path.relpath(path) if path else None), max(int(line), 1)
    except (TypeError, OSError):
        return None, 1


# --------------------------------------------------------------------------- probing conventions


def _params(fn: Callable) -> list[inspect.Parameter]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters.values() if p.name != "self"]


def _head_dim_of(obj: Any) -> int | None:
    for attr in ("head_dim", "dim", "rotary_dim", "rotary_ndims", "dims", "d"):
        for holder in (obj, getattr(obj, "__self__", None)):
            v = getattr(holder, attr, None) if holder is not None else None
            if isinstance(v, int) and not isinstance(v, bool) and 2 <= v <= 4096:
                return v
    inv = _inv_freq_of(obj)
    if inv is not None:
        return 2 * int(inv.numel())
    return None


def _inv_freq_of(obj: Any):
    for holder in (obj, getattr(obj, "__self__", None)):
        v = getattr(holder, "inv_freq", None) if holder is not None else None
        if v is not None and hasattr(v, "numel"):
            return v
    return None


def _inv_freq_array(obj: Any) -> np.ndarray | None:
    inv = _inv_freq_of(obj)
    if inv is None:
        return None
    try:
        return inv.detach().double().cpu().numpy().reshape(-1)
    except Exception:
        return None


def _first_tensor(out: Any):
    import torch

    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor):
        return out[0]
    return None


_POSITION_NAMES = ("position_ids", "positions", "pos_ids")
_OFFSET_NAMES = ("past_key_values_length", "offset", "seqlen_offset", "start_pos")


def convention_of(fn: Callable) -> str:
    """hf-legacy | hf-current | rotate-callable, from the names of ``fn``'s parameters.

    ``(q, key, ...)``: rotate-callable (Falcon in transformers <= 4.34); ``position_ids`` second
    or third (or ``positions`` second): hf-current; ``seq_len`` anywhere: hf-legacy; otherwise a
    rotating callable (confirmed by probing).
    """
    names = [p.name for p in _params(fn)]
    if len(names) >= 2 and names[1] in ("key", "k", "keys"):
        return "rotate-callable"
    if "position_ids" in names[1:3] or (len(names) >= 2 and names[1] in ("positions", "pos_ids")):
        return "hf-current"
    if "seq_len" in names:
        return "hf-legacy"
    return "rotate-callable"


class Probe:
    """Calls a rotary module or callable and returns its per-pair cos/sin at given positions.

    Build with :meth:`detect` (float32, or under the caller's scenario): it recognises the
    convention, the pair layout and the rotary dim. :meth:`rows` returns float64
    ``(cos, sin)`` of shape ``(n, d/2)`` for positions ``[start, stop)``; :meth:`at` for a list.
    """

    def __init__(self, obj: Any, convention: str, layout: str, rotary_dim: int, head_dim: int | None,
                 x_dtype, length: int):
        self.obj = obj
        self.convention = convention
        self.layout = layout
        self.rotary_dim = rotary_dim
        self.head_dim = head_dim
        self.x_dtype = x_dtype
        self.length = length
        self._full = None  # cached full (cos, sin) torch tensors for whole-sequence conventions
        self.output_dtype = "?"

    # -- detection ---------------------------------------------------------

    @classmethod
    def detect(cls, obj: Any, x_dtype, length: int, head_dim: int | None = None) -> "Probe":
        import torch

        fn = obj.forward if isinstance(obj, torch.nn.Module) else obj
        if not callable(fn):
            raise ValueError(f"the factory returned {type(obj).__name__}, which is not callable")
        hd = head_dim or _head_dim_of(obj)
        conv = convention_of(fn)
        probe = cls(obj, conv, "rotate-half", 0, hd, x_dtype, length)
        with torch.no_grad():
            if conv == "rotate-callable":
                probe._detect_rotation(hd)
            else:
                probe._detect_cos_sin(hd)
        return probe

    def _x(self, n: int = 1):
        import torch

        return torch.zeros(1, 1, n, self.head_dim or 2, dtype=self.x_dtype)  # (1, 1, n, head_dim) dtype

    def _call_cos_sin(self, positions=None, seq_len: int | None = None):
        import torch

        obj = self.obj
        fn = obj.forward if isinstance(obj, torch.nn.Module) else obj
        caller = obj if callable(obj) else fn
        if self.convention == "hf-current":
            pos = torch.as_tensor(positions, dtype=torch.int64)[None, :]  # (1, n) int64
            out = caller(self._x(), pos)
        else:
            out = caller(self._x(), seq_len=seq_len)
        if not (isinstance(out, (tuple, list)) and len(out) >= 2 and all(hasattr(t, "shape") for t in out[:2])):
            raise ValueError(f"{self.convention} forward returned {type(out).__name__}, expected (cos, sin)")
        cos, sin = out[0], out[1]
        self.output_dtype = str(cos.dtype).replace("torch.", "")
        n = int(seq_len if seq_len is not None else len(positions))
        cos = cos.reshape(-1, cos.shape[-1])[-n:] if cos.dim() >= 2 else cos
        sin = sin.reshape(-1, sin.shape[-1])[-n:] if sin.dim() >= 2 else sin
        if cos.shape[0] != n:
            raise ValueError(f"forward returned cos of shape {tuple(out[0].shape)}, expected {n} positions")
        return cos, sin  # (n, width) module dtype

    def _detect_cos_sin(self, hd: int | None) -> None:
        import torch

        n = 4
        if self.convention == "hf-current":
            cos, sin = self._call_cos_sin(positions=list(range(n)))
        else:
            cos, sin = self._call_cos_sin(seq_len=n)
        width = int(cos.shape[-1])
        c = cos.float()
        half = width // 2
        if width % 2 == 0 and torch.equal(c[:, :half], c[:, half:]):
            self.layout, self.rotary_dim = "rotate-half", width
        elif width % 2 == 0 and torch.equal(c[:, 0::2], c[:, 1::2]):
            self.layout, self.rotary_dim = "interleaved", width
        else:  # one value per pair
            self.layout, self.rotary_dim = "per-pair", 2 * width
        if self.head_dim is None:
            self.head_dim = self.rotary_dim

    def _call_forms(self) -> list[tuple[str, Callable[[Any], Any]]]:
        """The ways a rotating callable may be called, most common first.

        ``f(q)``; ``f(q, k) -> (q, k)``; and, when the signature names them,
        ``f(q, k, past_key_values_length=0, position_ids=arange(n)[None])`` (transformers <= 4.34
        Falcon: ``forward(query, key, past_key_values_length, position_ids)`` on
        ``(batch * heads, seq, dim)`` tensors) and ``f(q, position_ids=...)``. Offsets are 0 and
        position ids the int64 positions 0 .. n-1 of shape (1, n), so row p is position p.
        """
        import torch

        obj = self.obj
        fn = obj.forward if isinstance(obj, torch.nn.Module) else obj
        params = [p for p in _params(fn) if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]

        def named(q, skip: int) -> dict[str, Any] | None:
            out: dict[str, Any] = {}
            for prm in params[skip:]:
                if prm.name in _POSITION_NAMES:
                    n = q.shape[-2]
                    out[prm.name] = torch.arange(n, dtype=torch.int64)[None, :]  # (1, n) int64
                elif prm.name in _OFFSET_NAMES:
                    out[prm.name] = 0
                elif prm.default is inspect.Parameter.empty:
                    return None  # a required argument this probe cannot supply
            return out

        forms: list[tuple[str, Callable[[Any], Any]]] = [
            ("f(q)", lambda q: obj(q)),
            ("f(q, k) -> (q, k)", lambda q: obj(q, q.clone())),
        ]
        extra2 = [p.name for p in params[2:] if p.name in _POSITION_NAMES + _OFFSET_NAMES]
        if extra2:
            desc = ", ".join(f"{n}=0" if n in _OFFSET_NAMES else f"{n}=arange(n)" for n in extra2)
            forms.append((f"f(q, k, {desc}) -> (q, k)", lambda q: obj(q, q.clone(), **(named(q, 2) or {}))))
        extra1 = [p.name for p in params[1:] if p.name in _POSITION_NAMES]
        if extra1:
            forms.append((f"f(q, {extra1[0]}=arange(n))", lambda q: obj(q, **(named(q, 1) or {}))))
        return forms

    def _call_rotate(self, q):
        form = getattr(self, "_form", None)
        if form is not None:
            t = _first_tensor(form[1](q))
        else:
            t, last = None, None
            for desc, call in self._call_forms():
                try:
                    t = _first_tensor(call(q))
                except TypeError as exc:  # wrong arity for this form: try the next one
                    last = exc
                    continue
                if t is not None:
                    self._form = (desc, call)
                    break
            if t is None and last is not None:
                raise last
        if t is None or tuple(t.shape) != tuple(q.shape):
            raise ValueError("callable did not return a tensor of the query's shape")
        return t

    @property
    def call_form(self) -> str:
        """How the module is called, e.g. ``forward(x, seq_len=L) -> (cos, sin)``."""
        if self.convention == "hf-legacy":
            return "forward(x, seq_len=L) -> (cos, sin)"
        if self.convention == "hf-current":
            return "forward(x, position_ids) -> (cos, sin)"
        form = getattr(self, "_form", None)
        shape = "(batch*heads, seq, dim)" if getattr(self, "_ndim", 4) == 3 else "(batch, heads, seq, dim)"
        return f"{form[0] if form else 'f(q)'} on q {shape}"

    def _detect_rotation(self, hd: int | None) -> None:
        import torch

        candidates = [hd] if hd else [128, 64, 256, 96, 80, 32, 16, 8]
        last: Exception | None = None
        for dim in candidates:
            for ndim in (4, 3):
                self._form = None  # the calling form is found anew for each shape
                try:
                    shape = (1, 1, 4, dim) if ndim == 4 else (1, 4, dim)
                    q = torch.zeros(shape, dtype=self.x_dtype)
                    q[..., 0] = 1
                    out = self._call_rotate(q).float().reshape(4, dim)  # (4, dim)
                except Exception as exc:  # try the next shape
                    last = exc
                    continue
                self.head_dim, self._ndim = dim, ndim
                moved = torch.nonzero(out[1, 1:].abs() > 0).flatten()
                if moved.numel() == 0:
                    raise ValueError("callable did not rotate the first dimension: unknown convention")
                partner = int(moved[0]) + 1
                if partner == 1:
                    self.layout = "interleaved"
                    qq = torch.zeros(shape, dtype=self.x_dtype)
                    qq[..., 0::2] = 1
                    o = self._call_rotate(qq).float().reshape(4, dim)
                    rot = (o[1, 1::2] != 0)
                    npairs = int(rot.int().cumprod(0).sum())
                    self.rotary_dim = 2 * max(npairs, 1)
                else:
                    self.layout, self.rotary_dim = "rotate-half", 2 * partner
                return
        raise ValueError(f"callable is not a recognised rotary convention ({type(last).__name__}: {last})")

    # -- evaluation --------------------------------------------------------

    def _split(self, cos, sin=None):
        """Module output rows -> per-pair float64 (cos, sin) of shape (n, d/2)."""
        k = self.rotary_dim // 2
        if self.convention == "rotate-callable":
            out = cos  # (n, head_dim) rotated basis vectors
            if self.layout == "rotate-half":
                c, s = out[:, :k], out[:, k:2 * k]
            else:
                c, s = out[:, 0:2 * k:2], out[:, 1:2 * k:2]
        elif self.layout == "rotate-half":
            c, s = cos[:, :k], sin[:, :k]
        elif self.layout == "interleaved":
            c, s = cos[:, 0::2], sin[:, 0::2]
        else:
            c, s = cos, sin
        return c.float().numpy(), s.float().numpy()  # exact for bf16 / fp16 / fp32 outputs

    def _rotate_full(self, n: int):
        import torch

        dim = self.head_dim
        shape = (1, 1, n, dim) if getattr(self, "_ndim", 4) == 4 else (1, n, dim)
        q = torch.zeros(shape, dtype=self.x_dtype)  # (1, 1, n, head_dim) dtype
        k = self.rotary_dim // 2
        if self.layout == "rotate-half":
            q[..., :k] = 1
        else:
            q[..., 0:2 * k:2] = 1
        out = self._call_rotate(q)
        self.output_dtype = str(out.dtype).replace("torch.", "")
        return out.reshape(n, dim)

    def prepare(self) -> None:
        """Evaluate whole-sequence conventions once at the full length."""
        import torch

        with torch.no_grad():
            if self.convention == "hf-legacy":
                self._full = self._call_cos_sin(seq_len=self.length)
            elif self.convention == "rotate-callable":
                self._full = (self._rotate_full(self.length), None)

    def rows(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        import torch

        if self._full is not None:
            cos, sin = self._full
            return self._split(cos[start:stop], None if sin is None else sin[start:stop])
        with torch.no_grad():
            cos, sin = self._call_cos_sin(positions=np.arange(start, stop))
        return self._split(cos, sin)

    def at(self, positions: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        import torch

        if self._full is not None:
            idx = torch.as_tensor(list(positions), dtype=torch.int64)
            cos, sin = self._full
            return self._split(cos[idx], None if sin is None else sin[idx])
        with torch.no_grad():
            cos, sin = self._call_cos_sin(positions=list(positions))
        return self._split(cos, sin)


# --------------------------------------------------------------------------- scenarios


@contextlib.contextmanager
def _scenario(name: str, dtype):
    """Context in which the factory is built and the module called."""
    import torch

    if name == "default":
        old = torch.get_default_dtype()
        torch.set_default_dtype(dtype)
        try:
            yield
        finally:
            torch.set_default_dtype(old)
    elif name == "autocast":
        with torch.autocast("cpu", dtype=dtype):
            yield
    elif name in ("cast", "reference"):
        yield
    else:
        raise ValueError(f"unknown scenario {name!r}; choose one of {', '.join(SCENARIOS)} or all")


_CONVENTIONS = ("expected forward(x, seq_len=...) -> (cos, sin), forward(x, position_ids) -> (cos, sin), "
                "or a callable rotating q of shape (batch, heads, seq, dim)")


@contextlib.contextmanager
def _user_errors(prefix: str):
    """Errors raised while calling the user's module become one-line ValueErrors."""
    try:
        yield
    except ValueError as exc:
        raise ValueError(f"{prefix}unknown rotary convention: {exc}; {_CONVENTIONS}") from None
    except Exception as exc:
        raise ValueError(f"{prefix}the module raised {type(exc).__name__}: "
                         f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''} "
                         f"(unknown rotary convention? {_CONVENTIONS})") from None


def _build(factory: Callable[[], Any], scenario: str, dtype):
    """Call the factory; in the ``cast`` scenario cast the result (or its owner) to dtype."""
    try:
        obj = factory()
    except Exception as exc:
        raise ValueError(f"the factory raised {type(exc).__name__}: {exc}") from None
    if obj is None:
        raise ValueError("the factory returned None; it must return the rotary module or callable")
    if scenario == "cast":
        owner = obj if hasattr(obj, "to") else getattr(obj, "__self__", None)
        if owner is not None and hasattr(owner, "to"):
            res = owner.to(dtype)
            if owner is obj and res is not None:
                obj = res
    return obj


def _pow2_positions(length: int, limit: int | None = None) -> list[int]:
    top = length - 1 if limit is None else min(length - 1, limit)
    out, p = [], 1
    while p <= top:
        out.append(p)
        p *= 2
    return out


def _progress(total: int, desc: str, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="pos", unit_scale=True, leave=False, file=sys.stderr)


def _measure_scenario(factory, scenario: str, dtype_name: str, length: int, nominal: np.ndarray,
                      reference: np.ndarray, head_dim: int | None, chunk: int, progress: bool) -> ScenarioResult:
    import torch

    dtype = _torch_dtype(dtype_name)
    with torch.no_grad(), _scenario(scenario, dtype):
        obj = _build(factory, scenario, dtype)
        with _user_errors(f"scenario {scenario}: "):
            probe = Probe.detect(obj, dtype, length, head_dim)
            probe.prepare()
        p2 = _pow2_positions(length)
        if p2:
            with _user_errors(f"scenario {scenario}: "):
                c, s = probe.at(p2)
            measured = effective_frequencies(p2, c, s)
        else:
            measured = reference.copy()
        if measured.size != nominal.size:
            raise ValueError(f"scenario {scenario}: {2 * measured.size} rotary dims, float32 build had "
                             f"{2 * nominal.size}")
        from ..formats import round_to_format

        unc = frequency_uncertainty(measured, p2[-1] if p2 else 1, probe.output_dtype)
        omega, freq_source = resolve_frequencies(measured, unc, [
            ("inv_freq attribute", _inv_freq_array(obj)),
            ("float32 build", reference),
            (f"float32 build rounded to {dtype_name}", np.asarray(round_to_format(reference, dtype_name), np.float64)),
        ])
        stats = EncodingStats(omega, nominal, dtype_name, length)
        bar = _progress(length, scenario, progress)
        try:
            for start in range(0, length, chunk):
                stop = min(start + chunk, length)
                with _user_errors(f"scenario {scenario}: "):
                    c, s = probe.rows(start, stop)
                stats.update(np.arange(start, stop), c, s)
                if bar is not None:
                    bar.update(stop - start)
        finally:
            if bar is not None:
                bar.close()
        out_dtype = probe.output_dtype
    rel = np.abs(omega / nominal - 1.0)  # (d/2,)
    if freq_source == "measured":  # only pairs whose frequency the measurement resolves
        rel = rel[unc / np.abs(nominal) <= DRIFT_TOLERANCE / 2]
    drift = float(rel.max()) if rel.size else 0.0
    distinct = stats.distinct()
    return ScenarioResult(
        scenario=scenario, dtype=dtype_name, length=length, exact=stats.exact,
        exact_fraction=stats.exact / length, distinct=distinct, distinct_fraction=distinct / length,
        nonfinite=stats.nonfinite, first_inexact=stats.first_inexact, frequency_drift=drift,
        max_phase_error=stats.max_phase_error, max_phase_error_at=stats.max_phase_error_at,
        path=stats.path(drift), output_dtype=out_dtype, frequency_source=freq_source,
        effective_frequencies=omega.tolist())


def init_cache_length(obj: Any) -> int | None:
    """Rows of the cos/sin cache a freshly built module holds before any call, else None.

    The Hugging Face legacy classes (transformers <= 4.37: ``_set_cos_sin_cache`` in
    ``__init__``, seed 004) build ``cos_cached`` for ``max_position_embeddings`` positions at
    init and rebuild it in ``forward`` only for a longer ``seq_len``: the two paths may differ in
    precision (the init cache from float32 ``inv_freq``, the rebuild from a cast one). Read from a
    tensor attribute or buffer named ``*cos*`` with at least 2 dims (its second-to-last size);
    an integer like ``max_seq_len_cached`` alone is not a cache (current classes set it without
    building one). Call only on a module that has not been called yet.
    """
    import torch

    for holder in (obj, getattr(obj, "__self__", None)):
        if holder is None:
            continue
        items = dict(vars(holder)) if hasattr(holder, "__dict__") else {}
        if isinstance(holder, torch.nn.Module):
            items.update(dict(holder.named_buffers(recurse=False)))
        for name, v in items.items():
            if "cos" in name.lower() and isinstance(v, torch.Tensor) and v.dim() >= 2:
                return int(v.shape[-2])
    return None


def _reference(factory, length: int, head_dim: int | None) -> tuple[Probe, np.ndarray, int | None]:
    """A float32 build: convention, layout, rotary dim, the float32 frequencies, the init cache rows."""
    import torch

    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    try:
        with torch.no_grad():
            obj = _build(factory, "reference", torch.float32)
            cached = init_cache_length(obj)
            ref_len = min(length, 2**12 + 1)  # frequencies from p <= 4096: float32-exact enough
            with _user_errors(""):
                probe = Probe.detect(obj, torch.float32, ref_len, head_dim)
                probe.prepare()
                p2 = _pow2_positions(ref_len)
                if not p2:
                    p2 = [1]
                    probe.length = 2
                    probe.prepare()
                c, s = probe.at(p2)
            measured = effective_frequencies(p2, c, s)
            attr = _inv_freq_array(obj)
            unc = frequency_uncertainty(measured, p2[-1], probe.output_dtype)
            omega, source = resolve_frequencies(measured, unc, [("inv_freq attribute", attr)])
    finally:
        torch.set_default_dtype(old)
    return probe, omega, cached


def audit_module(target: str | Callable[[], Any], dtype: str = "bf16", length: int = 8192,
                 scenarios: Iterable[str] = SCENARIOS, base: float | None = None,
                 head_dim: int | None = None, chunk: int = DEFAULT_CHUNK, progress: bool = False,
                 name: str | None = None) -> ModuleAudit:
    """Run a rotary module in each precision scenario and measure its encoding.

    ``target``: ``path/file.py:NAME``, ``package.module:NAME`` or a zero-argument factory.
    ``dtype``: bf16 | fp16 | fp32 (aliases accepted). ``length``: positions 0 .. length-1.
    ``base``: nominal base; inferred from a float32 build when None. Raises ValueError /
    UsageError (one line) for bad input. Definitions: see the module docstring.
    """
    require_torch()
    dtype_name = canonical_dtype(dtype)
    if not isinstance(length, int) or length < 2:
        raise ValueError(f"length must be an integer >= 2, got {length!r}")
    if length > MAX_RUNTIME_LENGTH:
        raise ValueError(f"length {length:,} is beyond {MAX_RUNTIME_LENGTH:,} (2^23) positions: the module's own "
                         "(L, d) tensors would not fit in memory; `ropelaw exact` counts exact positions in closed form")
    if base is not None and not (base > 1 and math.isfinite(base)):
        raise ValueError(f"base must be a finite number > 1, got {base!r}")
    scen = list(scenarios)
    for s in scen:
        if s not in SCENARIOS:
            raise ValueError(f"unknown scenario {s!r}; choose one of {', '.join(SCENARIOS)} or all")
    if isinstance(target, str):
        factory, path, line = load_factory(target)
        label = target
    else:
        factory = target
        path, line = _source_of(factory)
        path = path or "-"
        label = name or getattr(factory, "__qualname__", repr(factory))
    ref, omega_ref, cached = _reference(factory, length, head_dim)
    npairs = omega_ref.size
    d = 2 * npairs
    if base is not None:
        nominal = base ** (-2.0 * np.arange(npairs) / d)
        base_source, residual, base_val = "given", float(np.max(np.abs(omega_ref / nominal - 1))), float(base)
    else:
        fitted, residual = fit_base(omega_ref)
        if fitted is not None and residual <= DRIFT_TOLERANCE:
            base_val, base_source = fitted, "inferred"
            nominal = fitted ** (-2.0 * np.arange(npairs) / d)
        else:  # not geometric (scaled or custom frequencies): the float32 build is the nominal
            base_val, base_source, nominal = None, "float32 build", omega_ref
    results = [_measure_scenario(factory, s, dtype_name, length, nominal, omega_ref, ref.head_dim, chunk, progress)
               for s in scen]
    audit = ModuleAudit(target=label, convention=ref.convention, layout=ref.layout, rotary_dim=ref.rotary_dim,
                        head_dim=ref.head_dim, base=base_val, base_source=base_source, base_fit_residual=residual,
                        dtype=dtype_name, length=length, scenarios=results, path=path, line=line,
                        call=ref.call_form, init_cache_length=cached)
    if ref.convention == "hf-legacy" and cached is not None and cached >= length:
        audit.notes.append(
            f"cache-rebuild path not exercised: the module builds a cos/sin cache for {cached:,} positions "
            f"at init, which covers the audited {length:,}; forward rebuilds it only beyond {cached:,} "
            f"(where legacy classes round positions in a cast inv_freq's dtype): audit with --length above "
            f"{cached:,} or build the module with a smaller max_position_embeddings")
    audit.findings = runtime_findings(audit)
    return audit


def require_torch():
    from ..errors import require

    return require("torch", "torch", "the runtime audit")


# --------------------------------------------------------------------------- findings


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def runtime_findings(audit: ModuleAudit) -> list[Finding]:
    """RP3xx findings from the measurements (one per scenario and cause)."""
    out: list[Finding] = []
    loc = dict(path=audit.path, line=audit.line, column=1)
    for s in audit.scenarios:
        tag = f"[{s.scenario}, {s.dtype}]"
        common = dict(scenario=s.scenario, dtype=s.dtype, length=s.length, exact=s.exact,
                      exact_fraction=s.exact_fraction, distinct=s.distinct)
        if s.path == "product rounded":
            out.append(Finding.of(
                RUNTIME_PRODUCT_ROUNDED,
                f"{tag} the angle position * inv_freq is rounded: {s.exact:,} of {s.length:,} positions "
                f"({_pct(s.exact_fraction)}) keep their encoding, {s.distinct:,} distinct, max phase error "
                f"{s.max_phase_error:.3g} rad at position {s.max_phase_error_at}",
                fix="compute positions (int64 -> float32) and the product in float32 with autocast disabled; "
                    "cast only cos/sin to the model dtype", **loc, **common))
        elif s.path == "positions rounded":
            out.append(Finding.of(
                RUNTIME_POSITIONS_ROUNDED,
                f"{tag} positions pass through {s.dtype}: {s.exact:,} of {s.length:,} positions "
                f"({_pct(s.exact_fraction)}) keep their own encoding, {s.distinct:,} distinct; "
                f"first collision at {s.first_inexact}",
                fix="build positions as int64 and convert to float32: torch.arange(n, dtype=torch.int64).float()",
                **loc, **common))
        if s.frequency_drift > DRIFT_TOLERANCE:
            out.append(Finding.of(
                RUNTIME_FREQUENCIES_ROUNDED,
                f"{tag} effective rotary frequencies drift up to {s.frequency_drift:.2e} (relative) from "
                f"{'base^(-2i/d)' if audit.base else 'the float32 build'}; max phase error "
                f"{s.max_phase_error:.3g} rad at position {s.max_phase_error_at}",
                fix="keep inv_freq in float32 outside the cast (recompute it in forward or restore it after .to())",
                **loc, frequency_drift=s.frequency_drift, scenario=s.scenario, dtype=s.dtype))
        if s.nonfinite:
            out.append(Finding.of(
                RUNTIME_NONFINITE,
                f"{tag} {s.nonfinite:,} of {s.length:,} positions give inf/NaN encodings",
                fix="keep positions and angles in int64/float32; fp16 overflows at 65,520",
                **loc, nonfinite=s.nonfinite, scenario=s.scenario, dtype=s.dtype))
    return out


# --------------------------------------------------------------------------- Hugging Face


_HF_PREFERRED = {"gpt_neox": "GPTNeoX", "gptj": "GPTJ", "qwen2": "Qwen2", "phi3": "Phi3"}


def hf_rotary_factory(model_type: str, overrides: dict[str, Any] | None = None, length: int | None = None
                      ) -> tuple[Callable[[], Any], dict[str, Any]]:
    """A zero-argument factory building ``model_type``'s rotary embedding from a small config.

    Uses the installed transformers: ``AutoConfig.for_model(model_type, **overrides)`` (no
    weights), then the architecture's ``*RotaryEmbedding`` class with whichever constructor the
    version has: ``(config=..., device=None)`` (>= 4.4x) or ``(dim, max_position_embeddings,
    base)`` (<= 4.37 and kin). Returns (factory, info) with info keys transformers_version,
    model_type, class, module_file, constructor, head_dim, rotary_dim, base,
    max_position_embeddings (the value the module is built with), max_position_embeddings_config,
    max_position_embeddings_note.

    Legacy classes build a cos/sin cache for max_position_embeddings positions at init and
    rebuild it in forward only beyond (:func:`init_cache_length`). When ``length`` is given, the
    config's max_position_embeddings covers it, the user did not set it (``overrides``) and a
    float32 build holds such a cache, the module is built with :func:`rebuild_max_positions`
    (``length // 4``) instead, so that the audit runs the rebuild path; the note says so.
    """
    from ..errors import require

    transformers = require("transformers", "hf", "`audit hf`")
    try:
        config = transformers.AutoConfig.for_model(model_type, **(overrides or {}))
    except KeyError:
        raise ValueError(f"transformers {transformers.__version__} has no model type {model_type!r}") from None
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        if "Unrecognized model" in first or "does not recognize" in first:
            raise ValueError(f"transformers {transformers.__version__} has no model type {model_type!r}") from None
        raise ValueError(f"cannot build a {model_type!r} config with transformers {transformers.__version__}: "
                         f"{type(exc).__name__}: {first}") from None
    mod_name = f"transformers.models.{model_type}.modeling_{model_type}"
    try:
        module = importlib.import_module(mod_name)
    except Exception as exc:
        raise ValueError(f"cannot import {mod_name}: {type(exc).__name__}: {exc}") from None
    classes = [(n, c) for n, c in vars(module).items()
               if inspect.isclass(c) and n.endswith("RotaryEmbedding") and c.__module__ == module.__name__]
    if not classes:
        raise ValueError(f"{model_type}: transformers {transformers.__version__} defines no *RotaryEmbedding class "
                         "(this architecture may not use RoPE in this version)")
    prefix = _HF_PREFERRED.get(model_type, "")
    plain = [c for n, c in classes if n.lower() == f"{model_type.replace('_', '')}rotaryembedding"
             or (prefix and n == f"{prefix}RotaryEmbedding")]
    cls = plain[0] if plain else min(classes, key=lambda nc: len(nc[0]))[1]
    head_dim, rotary_dim, base, config_notes = _rope_dims_of(model_type, config)
    max_pos = getattr(config, "max_position_embeddings", 2048) or 2048
    params = [p.name for p in _params(cls.__init__)]

    def make(mpe: int) -> tuple[Callable[[], Any], str]:
        if "config" in params:
            cfg = config
            if mpe != max_pos:
                import copy

                cfg = copy.deepcopy(config)
                cfg.max_position_embeddings = mpe
            return (lambda: cls(config=cfg)), "config"
        kwargs: dict[str, Any] = {}
        if "max_position_embeddings" in params:
            kwargs["max_position_embeddings"] = mpe
        if "base" in params:
            kwargs["base"] = base
        return (lambda: cls(rotary_dim, **kwargs)), "dim, max_position_embeddings, base"

    factory, ctor = make(max_pos)
    used, note = max_pos, None
    if (length is not None and "max_position_embeddings" not in (overrides or {}) and max_pos >= length
            and ("config" in params or "max_position_embeddings" in params)
            and convention_of(cls.forward) == "hf-legacy"):
        import torch

        # a cheap test build with 16 positions (the config's value may be millions of rows): a class
        # whose init cache has exactly max_position_embeddings rows would cover the audited length
        small = min(16, max_pos)
        old = torch.get_default_dtype()
        torch.set_default_dtype(torch.float32)
        try:
            cached = init_cache_length(make(small)[0]())
        except Exception:  # the audit itself reports a factory that raises
            cached = None
        finally:
            torch.set_default_dtype(old)
        if cached == small:
            used = rebuild_max_positions(length, max_pos)
            factory, ctor = make(used)
            note = (f"max_position_embeddings {used:,} instead of the config's {max_pos:,}: {cls.__name__} builds "
                    f"its cos/sin cache at init for max_position_embeddings positions and rebuilds it in forward "
                    f"only beyond; {max_pos:,} would cover the audited {length:,} and hide the rebuild path "
                    f"(--config max_position_embeddings={max_pos} audits the init cache)")
    path, line = _source_of(cls)
    info = {"transformers_version": transformers.__version__, "model_type": model_type,
            "class": cls.__name__, "module_file": path, "line": line, "constructor": ctor,
            "head_dim": head_dim, "rotary_dim": rotary_dim, "base": _config_base(model_type, base),
            "max_position_embeddings": used, "max_position_embeddings_config": max_pos,
            "max_position_embeddings_note": note, "config_notes": config_notes}
    return factory, info


def _rope_dims_of(model_type: str, config: Any) -> tuple[int | None, int | None, Any, list[str]]:
    """``(head_dim, rotary_dim, base, notes)`` of a transformers config, through the linter's loader.

    The one place that derives head dim, rotary dims and base from a config is
    :func:`ropelaw.lint.loader.load_mapping` (``qk_rope_head_dim``, ``kv_channels``,
    ``partial_rotary_factor`` / ``rotary_pct``, ``rope_theta`` / ``rotary_emb_base`` /
    ``rope_parameters``, ChatGLM's ``rope_ratio``, architecture defaults); this reads its
    result. A dimension that cannot be derived is ``None``; a base that is not a number is
    returned as written (:func:`_config_base` reports it); ``notes`` are the loader's
    assumptions (e.g. a base taken from the architecture's default).
    """
    from ..lint.loader import load_mapping

    label = f"{model_type} config"
    try:
        loaded = load_mapping(config.to_dict(), path=label)
    except ValueError as exc:  # UsageError / NotARopeConfig: one line naming the config
        raise ValueError(f"{model_type}: cannot read the RoPE settings of its config: {exc}") from None
    main = loaded.layers[0]

    def whole(v) -> int | None:
        x = v.number() if v is not None else None
        return int(x) if x is not None else None

    base = main.base.number()
    return whole(loaded.head_dim), whole(main.d), main.base.raw if base is None else base, list(loaded.notes)


def rebuild_max_positions(length: int, config_value: int) -> int:
    """max_position_embeddings that makes a legacy class rebuild its cache for ``length`` positions.

    min(config_value, max(1, length // 4)): strictly below ``length`` for length >= 2, so
    ``forward(x, seq_len=length)`` takes the rebuild branch (``seq_len > max_seq_len_cached``)
    and every audited position comes from the rebuilt cache; 2,048 at the default 8,192.
    """
    return max(1, min(int(config_value), length // 4))


def _config_base(model_type: str, base: Any) -> float:
    """The config's RoPE base as a float, or a one-line error naming the key to fix."""
    try:
        return float(base)
    except (TypeError, ValueError):
        raise ValueError(f"{model_type}: the config's rope_theta is {base!r}, not a number "
                         "(--config rope_theta=10000)") from None


def audit_hf(model_type: str, dtype: str = "bf16", length: int = 8192, scenarios: Iterable[str] = SCENARIOS,
             base: float | None = None, overrides: dict[str, Any] | None = None, chunk: int = DEFAULT_CHUNK,
             progress: bool = False) -> ModuleAudit:
    """:func:`audit_module` on the rotary embedding of a transformers architecture (no weights)."""
    require_torch()
    factory, info = hf_rotary_factory(model_type, overrides, length=length)
    audit = audit_module(factory, dtype, length, scenarios, base=base, head_dim=info["head_dim"], chunk=chunk,
                         progress=progress, name=f"transformers {info['transformers_version']} {info['class']}")
    audit.path, audit.line = info["module_file"] or "-", info["line"]
    audit.max_position_embeddings = info["max_position_embeddings"]
    if info["max_position_embeddings_note"]:
        audit.notes.insert(0, info["max_position_embeddings_note"])
    audit.findings = runtime_findings(audit)
    return audit
