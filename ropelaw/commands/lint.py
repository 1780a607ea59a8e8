"""``ropelaw lint PATH...``: lint model and training configs for their RoPE settings.

Exit codes (ruff's): 0 clean, 1 findings, 2 bad input.

Files are handled the same whether named on the command line (as CI and pre-commit pass them)
or found in a directory scan (``*.json``, ``*.yaml``, ``*.yml``, ``*.toml``):

- a file that parses but holds no RoPE settings (a CI workflow, a compose file, a BERT or GPT-2
  config.json, an ALiBi model), or is not a config at all (its top level a list, as in
  ``.pre-commit-hooks.yaml``, or empty) is skipped with a one-line note ``PATH: skipped: why``, as
  ruff passes over a file it does not handle; alone it exits 0 with that note;
- a file that cannot be parsed as a config (binary, not UTF-8, malformed, over 16 MiB) is an
  RE101 / RE102 finding, and the others are still linted;
- a named file with another suffix (``README.md``) is skipped with a note;
- a shell script found by a directory scan is not read (launch scripts are read when named): one
  line says how many, and the summary line never says "All checks passed" after them;
- a Python file a framework configures its runs with (torchtitan's config registries, OLMo-core's and
  nanotron's config scripts: :mod:`ropelaw.lint.pyfiles`) is not run: a directory scan says once how many it
  did not read and what to lint instead (the summary line then never says "All checks passed"); other
  Python files are source code, not counted.

Bad input (one line on stderr, exit 2): a path that does not exist, is not a regular file or
cannot be read by this user; a directory with no config file in it (ruff only warns when there is nothing
to check, but for a CI gate an empty target is almost always a wrong path); and a command line
where nothing given could be read at all (then the first file's problem is the error). --train /
--target / --tune above 2^31 - 1 tokens (RV013's limit) are bad input.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys

from ..errors import UsageError
from ..findings import default_select
from .lint_report import UNREAD_SCRIPT, script_note  # noqa: F401  (lint_paths and the tests use them)

HELP = "lint config.json / YAML / TOML configs: context vs. bounds, invalid values, dtype"
DESCRIPTION = (
    "Lint model configs (Hugging Face config.json) and training configs (torchtitan, litgpt, torchtune,\n"
    "axolotl, MaxText, nanotron, OLMo, Megatron-LM flags and launch scripts, NeMo, llm-foundry,\n"
    "LLaMA-Factory, Levanter, GPT-NeoX)\n"
    "for their RoPE settings: invalid or inconsistent values (RV), target context beyond the\n"
    "extrapolation bound or Men et al.'s base bound (RL), scheme checks (RS), position precision in\n"
    "the config's dtype (RP2xx). `ropelaw rule CODE` explains a rule.\n\n"
    "Lengths: the training length is original_max_position_embeddings when a scaling scheme is set,\n"
    "max_position_embeddings / factor for linear scaling without it, a training config's seq_length,\n"
    "else max_position_embeddings; the target is max_position_embeddings. --train / --target /\n"
    "--tune override; --head-dim / --base / --dtype fill in only what a config and its framework lack\n"
    "(each shown as [--flag] in findings). {off} are off by default (--select {codes} to enable); informational\n"
    "findings (RL103 within the training length) are shown only when selected."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..output import add_output_arguments
    from ._common import add_rule_selection, length, number

    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="config files or directories (every *.json, *.yaml, *.yml, *.toml, *.gguf inside); "
                             "launch scripts (*.sh) and Ollama Modelfiles when named")
    parser.add_argument("--train", type=length, default=None, metavar="T",
                        help="training length (default: derived from the config, see above)")
    parser.add_argument("--target", type=length, default=None, metavar="T",
                        help="context the model must serve (default: max_position_embeddings)")
    parser.add_argument("--tune", type=length, default=None, metavar="T",
                        help="length of a tuning / context-extension run (default: none)")
    parser.add_argument("--head-dim", type=length, default=None, metavar="D",
                        help="head dim for a config that gives none (used only where the config lacks it)")
    parser.add_argument("--base", type=number, default=None, metavar="B",
                        help="RoPE base for a config that gives none and whose framework has no default")
    parser.add_argument("--dtype", default=None, metavar="DTYPE",
                        help="model dtype (bf16, fp16, fp32) for a config that gives none")
    parser.add_argument("--model-config", default=None, metavar="PATH",
                        help="config.json (or a directory holding it; litgpt: model_config.yaml) of the model a "
                             "fine-tuning config names elsewhere (base_model, model_name_or_path, checkpoint_dir)")
    add_output_arguments(parser)
    off = off_by_default()  # Rule.default_on: the rules name themselves
    parser.description = DESCRIPTION.format(off=" and ".join(off), codes=",".join(off))
    add_rule_selection(parser, default=f"every rule but {' and '.join(off)}, informational findings counted, not shown")
    from .lint_settings import add_project_arguments

    add_project_arguments(parser, "config", exclude=True)
    parser.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    parser.add_argument("--fix", action="store_true",
                        help="apply the fixes marked [*] (keys transformers was measured to ignore: removed), "
                             "in place, "
                             "atomically; the findings left are reported")
    parser.add_argument("--diff", action="store_true",
                        help="print the diff --fix would make and write nothing (exit 1 when there is one)")


def off_by_default() -> list[str]:
    """The codes of the rules reported only when selected (``Rule.default_on`` False)."""
    from ..findings import all_rules

    return [r.code for r in all_rules() if not r.default_on]


def collect(paths: list[str], unscanned: list | None = None, lazy: bool = False):
    """``(file, named)`` pairs: named files as given, directories expanded (sorted). ``lazy``: an iterator
    that walks each directory as its files are used (memory flat in their number), after the same checks.

    ``UsageError`` for a path that does not exist or that this user may not read, and for a
    directory with no config file in it (and no directory it could not enter). Other files that
    are no config (a FIFO, a device, a binary) are refused by ``read_document`` and handled as in a
    directory scan. Directories that could not be entered go to ``unscanned`` as ``(path, why)``.
    """
    from ..errors import UsageError
    from ..lint.parse import iter_config_files

    out: list = []
    for p in paths:
        if os.path.isdir(p):
            # lazy: the walk appends what it could not enter to ``unscanned`` as it goes (read it after)
            gaps: list = unscanned if lazy and unscanned is not None else []
            before = len(gaps)
            walk = iter_config_files(p, gaps, scripts=True)
            head: list = []  # shell scripts and Python files met before the first config file
            first = next(walk, None)  # a directory with nothing to check is bad input, found before any output
            while first is not None and (is_script(first) or is_python(first)):
                head.append(first)
                first = next(walk, None)
            if first is None and len(gaps) == before:
                raise UsageError(f"no config files found in {p}" + not_read_note(head))
            found = itertools.chain(head, [first] if first is not None else [], walk)
            out.append(((f, False) for f in found) if lazy else [(f, False) for f in found])
            if unscanned is not None and gaps is not unscanned:
                unscanned.extend(gaps)
            continue
        try:
            os.stat(p)
        except OSError as exc:
            if not os.path.lexists(p) or isinstance(exc, FileNotFoundError):
                raise UsageError(f"{p}: no such file or directory") from None
            raise UsageError(f"{p}: cannot read: {exc.strerror or exc}") from None
        if not os.access(p, os.R_OK):
            raise UsageError(f"{p}: cannot read: permission denied")
        out.append([(p, True)])
    return itertools.chain.from_iterable(out) if lazy else [pair for part in out for pair in part]


def is_script(path: str) -> bool:
    from ..lint.loader import SHELL_SUFFIXES

    return path.lower().endswith(SHELL_SUFFIXES)


def is_python(path: str) -> bool:
    from ..lint.pyfiles import SUFFIX

    return path.lower().endswith(SUFFIX)


def not_read_note(found: list) -> str:
    """`` (what was found and not read)`` of a directory without config files: its shell scripts and the Python
    files a framework configures runs with, or ""."""
    from ..lint.pyfiles import kind_of, summary

    said = []
    scripts = sum(map(is_script, found))
    if scripts:
        said.append(script_note(scripts))
    kinds: dict = {}
    for path in found:
        kind = kind_of(path) if is_python(path) else None
        if kind is not None:
            kinds[kind] = kinds.get(kind, 0) + 1
    if kinds:
        said.append(summary(kinds))
    return f" ({'; '.join(said)})" if said else ""


def _reason(path: str, message: str) -> str:
    return message[len(path) + 2:] if message.startswith(path + ": ") else message


def iter_lint(paths: list[str], *, train=None, target=None, tune=None, progress: bool = False,
              shown_only: bool = False, settings=None, **fill):
    """Lint every config under ``paths``, one file at a time: yields ``("result", LintResult)``,
    ``("finding", Finding)`` (RE101 / RE102 for a file that could not be read as a config, RE103
    for a directory that could not be entered), ``("skipped", (path, why))`` for files that
    parsed without RoPE settings and named files that are not config files at all,
    ``("unread", path)`` for a shell script a directory scan found (read only when named), and
    ``("unread-python", (path, kind))`` for a Python file a framework configures its runs with
    (:mod:`ropelaw.lint.pyfiles`; other Python files are passed over).

    One bad file never stops the scan: a ``UsageError`` from a file's reading (the declared bad-input
    error) is that file's RE101 / RE102; any other exception is ropelaw's own failure on that file,
    RE104 (the command exits 3 at the end; the traceback on stderr with --debug). When nothing
    given could be read and a file was named, the first problem is raised as a ``UsageError``
    (exit 2) at the end: a lone broken file is bad input, not a finding. ``settings``
    (``lint_settings.LintSettings``): each file's project configuration (its lengths and dtype where no
    flag gives them, which files a directory scan leaves out, ``shown_only`` from its rule selection).
    """
    from ..findings import Finding
    from ..lint.rules.files import DIRECTORY_NOT_SCANNED

    unscanned: list = []
    # without a progress bar the directories are walked as their files are linted (no list of 50,000 paths);
    # a bar needs the count first
    files = collect(paths, unscanned, lazy=not progress)
    said = 0  # RE103 for the directories that could not be entered, as the walk meets them

    def not_scanned():
        nonlocal said
        for path, why in unscanned[said:]:
            yield "finding", Finding.of(DIRECTORY_NOT_SCANNED, f"not scanned: {why}", path=path, line=1, column=1)
        said = len(unscanned)

    named_scripts = {os.path.realpath(p) for p in paths if is_script(p) and not os.path.isdir(p)}
    yield from not_scanned()
    read = 0  # files that parsed (linted, or skipped for holding no RoPE settings)
    first_error: UsageError | None = None
    it = files
    if progress and len(files) > 1:
        from tqdm import tqdm

        it = tqdm(files, desc="lint", unit="file", file=sys.stderr, leave=False, mininterval=0.25)
    for path, named in it:
        if said < len(unscanned):
            yield from not_scanned()
        passed = passed_over(path, named, named_scripts, settings)
        if passed is not None:
            event, error = passed
            first_error = first_error or error
            if event is not None:
                yield event
            continue
        kw = dict(train=train, target=target, tune=tune, **fill)
        only = shown_only
        if settings is not None:
            kw, only = settings.lint_kwargs(path, kw), settings.selection_for(path).default
        event, parsed, error = lint_file(path, named, kw, only, settings)
        read += parsed
        first_error = first_error or error
        yield event
    yield from not_scanned()
    if read == 0 and first_error is not None:
        raise first_error


NOT_A_CONFIG = "not a config file (expected .json, .yaml, .yml or .toml)"


def passed_over(path: str, named: bool, named_scripts: set[str],
                settings) -> tuple[tuple | None, UsageError | None] | None:
    """None when :func:`iter_lint` lints the file; else ``(the event it yields or None, the bad-input error the
    file is when nothing given could be read, or None)``: the project's excludes, shell scripts a directory
    scan found (``unread``; read only when named), Python files (a framework's: ``unread-python`` in a scan,
    skipped when named; others passed over) and named files that are not config files."""
    from ..lint.dialects.ollama import is_modelfile
    from ..lint.loader import CONFIG_SUFFIXES, GGUF_SUFFIXES, PYTHON_SUFFIXES, SHELL_SUFFIXES
    from ..lint.pyfiles import kind_of
    from ..lint.pyfiles import reason as python_reason

    if settings is not None and (not named or settings.force_exclude) and settings.excluded(path):
        return None, None  # the project's exclude: out of directory scans (and of named files with --force-exclude)
    if not named and path.lower().endswith(SHELL_SUFFIXES):
        # named as well: read there
        return (("unread", path) if os.path.realpath(path) not in named_scripts else None), None
    if is_python(path):
        kind = kind_of(path)
        if kind is not None and not named:
            return ("unread-python", (path, kind)), None
        if kind is not None:
            return ("skipped", (path, python_reason(kind))), UsageError(f"{path}: {python_reason(kind)}")
        if not named:
            return None, None
    if named and not path.lower().endswith(CONFIG_SUFFIXES + SHELL_SUFFIXES + GGUF_SUFFIXES + PYTHON_SUFFIXES) \
            and not is_modelfile(path):
        return ("skipped", (path, NOT_A_CONFIG)), UsageError(f"{path}: {NOT_A_CONFIG}")
    return None


def lint_file(path: str, named: bool, kw: dict, only, settings) -> tuple[tuple, bool, UsageError | None]:
    """``(event, parsed, bad-input error)`` of one file :func:`iter_lint` lints: ``("result", LintResult)``, or
    the finding (RV030 / RV031 for what could not be read, RE101 / RE102 for bad input, RE104 for ropelaw's own
    failure) or skip (parsed, no RoPE settings) it is; ``parsed`` when the file parsed; the error is the
    ``UsageError`` of a named file that is bad input."""
    from ..lint.check import lint_config
    from ..lint.loader import NotARopeConfig, OptionError, UnreadConfig, load_config
    from ..lint.parse import NotAConfig
    from ..lint.rules.files import finding_for
    from ..lint.rules.reading import file_finding

    try:
        cfg = load_config(path, **kw)
    except OptionError:
        raise
    except UnreadConfig as exc:  # RV030 / RV031: what could not be read is a finding, not a skip
        return ("finding", file_finding(path, exc)), True, None
    except (NotARopeConfig, NotAConfig) as exc:  # parsed: no RoPE settings, or not a mapping of settings
        return ("skipped", (path, _reason(path, str(exc)))), True, None
    except UsageError as exc:  # the file is bad input, said as such by the reader
        return ("finding", finding_for(path, str(exc))), False, exc if named else None
    except Exception as exc:  # noqa: BLE001 - anything else is ropelaw's failure on this file: RE104, exit 3
        return ("finding", internal_failure(path, exc)), False, None
    if settings is not None:
        cfg = settings.relabel(path, cfg)
    return ("result", lint_config(cfg, shown_only=only)), True, None


def internal_failure(path: str, exc: BaseException):
    """RE104 for ``exc`` raised on ``path``; its traceback on stderr when debugging (--debug, ROPELAW_DEBUG=1)."""
    from ..errors import debugging
    from ..lint.rules.files import internal_finding

    if debugging():
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    return internal_finding(path, exc)


def lint_paths(paths: list[str], *, train=None, target=None, tune=None, progress: bool = False, **fill):
    """Lint every config under ``paths``: ``(results, file_findings, skipped)`` (:func:`iter_lint`, as lists;
    a shell script a directory scan did not read is in ``skipped``, with the reason)."""
    results: list = []
    file_findings: list = []
    skipped: list = []
    for kind, item in iter_lint(paths, train=train, target=target, tune=tune, progress=progress, **fill):
        if kind == "unread":
            kind, item = "skipped", (item, UNREAD_SCRIPT)
        if kind == "unread-python":
            from ..lint.pyfiles import reason

            kind, item = "skipped", (item[0], reason(item[1]))
        {"result": results, "finding": file_findings, "skipped": skipped}[kind].append(item)
    return results, file_findings, skipped


def check_flags(args: argparse.Namespace) -> None:
    """The flags' values, before anything is read (``UsageError``, exit 2)."""
    from ..limits import MAX_CONTEXT
    from ..numfmt import count as fmt_count

    for flag, n in (("--train", args.train), ("--target", args.target), ("--tune", args.tune)):
        if n is not None and n > MAX_CONTEXT:
            raise UsageError(f"{flag} {fmt_count(n)} is beyond the longest context lint accepts "
                             f"(2^31 - 1 = {MAX_CONTEXT:,} tokens, see `ropelaw rule RV013`)")
    if args.tune is not None and args.train is not None and args.tune < args.train:
        raise UsageError(f"--tune {args.tune} must be >= --train {args.train}")
    if args.base is not None and args.base <= 1:
        raise UsageError(f"--base {args.base:g} must be > 1")
    if args.dtype is not None:
        from ..formats import get_format

        get_format(args.dtype)  # UsageError names the known formats
    if args.model_config is not None:
        from ..lint.resolve import check_model_config_path

        check_model_config_path(args.model_config)  # UsageError: exit 2


