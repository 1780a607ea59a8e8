"""Reading a checkpoint without executing it: safetensors from their JSON header and raw bytes
(numpy; bf16 and fp8 through ml_dtypes), torch files only through ``torch.load(weights_only=True)``
after their zip members and pickle globals are checked. Every limit is checked before the bytes it
guards are read (see :mod:`ropelaw.audit.checkpoint`); tensors come back as zero-copy loaders."""

from __future__ import annotations

import json
import math
import os
import struct
from typing import Any
from collections.abc import Callable

import numpy as np

from ..errors import UsageError
from ..safeio import open_regular

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
# {tensor name: why it has no loader}, and under UNSEARCHED (never a tensor name) how many containers
# nested deeper than MAX_NESTING were not searched
Reasons = dict[str | tuple[str], str | int]


def _read_safetensors(path: str, notes: list[str], reasons: Reasons) -> tuple[Tensors, int]:
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
            reasons[name] = (f"dtype {code} is not one ropelaw reads" if itemsize is None
                             else f"dtype {code} not measured")
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


UNSEARCHED = ("containers not searched",)  # key of `reasons` (never a tensor name): how many


def _flatten(obj: Any, notes: list[str], reasons: Reasons | None = None) -> dict[str, Any]:
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
            reasons[UNSEARCHED] = deep
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
    expanded = any(st == 0 and n > 1 for st, n in zip(t.stride(), t.shape, strict=True))
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


_SAFE_PREFIXES = ("torch.", "collections.OrderedDict", "builtins.", "_codecs.encode",
                  "numpy.core.multiarray._reconstruct")


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


def _read_torch(path: str, notes: list[str], is_zip: bool, size: int, reasons: Reasons) -> tuple[Tensors, int]:
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
                    reasons: Reasons | None = None) -> tuple[str, Tensors, int]:
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
