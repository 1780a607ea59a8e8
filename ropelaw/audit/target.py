"""The target of `audit module`: loading the user's factory, and what a built module holds.

:func:`load_factory` runs the file or imports the module the user named (nothing else);
:func:`source_of_encoding` finds the class or function that computes the encoding (where
findings point); :func:`init_cache_length` reads the cos/sin cache a legacy class builds at init.

Legacy classes build a cos/sin cache at init (``max_position_embeddings`` rows, float32) and
rebuild it in forward beyond that length, often in a cast ``inv_freq``'s dtype: the audit
reports the init cache's rows and notes when it covers the audited length (the rebuild path
was not run); ``audit_hf`` builds such classes with ``length // 4`` positions instead
(:func:`ropelaw.audit.hf.rebuild_max_positions`) unless max_position_embeddings is given.

torch is imported inside the functions only.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from typing import Any
from collections.abc import Callable

import numpy as np


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
    path, line = source_of(factory)
    return factory, path or where, line


def source_of(obj: Any) -> tuple[str | None, int]:
    """File (relative to the working directory) and first line of ``obj``'s source; (None, 1) without one."""
    try:
        path = inspect.getsourcefile(obj)
        line = inspect.getsourcelines(obj)[1]
        return (os.path.relpath(path) if path else None), max(int(line), 1)
    except (TypeError, OSError):
        return None, 1


def source_of_encoding(obj: Any) -> tuple[str | None, int]:
    """File and line of the class or function that computes the encoding (through ``inspect``).

    A module or callable instance: its class; a bound method: its owner's class; a
    ``functools.partial``: the wrapped function; a function: itself. (None, 1) when the source
    is not available (builtins, C extensions).
    """
    import functools

    seen = 0
    while isinstance(obj, functools.partial) and seen < 8:
        obj, seen = obj.func, seen + 1
    if inspect.ismethod(obj):
        obj = type(obj.__self__)
    elif not (inspect.isfunction(obj) or inspect.isclass(obj)):
        obj = type(obj)
    return source_of(obj)


def head_dim_of(obj: Any) -> int | None:
    """The head dim a built module states (an int attribute such as ``head_dim``), else 2 * len(inv_freq), else None."""
    for attr in ("head_dim", "head_size", "dim", "rotary_dim", "rotary_ndims", "dims", "n_elem", "d"):
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


def inv_freq_array(obj: Any) -> np.ndarray | None:
    """The module's ``inv_freq`` as a float64 vector (None: it has none, or it cannot be read)."""
    inv = _inv_freq_of(obj)
    if inv is None:
        return None
    try:
        return inv.detach().double().cpu().numpy().reshape(-1)
    except Exception:
        return None


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
