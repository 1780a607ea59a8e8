"""RP2xx: precision of position ids implied by a config's dtype (``ropelaw lint``).

Both rules assume the positions (and the angles ``position * theta``) are computed in the
model's dtype, which is what happens when model code builds them from a buffer or tensor
that ``model.to(dtype)`` converted (seed 004, Baichuan's bf16 position collisions);
transformers' own rotary classes compute them in float32, so on those models the risk is in
custom code. Counts come from ``formats.exact_positions`` (closed form, exact).

RP201 is **off by default** (``default_on=False`` in its definition; every bf16 config would
carry it): enable it with ``--select RP201`` (or ``--select RP`` / ``ALL``). RP202 is on, except for a
Hugging Face config of an architecture whose rotary code ropelaw's runtime audit ran in the transformers
version the loader follows (:data:`AUDITED_FLOAT32`): there positions and angles were measured exact in
fp16 and bf16 up to 131,072 tokens under a cast, a default dtype and autocast, so an overflow "if computed
in the model dtype" does not happen (the risk is custom code: ``ropelaw audit code``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...findings import Finding, define_rule
from ...numfmt import count as fmt_count
from ..model import LoadedConfig

if TYPE_CHECKING:
    from ..check import Linting

SEED = "Baichuan (seed 004): bf16 position ids collide past 256, RoPE loses relative positions"

INEXACT = define_rule(
    "RP201", "positions-inexact-in-dtype", "info",
    "position ids at the target context are not all exact in the config's dtype",
    what="With the config's dtype (torch_dtype / dtype / precision), counts how many of the positions "
         "0 .. target-1 the format represents exactly, the first inexact one and the spacing at the end.",
    why="If model code computes positions or angles in bf16/fp16, neighbouring positions collapse onto one "
        "value (bf16 is exact only to 256): relative positions are lost and attention degrades with length.",
    example='{"torch_dtype": "bfloat16", "max_position_embeddings": 8192}',
    fix="Compute positions and angles in float32: torch.arange(n, dtype=torch.int64).float() and an fp32 "
        "inv_freq, then cast cos/sin to the model dtype.",
    references=(SEED, "IEEE 754-2019 binary16; bfloat16 (Google Brain float)"),
    default_on=False,  # informational, and it would flag nearly every real bf16 config
)
OVERFLOW = define_rule(
    "RP202", "positions-overflow-in-dtype", "error",
    "position ids at the target context overflow the config's dtype",
    what="Flags a dtype whose largest finite value is below the last position (fp16: 65504; positions from "
         "65520 round to inf), counting the positions that overflow. Not reported for a Hugging Face config of an "
         "architecture whose transformers rotary code ropelaw's runtime audit measured computing positions in "
         "float32 (llama, mistral, mixtral, gpt_neox, falcon, qwen2, gemma, phi3 in transformers 4.57.1 and "
         "5.23.0, fp16 up to 131,072 tokens: audits/reports/).",
    why="An infinite position gives NaN angles: every attention score that uses it becomes NaN.",
    example='{"torch_dtype": "float16", "max_position_embeddings": 131072}',
    fix="Compute positions in float32 (or int64), never in fp16.",
    references=(SEED, "IEEE 754-2019 binary16: largest finite 65504"),
)


# transformers version -> the model types whose rotary embedding ropelaw's runtime audit ran (``ropelaw audit
# hf MODEL --scenario all`` at fp16 and bf16, 8,192 / 32,768 / 131,072 tokens): every position exact in every
# scenario. Source: audits/reports/transformers-<version>.json (``hf_models``, results); tests/test_plan.py
# checks this table against those reports.
AUDITED_FLOAT32: dict[str, tuple[str, ...]] = {
    "4.57.1": ("falcon", "gemma", "gpt_neox", "llama", "mistral", "mixtral", "phi3", "qwen2"),
    "5.23.0": ("falcon", "gemma", "gpt_neox", "llama", "mistral", "mixtral", "phi3", "qwen2"),
}


def audited_float32(cfg: LoadedConfig) -> str | None:
    """``"transformers 4.57.1"`` when the config runs transformers' own rotary code of an audited
    architecture (positions measured in float32), else None."""
    sem = cfg.semantics or ""
    version = sem.split()[-1] if sem.startswith("transformers ") else None
    if cfg.kind != "hf" or version is None or cfg.arch not in AUDITED_FLOAT32.get(version, ()):
        return None
    return sem


def dtype_format(raw):
    from ...formats import get_format

    if isinstance(raw, int) and not isinstance(raw, bool):
        raw = {16: "fp16", 32: "fp32"}.get(raw)  # NeMo / Lightning precision: 16, 32
    if not isinstance(raw, str):
        return None
    name = raw.strip().lower()
    if not name or name in ("auto", "none") or "mixed" in name:
        return None  # "auto": the checkpoint decides; mixed precision keeps fp32 master weights
    name = {"16": "fp16", "32": "fp32", "bf16-true": "bf16", "16-true": "fp16"}.get(name, name)
    try:
        return get_format(name)
    except (ValueError, KeyError):
        return None


def check(lt: Linting) -> list[Finding]:
    if lt.bad_lengths:  # a length not usable: no dtype finding computed on it
        return []
    cfg = lt.cfg
    from ...formats import exact_positions

    v = cfg.dtype
    if v is None:
        return []
    fmt = dtype_format(v.raw)
    target = cfg.target.number()
    if fmt is None or target is None or target != int(target) or target < 1:
        return []
    n = int(target)
    counts = exact_positions(fmt, n)
    out = []
    from ..sources import Sources

    src = Sources()  # the message names each value by its key; where it came from, in full: the finding's sources
    where, dtype_where = src(cfg.target.where), src(v.where)
    if counts.exact < n:
        end = (f", spacing {fmt_count(counts.spacing_at_end)} at {fmt_count(n - 1)}"
               if counts.spacing_at_end is not None else "")
        out.append(Finding.of(
            INEXACT,
            f"position ids in {counts.dtype} are exact for {100 * counts.exact_fraction:.1f}% "
            f"({fmt_count(counts.exact)} of {fmt_count(n)} positions, target [{where}]; first inexact "
            f"{fmt_count(counts.first_inexact)}{end}) if computed in the model dtype [{dtype_where}]",
            path=cfg.path, line=v.line, column=v.column, sources=src.full,
            dtype=counts.dtype, length=n, exact=counts.exact, exact_fraction=counts.exact_fraction,
            first_inexact=counts.first_inexact,
        ))
    if counts.overflow_from is not None and audited_float32(cfg) is None:
        out.append(Finding.of(
            OVERFLOW,
            f"position ids in {counts.dtype} overflow from {fmt_count(counts.overflow_from)} on: "
            f"{fmt_count(counts.overflow_count)} of {fmt_count(n)} positions (target [{where}]) become "
            f"{'inf' if fmt.has_inf else 'NaN'} if computed in the model dtype [{dtype_where}] (largest finite "
            f"{fmt_count(fmt.max_finite)})",
            path=cfg.path, line=v.line, column=v.column, sources=src.full,
            dtype=counts.dtype, length=n, overflow_from=counts.overflow_from, overflow_count=counts.overflow_count,
        ))
    return out
