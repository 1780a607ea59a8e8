"""The check every edit of ``ropelaw plan`` passes before the plan shows it (``ropelaw plan`` and
``ropelaw.explore()`` run it; ``commands/plan_apply.py`` writes what passed).

Each option's edit is applied to the one read of the config the plan was made from
(``writers.apply_edit``), read back by the loader and linted at the target (``ropelaw lint``, default
rules) before the plan shows it (:func:`verify`): an edit whose file would read as another setup than the
option's, or would fail lint with an error the original file does not have (a key the runtime refuses, a
length past a table), is refused with that reason, so what the plan lists as writable is what ``--apply``
writes. One error is stated instead (:func:`lint_reading`): RL101 where lint reads the edited file's base as
the pretraining base (a run from scratch, ``lint.check``'s assumption) and the plan's bound holds for the
weights pre-trained at the original base, a fact no key of the file states; the statement is checked by
giving lint's own reading of the file that fact (the bound must then reach the target), else refused.
"""

from __future__ import annotations

import math

import dataclasses
from collections import Counter
from typing import Any

__all__ = ["lint_findings", "WEIGHTS", "lint_reading", "verify", "check_edits"]


def lint_findings(path: str, text: str, target: int, tune: int | None) -> list[dict[str, Any]]:
    """The findings ``ropelaw lint --target TARGET`` reports on ``text`` (default rules, not informational),
    as ``{"code", "severity", "message"}``."""
    from .findings import default_select, select_findings
    from .lint.check import lint_config
    from .lint.loader import load_text

    cfg = load_text(path, text, target=target, tune=tune)
    found = select_findings(lint_config(cfg).findings, default_select(), None)
    return [{"code": f.code, "severity": f.severity, "message": f.message} for f in found if f.severity != "info"]


def _reads_as(option: Any, spec: Any) -> str | None:
    """Why the edited file's setup (``spec``, read back by the loader) is not the option's, or None."""
    want = option.spec
    scheme = "default" if option.name in ("base", "ntk") else want.scheme  # train keeps the current scheme
    wrong = []
    if spec.scheme != scheme:
        wrong.append(f"scheme {spec.scheme} (the option's: {scheme})")
    # equal to 1e-9 relative, not bit for bit: a base written for an odd rotary count is read back through
    # base^((r+1)/r) (lint/table.py odd_dims; the writer writes the power to 12 significant figures). Every option:
    # one that keeps the base (linear, yarn, ...) must read back at it too (an axolotl override that wrote the
    # effective base as the model's read back at base^((r+1)/r) twice over, unchecked)
    if not math.isclose(spec.base, want.base, rel_tol=1e-9):
        wrong.append(f"base {spec.base:g} (the option's: {want.base:g})")
    factor = want.param("factor")
    if option.name not in ("base", "ntk", "train") and factor is not None and spec.param("factor") != factor:
        wrong.append(f"factor {spec.param('factor')} (the option's: {factor:g})")
    return "; ".join(wrong) or None


# where each framework's run starts from existing weights (the fact lint cannot read from the file)
WEIGHTS = {"megatron": "Megatron-LM: --pretrained-checkpoint or --load", "maxtext": "MaxText: load_parameters_path",
           "litgpt": "litgpt pretrain: initial_checkpoint_dir", "hf": "continued training of this checkpoint"}


