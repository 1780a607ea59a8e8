"""GGUF test files, written by the ``gguf`` package (gguf==0.19.0 from PyPI, the [test] pin): its own
writer, so the files are what llama.cpp's Python tooling writes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ropelaw.lint.rope_factors import llama3_factors


def write_gguf(path: Path, arch: str, kv: dict[str, Any], tensors: dict[str, np.ndarray] | None = None,
               extra: Callable | None = None) -> str:
    """A GGUF of ``arch`` with the keys ``kv`` (``{arch}`` in a key is the architecture; value types as gguf
    infers them, a ``(value, GGUFValueType)`` pair to choose) and ``tensors``."""
    import gguf

    w = gguf.GGUFWriter(str(path), arch)
    for key, value in kv.items():
        key = key.replace("{arch}", arch)
        if isinstance(value, tuple):
            value, vtype = value
            if vtype == gguf.GGUFValueType.ARRAY:
                w.add_array(key, value)
            else:
                w.add_key_value(key, value, vtype)
        elif isinstance(value, list):
            w.add_array(key, value)
        elif isinstance(value, str):
            w.add_string(key, value)
        elif isinstance(value, bool):
            w.add_bool(key, value)
        elif isinstance(value, int):
            w.add_uint32(key, value)
        else:
            w.add_float32(key, value)
    if extra is not None:
        extra(w)
    for name, t in (tensors or {}).items():
        w.add_tensor(name, t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return str(path)


LLAMA31_8B = {"{arch}.context_length": 131072, "{arch}.embedding_length": 4096, "{arch}.block_count": 32,
              "{arch}.attention.head_count": 32, "{arch}.attention.head_count_kv": 8,
              "{arch}.rope.freq_base": 500000.0, "{arch}.rope.dimension_count": 128}


def llama31(path: Path, dtype=np.float32, **kv: Any) -> str:
    """A Llama 3.1 8B as the HF-to-GGUF conversion writes it: no scaling keys, rope_freqs.weight (float32)."""
    factors = llama3_factors(500000.0, 128, 8.0, 1.0, 4.0, 8192).astype(dtype)
    meta = dict(LLAMA31_8B)
    meta.update({k.replace("__", "."): v for k, v in kv.items()})
    return write_gguf(path, "llama", meta, {"token_embd.weight": np.zeros((4, 32), np.float16),
                                            "rope_freqs.weight": factors})
