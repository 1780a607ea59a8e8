"""``ropelaw plan --apply NAME``: the option's edit as a reviewable change.

Every edit the plan lists was checked before (``ropelaw.plan_check``: applied, read back and linted); ``--apply``
prints the unified diff of the keys it changed and what lint says of the edited file, and writes it
atomically to ``-o OUT`` (``safeio.write_atomic``) unless ``--dry-run``.
"""

from __future__ import annotations

import argparse
from typing import Any


def applied(args: argparse.Namespace, p: Any, dialect: str, text: str, checked: dict) -> dict[str, Any]:
    """Apply ``args.apply`` of plan ``p`` (already verified: ``checked``); write unless ``--dry-run``.
    Returns the JSON ``applied`` object. ``UsageError`` (exit 2) for a refused edit or an unknown option."""
    from ..errors import UsageError, did_you_mean
    from ..lint.writers import WRITERS, unified_diff

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
    from ..escape import clean  # a newline in a file name would break the diff header into a forged line

    diff = unified_diff(text, result.text, clean(args.config), clean(out), n=1)
    if not args.dry_run:
        from ..safeio import write_atomic

        write_atomic(args.output, result.text)
    notes = list(result.notes) + ([option.extra["rounding"]] if option.extra.get("rounding") else [])
    return {"option": args.apply, "output": args.output, "written": not args.dry_run, "dialect": dialect,
            "diff": diff, "notes": notes, "lint": findings}


def render(a: dict[str, Any], target: int) -> str:
    """The diff, then one line of what was done and what lint says of the edited file, then the notes."""
    from ..numfmt import count

    # one printed line per diff line, its line ending (a CRLF file's "\r\n") dropped; any other control
    # character inside a line is escaped below
    lines = ([ln.removesuffix("\r") for ln in a["diff"].rstrip("\n").split("\n")] if a["diff"]
             else ["(no change: the file already states the option)"])
    where = a["output"] if a["written"] else "nothing written (--dry-run)"
    lint = ("lint of the edited file at " + count(target) + " tokens: "
            + ("no findings" if not a["lint"] else f"{len(a['lint'])} finding(s)"))
    lines.append(f"{'wrote ' + where if a['written'] else where}: option {a['option']} ({a['dialect']} keys); {lint}")
    for f in a["lint"]:
        lines.append(f"  {f['code']} {f['severity']}: {f['message']}")
    for n in a["notes"]:
        lines.append(f"  note: {n}")
    from ..escape import clean  # paths, keys and values from the command line and the file: one line each, escaped

    return "\n".join(clean(line) for line in lines)
