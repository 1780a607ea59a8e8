"""The types of a plan's options (:class:`Option`, :class:`Caveat`), the sources they cite and the cost
ranks: shared by ``ropelaw.plan`` (the plan, its ranking and verdict) and ``ropelaw.plan_options`` (the
builders), so neither imports the other's module."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .results import Result
from .spec import RopeSpec

__all__ = ["Caveat", "Option", "SOURCES", "OPTION_NAMES", "COST_NONE", "COST_TRAIN", "COST_TARGET", "COST_UNKNOWN"]

# the citations every option draws on (one place, so text and JSON name them the same way)
SOURCES = {
    "liu": "Liu et al. 2023, Scaling Laws of RoPE-based Extrapolation, arXiv 2310.05209 (seed 001)",
    "men": "Men et al. 2024, Base of RoPE Bounds Context Length, arXiv 2405.14591",
    "pi": "Chen et al. 2023, Position Interpolation, arXiv 2306.15595",
    "yarn": "Peng et al. 2023, YaRN, arXiv 2309.00071",
    "ntk": "bloc97 (r/LocalLLaMA 2023-06); Su, kexue.fm/archives/9675; YaRN arXiv 2309.00071 sec. 3.1",
    "dynamic": "Hugging Face _compute_dynamic_ntk_parameters; YaRN arXiv 2309.00071 sec. 3.3",
    "llama3": "Llama 3.1 bands: Hugging Face _compute_llama3_parameters (arXiv 2407.21783)",
    "longrope": "Ding et al. 2024, LongRoPE, arXiv 2402.13753; Hugging Face _compute_longrope_parameters",
    "rerope": "Su 2023, ReRoPE, kexue.fm/archives/9708 (seed 000)",
}

OPTION_NAMES = ("current", "base", "train", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "rerope",
                "leaky_rerope")

COST_NONE, COST_TRAIN, COST_TARGET, COST_UNKNOWN = 0, 1, 2, 3


@dataclass(frozen=True)
class Caveat:
    """One claim about an option, with the source that makes it."""

    text: str
    source: str

    def to_dict(self) -> dict[str, str]:
        return {"text": self.text, "source": self.source}


@dataclass
class Option(Result):
    """One way to reach the target: its spec, its bound through ``theory``, its cost and caveats."""

    name: str  # the --apply name
    title: str
    spec: RopeSpec  # the setup whose bound is given
    bound: float  # theory.extrapolation_bound(spec).extrapolation_bound (inf: unbounded)
    reaches: bool  # bound >= target, decided exactly at the boundary
    parameters: dict  # what the option sets: {"factor": 32}, {"base": 1.02e6}, {"window": 2048, "k": 31}
    cost: str  # "none (inference)", "continued training at 4,096 tokens", ...
    cost_rank: int
    source: str
    how: str  # how the parameters were chosen
    caveats: list = field(default_factory=list)  # list[Caveat]
    critical_dimension: int | None = None
    men_supported: int | None = None  # Men et al.: B_(m,theta) >= 0 for every m <= this (capped at the target)
    extra: dict = field(default_factory=dict)  # option-specific numbers (smallest_factor, safe_length, ...)
    edit: Any = None  # the config edit in the input's dialect (writers.Edit), or None
    evidence: Any = None  # what ropelaw's experiments measured for it (evidence.Evidence)

    @property
    def expressible(self) -> bool:
        """Whether the user's format can state it: the edit was not refused (a config), or, without a
        config, some config format can (no format states ReRoPE or Leaky ReRoPE: they patch the model)."""
        if self.edit is not None:
            return not self.edit.refused
        return self.name not in ("rerope", "leaky_rerope")

    @property
    def measured(self) -> tuple[int, int] | None:
        """The bound times the measured range (evidence): where the toy's loss broke, in tokens."""
        return self.evidence.tokens(self.bound) if self.evidence is not None else None

    def measured_reaches(self, target: int) -> bool:
        """Whether the low end of the measured range still reaches ``target`` (False when not measured)."""
        return self.measured is not None and self.measured[0] >= target

    def rank_key(self, target: int) -> tuple:
        """Reaching first; then what the format can state; then ropelaw's measured evidence (predicted,
        partly, not measured, not predicted), and whether the low end of the measured range still reaches
        the target; then cost; then that low end."""
        low = self.measured[0] if self.measured else self.bound
        return (not self.reaches, not self.expressible, self.evidence.rank if self.evidence else 2,
                not self.measured_reaches(target), self.cost_rank, -low, self.name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "title": self.title, "parameters": dict(self.parameters),
            "bound": self.bound, "reaches": self.reaches, "cost": self.cost, "source": self.source,
            "how": self.how, "critical_dimension": self.critical_dimension,
            "men_supported": self.men_supported, **self.extra,
            "spec": self.spec.to_dict(),
            "caveats": [c.to_dict() for c in self.caveats],
            "edit": self.edit.to_dict() if self.edit is not None else None,
            "expressible": self.expressible,
            "evidence": self.evidence.to_dict() if self.evidence is not None else None,
            "measured": list(self.measured) if self.measured else None,
        }


