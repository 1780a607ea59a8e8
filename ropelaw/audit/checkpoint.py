"""Checkpoint audit: rotary and ALiBi tensors stored in safetensors and torch files.

Three modules: :mod:`ropelaw.audit.checkpoint_read` reads the file (never executing it, every limit
below checked first), :mod:`ropelaw.audit.checkpoint_measure` says what stored values are
(tolerances, fitted base, geometric frequencies, ALiBi slopes, layouts), and this one names each
tensor by what it holds, measures it and reports (:func:`audit_checkpoint`).

Never executes the file: safetensors are read from their JSON header and raw bytes (numpy,
bf16 and fp8 through ml_dtypes; no torch needed); torch files only through
``torch.load(path, weights_only=True, map_location="cpu")``. A pickle that needs more than
weights-only loading (a custom class, an ``os.system`` reduce) is refused with one line and
its payload never runs.

Limits, checked before the bytes they guard are read (a hostile file is refused or capped, and
a corrupt one exits 2, never passes as clean): only regular files are opened; a safetensors
header is validated as the safetensors library does (length within the file and its 100 MB
limit, int offsets ordered and contiguous within the data, shape x itemsize equal to the byte
range in Python ints), parsed only up to :data:`MAX_HEADER_READ`, and tensors are memory-mapped;
a torch zip's member sizes are checked before torch decompresses them, its pickle is at most
:data:`MAX_PICKLE` (a legacy or raw pickle file too), and storages are memory-mapped when every
member is stored (a deflated member is read decompressed); containers are walked once each
(shared or cyclic lists) down to :data:`MAX_NESTING` levels; expanded (stride-0) views are never
materialised; sparse, quantized and meta tensors are skipped with a note; caches are streamed in
chunks, at most :data:`MAX_ROWS` rows.

What is measured
- ``inv_freq`` (1-D), and 1-D ``freqs`` / ``bands`` / ``theta`` (name after the last '.' ending so;
  rotary-embedding-torch stores ``freqs = 1 / theta^(arange(0, d, 2) / d)`` as a parameter) whose
  values are a geometric sequence starting at 1 (:func:`geometric_frequencies`): dtype, rotary
  dim d = 2 len, base fitted to ln inv_freq_i = -(2i/d) ln base
  (:func:`ropelaw.audit.runtime.fit_base`; RoFormer, arXiv 2104.09864, eq. 34), and the largest
  relative deviation of the stored values from base^(-2i/d); a stored value within one unit of
  the stored dtype's roundoff (plus float32 evaluation error, 2^-24 (3 + ln base)) of the formula
  counts as the formula ("formula exact").
- cos/sin caches (``*cos_cached`` with its ``*sin_cached``, or ``cos``/``sin`` pairs), complex
  ``freqs_cis`` and stacked caches (``rope_cache`` / ``cache`` of shape ``(..., L, d/2, 2)``,
  ``torch.stack([cos, sin], -1)``: lit-llama, litgpt, torchtune), every pair: row p is exact when its angle vector is \
closer to p * omega (omega the
  frequencies the cache itself uses, recovered from rows 1, 2, 4, ...; exact in binary floating
  point) than half the distance between the ideal encodings of p and p + 1: the same measure
  as the module audit (:class:`ropelaw.audit.runtime.EncodingStats`). Those frequencies rounded to
  bf16/fp16 (:func:`ropelaw.audit.measure.geometric_nominal`) are RP310 even when every row is exact.
- ALiBi ``slopes`` against Press et al. 2022 (arXiv 2108.12409, sec. 3; BLOOM's extension for
  a head count that is not a power of two), and stored ALiBi biases column by column: column j
  is exact when (bias[h, j] - bias[h, 0]) / slope_h rounds to j for every head h.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

import numpy as np

from ..errors import UsageError
from ..findings import Finding
from ..numfmt import number
from ..limits import MAX_D
from .rules.checkpoint import (CHECKPOINT_ALIBI_LOW_PRECISION, CHECKPOINT_ALIBI_SLOPES_INVALID,
                               CHECKPOINT_CACHE_FREQUENCIES_ROUNDED, CHECKPOINT_CACHE_INEXACT,
                               CHECKPOINT_CACHE_NONFINITE,
                               CHECKPOINT_INV_FREQ_INVALID, CHECKPOINT_INV_FREQ_LOW_PRECISION,
                               CHECKPOINT_NOT_ROTARY_FREQUENCIES, CHECKPOINT_NOT_SEARCHED,
                               CHECKPOINT_TENSOR_NOT_MEASURED)
from .checkpoint_measure import (ROUNDOFF, alibi_slopes, as_rows, geometric_frequencies, inv_freq_details,
                                 not_decreasing_frequencies, pair_layout, pair_values)
from .checkpoint_result import CheckpointAudit, RotaryTensor
from .checkpoint_read import (MAX_HEADER, MAX_HEADER_READ, MAX_NESTING, MAX_PICKLE, UNSEARCHED,  # noqa: F401
                              Reasons, Tensors, read_checkpoint)

__all__ = ["CheckpointAudit", "RotaryTensor", "audit_checkpoint", "read_checkpoint", "alibi_slopes",
           "geometric_frequencies"]

_LOW = {"bfloat16", "float16", "float8_e4m3fn", "float8_e5m2"}

# leaf names (after the last '.') of 1-D tensors that may hold rotary frequencies; all but
# inv_freq must also pass the geometric test (a `theta` or `freqs` may be something else)
_FREQ_SUFFIXES = ("inv_freq", "freqs", "bands", "theta")

# measurement limits (reading limits: ropelaw.audit.checkpoint_read)
# frequencies of one rotary embedding: d/2 <= MAX_D/2 pairs (ropelaw.limits.MAX_D)
MAX_PAIRS = MAX_D // 2
# cache rows measured: 2^20 positions (a longer cache is measured on its first 2^20 rows, noted)
MAX_ROWS = 1 << 20
# elements read per measured tensor, in chunks of CHUNK_ELEMENTS: 2^24 (64 MiB of float32 per
# tensor mapped; 131,072 rows of a d=128 cache) keeps a measurement to seconds and well under 1 GB
MAX_ELEMENTS = 1 << 24
CHUNK_ELEMENTS = 1 << 20


def _cache_details(rows_of: Callable[[int, int], tuple[np.ndarray, np.ndarray]], rows: int, k: int, layout: str,
                   inv_freq: np.ndarray | None, dtype: str = "bfloat16") -> dict[str, Any]:
    """Row-by-row exactness of a cache whose per-pair cos/sin rows ``[a, b)`` come from
    ``rows_of(a, b)`` as float64 ``(b - a, k)`` arrays, read in chunks (never the whole cache)."""
    from .runtime import EncodingStats, effective_frequencies, frequency_uncertainty, resolve_frequencies

    p2, p = [], 1
    while p < rows:
        p2.append(p)
        p *= 2
    out: dict[str, Any] = {"rows": rows, "rotary_dim": 2 * k, "layout": layout}
    if not p2:
        out.update(exact=rows, exact_fraction=1.0, distinct=rows, nonfinite=0, first_inexact=None,
                   frequency_source="n/a")
        return out
    picked = [rows_of(q, q + 1) for q in p2]
    measured = effective_frequencies(p2, np.concatenate([c for c, _ in picked]), np.concatenate([s for _, s in picked]))
    unc = frequency_uncertainty(measured, p2[-1], dtype if dtype in ("float32", "float64", "float16") else "bfloat16")
    omega, source = resolve_frequencies(measured, unc, [("inv_freq in file", inv_freq)])
    stats = EncodingStats(omega, omega, None, rows)
    step = max(1, min(32768, CHUNK_ELEMENTS // max(k, 1)))
    for start in range(0, rows, step):
        stop = min(start + step, rows)
        c, s = rows_of(start, stop)
        stats.update(np.arange(start, stop), c, s)
    out.update(exact=stats.exact, exact_fraction=stats.exact / rows, distinct=stats.distinct(),
               nonfinite=stats.nonfinite, first_inexact=stats.first_inexact, frequency_source=source)
    # the cache's own frequencies: base^(-2i/d) rounded to bf16 / fp16 is a finding even when every
    # row is consistent with them (a cache built from rounded frequencies reads 100% exact)
    from .measure import geometric_nominal

    base, _, rounded_to, _how = geometric_nominal(omega, unc if source == "measured" else np.zeros_like(omega))
    if base is not None and rounded_to:
        theta = base ** (-2.0 * np.arange(k) / (2 * k))
        out.update(base=base, frequencies_rounded_to=rounded_to,
                   frequency_drift=float(np.max(np.abs(omega / theta - 1.0))),
                   phase_error=float((rows - 1) * np.max(np.abs(omega - theta))))
    return out


def _stacked_cache_name(leaf: str) -> bool:
    """Leaf names of stacked (cos, sin) caches: lit-llama / litgpt ``rope_cache``, torchtune ``cache``,
    ``rotary_cache``, ``cos_sin`` (``freqs_cis`` has its own branch)."""
    return leaf in ("cache", "rope_cache", "rotary_cache", "cos_sin", "cos_sin_cache") or leaf.endswith(
        ("rope_cache", "rotary_cache"))


def _leaf(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower()


def _numel(shape: tuple) -> int:
    return math.prod(shape)


_KIND_WORDS = {"inv_freq": "rotary frequencies (inv_freq)", "cos_sin_cache": "a cos/sin cache",
               "freqs_cis": "a complex rotary cache (freqs_cis)", "stacked_cache": "a stacked cos/sin cache",
               "alibi_slopes": "ALiBi slopes",
               "alibi_bias": "an ALiBi bias"}


def _kind_by_name(leaf: str, shape: tuple) -> str | None:
    """What a tensor is by its name (the part after the last '.', lower case), or None.

    ``inv_freq`` by name alone; ``freqs`` / ``bands`` / ``theta`` only by their values too (see
    the module docstring), so never here."""
    if leaf.endswith("inv_freq"):
        return "inv_freq"
    if "freqs_cis" in leaf:
        return "freqs_cis"
    if _stacked_cache_name(leaf) and len(shape) >= 3 and shape[-1] == 2:
        return "stacked_cache"  # torch.stack([cos, sin], -1): (L, d/2, 2) (lit-llama, torchtune, gpt-fast)
    if "cos" in leaf and ("cache" in leaf or leaf in ("cos", "cos_cached", "cos_emb")):
        return "cos_sin_cache"
    if "slopes" in leaf:
        return "alibi_slopes"
    if "alibi" in leaf:  # of any shape: one that cannot be a bias is said, not passed over (RP356)
        return "alibi_bias"
    return None


def _not_a_frequency_vector(shape: tuple) -> str:
    """Why a tensor named ``inv_freq`` cannot be measured as rotary frequencies, "" when it can: they are a
    vector of d/2 >= 1 values (singleton axes allowed), one per pair; an empty one is RP357 further on."""
    if len(shape) == 0:
        return "a 0-d tensor (one number), but rotary frequencies are a vector of d/2 values, one per pair"
    big = [s for s in shape if s != 1]
    if len(big) > 1:
        return (f"{len(big)} axes longer than 1, but rotary frequencies are a vector of d/2 values (a stack of "
                "several embeddings' frequencies is not measured)")
    if not big and _numel(shape) == 1:
        return "a single frequency: the base cannot be fitted from theta_0 alone"
    return ""


def _real_float(dtype: str) -> bool:
    """A real floating-point dtype name (float16/32/64, bfloat16, float8 formats)."""
    return dtype.startswith("float") or dtype == "bfloat16"

# what reads rows [a, b) of a cache: float64 per-pair (cos, sin), each (b - a, k)
CacheRows = Callable[[int, int], tuple[np.ndarray, np.ndarray]]
Loader = Callable[[], np.ndarray]


@dataclass
class _Report:
    """What the audit of one file has found so far, in the order found: tensors, findings and notes."""

    path: str
    notes: list[str] = field(default_factory=list)  # what was skipped or capped, and why
    found: list[RotaryTensor] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def skip(self, name: str, kind: str, dtype: str, shape: tuple, why: str) -> None:
        """A rotary / ALiBi tensor not measured: said in the report and as RP356 (never a pass)."""
        self.found.append(RotaryTensor(name, kind, dtype, list(shape), {"note": f"not measured: {why}"}))
        self.findings.append(Finding.of(
            CHECKPOINT_TENSOR_NOT_MEASURED,
            f"{name} ({dtype}, shape [{'x'.join(map(str, shape))}]) is stored as {_KIND_WORDS[kind]} but was not "
            f"measured: {why}", path=self.path, name_in_file=name, kind=kind, reason=why))

    def not_frequencies(self, name: str, dtype: str, shape: tuple, why: str) -> None:
        """A tensor named as rotary frequencies whose dtype or values cannot be them."""
        self.found.append(RotaryTensor(name, "inv_freq", dtype, list(shape),
                                       {"note": f"not rotary frequencies: {why}"}))
        self.findings.append(Finding.of(CHECKPOINT_NOT_ROTARY_FREQUENCIES, f"{name} ({dtype}): {why}",
                                        path=self.path, name_in_file=name, reason=why))


def audit_checkpoint(path: str) -> CheckpointAudit:
    """Find and measure the rotary / ALiBi tensors of a checkpoint (see the module docstring).

    Reads only what each measurement needs: frequencies up to :data:`MAX_PAIRS` values, cache
    rows up to :data:`MAX_ROWS` (and :data:`MAX_ELEMENTS` elements) streamed in chunks, ALiBi
    biases up to :data:`MAX_ELEMENTS` elements. What is capped or skipped is said in ``notes``.
    """
    from ..lint.gguf import is_gguf

    if path.lower().endswith(".gguf") or is_gguf(path):
        # llama.cpp's format: the rotary it computes, position by position (checkpoint_gguf.py)
        from .checkpoint_gguf import audit_gguf

        return audit_gguf(path)
    report = _Report(path)
    reasons: Reasons = {}
    file_format, tensors, count = read_checkpoint(path, report.notes, reasons)
    _check_searched(report, count, int(reasons.pop(UNSEARCHED, 0)))
    for name, (dtype, shape, load) in tensors.items():
        if load is None:  # skipped by the reader (layout, expanded view, dtype): said when it is rotary
            kind = _kind_by_name(_leaf(name), shape)
            if kind is not None:
                report.skip(name, kind, dtype, shape, str(reasons.get(name, "no data to read")))
    inv_freqs: dict[str, np.ndarray] = {}  # name -> the frequencies measured, for the caches of their size
    for name, (dtype, shape, load) in tensors.items():
        if load is not None:
            _measure_frequencies(report, name, dtype, shape, load, inv_freqs)
    for name, (dtype, shape, load) in tensors.items():
        if load is None:
            continue
        kind = _kind_by_name(_leaf(name), shape)
        if kind in ("cos_sin_cache", "freqs_cis", "stacked_cache"):
            _measure_cache(report, name, kind, dtype, shape, load, tensors, inv_freqs)
        elif kind == "alibi_slopes":
            _measure_alibi_slopes(report, name, dtype, shape, load)
        elif kind == "alibi_bias":
            _measure_alibi_bias(report, name, dtype, shape, load)
    return CheckpointAudit(path=path, file_format=file_format, tensor_count=count, rotary=report.found,
                           findings=report.findings, notes=report.notes)


def _check_searched(report: _Report, count: int, unsearched: int) -> None:
    """A file without tensors is refused (naming the ``unsearched`` containers nested deeper than
    :data:`MAX_NESTING`, if any); in a file with tensors, containers not searched are RP3xx not-searched."""
    path = report.path
    if count == 0:
        raise UsageError(f"{path}: not a checkpoint: it holds no tensors" + (
            f" within {MAX_NESTING} levels of nesting ({unsearched:,} container{'s' if unsearched != 1 else ''} "
            "nested deeper not searched)" if unsearched else ""))
    if unsearched:
        report.findings.append(Finding.of(
            CHECKPOINT_NOT_SEARCHED, f"{unsearched:,} container{'s' if unsearched != 1 else ''} nested deeper than "
            f"{MAX_NESTING} levels {'were' if unsearched != 1 else 'was'} not searched for tensors: a rotary tensor "
            "there would go unaudited", path=path, containers=unsearched))


def _measure_frequencies(report: _Report, name: str, dtype: str, shape: tuple, load: Loader,
                         inv_freqs: dict[str, np.ndarray]) -> None:
    """An ``inv_freq`` (by name), or a ``freqs`` / ``bands`` / ``theta`` whose values are geometric: its
    fitted base and deviation (:func:`inv_freq_details`), kept in ``inv_freqs``, and its findings."""
    leaf = _leaf(name)
    if leaf.endswith(_FREQ_SUFFIXES) and not _real_float(dtype):
        if leaf.endswith("inv_freq"):
            report.not_frequencies(name, dtype, shape, f"a {dtype} tensor cannot hold rotary frequencies "
                                   "(real floating-point values, base^(-2i/d))")
        return  # a `freqs` / `theta` of another dtype is something else: not claimed
    if leaf.endswith("inv_freq"):
        why = _not_a_frequency_vector(shape)
        if why:  # named as frequencies but not a vector of them: never passed over in silence
            report.skip(name, "inv_freq", dtype, shape, why)
            return
    if not (leaf.endswith(_FREQ_SUFFIXES) and len([s for s in shape if s != 1]) == 1):
        return
    if _numel(shape) > MAX_PAIRS:
        if leaf.endswith("inv_freq"):
            report.skip(name, "inv_freq", dtype, shape, f"{_numel(shape):,} frequencies, more than the "
                        f"{MAX_PAIRS:,} pairs of any rotary dimension (at most {MAX_D:,})")
        return
    v = np.asarray(load(), np.float64).reshape(-1)
    if not leaf.endswith("inv_freq") and not geometric_frequencies(v, dtype):
        return  # a `freqs` / `theta` that is not base^(-2i/d): not claimed
    inv_freqs[name] = v
    det = inv_freq_details(v, dtype)
    det["recognised_by"] = "name" if leaf.endswith("inv_freq") else "name and geometric values"
    report.found.append(RotaryTensor(name, "inv_freq", dtype, list(shape), det))
    bad = int(np.count_nonzero(~(np.isfinite(v) & (v > 0))))
    if bad:
        report.findings.append(Finding.of(
            CHECKPOINT_INV_FREQ_INVALID,
            f"{name} ({dtype}): {bad:,} of {v.size:,} frequencies are inf, NaN, zero or negative "
            f"(inf: {int(np.count_nonzero(np.isinf(v)))}, NaN: {int(np.count_nonzero(np.isnan(v)))}, "
            f"<= 0: {int(np.count_nonzero(v <= 0))})",
            path=report.path, name_in_file=name, invalid=bad, size=int(v.size)))
        return  # no base fits such values: the precision finding would only repeat it
    not_decreasing = not_decreasing_frequencies(v, dtype)
    if not_decreasing is not None:
        report.found.pop()
        report.not_frequencies(name, dtype, shape, not_decreasing)
        return
    if dtype in _LOW:
        u = ROUNDOFF[dtype]
        report.findings.append(Finding.of(
            CHECKPOINT_INV_FREQ_LOW_PRECISION,
            f"{name} is stored in {dtype}: its {det['rotary_dim'] // 2} frequencies deviate up to "
            f"{det['max_rel_deviation']:.2e} (relative) from base^(-2i/d), base {number(det['base'])} "
            f"(a round-to-nearest {dtype} cast moves each by up to 2^-{round(-math.log2(u))} = {u:.2e})",
            path=report.path, name_in_file=name, dtype=dtype, max_rel_deviation=det["max_rel_deviation"]))


def _real_rows(re_rows: np.ndarray, im_rows: np.ndarray) -> CacheRows:
    """Rows of a cache whose per-pair cos and sin are stored apart (stacked, or a view_as_real freqs_cis)."""

    def rows_of(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        return np.asarray(re_rows[a:b], np.float64), np.asarray(im_rows[a:b], np.float64)

    return rows_of


def _complex_rows(z: np.ndarray) -> CacheRows:
    """Rows of a complex freqs_cis: cos its real part, sin its imaginary part."""

    def rows_of(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        z_ = z[a:b]
        return np.asarray(np.real(z_), np.float64), np.asarray(np.imag(z_), np.float64)

    return rows_of


def _layout_rows(cos: np.ndarray, sin: np.ndarray, layout: str) -> CacheRows:
    """Rows of a cos/sin cache pair, one value per pair of ``layout`` (:func:`pair_values`)."""

    def rows_of(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        return pair_values(cos[a:b], layout), pair_values(sin[a:b], layout)

    return rows_of


def _cache_reader(report: _Report, name: str, kind: str, dtype: str, shape: tuple, load: Loader,
                  tensors: Tensors) -> tuple[CacheRows, int, int, int, str] | None:
    """``(rows_of, rows in the tensor, row width, pairs, layout)`` of a cache, or None when it cannot be
    read as one (said with :meth:`_Report.skip`; a sin partner without data is reported for itself)."""
    if kind == "stacked_cache":
        a = load()
        first = np.asarray(as_rows(a[..., 0])[:1], np.float64), np.asarray(as_rows(a[..., 1])[:1], np.float64)
        if not (np.all(first[0] == 1) and np.all(first[1] == 0)):
            report.skip(name, kind, dtype, shape, "a (..., 2) tensor whose row 0 is not (cos, sin) = (1, 0) on every "
                        "pair: not a stacked cache of positions 0, 1, ... (a padding row first?)")
            return None
        re_rows, im_rows = as_rows(a[..., 0]), as_rows(a[..., 1])
        width = re_rows.shape[-1]
        return _real_rows(re_rows, im_rows), int(re_rows.shape[0]), width, width, "stacked (cos, sin)"
    if kind == "freqs_cis":
        a = load()
        if np.iscomplexobj(a) and a.ndim >= 2:
            z = as_rows(a)
            return _complex_rows(z), int(z.shape[0]), z.shape[-1], z.shape[-1], "complex"
        if a.ndim >= 3 and a.shape[-1] == 2:  # view_as_real layout (..., d/2, 2)
            re_rows, im_rows = as_rows(a[..., 0]), as_rows(a[..., 1])
            width = re_rows.shape[-1]
            return _real_rows(re_rows, im_rows), int(re_rows.shape[0]), width, width, "complex"
        report.skip(name, "freqs_cis", dtype, shape, "a freqs_cis has rows of positions: complex (L, d/2) "
                    "or real (L, d/2, 2)")
        return None
    leaf = _leaf(name)
    sin_name = name[: len(name) - len(leaf)] + leaf.replace("cos", "sin")
    if sin_name not in tensors:
        report.skip(name, "cos_sin_cache", dtype, shape, f"no matching sin tensor ({sin_name})")
        return None
    if tensors[sin_name][2] is None:
        return None  # the sin tensor was not readable: reported for it
    if len(shape) < 2 or tuple(tensors[sin_name][1]) != tuple(shape):
        report.skip(name, "cos_sin_cache", dtype, shape, "a cos/sin cache has one row per position "
                    f"(at least 2-D, the same shape as {sin_name})")
        return None
    cos, sin = as_rows(load()), as_rows(tensors[sin_name][2]())
    width = cos.shape[-1]
    if width > MAX_D or width == 0:
        report.skip(name, "cos_sin_cache", dtype, shape, f"rows of {width:,} values (rotary dims 1 .. {MAX_D:,})")
        return None
    layout = pair_layout(cos)
    k = width // 2 if layout in ("rotate-half", "interleaved") else width
    return _layout_rows(cos, sin, layout), int(cos.shape[0]), width, k, layout


def _measure_cache(report: _Report, name: str, kind: str, dtype: str, shape: tuple, load: Loader,
                   tensors: Tensors, inv_freqs: dict[str, np.ndarray]) -> None:
    """A cos/sin, freqs_cis or stacked cache: row-by-row exactness (:func:`_cache_details`) and its findings."""
    reader = _cache_reader(report, name, kind, dtype, shape, load, tensors)
    if reader is None:
        return
    rows_of, total, width, k, layout = reader
    if total < 2:  # "0 of 0 rows exact (100.00%)" was a pass on nothing measured
        report.skip(name, kind, dtype, shape, f"{total} row{'s' if total != 1 else ''}: a cache is measured from "
                    "positions 0 and 1 on (its frequencies are read from rows 1, 2, 4, ...)")
        return
    if width > MAX_D or width == 0:
        report.skip(name, kind, dtype, shape, f"rows of {width:,} values (rotary dims 1 .. {MAX_D:,})")
        return
    rows = min(total, MAX_ROWS, max(1, MAX_ELEMENTS // width))
    inv = next((v for v in inv_freqs.values() if v.size == k), None)
    det = _cache_details(rows_of, rows, k, layout, inv, "float32" if dtype == "complex64" else dtype)
    if rows < total:
        det["rows_in_tensor"] = total
        report.notes.append(f"{name}: measured the first {rows:,} of its {total:,} rows")
    report.found.append(RotaryTensor(name, kind, dtype, list(shape), det))
    path = report.path
    if det["exact"] + det["nonfinite"] < det["rows"]:
        report.findings.append(Finding.of(
            CHECKPOINT_CACHE_INEXACT,
            f"{name} ({dtype}): {det['exact']:,} of {det['rows']:,} rows ({100 * det['exact_fraction']:.2f}%) "
            f"are the encoding of their position; first inexact row {det['first_inexact']}, "
            f"{det['distinct']:,} distinct rows",
            path=path, name_in_file=name, exact=det["exact"], rows=det["rows"]))
    if det.get("frequencies_rounded_to"):
        fmt = det["frequencies_rounded_to"]
        report.findings.append(Finding.of(
            CHECKPOINT_CACHE_FREQUENCIES_ROUNDED,
            f"{name} ({dtype}, {det['layout']}): its {k} frequencies are base^(-2i/d), base "
            f"{number(det['base'])}, rounded to {fmt}: up to {det['frequency_drift']:.2e} (relative) off, a "
            f"phase error of up to {det['phase_error']:.3g} rad at row {det['rows'] - 1:,}"
            + ("; every row is consistent with those frequencies, so the rows alone read as exact"
               if det["exact"] == det["rows"] else ""),
            path=path, name_in_file=name, frequency_drift=det["frequency_drift"], rounded_to=fmt))
    if det["nonfinite"]:
        report.findings.append(Finding.of(
            CHECKPOINT_CACHE_NONFINITE, f"{name} ({dtype}): {det['nonfinite']:,} of {det['rows']:,} rows "
            "hold inf/NaN", path=path, name_in_file=name, nonfinite=det["nonfinite"]))


def _measure_alibi_slopes(report: _Report, name: str, dtype: str, shape: tuple, load: Loader) -> None:
    """ALiBi slopes against 2^(-8h/H) (:func:`alibi_slopes`) and their findings."""
    kind, path = "alibi_slopes", report.path
    if len(shape) == 0:
        report.skip(name, kind, dtype, shape, "a 0-d tensor, but ALiBi has one slope per head")
        return
    if not 1 <= _numel(shape) <= MAX_D:
        report.skip(name, kind, dtype, shape, f"{_numel(shape):,} slopes (one per head: 1 .. {MAX_D:,})")
        return
    if not _real_float(dtype):
        report.found.append(RotaryTensor(name, kind, dtype, list(shape), {"note": f"not ALiBi slopes: {dtype}"}))
        report.findings.append(Finding.of(CHECKPOINT_ALIBI_SLOPES_INVALID, f"{name}: ALiBi slopes stored as {dtype}, "
                                          "not real floating-point values", path=path, name_in_file=name, dtype=dtype))
        return
    v = np.asarray(load(), np.float64).reshape(-1)
    bad = int(np.count_nonzero(~(np.isfinite(v) & (v > 0))))
    if bad:
        report.found.append(RotaryTensor(name, kind, dtype, list(shape), {
            "note": f"not ALiBi slopes: {bad:,} of {v.size:,} zero, negative, inf or NaN", "invalid": bad}))
        report.findings.append(Finding.of(
            CHECKPOINT_ALIBI_SLOPES_INVALID,
            f"{name} ({dtype}): {bad:,} of {v.size:,} ALiBi slopes are zero, negative, inf or NaN (a slope is "
            "2^(-8h/H) > 0)", path=path, name_in_file=name, invalid=bad, heads=int(v.size)))
        return
    ref = alibi_slopes(v.size)
    with np.errstate(all="ignore"):
        dev = float(np.max(np.abs(v / ref - 1.0)))
    report.found.append(RotaryTensor(name, kind, dtype, list(shape), {"heads": int(v.size), "max_rel_deviation": dev}))
    if dtype in _LOW and not dev <= 4 * 2.0**-24:
        report.findings.append(Finding.of(
            CHECKPOINT_ALIBI_LOW_PRECISION,
            f"{name}: ALiBi slopes stored in {dtype}, up to {dev:.2e} (relative) from 2^(-8h/H)",
            path=path, name_in_file=name, max_rel_deviation=dev))


def _measure_alibi_bias(report: _Report, name: str, dtype: str, shape: tuple, load: Loader) -> None:
    """A stored ALiBi bias column by column: column j is exact when (bias[h, j] - bias[h, 0]) / slope_h
    rounds to j for every head h (slope_h = bias[h, 1] - bias[h, 0]); read in chunks."""
    kind = "alibi_bias"
    if len(shape) < 2 or shape[-1] < 2 or _numel(shape) == 0:
        report.skip(name, kind, dtype, shape, "an ALiBi bias holds a row of key distances per head, (heads, L) with "
                    "L >= 2" + (" (ALiBi slopes are measured when named `slopes`)" if len(shape) == 1 else ""))
        return
    a = load()
    b = a.reshape(-1, a.shape[-1])  # (heads, L) view
    nrows, ncols = b.shape
    if nrows * 2 > MAX_ELEMENTS:
        report.skip(name, kind, dtype, shape, f"{nrows:,} rows of biases (at most {MAX_ELEMENTS // 2:,} measured)")
        return
    cols = min(ncols, max(2, MAX_ELEMENTS // nrows))
    first = np.asarray(b[:, :2], np.float64)  # (heads, 2)
    slope = first[:, 1] - first[:, 0]  # (heads,) distance 1 is exact in every format
    good = slope != 0
    col_ok = np.ones(cols, bool)
    step = max(1, CHUNK_ELEMENTS // nrows)
    with np.errstate(all="ignore"):
        for j0 in range(0, cols, step):
            j1 = min(j0 + step, cols)
            chunk = np.asarray(b[:, j0:j1], np.float64)  # (heads, j1 - j0)
            dist = (chunk[good] - first[good, :1]) / slope[good, None]
            j = np.arange(j0, j1)
            col_ok[j0:j1] = np.all(np.abs(dist - j) < 0.5, axis=0) & np.all(np.isfinite(chunk), axis=0)
    exact = int(col_ok.sum())
    det = {"columns": int(cols), "exact": exact, "exact_fraction": exact / cols,
           "first_inexact": None if col_ok.all() else int(np.argmin(col_ok))}
    if cols < ncols:
        det["columns_in_tensor"] = int(ncols)
        report.notes.append(f"{name}: measured the first {cols:,} of its {ncols:,} columns")
    report.found.append(RotaryTensor(name, kind, dtype, list(shape), det))
    if exact < cols:
        report.findings.append(Finding.of(
            CHECKPOINT_ALIBI_LOW_PRECISION,
            f"{name} ({dtype}): {exact:,} of {cols:,} ALiBi distances recoverable "
            f"({100 * exact / cols:.2f}%); first lost distance {det['first_inexact']}",
            path=report.path, name_in_file=name, exact=exact, columns=int(cols)))
