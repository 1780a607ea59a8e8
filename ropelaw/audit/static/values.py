"""The values of the dtype flow: what an expression holds (:class:`Val`), where a dtype comes from
(:class:`DtypeSource`) and what a function's scope knows (:class:`Scope`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from ...findings import Rule

# a finding held back until its value is used: (rule, node, message, fix, finding data) (Val.pending, Val.maybe)
HeldFinding = tuple[Rule, ast.AST, str, str | None, dict[str, Any]]


@dataclass(frozen=True)
class Val:
    """What an expression holds: kinds (``pos``/``freq``/``angle``) and a low-precision source."""

    kinds: frozenset = frozenset()
    source: str | None = None  # buffer | input | caller | default | low
    what: str = ""  # the dtype's origin, for messages: "`self.inv_freq`", "`x`", "bfloat16"
    reported: bool = False  # a finding already covers this value (do not report it again downstream)
    # findings held back outside rotary code until the value meets frequencies or cos/sin
    pending: tuple[HeldFinding, ...] = field(default=(), compare=False)
    integer: bool = False  # positions still in an integer dtype (arange without dtype, position_ids)
    buffer: str = ""  # frequencies still in the dtype of this castable buffer of the class (self.<buffer>)
    # an unknown tensor converted to a risky dtype: positions if it meets frequencies in a product
    maybe: tuple[HeldFinding, ...] = field(default=(), compare=False)
    # a float tensor in torch's default dtype (made without a dtype: arange of a float, int64 / k,
    # linspace): bf16 under Lightning 'bf16-true' (ropelaw.audit.policy.TRAINER_PRECISIONS)
    default: bool = False
    # positions known to stay below this many (arange(n) with n a constant, or a parameter whose small
    # constant default no call in the file overrides): None when unknown
    bound: int | None = None
    # where positions were made: (line, how), e.g. (18, "`torch.arange`"); shown in the finding's path
    origin: tuple = field(default=(), compare=False)
    # positions that are a Python number (``slen - 1``: the last position of a recurrent step), not a tensor: a
    # product with a tensor computes in the tensor's dtype without rounding the number first (torch's wrapped scalars)
    scalar: bool = False


NOTHING = Val()


@dataclass
class DtypeSource:
    source: str | None  # None: clean or not a dtype we know
    what: str = ""
    known: bool = False  # True when we recognised the expression as a dtype (clean or not)


@dataclass
class Scope:
    names: dict[str, Val] = field(default_factory=dict)
    dtypes: dict[str, DtypeSource] = field(default_factory=dict)  # local aliases of dtypes: dtype = x.dtype
    params: set[str] = field(default_factory=set)
    self_aliases: dict[str, str] = field(default_factory=dict)  # inv_freq = self.inv_freq
    alibi: bool = False
    rotary: bool = False  # rotary / ALiBi code: report position casts at once, not only when they reach an angle
    freq_buffers: frozenset = frozenset()  # buffers of the enclosing class holding frequencies
    construction: bool = False  # code that runs only while the module is built (no cast can precede it)
    build_only: bool = False  # a method only __init__ calls: no autocast region wraps it
    repaired: set = field(default_factory=set)  # buffers re-registered in float32 earlier in this function
    # arrays / tensors whose dtype is known from an annotation or their constructor (out: np.ndarray,
    # buf = np.zeros(n, dtype=np.int64)): ``X.dtype`` is that dtype, not an input's
    arrays: dict[str, DtypeSource] = field(default_factory=dict)

