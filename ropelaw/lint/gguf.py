"""GGUF files (llama.cpp's model format): the header, the metadata and the RoPE tensors only.

``ropelaw lint model.gguf`` and ``ropelaw audit checkpoint model.gguf`` read a GGUF through
:func:`read_gguf`: never the weights. The layout and every refusal are ggml's own
(``ggml/src/gguf.cpp`` ``gguf_init_from_reader``, llama.cpp as vendored by
llama-cpp-python==0.3.36; the same bytes as the GGUF spec, ``docs/gguf.md``):

- magic ``GGUF``; uint32 version: 2 or 3 (1 is refused as ggml refuses it; a version whose
  low 16 bits are 0 is a file of the other byte order); int64 tensor count; int64 KV count;
- each KV: a key (uint64 length + bytes; non-empty, unique), a uint32 value type, the value;
  strings are a uint64 length + bytes, arrays a uint32 item type + uint64 count + items (an
  array of arrays is refused, as ggml does);
- each tensor info: a name (shorter than ``GGML_MAX_NAME`` = 64 bytes, unique), uint32 n_dims
  <= 4, int64 dims >= 0 (their product below 2^63), a uint32 ggml type whose block size divides
  dim 0, a uint64 offset. ``general.alignment`` (uint32, a power of two; default 32) pads the data
  section's start, and each tensor's offset must be the padded sum of the sizes before it (ggml
  refuses any other); the last tensor must end within the file (llama.cpp's model loader: "tensor
  data is not within the file bounds").

Limits of ropelaw's own, each checked before the bytes it guards are walked (a hostile file is
refused with one line, in bounded time and memory; :data:`MAX_KV` ...):

- the file is memory-mapped read-only: only the pages of the header, the metadata and the RoPE
  tensors are touched, whatever the size of the weights (a 4 GB GGUF's RoPE is read in
  milliseconds; ``benchmarks/bench_gguf.py``);
- fixed-size arrays are skipped by arithmetic; arrays of strings must be walked string by string
  (a tokenizer's vocabulary), at most :data:`MAX_ARRAY_STRINGS` in a file;
- values are kept only when small (:data:`MAX_KEPT_ARRAY`, :data:`MAX_KEPT_STRING`): a vocabulary
  or a chat template is recorded by its size, never copied;
- only the RoPE tensors (:data:`ROPE_TENSORS`) are read, each at most :data:`MAX_ROPE_ELEMENTS`.

A file that is not a GGUF or breaks any of these raises :class:`~ropelaw.errors.UsageError`
(exit 2), never a traceback.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from ..safeio import open_regular

__all__ = ["GgufFile", "GgufTensor", "ArrayInfo", "StringInfo", "read_gguf", "is_gguf", "ROPE_TENSORS",
           "MAX_KV", "MAX_TENSORS", "MAX_ARRAY_STRINGS", "MAX_KEPT_ARRAY", "MAX_KEPT_STRING", "MAX_ROPE_ELEMENTS"]

MAGIC = b"GGUF"
VERSIONS = (2, 3)  # ggml GGUF_VERSION 3; v2 has the same layout (v1's 32-bit counts are refused, as by ggml)
DEFAULT_ALIGNMENT = 32  # ggml GGUF_DEFAULT_ALIGNMENT
GGML_MAX_DIMS = 4  # ggml.h
GGML_MAX_NAME = 64  # ggml.h: a tensor name is shorter

# Limits (see the module docstring). Real GGUFs hold 20-60 keys (tokenizer arrays are one key each),
# at most a few thousand tensors (Llama 3.1 405B in one file: about 1,140; DeepSeek-V3: about 1,030),
# and vocabularies of at most a few hundred thousand strings (Gemma 3: 262,144 tokens; merges beside them).
MAX_KV = 1 << 16
MAX_TENSORS = 1 << 16
MAX_ARRAY_STRINGS = 1 << 22  # strings walked in arrays: 4,194,304 (about 2 s of Python), 8x Gemma 3's tokens + merges
MAX_KEPT_ARRAY = 1 << 12  # numeric arrays kept as values: per-layer arrays (<= a few hundred layers), sections
MAX_KEPT_STRING = 1 << 12  # strings kept as values (architecture, names); longer ones: their length only
MAX_ROPE_ELEMENTS = 1 << 15  # a RoPE factor tensor holds d/2 values: d <= 2^16 (ropelaw.limits.MAX_D)

# the RoPE tensors llama.cpp reads (gguf-py constants TENSOR_NAMES: ROPE_FREQS, ROPE_FACTORS_LONG / _SHORT);
# llama-model.cpp get_rope_factors: rope_freqs when present, else long / short by the context
ROPE_TENSORS = ("rope_freqs.weight", "rope_factors_long.weight", "rope_factors_short.weight")

# gguf value types (ggml gguf.h enum gguf_type): name, struct format, size
_TYPES = {0: ("uint8", "<B", 1), 1: ("int8", "<b", 1), 2: ("uint16", "<H", 2), 3: ("int16", "<h", 2),
          4: ("uint32", "<I", 4), 5: ("int32", "<i", 4), 6: ("float32", "<f", 4), 7: ("bool", "<B", 1),
          8: ("string", None, 0), 9: ("array", None, 0), 10: ("uint64", "<Q", 8), 11: ("int64", "<q", 8),
          12: ("float64", "<d", 8)}

# ggml tensor types: name -> (block size, bytes per block): llama-cpp-python==0.3.36 vendor/llama.cpp
# gguf-py/gguf/constants.py GGML_QUANT_SIZES, ggml's type_traits (ggml.c) at the same commit. Codes 4, 5 and
# 31-33, 36-38 were removed from ggml (type size 0: ggml refuses them, "not a multiple of block size").
GGML_TYPES = {0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20), 6: ("Q5_0", 32, 22),
              7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36), 10: ("Q2_K", 256, 84),
              11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210),
              15: ("Q8_K", 256, 292), 16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74), 18: ("IQ3_XXS", 256, 98),
              19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110), 22: ("IQ2_S", 256, 82),
              23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1), 25: ("I16", 1, 2), 26: ("I32", 1, 4), 27: ("I64", 1, 8),
              28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56), 30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54),
              35: ("TQ2_0", 256, 66), 39: ("MXFP4", 32, 17), 40: ("NVFP4", 64, 36), 41: ("Q1_0", 128, 18),
              42: ("Q2_0", 64, 18)}
_FLOAT_TYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "BF16": "bfloat16"}


@dataclass(frozen=True)
class ArrayInfo:
    """An array not kept as a value (too long, or of strings): its item type and length."""

    item_type: str
    count: int

    def __repr__(self) -> str:
        return f"<{self.count:,} {self.item_type} values>"


@dataclass(frozen=True)
class StringInfo:
    """A string not kept as a value (longer than :data:`MAX_KEPT_STRING` bytes): its length."""

    length: int

    def __repr__(self) -> str:
        return f"<a string of {self.length:,} bytes>"


@dataclass(frozen=True)
class GgufTensor:
    """One tensor's info: ``shape`` in ggml's order (ne[0] first: the fastest-varying dim)."""

    name: str
    type: str
    shape: tuple
    offset: int  # absolute, in the file
    nbytes: int

    @property
    def count(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


@dataclass
class GgufFile:
    """What :func:`read_gguf` found: the metadata (small values kept, the rest by size), the value type
    of every key, the RoPE tensors' infos and, for the float ones, their values."""

    path: str
    version: int
    size: int
    alignment: int
    tensor_count: int
    metadata: dict = field(default_factory=dict)  # key -> value (scalars, short strings, small arrays, infos)
    types: dict = field(default_factory=dict)  # key -> "uint32", "float32", "string", "array of float32" ...
    order: dict = field(default_factory=dict)  # key -> its index among the KVs (1-based)
    rope: dict = field(default_factory=dict)  # name -> GgufTensor of the RoPE tensors (ROPE_TENSORS)
    values: dict = field(default_factory=dict)  # name -> numpy array (float RoPE tensors only)
    notes: list = field(default_factory=list)  # what was not read, and why

    @property
    def architecture(self) -> Any:
        return self.metadata.get("general.architecture")