def settings_of(args: argparse.Namespace):
    """Each file's settings (``lint_settings.LintSettings``): its project configuration, then the flags."""
    from ..findings import all_rules
    from .lint_settings import LintSettings

    return LintSettings(args, [r.code for r in all_rules()], default_select())


def run(args: argparse.Namespace) -> int:
    from ..output import exit_status, opened, prepare
    from .lint_report import LintReport

    check_flags(args)
    settings = settings_of(args)
    out = prepare(args, default=settings.output_format() or "full")
    if args.show_settings:
        from .lint_settings import show_settings

        return show_settings(settings, args.paths)
    progress = not args.no_progress and out.text and not out.silent and sys.stderr.isatty()
    from .lint_fix import Fixer

    fixer = Fixer(write=not args.diff) if args.fix or args.diff else None
    if args.diff:
        with opened(out) as stream:  # --output-file: the diff goes there (atomically), as a report does
            return diff_only(args, settings, fixer, progress, stream)
    with opened(out) as stream:
        report = LintReport(out, stream, fixer=fixer)
        try:
            # one config at a time: a result is reduced to its findings and its ok line (or, for json,
            # written out) before the next is read, so memory does not grow with the number of configs
            for kind, item in iter_lint(args.paths, train=args.train, target=args.target, tune=args.tune,
                                        progress=progress, head_dim=args.head_dim, base=args.base, dtype=args.dtype,
                                        model_config=args.model_config, settings=settings):
                if kind == "result":
                    report.add_result(fixed(item, args, settings, fixer), settings.selection_for(item.path))
                elif kind == "finding":
                    report.add_file_finding(item, settings.selection_for(item.path))
                else:
                    {"skipped": report.skipped, "unread": report.scripts,
                     "unread-python": report.python}[kind].append(item)
            report.write()
        finally:
            report.close()
    return exit_status(report.exit_code(), out)


