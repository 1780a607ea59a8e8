"""``ropelaw plan --apply NAME``: the option's edit as a reviewable change, and the check every edit passes.

Each option's edit is applied to the one read of the config the plan was made from
(``writers.apply_edit``), read back by the loader and linted at the target (``ropelaw lint``, default
rules) before the plan shows it (:func:`verify`): an edit whose file would read as another setup than the
option's, or would fail lint with an error the original file does not have (a key the runtime refuses, a
length past a table), is refused with that reason, so what the plan lists as writable is what ``--apply``
writes. ``--apply`` then prints the unified diff of the keys it changed and what lint says of the edited
file, and writes it atomically to ``-o OUT`` (``safeio.write_atomic``) unless ``--dry-run``.
"""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any


def lint_findings(path: str, text: str, target: int, tune: int | None) -> list[dict[str, Any]]:
    """The findings ``ropelaw lint --target TARGET`` reports on ``text`` (default rules, not informational),
    as ``{"code", "severity", "message"}``."""
    from ..findings import select_findings
    from ..lint.check import lint_config
    from ..lint.loader import load_text
    from .lint import default_select

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
    if option.name in ("base", "ntk") or option.parameters.get("base") is not None:
        if spec.base != want.base:
            wrong.append(f"base {spec.base:g} (the option's: {want.base:g})")
    factor = want.param("factor")
    if option.name not in ("base", "ntk", "train") and factor is not None and spec.param("factor") != factor:
        wrong.append(f"factor {spec.param('factor')} (the option's: {factor:g})")
    return "; ".join(wrong) or None


def verify(option: Any, cfg: Any, text: str, target: int, tune: int | None, before: Counter,
           where: str | None = None) -> tuple[Any, list, str | None]:
    """``(Applied, lint findings, refusal)`` for ``option``'s edit of ``text``, read as the file ``where``
    (the output: a file that names others by relative path reads them from its own folder): refused when
    the edited file reads as another setup or fails lint with an error the original does not have
    (``before``: the original's error codes at the target)."""
    from ..errors import UsageError
    from ..lint.loader import load_text
    from ..lint.writers import apply_edit

    try:
        result = apply_edit(text, cfg.fmt, option.edit, cfg.path)
        back = load_text(where or cfg.path, result.text, target=target, tune=tune).spec(0)
    except (UsageError, ValueError) as exc:
        return None, [], f"the edited file cannot be written or read back ({exc})"
    other = _reads_as(option, back)
    if other:
        return result, [], f"the edited file would read as another setup: {other}"
    found = lint_findings(where or cfg.path, result.text, target, tune)
    new = Counter(f["code"] for f in found if f["severity"] == "error") - before
    if new:
        first = next(f for f in found if f["code"] in new)
        return result, found, (f"the edited file would fail `ropelaw lint` with {', '.join(sorted(new))}, which the file "
                               f"does not have now: {first['code']} {first['message']}")
    return result, found, None


def check_edits(p: Any, cfg: Any, text: str, tune: int | None, where: str | None = None) -> dict:
    """Verify every option's edit (:func:`verify`, read as the file ``where``: ``-o OUT``, else the config);
    a failing one becomes ``Edit.refused``. Returns ``{name: (Applied, findings)}`` for those that pass."""
    before = Counter(f["code"] for f in lint_findings(cfg.path, text, p.target, tune) if f["severity"] == "error")
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


def applied(args: argparse.Namespace, p: Any, dialect: str, text: str, checked: dict) -> dict[str, Any]:
    """Apply ``args.apply`` of plan ``p`` (already verified: ``checked``); write unless ``--dry-run``.
    Returns the JSON ``applied`` object. ``UsageError`` (exit 2) for a refused edit or an unknown option."""
    import difflib

    from ..errors import UsageError, did_you_mean
    from ..lint.writers import WRITERS

    names = [o.name for o in p.options]
    if args.apply not in names:
        raise UsageError(f"--apply {args.apply!r}: no such option in this plan (options: {', '.join(names)})"
                         f"{did_you_mean(args.apply, names)}")
    if dialect not in WRITERS:
        raise UsageError(f"--apply: ropelaw has no writer for {dialect} configs (writers: {', '.join(WRITERS)})")
    option = p.option(args.apply)
    if option.edit is None or option.edit.refused or args.apply not in checked:
        why = option.edit.refused if option.edit is not None else "no edit"
        raise UsageError(f"--apply {args.apply}: {why}")
    result, findings = checked[args.apply]
    out = args.output or args.config
    diff = "".join(difflib.unified_diff(text.splitlines(keepends=True), result.text.splitlines(keepends=True),
                                        fromfile=args.config, tofile=out, n=1))
    if not args.dry_run:
        from ..safeio import write_atomic

        write_atomic(args.output, result.text)
    notes = list(result.notes) + ([option.extra["rounding"]] if option.extra.get("rounding") else [])
    if option.spec.pretrain_base != option.spec.base and any(f["code"] in ("RL101", "RL102") for f in findings):
        notes.append(f"lint reads the file's base as the pretraining base (no key states that the model was pre-trained "
                     f"at {option.spec.pretrain_base:g}): its bound is that of a model pre-trained at {option.spec.base:g}; "
                     f"the plan's is Liu et al.'s for one pre-trained at {option.spec.pretrain_base:g} and trained on at "
                     f"{option.spec.base:g} (ropelaw bound --pretrain-base {option.spec.pretrain_base:g} "
                     f"--base {option.spec.base:g})")
    return {"option": args.apply, "output": args.output, "written": not args.dry_run, "dialect": dialect,
            "diff": diff, "notes": notes, "lint": findings}


def render(a: dict[str, Any], target: int) -> str:
    """The diff, then one line of what was done and what lint says of the edited file, then the notes."""
    from ..numfmt import count

    lines = [a["diff"].rstrip("\n")] if a["diff"] else ["(no change: the file already states the option)"]
    where = a["output"] if a["written"] else "nothing written (--dry-run)"
    lint = ("lint of the edited file at " + count(target) + " tokens: "
            + ("no findings" if not a["lint"] else f"{len(a['lint'])} finding(s)"))
    lines.append(f"{'wrote ' + where if a['written'] else where}: option {a['option']} ({a['dialect']} keys); {lint}")
    for f in a["lint"]:
        lines.append(f"  {f['code']} {f['severity']}: {f['message']}")
    for n in a["notes"]:
        lines.append(f"  note: {n}")
    return "\n".join(lines)
