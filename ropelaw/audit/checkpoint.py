"""Checkpoint audit: rotary and ALiBi tensors stored in safetensors and torch files.

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
  ``torch.stack([cos, sin], -1)``: lit-llama, litgpt, torchtune), every pair: row p is exact when its angle vector is closer to p * omega (omega the
  frequencies the cache itself uses, recovered from rows 1, 2, 4, ...; exact in binary floating
  point) than half the distance between the ideal encodings of p and p + 1: the same measure
  as the module audit (:class:`ropelaw.audit.runtime.EncodingStats`). Those frequencies rounded to
  bf16/fp16 (:func:`ropelaw.audit.measure.geometric_nominal`) are RP310 even when every row is exact.
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
from ..numfmt import number
from ..limits import MAX_D
from ..results import Result
from ..safeio import open_regular
from .rules.checkpoint import (CHECKPOINT_ALIBI_LOW_PRECISION, CHECKPOINT_ALIBI_SLOPES_INVALID,
                               CHECKPOINT_CACHE_FREQUENCIES_ROUNDED, CHECKPOINT_CACHE_INEXACT, CHECKPOINT_CACHE_NONFINITE,
                               CHECKPOINT_INV_FREQ_INVALID, CHECKPOINT_INV_FREQ_LOW_PRECISION,
                               CHECKPOINT_NOT_ROTARY_FREQUENCIES, CHECKPOINT_NOT_SEARCHED,
                               CHECKPOINT_TENSOR_NOT_MEASURED)

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


# Limits by design, each checked before the bytes it guards are read.
# safetensors' own header limit (MAX_HEADER_SIZE in the safetensors crate): 100 MB
MAX_HEADER = 100_000_000
# headers ropelaw parses: 32 MiB (json.loads of a 100 MB header of small entries takes gigabytes;
# a single file of 100,000 tensors, more than any published model puts in one file, has a
# header of about 12 MB)
MAX_HEADER_READ = 32 << 20
# the pickle of a torch file (data.pkl of the zip format, or a whole legacy / raw pickle):
# 16 MiB. A state dict's pickle holds names and storage records, about 100 bytes a tensor (a
# 405B model's state dict: a few hundred KB); torch's weights-only unpickler builds a Python
# object per element, so a 50 MB pickle of plain numbers becomes gigabytes before any check.
MAX_PICKLE = 16 << 20
# frequencies of one rotary embedding: d/2 <= MAX_D/2 pairs (ropelaw.limits.MAX_D)
MAX_PAIRS = MAX_D // 2
# cache rows measured: 2^20 positions (a longer cache is measured on its first 2^20 rows, noted)
MAX_ROWS = 1 << 20
# elements read per measured tensor, in chunks of CHUNK_ELEMENTS: 2^24 (64 MiB of float32 per
# tensor mapped; 131,072 rows of a d=128 cache) keeps a measurement to seconds and well under 1 GB
MAX_ELEMENTS = 1 << 24
CHUNK_ELEMENTS = 1 << 20
# nesting of a torch file's containers searched for tensors (state dicts nest a few levels)
MAX_NESTING = 64
# slack for a torch zip's own records beyond its stored members
_ZIP_SLACK = 1 << 20

# bytes per element of every safetensors dtype code (safetensors' Dtype::size)
_ITEMSIZE = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1, "I16": 2, "U16": 2, "F16": 2,
             "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "C64": 8, "F64": 8, "I64": 8, "U64": 8}


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


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


Tensors = dict  # {name: (dtype, shape, loader | None)}; a loader returns a zero-copy array view


def _read_safetensors(path: str, notes: list[str], reasons: dict[str, str]) -> tuple[Tensors, int]:
    """Header checked against the file before any tensor byte is touched; tensors memory-mapped.

    The checks are the safetensors library's own (``safetensors::tensor::Metadata::validate``):
    header length within the file and <= 100 MB; each entry a dtype string, a shape of
    non-negative ints and two ordered int offsets; entries contiguous from 0 to the end of the
    file; shape x itemsize equal to the byte range (Python ints: no overflow).
    """
    def bad(why: str) -> UsageError:
        return UsageError(f"{path}: corrupt safetensors file ({why})")

    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        head = fh.read(8)
        if len(head) < 8:
            raise UsageError(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
        (n,) = struct.unpack("<Q", head)
        if n < 2 or n > size - 8:
            raise UsageError(f"{path}: not a safetensors file (header length {n:,} beyond the file's {size:,} bytes)")
        if n > MAX_HEADER:
            raise UsageError(f"{path}: not a safetensors file (header length {n:,} beyond the format's limit "
                             f"of {MAX_HEADER:,} bytes)")
        if n > MAX_HEADER_READ:
            raise UsageError(f"{path}: refused: a safetensors header of {n:,} bytes (ropelaw parses headers up to "
                             f"{MAX_HEADER_READ:,} bytes; 100,000 tensors take about 12 MB, so this one is mostly "
                             "__metadata__ or empty entries)")
        raw = fh.read(n)
    try:
        header = json.loads(raw.decode("utf-8"))
    except RecursionError:
        raise UsageError(f"{path}: not a safetensors file (header nested too deeply)") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path}: not a safetensors file (header is not JSON: {str(exc)[:200]})") from None
    if not isinstance(header, dict):
        raise UsageError(f"{path}: not a safetensors file (header is not a JSON object)")
    data_start, data_len = 8 + n, size - 8 - n
    out: Tensors = {}
    spans = []
    for name, info in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(info, dict):
            raise bad(f"entry {name!r} is not an object")
        code, shape, offs = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if not isinstance(code, str):
            raise bad(f"tensor {name!r}: dtype is not a string")
        if not isinstance(shape, list) or not all(_is_int(x) and x >= 0 for x in shape) or len(shape) > 64:
            raise bad(f"tensor {name!r}: shape must be a list of at most 64 non-negative integers")
        if not (isinstance(offs, list) and len(offs) == 2 and all(_is_int(x) for x in offs)
                and 0 <= offs[0] <= offs[1] <= data_len):
            raise bad(f"tensor {name!r}: data_offsets must be two ordered integers within the "
                      f"{data_len:,} data bytes")
        count = math.prod(shape)  # Python ints: exact, never wraps
        itemsize = _ITEMSIZE.get(code)
        if itemsize is not None and count * itemsize != offs[1] - offs[0]:
            raise bad(f"tensor {name!r}: shape {shape} x {itemsize} bytes does not match its "
                      f"{offs[1] - offs[0]:,}-byte data range")
        spans.append((offs[0], offs[1], name))
        dt = _np_dtype(code)
        if dt is None:
            out[name] = (code, tuple(shape), None)
            reasons[name] = f"dtype {code} is not one ropelaw reads" if itemsize is None else f"dtype {code} not measured"
            continue

        def load(start=data_start + offs[0], count=count, dt=dt, shape=tuple(shape)):
            if count == 0:
                return np.zeros(shape, dt)
            return np.memmap(path, dtype=dt, mode="r", offset=start, shape=(count,)).reshape(shape)

        out[name] = (_dtype_name(np.dtype(dt)), tuple(shape), load)
    end = 0
    for start, stop, name in sorted(spans):
        if start != end:
            raise bad(f"tensor {name!r}: data_offsets overlap another tensor or leave a gap")
        end = stop
    if end != data_len:
        raise bad(f"tensors end at data byte {end:,} but the file holds {data_len:,} (truncated or padded)")
    return out, len(out)


_UNSEARCHED = ("containers not searched",)  # key of `reasons` (never a tensor name): how many


def _flatten(obj: Any, notes: list[str], reasons: dict | None = None) -> dict[str, Any]:
    """``{dotted name: tensor}`` of a loaded torch object: iterative, each container once.

    Shared containers (one list referenced 2^40 times through nesting) and cycles are walked
    once; nesting beyond :data:`MAX_NESTING` is not searched (noted).
    """
    import torch

    out: dict[str, Any] = {}
    seen: set[int] = set()
    deep = 0
    stack: list[tuple[str, Any, int]] = [("", obj, 0)]
    while stack:
        prefix, o, depth = stack.pop()
        if isinstance(o, torch.Tensor):
            out.setdefault(prefix or "tensor", o)
            continue
        if not isinstance(o, (dict, list, tuple)) or id(o) in seen:
            continue
        seen.add(id(o))
        if depth >= MAX_NESTING:
            deep += 1
            continue
        items = o.items() if isinstance(o, dict) else enumerate(o)
        # names only for what may hold a tensor: a list of 5 million ints gets none (it got 5
        # million strings, 1.1 GB)
        children = [(f"{prefix}.{k}" if prefix else str(k), v, depth + 1) for k, v in items
                    if isinstance(v, (torch.Tensor, dict, list, tuple)) and id(v) not in seen]
        stack.extend(reversed(children))
    if deep:
        notes.append(f"{deep:,} container{'s' if deep != 1 else ''} nested deeper than {MAX_NESTING} levels "
                     "not searched for tensors")
        if reasons is not None:
            reasons[_UNSEARCHED] = deep
    return out


def _torch_array(t: Any) -> tuple[Callable[[], np.ndarray] | None, str | None]:
    """(zero-copy loader, None) for a dense tensor, or (None, why it is skipped)."""
    import torch

    if t.layout != torch.strided:
        return None, f"{str(t.layout).replace('torch.', '')} layout"
    if t.is_quantized:
        return None, "quantized"
    if t.device.type == "meta":
        return None, "meta (no data)"
    try:
        storage = t.untyped_storage().nbytes() - t.storage_offset() * t.element_size()
    except Exception:  # a tensor subclass without a plain storage
        return None, "no plain storage"
    expanded = any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape))
    if t.numel() and (expanded or t.numel() * t.element_size() > storage):
        return None, "an expanded view (stride 0: more elements than its storage holds)"

    def load(t=t):
        import ml_dtypes

        x = t.detach()
        if not x.is_contiguous():
            x = x.contiguous()  # a strided, non-overlapping view: at most its storage's size
        if x.dtype == torch.bfloat16:
            return x.view(torch.int16).numpy().view(ml_dtypes.bfloat16)  # zero-copy
        if x.dtype == torch.float8_e4m3fn:
            return x.view(torch.uint8).numpy().view(ml_dtypes.float8_e4m3fn)
        if x.dtype == torch.float8_e5m2:
            return x.view(torch.uint8).numpy().view(ml_dtypes.float8_e5m2)
        if x.dtype == torch.complex32:
            x = x.to(torch.complex64)
        return x.numpy()

    if t.dtype in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2, torch.complex32, torch.float16,
                   torch.float32, torch.float64, torch.complex64, torch.complex128, torch.bool, torch.uint8,
                   torch.int8, torch.int16, torch.int32, torch.int64):
        return load, None
    return None, f"dtype {_dtype_name(t.dtype)} not measured"


def _check_torch_zip(path: str, size: int) -> bool:
    """Refuse a zip whose members would decompress beyond the file (a zip bomb) or whose pickle is
    larger than :data:`MAX_PICKLE`, before loading; True when every member is stored.

    torch.save stores members uncompressed, so their declared sizes add up to less than the
    file; torch's reader allocates each member's declared size, so the check bounds memory. A
    member compressed by another tool (deflated) must not be memory-mapped: torch's mmap reads
    the member's bytes in place, and those would be the compressed ones (values read from
    deflated bytes: -8.5e-10, -3.6e-31, 7.3e22 for 1, 0.1, 0.01).
    """
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise UsageError(f"{path}: corrupt torch zip file ({str(exc)[:200]})") from None
    total = sum(max(i.file_size, 0) for i in infos)
    if total > size + _ZIP_SLACK:
        raise UsageError(f"{path}: corrupt torch zip file (members expand to {total:,} bytes from a "
                         f"{size:,}-byte file; torch.save never compresses: a zip bomb?); refused")
    pkl = max((i.file_size for i in infos if i.filename.endswith("data.pkl")), default=0)
    if pkl > MAX_PICKLE:
        raise UsageError(f"{path}: refused: its pickle (data.pkl) is {pkl:,} bytes, more than the {MAX_PICKLE:,} "
                         "ropelaw unpickles (a state dict's is about 100 bytes a tensor; this one holds other data)")
    return all(i.compress_type == zipfile.ZIP_STORED for i in infos)


_SAFE_PREFIXES = ("torch.", "collections.OrderedDict", "builtins.", "_codecs.encode", "numpy.core.multiarray._reconstruct")


def _pickle_globals(path: str) -> list[str]:
    """Names of the callables/classes a pickle references, read with pickletools (nothing runs).

    Best effort, for the refusal message: GLOBAL opcodes, and STACK_GLOBAL with the two strings
    pushed before it; names weights-only loading allows (torch.*, OrderedDict) are left out.
    Reads at most 1 MiB of pickle and stops at the fourth name it would show (the message shows
    three): naming every global of a 60 MB pickle took 39 s.
    """
    import pickletools
    import zipfile

    limit = 1 << 20
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                member = next((i for i in zf.infolist() if i.filename.endswith("data.pkl")), None)
                data = b""
                if member is not None:
                    with zf.open(member) as fh:
                        data = fh.read(limit)
        else:
            with open_regular(path) as fh:
                data = fh.read(limit)
        out: list[str] = []
        strings: list[str] = []
        for op, arg, _ in pickletools.genops(data):
            name = None
            if op.name == "GLOBAL" and isinstance(arg, str):
                name = arg.replace(" ", ".")
            elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                name = f"{strings[-2]}.{strings[-1]}"
            if isinstance(arg, str) and ("UNICODE" in op.name or op.name.endswith("STRING")):
                strings = [strings[-1], str(arg)] if strings else [str(arg)]
            if name and not name.startswith(_SAFE_PREFIXES) and name not in out:
                out.append(name)
                if len(out) > 3:
                    break
    except Exception:  # a malformed or truncated pickle: the names found so far
        pass
    return out


def _read_torch(path: str, notes: list[str], is_zip: bool, size: int, reasons: dict[str, str]) -> tuple[Tensors, int]:
    import pickle

    from ..errors import require

    torch = require("torch", "torch", "reading a torch checkpoint")
    import warnings

    stored = False
    if is_zip:
        stored = _check_torch_zip(path, size)
    elif size > MAX_PICKLE:
        raise UsageError(f"{path}: refused: a {size:,}-byte pickle (not torch's zip format); ropelaw unpickles at "
                         f"most {MAX_PICKLE:,} bytes (re-save it with torch.save, or convert it to safetensors)")
    try:
        with warnings.catch_warnings():  # torch warns about pickle protocols; the verdict is ours
            warnings.simplefilter("ignore")
            # mmap: storages stay on disk until an analysis touches them (zip format, members stored)
            obj = torch.load(path, weights_only=True, map_location="cpu", mmap=stored)
    except pickle.UnpicklingError:
        names = _pickle_globals(path)
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        raise UsageError(f"{path}: refused: this pickle needs more than weights-only loading"
                         f"{' (it references ' + shown + ')' if names else ''}; ropelaw never runs code from a "
                         "checkpoint (convert it to safetensors in a trusted environment)") from None
    except RecursionError:
        raise UsageError(f"{path}: not a readable torch checkpoint (nested too deeply)") from None
    except MemoryError:
        raise UsageError(f"{path}: not a readable torch checkpoint (it asks for more memory than there is)") from None
    except Exception as exc:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        raise UsageError(f"{path}: not a readable torch checkpoint ({type(exc).__name__}: {first})") from None
    flat = _flatten(obj, notes, reasons)
    out: Tensors = {}
    skipped: dict[str, list[str]] = {}
    for name, t in flat.items():
        load, why = _torch_array(t)
        if why is not None:
            skipped.setdefault(why, []).append(name)
            reasons[name] = why
        out[name] = (_dtype_name(t.dtype), tuple(t.shape), load)
    for why, names in skipped.items():
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        notes.append(f"skipped {len(names):,} tensor{'s' if len(names) != 1 else ''} ({why}): {shown}")
    return out, len(out)


def read_checkpoint(path: str, notes: list[str] | None = None,
                    reasons: dict[str, str] | None = None) -> tuple[str, Tensors, int]:
    """(file format, {name: (dtype, shape, loader)}, tensor count). Never executes the file.

    Only a regular file is opened (a FIFO or a device is refused before reading); what could
    not be measured is appended to ``notes``, and why each tensor without a loader has none to
    ``reasons`` (name -> why).
    """
    notes = [] if notes is None else notes
    reasons = {} if reasons is None else reasons
    if not os.path.exists(path):
        raise UsageError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory (give one .safetensors or torch file)")
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        magic = fh.read(16)
    if path.endswith(".safetensors") or (len(magic) >= 9 and magic[8:9] == b"{"):
        tensors, n = _read_safetensors(path, notes, reasons)
        return "safetensors", tensors, n
    if magic[:4] == b"PK\x03\x04" or magic[:1] == b"\x80":
        tensors, n = _read_torch(path, notes, magic[:4] == b"PK\x03\x04", size, reasons)
        return "torch", tensors, n
    raise UsageError(f"{path}: not a checkpoint (neither safetensors nor a torch zip/pickle file)")


# --------------------------------------------------------------------------- results


@dataclass
class RotaryTensor(Result):
    """One rotary or ALiBi tensor found in a checkpoint, with what was measured."""

    name: str
    kind: str  # inv_freq | cos_sin_cache | freqs_cis | stacked_cache | alibi_slopes | alibi_bias | cos_cache
    dtype: str
    shape: list[int]
    details: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        d = self.details
        shape = "x".join(map(str, self.shape))
        if "note" in d:  # found but not measured (or no partner tensor): say why
            return f"{self.name}  {self.kind} {self.dtype} [{shape}]: {d['note']}"
        if self.kind == "inv_freq":
            base = d.get("base")
            b = number(base)
            return (f"{self.name}  inv_freq {self.dtype} [{shape}]: rotary dims {d['rotary_dim']}, base {b} "
                    f"(fit residual {d['fit_residual']:.1e}), max deviation from base^(-2i/d) "
                    f"{d['max_rel_deviation']:.1e}{' (formula exact)' if d['formula_exact'] else ''}")
        if self.kind in ("cos_sin_cache", "freqs_cis", "stacked_cache"):
            rounded = (f", frequencies base^(-2i/d) rounded to {d['frequencies_rounded_to']}"
                       if d.get("frequencies_rounded_to") else "")
            return (f"{self.name}  {self.kind} {self.dtype} [{shape}]: {d['exact']:,} of {d['rows']:,} rows exact "
                    f"({100 * d['exact_fraction']:.2f}%), {d['distinct']:,} distinct, {d['nonfinite']:,} non-finite, "
                    f"rotary dims {d['rotary_dim']}, {d['layout']}{rounded}")
        if self.kind == "alibi_slopes":
            return (f"{self.name}  ALiBi slopes {self.dtype} [{shape}]: {d['heads']} heads, max deviation from "
                    f"2^(-8h/H) {d['max_rel_deviation']:.1e}")
        if self.kind == "alibi_bias":
            return (f"{self.name}  ALiBi bias {self.dtype} [{shape}]: {d['exact']:,} of {d['columns']:,} distances "
                    f"exact ({100 * d['exact_fraction']:.2f}%)")
        return f"{self.name}  {self.kind} {self.dtype} [{shape}]"


@dataclass
class CheckpointAudit(Result):
    path: str
    file_format: str  # safetensors | torch
    tensor_count: int
    rotary: list[RotaryTensor]
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was skipped or capped, and why

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "file_format": self.file_format, "tensor_count": self.tensor_count,
                "rotary": [t.to_dict() for t in self.rotary], "findings": [f.to_dict() for f in self.findings],
                "notes": list(self.notes)}


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


_LAYOUT_SAMPLE = 4096  # rows compared to decide rotate-half / interleaved / per-pair


def _layout(cos: np.ndarray) -> str:
    """rotate-half, interleaved or per-pair, decided on the first rows of a (L, width) cos."""
    c = np.asarray(cos[:_LAYOUT_SAMPLE], np.float64)
    w = c.shape[-1]
    h = w // 2
    if w % 2 == 0 and np.array_equal(c[:, :h], c[:, h:], equal_nan=True):
        return "rotate-half"
    if w % 2 == 0 and np.array_equal(c[:, 0::2], c[:, 1::2], equal_nan=True):
        return "interleaved"
    return "per-pair"


def _pairs(a: np.ndarray, layout: str) -> np.ndarray:
    """(n, width) -> (n, pairs) float64 for ``layout``."""
    a = np.asarray(a, np.float64)
    if layout == "rotate-half":
        return a[:, : a.shape[-1] // 2]
    if layout == "interleaved":
        return a[:, 0::2]
    return a


def _as_rows(a: np.ndarray) -> np.ndarray:
    """Drop leading singleton axes: (1, 1, L, d) -> (L, d); a view for contiguous arrays."""
    while a.ndim > 2 and a.shape[0] == 1:
        a = a[0]
    return a.reshape(-1, a.shape[-1]) if a.ndim > 2 else a


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
    if "alibi" in leaf and len(shape) >= 2:
        return "alibi_bias"
    return None


def _real_float(dtype: str) -> bool:
    """A real floating-point dtype name (float16/32/64, bfloat16, float8 formats)."""
    return dtype.startswith("float") or dtype == "bfloat16"


def _not_decreasing_frequencies(v: np.ndarray, dtype: str) -> str | None:
    """Why finite, positive ``v`` cannot be rotary frequencies, or None.

    theta_i = base^(-2i/d), base > 1 (RoFormer eq. 15): theta_0 = 1 (1/s under position
    interpolation, s >= 1), so every value is at most 1 (plus the stored dtype's rounding of 1,
    which is exact in every float format: allowed anyway); strictly decreasing in i. In a format
    of 8 significant bits or fewer (bf16, fp8) neighbours may round to the same value when
    base^(2/d) < 1 + 2^-8: ties are allowed there, a rise never, and the last stays below the first.
    """
    if v.size == 0:
        return "it holds no frequencies (an empty tensor)"
    top = float(np.max(v))
    if top > 1.0 + 2 * _ROUNDOFF.get(dtype, 2.0**-24):
        return (f"its largest value is {top:.3g} rad/token; rotary frequencies base^(-2i/d) are at most 1 "
                f"(theta_0 = 1)")
    if v.size < 2:
        return None
    step = np.diff(v)  # (n-1,)
    ties_ok = _ROUNDOFF.get(dtype, 0.0) >= 2.0**-8
    rises = int(np.count_nonzero(step > 0)) if ties_ok else int(np.count_nonzero(step >= 0))
    if rises or not v[-1] < v[0]:
        what = "all equal" if np.all(step == 0) else (f"{rises:,} of {step.size:,} steps do not decrease"
                                                       if rises else "the last is not below the first")
        return (f"its values do not decrease with the pair index ({what}; first {v[0]:.3g}, last {v[-1]:.3g}); "
                "rotary frequencies base^(-2i/d) do")
    return None


def audit_checkpoint(path: str) -> CheckpointAudit:
    """Find and measure the rotary / ALiBi tensors of a checkpoint (see the module docstring).

    Reads only what each measurement needs: frequencies up to :data:`MAX_PAIRS` values, cache
    rows up to :data:`MAX_ROWS` (and :data:`MAX_ELEMENTS` elements) streamed in chunks, ALiBi
    biases up to :data:`MAX_ELEMENTS` elements. What is capped or skipped is said in ``notes``.
    """
    notes: list[str] = []
    reasons: dict[str, str] = {}
    file_format, tensors, count = read_checkpoint(path, notes, reasons)
    unsearched = reasons.pop(_UNSEARCHED, 0)
    if count == 0:
        raise UsageError(f"{path}: not a checkpoint: it holds no tensors" + (
            f" within {MAX_NESTING} levels of nesting ({unsearched:,} container{'s' if unsearched != 1 else ''} "
            "nested deeper not searched)" if unsearched else ""))
    found: list[RotaryTensor] = []
    findings: list[Finding] = []
    inv_freqs: dict[str, np.ndarray] = {}
    if unsearched:
        findings.append(Finding.of(
            CHECKPOINT_NOT_SEARCHED, f"{unsearched:,} container{'s' if unsearched != 1 else ''} nested deeper than "
            f"{MAX_NESTING} levels {'were' if unsearched != 1 else 'was'} not searched for tensors: a rotary tensor "
            "there would go unaudited", path=path, containers=unsearched))

    def skip(name: str, kind: str, dtype: str, shape: tuple, why: str) -> None:
        """A rotary / ALiBi tensor not measured: said in the report and as RP356 (never a pass)."""
        found.append(RotaryTensor(name, kind, dtype, list(shape), {"note": f"not measured: {why}"}))
        findings.append(Finding.of(
            CHECKPOINT_TENSOR_NOT_MEASURED,
            f"{name} ({dtype}, shape [{'x'.join(map(str, shape))}]) is stored as {_KIND_WORDS[kind]} but was not "
            f"measured: {why}", path=path, name_in_file=name, kind=kind, reason=why))

    def not_frequencies(name: str, dtype: str, shape: tuple, why: str) -> None:
        found.append(RotaryTensor(name, "inv_freq", dtype, list(shape), {"note": f"not rotary frequencies: {why}"}))
        findings.append(Finding.of(CHECKPOINT_NOT_ROTARY_FREQUENCIES, f"{name} ({dtype}): {why}", path=path,
                                   name_in_file=name, reason=why))

    for name, (dtype, shape, load) in tensors.items():
        if load is None:  # skipped by the reader (layout, expanded view, dtype): said when it is rotary
            kind = _kind_by_name(_leaf(name), shape)
            if kind is not None:
                skip(name, kind, dtype, shape, reasons.get(name, "no data to read"))

    for name, (dtype, shape, load) in tensors.items():
        leaf = _leaf(name)
        if load is None:
            continue
        if leaf.endswith(_FREQ_SUFFIXES) and not _real_float(dtype):
            if leaf.endswith("inv_freq"):
                not_frequencies(name, dtype, shape, f"a {dtype} tensor cannot hold rotary frequencies "
                                "(real floating-point values, base^(-2i/d))")
            continue  # a `freqs` / `theta` of another dtype is something else: not claimed
        if leaf.endswith(_FREQ_SUFFIXES) and len([s for s in shape if s != 1]) == 1:
            if _numel(shape) > MAX_PAIRS:
                if leaf.endswith("inv_freq"):
                    skip(name, "inv_freq", dtype, shape, f"{_numel(shape):,} frequencies, more than the "
                         f"{MAX_PAIRS:,} pairs of any rotary dimension (at most {MAX_D:,})")
                continue
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
            why = _not_decreasing_frequencies(v, dtype)
            if why is not None:
                found.pop()
                not_frequencies(name, dtype, shape, why)
                continue
            if dtype in _LOW:
                u = _ROUNDOFF[dtype]
                findings.append(Finding.of(
                    CHECKPOINT_INV_FREQ_LOW_PRECISION,
                    f"{name} is stored in {dtype}: its {det['rotary_dim'] // 2} frequencies deviate up to "
                    f"{det['max_rel_deviation']:.2e} (relative) from base^(-2i/d), base {number(det['base'])} "
                    f"(a round-to-nearest {dtype} cast moves each by up to 2^-{round(-math.log2(u))} = {u:.2e})",
                    path=path, name_in_file=name, dtype=dtype, max_rel_deviation=det["max_rel_deviation"]))
    for name, (dtype, shape, load) in tensors.items():
        leaf = _leaf(name)
        if load is None:
            continue
        kind = _kind_by_name(leaf, shape)
        if kind in (None, "inv_freq"):
            continue
        if kind in ("cos_sin_cache", "freqs_cis", "stacked_cache"):
            if kind == "stacked_cache":
                a = load()
                first = np.asarray(_as_rows(a[..., 0])[:1], np.float64), np.asarray(_as_rows(a[..., 1])[:1], np.float64)
                if not (np.all(first[0] == 1) and np.all(first[1] == 0)):
                    skip(name, kind, dtype, shape, "a (..., 2) tensor whose row 0 is not (cos, sin) = (1, 0) on every "
                         "pair: not a stacked cache of positions 0, 1, ... (a padding row first?)")
                    continue
                re_rows, im_rows, layout = _as_rows(a[..., 0]), _as_rows(a[..., 1]), "stacked (cos, sin)"
                part_re = part_im = None
                width = re_rows.shape[-1]

                def rows_of(a_, b_, re_rows=re_rows, im_rows=im_rows):
                    return np.asarray(re_rows[a_:b_], np.float64), np.asarray(im_rows[a_:b_], np.float64)
                k = width
            elif kind == "freqs_cis":
                a = load()
                if np.iscomplexobj(a) and a.ndim >= 2:
                    z = _as_rows(a)
                    re_rows, im_rows, layout = z, z, "complex"
                    part_re, part_im = np.real, np.imag
                elif a.ndim >= 3 and a.shape[-1] == 2:  # view_as_real layout (..., d/2, 2)
                    re_rows, im_rows, layout = _as_rows(a[..., 0]), _as_rows(a[..., 1]), "complex"
                    part_re = part_im = None
                else:
                    skip(name, "freqs_cis", dtype, shape, "a freqs_cis has rows of positions: complex (L, d/2) "
                         "or real (L, d/2, 2)")
                    continue
                width = re_rows.shape[-1]

                def rows_of(a_, b_, re_rows=re_rows, im_rows=im_rows, part_re=part_re, part_im=part_im):
                    if part_re is None:
                        return np.asarray(re_rows[a_:b_], np.float64), np.asarray(im_rows[a_:b_], np.float64)
                    z_ = re_rows[a_:b_]
                    return np.asarray(part_re(z_), np.float64), np.asarray(part_im(z_), np.float64)
                k = width
            else:
                sin_name = name[: len(name) - len(leaf)] + leaf.replace("cos", "sin")
                if sin_name not in tensors:
                    skip(name, "cos_sin_cache", dtype, shape, f"no matching sin tensor ({sin_name})")
                    continue
                if tensors[sin_name][2] is None:
                    continue  # the sin tensor was not readable: reported for it
                if len(shape) < 2 or tuple(tensors[sin_name][1]) != tuple(shape):
                    skip(name, "cos_sin_cache", dtype, shape, "a cos/sin cache has one row per position "
                         f"(at least 2-D, the same shape as {sin_name})")
                    continue
                cos, sin = _as_rows(load()), _as_rows(tensors[sin_name][2]())
                width = cos.shape[-1]
                if width > MAX_D or width == 0:
                    skip(name, "cos_sin_cache", dtype, shape, f"rows of {width:,} values (rotary dims 1 .. {MAX_D:,})")
                    continue
                layout = _layout(cos)

                def rows_of(a_, b_, cos=cos, sin=sin, layout=layout):
                    return _pairs(cos[a_:b_], layout), _pairs(sin[a_:b_], layout)
                k = width // 2 if layout in ("rotate-half", "interleaved") else width
            total = int(re_rows.shape[0]) if kind in ("freqs_cis", "stacked_cache") else int(cos.shape[0])
            if width > MAX_D or width == 0:
                skip(name, kind, dtype, shape, f"rows of {width:,} values (rotary dims 1 .. {MAX_D:,})")
                continue
            rows = min(total, MAX_ROWS, max(1, MAX_ELEMENTS // width))
            inv = next((v for v in inv_freqs.values() if v.size == k), None)
            det = _cache_details(rows_of, rows, k, layout, inv, "float32" if dtype == "complex64" else dtype)
            if rows < total:
                det["rows_in_tensor"] = total
                notes.append(f"{name}: measured the first {rows:,} of its {total:,} rows")
            found.append(RotaryTensor(name, kind, dtype, list(shape), det))
            if det["exact"] + det["nonfinite"] < det["rows"]:
                findings.append(Finding.of(
                    CHECKPOINT_CACHE_INEXACT,
                    f"{name} ({dtype}): {det['exact']:,} of {det['rows']:,} rows ({100 * det['exact_fraction']:.2f}%) "
                    f"are the encoding of their position; first inexact row {det['first_inexact']}, "
                    f"{det['distinct']:,} distinct rows",
                    path=path, name_in_file=name, exact=det["exact"], rows=det["rows"]))
            if det.get("frequencies_rounded_to"):
                fmt = det["frequencies_rounded_to"]
                findings.append(Finding.of(
                    CHECKPOINT_CACHE_FREQUENCIES_ROUNDED,
                    f"{name} ({dtype}, {det['layout']}): its {k} frequencies are base^(-2i/d), base "
                    f"{number(det['base'])}, rounded to {fmt}: up to {det['frequency_drift']:.2e} (relative) off, a "
                    f"phase error of up to {det['phase_error']:.3g} rad at row {det['rows'] - 1:,}"
                    + ("; every row is consistent with those frequencies, so the rows alone read as exact"
                       if det["exact"] == det["rows"] else ""),
                    path=path, name_in_file=name, frequency_drift=det["frequency_drift"], rounded_to=fmt))
            if det["nonfinite"]:
                findings.append(Finding.of(
                    CHECKPOINT_CACHE_NONFINITE, f"{name} ({dtype}): {det['nonfinite']:,} of {det['rows']:,} rows "
                    "hold inf/NaN", path=path, name_in_file=name, nonfinite=det["nonfinite"]))
        elif kind == "alibi_slopes":
            if len(shape) == 0:
                skip(name, kind, dtype, shape, "a 0-d tensor, but ALiBi has one slope per head")
                continue
            if not 1 <= _numel(shape) <= MAX_D:
                skip(name, kind, dtype, shape, f"{_numel(shape):,} slopes (one per head: 1 .. {MAX_D:,})")
                continue
            if not _real_float(dtype):
                found.append(RotaryTensor(name, kind, dtype, list(shape), {"note": f"not ALiBi slopes: {dtype}"}))
                findings.append(Finding.of(CHECKPOINT_ALIBI_SLOPES_INVALID, f"{name}: ALiBi slopes stored as {dtype}, "
                                           "not real floating-point values", path=path, name_in_file=name, dtype=dtype))
                continue
            v = np.asarray(load(), np.float64).reshape(-1)
            bad = int(np.count_nonzero(~(np.isfinite(v) & (v > 0))))
            if bad:
                found.append(RotaryTensor(name, kind, dtype, list(shape), {
                    "note": f"not ALiBi slopes: {bad:,} of {v.size:,} zero, negative, inf or NaN", "invalid": bad}))
                findings.append(Finding.of(
                    CHECKPOINT_ALIBI_SLOPES_INVALID,
                    f"{name} ({dtype}): {bad:,} of {v.size:,} ALiBi slopes are zero, negative, inf or NaN (a slope is "
                    "2^(-8h/H) > 0)", path=path, name_in_file=name, invalid=bad, heads=int(v.size)))
                continue
            ref = alibi_slopes(v.size)
            with np.errstate(all="ignore"):
                dev = float(np.max(np.abs(v / ref - 1.0)))
            found.append(RotaryTensor(name, kind, dtype, list(shape), {"heads": int(v.size), "max_rel_deviation": dev}))
            if dtype in _LOW and not dev <= 4 * 2.0**-24:
                findings.append(Finding.of(
                    CHECKPOINT_ALIBI_LOW_PRECISION,
                    f"{name}: ALiBi slopes stored in {dtype}, up to {dev:.2e} (relative) from 2^(-8h/H)",
                    path=path, name_in_file=name, max_rel_deviation=dev))
        elif kind == "alibi_bias":
            a = load()
            if a.shape[-1] < 2 or a.size == 0:
                continue
            b = a.reshape(-1, a.shape[-1])  # (heads, L) view
            nrows, ncols = b.shape
            if nrows * 2 > MAX_ELEMENTS:
                skip(name, kind, dtype, shape, f"{nrows:,} rows of biases (at most {MAX_ELEMENTS // 2:,} measured)")
                continue
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
                notes.append(f"{name}: measured the first {cols:,} of its {ncols:,} columns")
            found.append(RotaryTensor(name, kind, dtype, list(shape), det))
            if exact < cols:
                findings.append(Finding.of(
                    CHECKPOINT_ALIBI_LOW_PRECISION,
                    f"{name} ({dtype}): {exact:,} of {cols:,} ALiBi distances recoverable "
                    f"({100 * exact / cols:.2f}%); first lost distance {det['first_inexact']}",
                    path=path, name_in_file=name, exact=exact, columns=int(cols)))
    return CheckpointAudit(path=path, file_format=file_format, tensor_count=count, rotary=found, findings=findings,
                           notes=notes)
