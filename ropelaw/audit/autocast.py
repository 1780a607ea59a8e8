"""CUDA's autocast policy run on CPU tensors: :func:`cuda_autocast`.

CUDA autocast is a dispatcher key: before an op in its lists reaches its kernel, the autocast kernel
casts the op's eligible inputs (floating-point tensors of the device, not float64) and calls it
again with autocast excluded (torch 2.13.0 ``aten/src/ATen/autocast_mode.h``, ``WrapFunction_``
for each ``CastPolicy``; ``is_eligible``; ``prioritize`` for ``promote``). CPU autocast works the
same way with other lists (:mod:`ropelaw.audit.policy`). :func:`cuda_autocast` enters
``torch.autocast("cpu", dtype)`` and replaces, for as long as it is active, every ``AutocastCPU``
kernel by one with CUDA's policy for that op (``torch.library`` registrations, removed on exit):
CUDA's lists at the key where CUDA applies them, so an ``einsum`` is lowered before it decomposes
into ``mul`` / ``bmm``, exactly as on a GPU, and ops only CPU autocasts fall through.

The CPU tensors stand in for CUDA tensors, so code that turns autocast off for its tensors' device
(``torch.autocast(device_type=x.device.type, enabled=False)``, here "cpu") turns the emulation off,
and so does code that names CUDA (``torch.autocast("cuda", enabled=False)``, ``@autocast("cuda",
enabled=False)``): the region also sets CUDA's autocast flag, which every kernel reads. (Code that
hard-codes ``autocast("cpu", enabled=False)`` would not stop CUDA autocast on a GPU; here it does.)

What it records (:class:`AutocastRecord`): each op whose inputs it converted, and how CPU autocast
would have treated the same op, so a report can say where the two policies made the run differ.

torch is imported inside the functions only.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterator

from . import policy

_LOCK = threading.RLock()  # one emulated region at a time (nested ones re-register on top)
_BANNED = ("torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
           "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
           "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
           "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
           "safe to autocast.")


@dataclass
class AutocastRecord:
    """What the emulated CUDA policy did during one region: op -> (policy, calls that converted inputs)."""

    dtype: str
    converted: dict[str, list] = field(default_factory=dict)  # op -> [policy, calls]
    missing: list[str] = field(default_factory=list)  # ops of the lists this torch does not have

    def note(self, op: str, pol: str) -> None:
        entry = self.converted.setdefault(op, [pol, 0])
        entry[1] += 1

    def differences(self) -> list[str]:
        """Ops the CUDA policy converted where CPU autocast's policy is another (or none)."""
        cpu = policy.autocast_policy("cpu")
        out = []
        for op, (pol, _) in sorted(self.converted.items()):
            if cpu.get(op) != pol:
                to = {"lower_precision_fp": self.dtype, "promote": "the widest input type"}.get(pol, "float32")
                cpu_does = {None: "leaves it alone", "lower_precision_fp": "lowers it",
                            "fp32": "runs it in float32", "promote": "promotes it"}.get(cpu.get(op), cpu.get(op))
                out.append(f"{op} (CUDA runs it in {to}; CPU autocast {cpu_does})")
        return out


def _eligible(t) -> bool:
    """``is_eligible`` of autocast_mode.h for our stand-in device: a floating CPU tensor, not float64."""
    import torch

    return isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != torch.float64 and t.device.type == "cpu"


def _cast(x: Any, to, changed: list) -> Any:
    """``cached_cast``: eligible tensors (also inside lists) converted to ``to``; the rest as is."""
    import torch

    if isinstance(x, torch.Tensor):
        if _eligible(x) and x.dtype != to:
            changed.append(True)
            return x.to(to)
        return x
    if isinstance(x, (list, tuple)):
        return type(x)(_cast(y, to, changed) for y in x)
    return x


def _tensors(x: Any) -> Iterator:
    import torch

    if isinstance(x, torch.Tensor):
        yield x
    elif isinstance(x, (list, tuple)):
        for y in x:
            yield from _tensors(y)


def _promote_type(args, kwargs, lower):
    """``promote_type`` / ``prioritize`` of autocast_mode.h: float32 wins over the lower dtype, float64 is ignored."""
    import torch

    current = lower
    for t in _tensors(list(args) + list(kwargs.values())):
        if not _eligible(t):
            continue
        if t.dtype == torch.float32 or current == torch.float32:
            current = torch.float32
        elif not (current == lower and t.dtype == lower):
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def _resolve(name: str):
    """The OpOverload of ``aten::name[.overload]``, or None when this torch has no such op."""
    import torch

    base, _, overload = name.partition(".")
    packet = getattr(torch.ops.aten, base, None)
    if packet is None:
        return None
    try:
        return getattr(packet, overload or "default")
    except (AttributeError, RuntimeError):
        return None


