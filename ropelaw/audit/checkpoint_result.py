"""What ``ropelaw audit checkpoint`` reports: each rotary or ALiBi tensor found and measured, and the audit
(shared by the safetensors / torch audit, :mod:`.checkpoint`, and the GGUF audit, :mod:`.checkpoint_gguf`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..findings import Finding
from ..numfmt import number
from ..results import Result

__all__ = ["RotaryTensor", "CheckpointAudit"]


@dataclass
class RotaryTensor(Result):
    """One rotary or ALiBi tensor found in a checkpoint, with what was measured."""

    name: str
    kind: str  # inv_freq | cos_sin_cache | freqs_cis | stacked_cache | alibi_slopes | alibi_bias | cos_cache
    dtype: str
    shape: list[int]
    details: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        d = self.details
        shape = "x".join(map(str, self.shape))
        if "note" in d:  # found but not measured (or no partner tensor): say why
            return f"{self.name}  {self.kind} {self.dtype} [{shape}]: {d['note']}"
        if self.kind == "inv_freq":
            base = d.get("base")
            b = number(base)
            return (f"{self.name}  inv_freq {self.dtype} [{shape}]: rotary dims {d['rotary_dim']}, base {b} "
                    f"(fit residual {d['fit_residual']:.1e}), max deviation from base^(-2i/d) "
                    f"{d['max_rel_deviation']:.1e}{' (formula exact)' if d['formula_exact'] else ''}")
        if self.kind in ("cos_sin_cache", "freqs_cis", "stacked_cache"):
            rounded = (f", frequencies base^(-2i/d) rounded to {d['frequencies_rounded_to']}"
                       if d.get("frequencies_rounded_to") else "")
            return (f"{self.name}  {self.kind} {self.dtype} [{shape}]: {d['exact']:,} of {d['rows']:,} rows exact "
                    f"({100 * d['exact_fraction']:.2f}%), {d['distinct']:,} distinct, {d['nonfinite']:,} non-finite, "
                    f"rotary dims {d['rotary_dim']}, {d['layout']}{rounded}")
        if self.kind == "alibi_slopes":
            return (f"{self.name}  ALiBi slopes {self.dtype} [{shape}]: {d['heads']} heads, max deviation from "
                    f"2^(-8h/H) {d['max_rel_deviation']:.1e}")
        if self.kind == "alibi_bias":
            return (f"{self.name}  ALiBi bias {self.dtype} [{shape}]: {d['exact']:,} of {d['columns']:,} distances "
                    f"exact ({100 * d['exact_fraction']:.2f}%)")
        return f"{self.name}  {self.kind} {self.dtype} [{shape}]"


@dataclass
class CheckpointAudit(Result):
    path: str
    file_format: str  # safetensors | torch | gguf
    tensor_count: int
    rotary: list[RotaryTensor]
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what was skipped or capped, and why

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "file_format": self.file_format, "tensor_count": self.tensor_count,
                "rotary": [t.to_dict() for t in self.rotary], "findings": [f.to_dict() for f in self.findings],
                "notes": list(self.notes)}
