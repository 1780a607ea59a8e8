"""``ropelaw rule CODE``: a rule's documentation; ``ropelaw rule --all`` lists them."""

from __future__ import annotations

import argparse

from ..errors import UsageError

HELP = "explain a rule (what it does, why it matters, example, fix)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", nargs="?", help="rule code (e.g. RP101) or kebab-case name; a prefix (RV01) "
                                                "lists the rules under it")
    parser.add_argument("--all", action="store_true", help="list every rule")
    parser.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    from ..findings import all_rules, get_rule
    from ._common import emit_json

    prefix = (args.code or "").strip().upper()
    family = [r for r in all_rules() if prefix and r.code.startswith(prefix) and r.code != prefix]
    if args.all or args.code is None or (family and not any(r.code == prefix for r in all_rules())):
        rules = family if family and not args.all else all_rules()  # `rule RV01`: the rules under that prefix
        if args.format == "json":
            emit_json([{"code": r.code, "name": r.name, "severity": r.severity, "summary": r.summary,
                        "default_on": r.default_on} for r in rules])
        else:
            name_w = max(len(r.name) for r in rules)
            sev_w = max(len(r.severity) for r in rules)
            for r in rules:  # columns as wide as their longest entry: names never run into severities
                print(f"{r.code}  {r.name:<{name_w}}  {r.severity:<{sev_w}}  {r.summary}")
        return 0
    try:
        rule = get_rule(args.code)
    except KeyError:
        from ..errors import did_you_mean

        hint = did_you_mean(args.code, [r.code for r in all_rules()] + [r.name for r in all_rules()])
        raise UsageError(f"unknown rule {args.code!r}{hint} (see `ropelaw rule --all`)") from None
    if args.format == "json":
        emit_json({"code": rule.code, "name": rule.name, "severity": rule.severity, "summary": rule.summary,
                   "what": rule.what, "why": rule.why, "example": rule.example, "fix": rule.fix,
                   "references": list(rule.references), "default_on": rule.default_on})
    else:
        print(rule.doc(), end="")
    return 0