def _kernel(name: str, op, pol: str, record: AutocastRecord, exclude):
    import torch

    if pol == "banned":
        def banned(*args, **kwargs):
            raise RuntimeError(_BANNED)
        return banned

    dtype_index = next((i for i, a in enumerate(op._schema.arguments)  # the `ScalarType? dtype` argument
                        if a.name == "dtype" and isinstance(a.type, torch.OptionalType)), None)
    dtype_arg = op._schema.arguments[dtype_index] if dtype_index is not None else None

    def kernel(*args, **kwargs):
        if not torch.is_autocast_enabled("cuda"):  # the code turned CUDA autocast off: no cast at all
            with torch._C._ExcludeDispatchKeyGuard(exclude):
                return op(*args, **kwargs)
        lower = torch.get_autocast_dtype("cpu")
        changed: list = []
        target = op
        if pol == "lower_precision_fp":
            args, kwargs = _cast(list(args), lower, changed), {k: _cast(v, lower, changed) for k, v in kwargs.items()}
        elif pol == "fp32":
            f32 = torch.float32
            args, kwargs = _cast(list(args), f32, changed), {k: _cast(v, f32, changed) for k, v in kwargs.items()}
        elif pol == "promote":
            to = _promote_type(args, kwargs, lower)
            args, kwargs = _cast(list(args), to, changed), {k: _cast(v, to, changed) for k, v in kwargs.items()}
        elif pol == "fp32_set_opt_dtype":
            args = list(args)
            if args and _eligible(args[0]) and dtype_arg is not None:
                if dtype_index < len(args):
                    if args[dtype_index] is None:
                        args[dtype_index] = torch.float32
                        changed.append(True)
                elif kwargs.get(dtype_arg.name) is None:
                    kwargs = {**kwargs, dtype_arg.name: torch.float32}
                    changed.append(True)
        elif pol == "fp32_append_dtype":  # norm.Scalar / norm.ScalarOpt_dim -> the overload with a dtype
            args = list(args)
            out_type = torch.float32 if args and _eligible(args[0]) else args[0].dtype
            target = (torch.ops.aten.norm.ScalarOpt_dtype if name == "norm.Scalar"
                      else torch.ops.aten.norm.ScalarOpt_dim_dtype)
            if name == "norm.Scalar" and len(args) < 2:
                args.append(kwargs.pop("p", 2))
            if name == "norm.ScalarOpt_dim" and len(args) < 4:
                args.append(kwargs.pop("keepdim", False))
            kwargs = {**kwargs, "dtype": out_type}
            changed.append(out_type != args[0].dtype)
        if any(changed):
            record.note(name, pol)
        with torch._C._ExcludeDispatchKeyGuard(exclude):
            return target(*args, **kwargs)

    return kernel


def _cpu_registered() -> list[str]:
    """Every op with an ``AutocastCPU`` kernel in the installed torch (``name`` or ``name.overload``)."""
    import torch

    out = []
    for qual in torch._C._dispatch_get_all_op_names():
        if qual.startswith("aten::") and torch._C._dispatch_has_kernel_for_dispatch_key(qual, "AutocastCPU"):
            out.append(qual[len("aten::"):])
    return out


_CPU_REGISTERED: list[str] | None = None


@contextlib.contextmanager
def cuda_autocast(dtype) -> Iterator[AutocastRecord]:
    """``torch.autocast("cpu", dtype)`` whose op lists are CUDA's (see the module docstring).

    Yields an :class:`AutocastRecord`. The kernels are registered for as long as the region lasts
    (process-wide, serialised by a lock: one emulated region at a time) and removed on exit.
    """
    import warnings

    import torch

    global _CPU_REGISTERED
    name = {torch.bfloat16: "bf16", torch.float16: "fp16"}.get(dtype, str(dtype).replace("torch.", ""))
    record = AutocastRecord(name)
    cuda = policy.autocast_policy("cuda")
    exclude = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)
    with _LOCK:
        if _CPU_REGISTERED is None:
            _CPU_REGISTERED = _cpu_registered()
        lib = torch.library.Library("aten", "IMPL")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "Overriding a previously registered kernel": that is the point
                for op_name, pol in cuda.items():
                    op = _resolve(op_name)
                    if op is None:
                        record.missing.append(op_name)
                        continue
                    lib.impl(op_name, _kernel(op_name, op, pol, record, exclude), "AutocastCPU")
                for op_name in _CPU_REGISTERED:
                    if op_name not in cuda:
                        lib.impl(op_name, torch.library.fallthrough_kernel, "AutocastCPU")
            cuda_state = (torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda"))
            torch.set_autocast_enabled("cuda", True)  # read by the kernels: `autocast("cuda", enabled=False)` in
            torch.set_autocast_dtype("cuda", dtype)  # the code turns the emulation off, as it would on a GPU
            try:
                with torch.autocast("cpu", dtype=dtype):
                    yield record
            finally:
                torch.set_autocast_enabled("cuda", cuda_state[0])
                torch.set_autocast_dtype("cuda", cuda_state[1])
        finally:
            lib._destroy()
