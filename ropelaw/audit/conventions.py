"""Probing which calling convention a rotary module or callable has.

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

torch is imported inside the functions only.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import os
import sys
from typing import Any, Callable, Sequence

import numpy as np

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