def lint_reading(option: Any, seen: Any, target: int) -> str | None:
    """Why ``ropelaw lint`` of the edited file (``back``, read by the loader) reports RL101 where the plan
    says ``option`` reaches ``target`` (``seen``: the edited file's spec as the loader reads it), or None when
    that is not the reason (the edit is then incomplete).

    Lint reads a file's base as its pretraining base and only the lengths the file states
    (``lint.check``: trained from scratch with the config's base). The plan's bound for a raised base is
    Liu et al.'s for weights pre-trained at the original base and continued at the new one (Theorem 2),
    tuned at ``tune_len`` where the option says so. The reason holds when lint's own reading of the
    file, given those two facts, reaches the target (``reach.reaches``, the decision lint makes)."""
    from .numfmt import count, short
    from .reach import reaches

    want = option.spec
    given = dataclasses.replace(seen, pretrain_base=want.pretrain_base,
                                tune_len=want.tune_len if want.tune_len and want.tune_len > seen.train_len else None)
    if given == seen or not reaches(given, target)[0]:
        return None
    lint_bound = reaches(seen, target)[1].extrapolation_bound
    bound = reaches(given, target)[1].extrapolation_bound
    tuned = f" and tuned at {count(given.tune_len)} tokens" if given.tune_len else ""
    flags = f" --tune {given.tune_len}" if given.tune_len else ""
    start = WEIGHTS.get(option.edit.dialect, "those weights")
    return (f"`ropelaw lint` of the edited file reports RL101 (bound {count(round(lint_bound))}): it reads base "
            f"{short(seen.base)} as the pretraining base, a run from scratch at {count(seen.train_len)} tokens; the "
            f"plan's bound {count(round(bound))} is for weights pre-trained at base "
            f"{short(want.pretrain_base)}{tuned}, "
            f"continued at {short(seen.base)} (ropelaw bound --d {seen.d} --train {seen.train_len} --pretrain-base "
            f"{_flag(want.pretrain_base)} --base {_flag(seen.base)}{flags}), which no key of this file states: "
            "the run must "
            f"start from those weights ({start})")


def _flag(x: float) -> str:
    """A base as a command line takes it: 1.7e6, 10000."""
    return f"{x:g}".replace("e+0", "e").replace("e+", "e")


def verify(option: Any, cfg: Any, text: str, target: int, tune: int | None, before: Counter,
           where: str | None = None) -> tuple[Any, list, str | None]:
    """``(Applied, lint findings, refusal)`` for ``option``'s edit of ``text``, read as the file ``where``
    (the output: a file that names others by relative path reads them from its own folder): refused when
    the edited file reads as another setup or fails lint with an error the original does not have
    (``before``: the original's error codes at the target)."""
    from .errors import UsageError
    from .lint.loader import load_text
    from .lint.writers import apply_edit

    try:
        result = apply_edit(text, cfg.fmt, option.edit, cfg.path)
        back = load_text(where or cfg.path, result.text, target=target, tune=tune).spec(0)
    except (UsageError, ValueError) as exc:
        return None, [], f"the edited file cannot be written or read back ({exc})"
    other = _reads_as(option, back)
    if other:
        return result, [], f"the edited file would read as another setup: {other}"
    found = lint_findings(where or cfg.path, result.text, target, tune)
    new = Counter(f["code"] for f in found if f["severity"] == "error" and f["code"] != "RL101") - before
    reach = [f for f in found if f["code"] == "RL101" and f["severity"] == "error"]
    if reach and option.reaches:  # lint says the edited file does not reach what the plan says it reaches
        said = lint_reading(option, back, target)
        if said is None:
            new["RL101"] = 1
        else:
            option.edit.stated["RL101"] = said
            result = dataclasses.replace(result, notes=result.notes + (said,))
    if new:
        first = next(f for f in found if f["code"] in new)
        return result, found, (f"the edited file would fail `ropelaw lint` with {', '.join(sorted(new))}, "
                               "which the file "
                               f"does not have now: {first['code']} {first['message']}")
    return result, found, None


def check_edits(p: Any, cfg: Any, text: str, tune: int | None, where: str | None = None) -> dict:
    """Verify every option's edit (:func:`verify`, read as the file ``where``: ``-o OUT``, else the config);
    a failing one becomes ``Edit.refused``. Returns ``{name: (Applied, findings)}`` for those that pass."""
    before = Counter(f["code"] for f in lint_findings(cfg.path, text, p.target, tune)
                     if f["severity"] == "error" and f["code"] != "RL101")  # RL101 is decided per edit (verify)
    out = {}
    for o in p.options:
        if o.edit is None or o.edit.refused:
            continue
        result, found, why = verify(o, cfg, text, p.target, tune, before, where)
        if why:
            o.edit.refused = why
        else:
            out[o.name] = (result, found)
    return out