def fixed(r, args: argparse.Namespace, settings, fixer):
    """Result ``r`` with its fixes said on its findings (``[*]``) and, under --fix / --diff, applied."""
    from ..lint.fixes import with_fix

    if fixer is not None:
        kw = dict(train=args.train, target=args.target, tune=args.tune, head_dim=args.head_dim, base=args.base,
                  dtype=args.dtype, model_config=args.model_config)
        r = fixer.fix(r, settings.lint_kwargs(r.path, kw), settings.selection_for(r.path), settings.relabel)
    r.findings = with_fix(r.config, r.findings)
    return r


def diff_only(args: argparse.Namespace, settings, fixer, progress: bool, stream=None) -> int:
    """``--diff``: the unified diff of every fix on ``stream`` (standard output, or ``--output-file``'s spool:
    ``output.opened``), what would be fixed on stderr; exit 1 when there is a diff (as ruff's ``--diff``), else 0;
    no config written."""
    for kind, item in iter_lint(args.paths, train=args.train, target=args.target, tune=args.tune, progress=progress,
                                head_dim=args.head_dim, base=args.base, dtype=args.dtype,
                                model_config=args.model_config, settings=settings):
        if kind == "result":
            fixed(item, args, settings, fixer)
    from ..escape import clean

    stream = sys.stdout if stream is None else stream
    for d in fixer.diffs:
        stream.write("".join(clean(line.rstrip("\r\n")) + "\n" for line in d.splitlines(keepends=True)))
    for line in fixer.tail() or ["No fixes available."]:
        print(clean(line), file=sys.stderr)
    return 1 if fixer.diffs else 0
