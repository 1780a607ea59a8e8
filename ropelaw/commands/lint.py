"""``ropelaw lint PATH...``: lint model and training configs for their RoPE settings.

Exit codes (ruff's): 0 clean, 1 findings, 2 bad input. A directory argument with no config
file in it (``*.json``, ``*.yaml``, ``*.yml``, ``*.toml``) is bad input too: ruff only warns when
there is nothing to check, but for a CI gate an empty target is almost always a wrong path.
A file named on the command line that cannot be read or parsed is bad input (one line on
stderr, exit 2); inside a directory scan the same problem is an RE101/RE102 finding and the
scan goes on. Files without RoPE settings are skipped in a directory scan (counted in the
summary) and are bad input when named. --train / --target / --tune above 2^31 - 1 tokens
(RV013's limit) are bad input.
"""

from __future__ import annotations

import argparse
import os
import sys

HELP = "lint config.json / YAML / TOML configs: context vs. bounds, invalid values, dtype"
DESCRIPTION = (
    "Lint model configs (Hugging Face config.json) and training configs (Megatron / NeoX YAML, TOML)\n"
    "for their RoPE settings: invalid or inconsistent values (RV), target context beyond the\n"
    "extrapolation bound or Men et al.'s base bound (RL), scheme checks (RS), position precision in\n"
    "the config's dtype (RP2xx). `ropelaw rule CODE` explains a rule.\n\n"
    "Lengths: the training length is original_max_position_embeddings when a scaling scheme is set,\n"
    "max_position_embeddings / factor for linear scaling without it, a training config's seq_length,\n"
    "else max_position_embeddings; the target is max_position_embeddings. --train / --target /\n"
    "--tune override. RP201 and RL104 are off by default (--select RP201,RL104 to enable)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..report import FORMATS
    from ._common import add_format, length

    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="config files or directories (every *.json, *.yaml, *.yml, *.toml inside)")
    parser.add_argument("--train", type=length, default=None, metavar="T",
                        help="training length (default: derived from the config, see above)")
    parser.add_argument("--target", type=length, default=None, metavar="T",
                        help="context the model must serve (default: max_position_embeddings)")
    parser.add_argument("--tune", type=length, default=None, metavar="T",
                        help="length of a tuning / context-extension run (default: none)")
    add_format(parser, FORMATS)
    parser.add_argument("--select", default=None, metavar="CODES",
                        help="comma-separated codes or prefixes to report (e.g. RL,RV001; ALL for every rule)")
    parser.add_argument("--ignore", default=None, metavar="CODES", help="comma-separated codes or prefixes to drop")
    parser.add_argument("--no-progress", action="store_true", help="never show a progress bar")


def default_select() -> list[str]:
    """Every rule that is on by default (``Rule.default_on``; RP201 and RL104 are not)."""
    from ..findings import all_rules

    return [r.code for r in all_rules() if r.default_on]


def collect(paths: list[str]) -> list[tuple[str, bool]]:
    """``(file, named)`` pairs: named files as given, directories expanded (sorted)."""
    from ..errors import UsageError
    from ..lint.loader import config_files

    out: list[tuple[str, bool]] = []
    for p in paths:
        if os.path.isdir(p):
            found = config_files(p)
            if not found:
                raise UsageError(f"no config files found in {p}")
            out.extend((f, False) for f in found)
        elif os.path.exists(p):
            out.append((p, True))
        else:
            raise UsageError(f"{p}: no such file or directory")
    return out


def lint_paths(paths: list[str], *, train=None, target=None, tune=None, progress: bool = False):
    """Lint every config under ``paths``: ``(results, file_findings, skipped)``."""
    from ..errors import UsageError
    from ..lint.check import lint_config
    from ..lint.loader import NotARopeConfig, OptionError, load_config
    from ..lint.rules.files import finding_for

    files = collect(paths)
    results, file_findings, skipped = [], [], []
    it = files
    if progress and len(files) > 1:
        from tqdm import tqdm

        it = tqdm(files, desc="lint", unit="file", file=sys.stderr, leave=False)
    for path, named in it:
        try:
            cfg = load_config(path, train=train, target=target, tune=tune)
        except OptionError:
            raise
        except NotARopeConfig as exc:
            if named:
                raise
            skipped.append((path, str(exc)))
            continue
        except UsageError as exc:
            if named:
                raise
            file_findings.append(finding_for(path, str(exc)))
            continue
        results.append(lint_config(cfg))
    return results, file_findings, skipped


def run(args: argparse.Namespace) -> int:
    from ..findings import parse_selectors, select_findings
    from ..report import exit_code, render

    select = parse_selectors(args.select, "--select")
    ignore = parse_selectors(args.ignore, "--ignore")
    from ..numfmt import count as fmt_count
    from ..limits import MAX_CONTEXT

    for flag, n in (("--train", args.train), ("--target", args.target), ("--tune", args.tune)):
        if n is not None and n > MAX_CONTEXT:
            raise ValueError(f"{flag} {fmt_count(n)} is beyond the longest context lint accepts "
                             f"(2^31 - 1 = {MAX_CONTEXT:,} tokens, see `ropelaw rule RV013`)")
    if args.tune is not None and args.train is not None and args.tune < args.train:
        raise ValueError(f"--tune {args.tune} must be >= --train {args.train}")
    progress = (not args.no_progress and args.format == "text" and sys.stderr.isatty())
    results, file_findings, skipped = lint_paths(args.paths, train=args.train, target=args.target,
                                                 tune=args.tune, progress=progress)
    sel = select if select is not None else default_select()
    findings = list(file_findings)
    for r in results:
        r.findings = select_findings(r.findings, sel, ignore)
        findings.extend(r.findings)
    findings = select_findings(findings, sel, ignore) if file_findings else findings
    checked = len(results) + len(file_findings)
    if args.format == "json":
        extra = {
            "tool": "ropelaw lint",
            "configs": [r.setup() for r in results],
            "skipped": [{"path": p, "reason": why} for p, why in skipped],
            "summary": {"configs": checked, "findings": len(findings),
                        "errors": sum(f.severity == "error" for f in findings),
                        "warnings": sum(f.severity == "warning" for f in findings),
                        "info": sum(f.severity == "info" for f in findings)},
        }
        print(render(findings, "json", extra=extra))
    elif args.format == "text":
        lines = [r.ok_line() for r in results if not r.findings]
        if skipped:
            lines.append(f"Skipped {len(skipped):,} file{'s' if len(skipped) != 1 else ''} without RoPE settings.")
        print(render(findings, "text", checked=checked, noun="config", extra_lines=lines))
    else:
        out = render(findings, args.format, checked=checked, noun="config")
        if out:
            print(out)
    return exit_code(findings)
