"""Static scan of model code: an AST checker for rotary / ALiBi precision bugs (RP1xx, RE0xx).

pyflakes' split: :class:`Checker` walks one module's AST and only appends
:class:`~ropelaw.findings.Finding` objects; the rules (codes, names, documentation, message
helpers) live in ``ropelaw/audit/rules/static_*.py``; :mod:`ropelaw.report` formats. The
precision policy (what autocast lowers on CUDA and CPU, the default dtype under each trainer
precision) is :mod:`ropelaw.audit.policy`, which the runtime scenarios read too.

The package, one job a module:

- :mod:`.checker`: :class:`Checker`, the statement walk (one ``visit_<Statement>`` each, dispatch only);
- :mod:`.flow`: the dtype flow, what each expression holds (``visit_<Expression>``, promotion in
  ``_combine``, what a call does in ``visit_Call``); :mod:`.dtypes`: where a dtype expression comes from;
  :mod:`.values`: the values and scopes it carries;
- :mod:`.structure`: the file's call graph, classes, registrations, callers, autocast regions;
- :mod:`.buffers`: frequency and complex buffers before and after a cast, repairs (RP121, RP123);
- :mod:`.triggers`: when each rule fires and the numbers in its message;
- :mod:`.state`: what the checker holds while it walks, declared once (:class:`~.state.CheckerState`, which every
  mixin above inherits) and :meth:`~.state.CheckerState.report`, the one way a finding is added;
- :mod:`.syntax` and :mod:`.names`: reading nodes and names, no state;
- :mod:`.scan`: files in, findings out (limits, ``# noqa``, RE0xx).

A little dataflow, within one function, in statement order: each local name carries the
*kinds* of value it holds (``pos`` integer positions, ``freq`` rotary frequencies / ALiBi
slopes, ``angle`` their product) and, once a low-precision dtype reached it, the *source* of
that dtype (``buffer`` a module attribute's dtype, ``input`` an argument tensor's dtype,
``caller`` a ``dtype`` parameter, ``default`` ``torch.get_default_dtype()``, ``low`` an
explicit float16/bfloat16/fp8). Positions come from ``arange`` (without a step: a step marks
the frequency exponents ``arange(0, dim, 2)``), ``position_ids``, ``cache_position`` and
similar names, ``cumsum`` in ALiBi code, and names assigned from them; frequencies from
``inv_freq``-like names (``slopes`` in ALiBi code).

Where a position cast is reported: at once in rotary / ALiBi code (the function or class name
mentions rotary, rope, rotate or alibi, the class registers a frequency buffer, or the
function mentions ``inv_freq``); elsewhere only once the cast positions meet frequencies in
a product or reach ``sin``/``cos``/``exp`` (an ``arange`` in the input dtype that builds a
mask is not an encoding). An ``arange`` over a feature dimension (its stop mentions dim,
head, feat, hidden, embed, channel or ``d``) holds exponents, not positions; the dtype of a
tensor named like an integer (lengths, ids, mask, ...) is taken to be an integer dtype.
``self.X.dtype`` follows a model cast unless ``X`` is a plain attribute of the class that is
never registered as a buffer or parameter.

Frequency buffers (RP121) are buffers registered with ``register_buffer`` or ``self.X =
nn.Buffer(...)`` that hold frequencies: named so (``inv_freq``, ``freq(s)``, ``theta``, ``omega``,
``bands``, ``periods``) or built so (:func:`.syntax.frequency_expression`: ``base ** (arange/dim)``,
``1 / base ** ...``, ``exp(-log(base) * arange/dim)``, ``logspace``, ``2 ** linspace``, ``linspace *
pi``, also through a function of the same file). When the dtype of ``self.X`` is bf16 depends on
*when* the code runs:

- *construction-only* code (``__init__``, and the methods that only ``__init__`` calls, by name
  over the file, :meth:`Checker._call_graph`) runs before any ``model.to(dtype)`` can: a buffer
  registered there with an explicit float32 value (``.float()``, ``torch.float32``) is float32,
  so ``arange(n, dtype=self.inv_freq.dtype)`` there is exact (transformers 4.28 Llama's
  ``__init__``). The same line in a method that ``forward`` also calls is the seed 004 bug. A
  public method that only ``__init__`` calls is construction too (torchtune's ``rope_init`` /
  ``build_rope_cache``: a cache built from a float32 recompute, flagged 10 times before issue 33);
- a ``register_buffer("X", <explicit float32>)`` earlier in the same function (even under an
  ``if``: dynamic NTK re-registers exactly on the long-sequence path that rebuilds the cache)
  makes ``self.X`` float32 below it;
- a class (or an in-file base) whose ``_apply`` / ``to`` override re-registers or reassigns
  ``X`` (timm 1.0's pattern) restores it after every cast: ``X`` is never reported and its dtype
  is float32.

RP121 is reported at registrations that run at construction (``__init__`` or what it calls); a
registration that runs only later, or again after ``__init__`` created the buffer, replaces
whatever a cast left with a freshly computed tensor: a repair, not reported unless its value is
visibly low precision. ``register_buffer("X", None)`` has nothing to round.

Type promotion: integer positions (``arange`` without a dtype, ``position_ids``) multiplied with
a castable frequency buffer take the buffer's dtype (``int64 * bf16 -> bf16``), so a cast rounds
the positions too (RP101 at the product). A tensor of unknown kind converted to a risky dtype
(``t.type_as(self.inv_freq)``) is positions once it meets frequencies in a product.

Repairs (no RP121/RP122, and ``self.X.dtype`` counts as float32): an ``_apply`` / ``to`` override
that re-registers ``X`` from a fresh computation; every read of ``self.X`` after construction inside
the float32 branch of ``if self.X.dtype != torch.float32`` (flash-attn); a method ``forward`` calls
that reassigns ``X`` in explicit float32 at its top level (nanotron's lazy re-initialisation). See
:meth:`Checker._repairs`.

Complex (RP123, RP114): a buffer or parameter whose value builds complex numbers (``torch.polar``,
``view_as_complex``, ``torch.complex``, a complex dtype or literal; followed through local names,
functions of the file and ``self.m()`` implemented by any class of the file) is made real by
``model.to(dtype)``; a cast of angles right inside a complex constructor is RP114.

Dtypes known not to be low precision: numpy and integer arrays (annotated or constructed, see
:func:`.syntax.annotation_dtype`, :meth:`Checker._constructed_dtype`), and a ``dtype`` parameter whose
float32 default no call in the file overrides (:meth:`Checker._float32_default`).

Numbers in messages come from :func:`ropelaw.formats.exact_positions` at ``length``
(default 8,192, the seed's context).
"""

from .checker import DEFAULT_LENGTH, Checker
from .scan import MAX_AST_WORDS, MAX_FILE_BYTES, ScanResult, python_files, scan_file, scan_paths, scan_source

__all__ = ["Checker", "scan_source", "scan_file", "scan_paths", "python_files", "ScanResult", "DEFAULT_LENGTH",
           "MAX_FILE_BYTES", "MAX_AST_WORDS"]