def is_gguf(path: str) -> bool:
    """The file starts with GGUF's magic (a ``.gguf`` name or not)."""
    try:
        with open_regular(path) as fh:
            return fh.read(4) == MAGIC
    except (OSError, UsageError):
        return False


class _Cursor:
    """Reads the mapped file from a position; every read is bounded by the file's size first."""

    def __init__(self, buf, size: int, path: str):
        self.buf, self.size, self.path, self.pos = buf, size, path, 0

    def bad(self, why: str) -> UsageError:
        return UsageError(f"{self.path}: corrupt GGUF file ({why})")

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.size:
            raise self.bad(f"{what} at byte {self.pos:,}: past the end of the {self.size:,}-byte file "
                           "(truncated, or a size that lies)")

    def unpack(self, fmt: str, n: int, what: str) -> Any:
        self.need(n, what)
        (v,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += n
        return v

    def string(self, what: str, keep: int | None) -> str | StringInfo:
        """A GGUF string: kept (decoded) up to ``keep`` bytes, else skipped (its length recorded)."""
        n = self.unpack("<Q", 8, f"the length of {what}")
        self.need(n, f"{what} ({n:,} bytes)")
        start = self.pos
        self.pos += n
        if keep is not None and n > keep:
            return StringInfo(n)
        return bytes(self.buf[start:start + n]).decode("utf-8", errors="replace")


def read_gguf(path: str, *, tensors: bool = True) -> GgufFile:
    """Header, metadata and RoPE tensors of ``path`` (module docstring); ``UsageError`` for anything else."""
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory (give a .gguf file)")
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size < 24:
            raise UsageError(f"{path}: not a GGUF file ({size} bytes: shorter than GGUF's 24-byte header)")
        try:
            buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as exc:
            raise UsageError(f"{path}: cannot map the file for reading ({exc})") from None
        try:
            out = _read(_Cursor(buf, size, path), tensors)
        finally:
            buf.close()
    return out


def _read(c: _Cursor, tensors: bool) -> GgufFile:
    path = c.path
    if bytes(c.buf[0:4]) != MAGIC:
        raise UsageError(f"{path}: not a GGUF file (no 'GGUF' magic at its start)")
    c.pos = 4
    version = c.unpack("<I", 4, "the version")
    if version & 0xFFFF == 0 and version:
        raise UsageError(f"{path}: a GGUF file of the other byte order (version {version:#x}); ropelaw reads "
                         "little-endian GGUF, as llama.cpp on x86 and ARM does")
    if version not in VERSIONS:
        raise UsageError(f"{path}: GGUF version {version} is not read (versions 2 and 3 are; llama.cpp refuses "
                         f"{'version 1' if version == 1 else 'it'} too)")
    n_tensors = c.unpack("<q", 8, "the tensor count")
    n_kv = c.unpack("<q", 8, "the key count")
    if not 0 <= n_tensors <= MAX_TENSORS:
        raise c.bad(f"{n_tensors:,} tensors; ropelaw reads files of 0 to {MAX_TENSORS:,} (a model holds at most a "
                    "few thousand)")
    if not 0 <= n_kv <= MAX_KV:
        raise c.bad(f"{n_kv:,} metadata keys; ropelaw reads files of 0 to {MAX_KV:,} (a model holds 20 to 60)")
    g = GgufFile(path, version, c.size, DEFAULT_ALIGNMENT, n_tensors)
    walked = [0]  # strings of arrays walked so far (MAX_ARRAY_STRINGS)
    for i in range(n_kv):
        key = c.string(f"key {i + 1}", 1 << 16)
        if isinstance(key, StringInfo):
            raise c.bad(f"key {i + 1} is {key.length:,} bytes long")
        if not key:
            raise c.bad(f"key {i + 1} is empty")
        if key in g.metadata:
            raise c.bad(f"duplicate key {key!r}")
        code = c.unpack("<I", 4, f"the type of {key!r}")
        g.metadata[key], g.types[key] = _value(c, key, code, walked)
        g.order[key] = i + 1
    align = g.metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    if "general.alignment" in g.metadata and g.types["general.alignment"] != "uint32":
        raise c.bad(f"general.alignment must be a uint32, got a {g.types['general.alignment']}")
    if not isinstance(align, int) or align <= 0 or align & (align - 1):
        raise c.bad(f"general.alignment {align!r} is not a power of 2")
    g.alignment = align
    if tensors:
        _tensor_infos(c, g)
    return g


def _value(c: _Cursor, key: str, code: int, walked: list) -> tuple[Any, str]:
    """``(value, type name)`` of one KV at the cursor (module docstring: what is kept)."""
    if code not in _TYPES:
        raise c.bad(f"key {key!r} has the unknown value type {code}")
    name, fmt, size = _TYPES[code]
    if name == "string":
        return c.string(f"the value of {key!r}", MAX_KEPT_STRING), name
    if fmt is not None:  # a scalar (string and array have no struct format)
        v = c.unpack(fmt, size, f"the value of {key!r}")
        return (bool(v) if name == "bool" else v), name
    item = c.unpack("<I", 4, f"the item type of {key!r}")
    n = c.unpack("<Q", 8, f"the length of {key!r}")
    if item not in _TYPES or _TYPES[item][0] == "array":
        raise c.bad(f"key {key!r}: an array of {'arrays' if item == 9 else f'unknown type {item}'} (ggml reads "
                    "arrays of scalars and strings only)")
    iname, ifmt, isize = _TYPES[item]
    label = f"array of {iname}"
    if ifmt is not None:  # not strings
        c.need(n * isize, f"the {n:,} values of {key!r}")
        if n > MAX_KEPT_ARRAY:
            c.pos += n * isize
            return ArrayInfo(iname, n), label
        vals = list(struct.unpack_from(f"<{n}{ifmt[1]}", c.buf, c.pos))
        c.pos += n * isize
        return ([bool(v) for v in vals] if iname == "bool" else vals), label
    c.need(n * 8, f"the {n:,} strings of {key!r}")  # each string needs at least its 8-byte length
    if walked[0] + n > MAX_ARRAY_STRINGS:
        raise UsageError(f"{c.path}: refused: more than {MAX_ARRAY_STRINGS:,} strings in metadata arrays (at "
                         f"{key!r}, {n:,} strings; a vocabulary holds at most a few hundred thousand)")
    walked[0] += n
    if n <= 64:
        return [c.string(f"string {j:,} of {key!r}", MAX_KEPT_STRING) for j in range(n)], label
    _skip_strings(c, n, key)
    return ArrayInfo("string", n), label


_U64 = struct.Struct("<Q")


def _skip_strings(c: _Cursor, n: int, key: str) -> None:
    """Walk past ``n`` strings (a vocabulary): one length read per string, nothing copied."""
    unpack, buf, pos, size = _U64.unpack_from, c.buf, c.pos, c.size
    for j in range(n):  # noqa: B007 - j is read after the loop: the string that overruns
        if pos + 8 > size:
            break
        pos += 8 + unpack(buf, pos)[0]
        if pos > size:
            break
    else:
        c.pos = pos
        return
    c.pos = pos
    raise c.bad(f"string {j:,} of {key!r}: past the end of the {size:,}-byte file (truncated, or a length "
                "that lies)")


def _tensor_infos(c: _Cursor, g: GgufFile) -> None:
    """Every tensor info checked as ggml checks it; the RoPE tensors kept, and read when they are floats."""
    names: set[str] = set()
    expected = end = 0  # the offset ggml requires of the next tensor: the padded sizes before it
    for i in range(g.tensor_count):
        name = c.string(f"the name of tensor {i + 1}", GGML_MAX_NAME)
        if isinstance(name, StringInfo) or len(name.encode("utf-8", "surrogatepass")) >= GGML_MAX_NAME:
            raise c.bad(f"the name of tensor {i + 1} is {GGML_MAX_NAME} bytes or longer")
        if name in names:
            raise c.bad(f"duplicate tensor name {name!r}")
        names.add(name)
        n_dims = c.unpack("<I", 4, f"the dimension count of {name!r}")
        if n_dims > GGML_MAX_DIMS:
            raise c.bad(f"tensor {name!r} has {n_dims:,} dimensions (ggml: at most {GGML_MAX_DIMS})")
        shape = tuple(c.unpack("<q", 8, f"dimension {j} of {name!r}") for j in range(n_dims))
        if any(s < 0 for s in shape):
            raise c.bad(f"tensor {name!r} has a negative dimension {shape}")
        count = 1
        for s in shape:
            count *= s
        if count >= 1 << 63:
            raise c.bad(f"tensor {name!r}: {shape} holds 2^63 elements or more")
        code = c.unpack("<I", 4, f"the type of {name!r}")
        if code not in GGML_TYPES:
            raise c.bad(f"tensor {name!r} has the unknown ggml type {code}")
        tname, block, bsize = GGML_TYPES[code]
        if shape and shape[0] % block:
            raise c.bad(f"tensor {name!r} ({tname}) has {shape[0]:,} elements per row, not a multiple of its "
                        f"block size {block}")
        nbytes = count // block * bsize
        offset = c.unpack("<Q", 8, f"the offset of {name!r}")
        if offset != expected:
            raise c.bad(f"tensor {name!r} has offset {offset:,}, but the tensors before it end at {expected:,} "
                        "(ggml requires each tensor to follow the previous one)")
        end = offset + nbytes  # the loader needs each tensor's bytes, not the padding after the last
        expected += -(-nbytes // g.alignment) * g.alignment
        if name in ROPE_TENSORS:
            g.rope[name] = GgufTensor(name, tname, shape, offset, nbytes)  # offset made absolute below
    start = -(-c.pos // g.alignment) * g.alignment if g.tensor_count else c.pos
    if g.tensor_count and start + end > c.size:
        raise UsageError(f"{c.path}: corrupt GGUF file (its tensors end at byte {start + end:,}, the file has "
                         f"{c.size:,}: truncated, or sizes that lie; llama.cpp's loader refuses it too)")
    for name, t in list(g.rope.items()):
        g.rope[name] = GgufTensor(name, t.type, t.shape, start + t.offset, t.nbytes)
        _load_rope(c, g, g.rope[name])


def _load_rope(c: _Cursor, g: GgufFile, t: GgufTensor) -> None:
    """The values of a float RoPE tensor (at most :data:`MAX_ROPE_ELEMENTS`), copied out of the map."""
    import numpy as np

    if t.type not in _FLOAT_TYPES:
        g.notes.append(f"{t.name}: a {t.type} tensor, not read (RoPE factors are stored as floats)")
        return
    if t.count > MAX_ROPE_ELEMENTS:
        g.notes.append(f"{t.name}: {t.count:,} values, more than the {MAX_ROPE_ELEMENTS:,} of any rotary "
                       "dimension's pairs; not read")
        return
    if t.offset + t.nbytes > c.size:
        raise c.bad(f"tensor {t.name!r}: past the end of the file")
    raw = bytes(c.buf[t.offset:t.offset + t.nbytes])
    if t.type == "BF16":
        import ml_dtypes

        arr = np.frombuffer(raw, dtype="<u2").view(ml_dtypes.bfloat16)
    else:
        arr = np.frombuffer(raw, dtype=_FLOAT_TYPES[t.type])
    g.values[t.name] = arr.astype(np.float64)
