"""Predict, then verify: the seeds' experiments at toy scale, and a harness for HF models.

- :mod:`.data` -- the offline corpus (the Python standard library's own sources, as bytes)
  and the repeated / non-repeated samples of Su's tables;
- :mod:`.model` -- a tiny causal transformer whose positions come from ``ropelaw.methods``
  and ``ropelaw.schemes`` (RoPE at any base, PI, NTK, YaRN, ReRoPE, Leaky ReRoPE, log n,
  KNA / QNA / CosA);
- :mod:`.metrics` -- per-position loss and accuracy, the break-point rule, orderings;
- :mod:`.runs` -- the three experiments (bound, extrapolation, keynorm), the shared training,
  evaluation and sizes;
- :mod:`.scheme_bounds` -- the bound under each scaling scheme, at inference and after tuning;
- :mod:`.sweep` -- the bound experiment at several (d, T): is break / bound constant?
- :mod:`.eval_length` -- loss and accuracy per position band of any local HF causal LM.

Needs torch (``pip install 'ropelaw[torch]'``); ``import ropelaw`` never imports this package.
"""

from __future__ import annotations

from ..errors import require

require("torch", "torch", "ropelaw.experiments")
