"""Files in, findings out: decoding, parsing within limits (RE001-RE005), the deep-stack thread,
``# noqa``, the note on frameworks the scan does not model (RP117), directories walked."""

from __future__ import annotations

import ast
import io
import itertools
import os
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable, Sequence

from ...errors import UsageError
from ...findings import Finding, select_findings
from ..rules import static_defaults as DF
from ..rules import static_io as IO
from .checker import DEFAULT_LENGTH, Checker
from .names import NOQA, TRIGGERS


@dataclass
class ScanResult:
    findings: list[Finding]
    files: int  # files checked (including those reported as unreadable)


def _noqa_filter(findings: list[Finding], lines: list[str]) -> list[Finding]:
    out = []
    for f in findings:
        text = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
        m = NOQA.search(text) if "#" in text else None
        if m is None:
            out.append(f)
            continue
        codes = m.group("codes")
        if codes is None:
            continue  # bare noqa: everything on the line
        if f.code.upper() not in {c.strip().upper() for c in codes.split(",")}:
            out.append(f)
    return out


# Names and numbers (runs of [A-Za-z0-9_]) a file may hold to be parsed: Python's syntax tree takes
# about 1 KB per node (2 GB for a 4 MB list of 2 million numbers) and real code has 1.2-1.6 nodes per
# word and 11 bytes per word (transformers 4.57.1's largest modeling files: 13,000-18,000 words), so
# 400,000 words (a 4 MiB file of real code) stays near 600 MB. Counted in C before parsing.
MAX_AST_WORDS = 400_000
_WORD = re.compile(r"[A-Za-z0-9_]+")

MAX_FILE_BYTES = 4 * 1024 * 1024
"""Default per-file size limit of ``audit code`` (``--max-file-size``): the AST of Python source
takes ~150 bytes of memory per source byte, so 4 MiB stays well under 1 GB; the largest
modeling file of transformers is ~0.3 MB. A larger file is reported as RE004, not read."""

# Deep expressions (a 2,900-term sum is a 2,900-deep left-nested BinOp) are walked in a thread
# with a large stack and a raised recursion limit; beyond it the file is reported as RE004.
_DEEP_RECURSION = 40_000
_DEEP_STACK = 512 * 1024 * 1024  # virtual: only the pages a deep walk touches become memory


def _run_deep(fn):
    """``fn()`` in a thread whose stack and recursion limit fit deeply nested ASTs."""
    import threading

    if threading.current_thread().name == "ropelaw-ast":
        return fn()  # already on the deep stack (scan_paths runs every file there)
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc

    old_limit = sys.getrecursionlimit()
    try:
        old_stack = threading.stack_size(_DEEP_STACK)
    except (ValueError, RuntimeError):  # platform without adjustable stacks: run in place
        return fn()
    try:
        sys.setrecursionlimit(max(old_limit, _DEEP_RECURSION))
        t = threading.Thread(target=target, name="ropelaw-ast", daemon=True)  # ^C in join() ends ropelaw
        t.start()
        t.join()
    finally:
        threading.stack_size(old_stack)
        sys.setrecursionlimit(old_limit)
    if "error" in box:
        raise box["error"]
    return box["value"]


# frameworks whose dtype rules the scan does not model (it follows torch's): module -> what to call it
_OTHER_FRAMEWORKS = {"keras": "keras (keras.ops)", "keras_nlp": "keras-nlp (keras.ops)",
                     "keras_hub": "keras-hub (keras.ops)",
                     "keras_core": "keras-core (keras.ops)", "tf_keras": "tf-keras", "jax": "jax (jax.numpy)",
                     "flax": "flax (jax.numpy)", "mlx": "mlx (mlx.core)", "tensorflow": "TensorFlow",
                     "paddle": "paddle"}
# identifiers that say a file holds rotary or ALiBi code (read from the syntax tree: names, attributes,
# functions, classes, arguments; not comments, docstrings or strings): `rotary` / `rope` / `alibi` /
# `xpos` as a word of the name (rotary_emb, TFRotaryEmbedding, apply_rope, LlamaRopeScaling, RoPE,
# build_alibi_tensor; not property or europe), rotary's own helpers (rotate_half, rotate_every_two,
# freqs_cis). `inv_freq` alone is not one: Transformer-XL, XLNet and Funnel name their sinusoidal
# relative encodings' frequencies so.
_ROTARY_WORDS = frozenset({"rotary", "rope", "alibi", "xpos"})
_ROTARY_IDENT = re.compile(r"(?i:freqs_cis|rotate_half|rotate_every_two)|RoPE|XPos")
_WORD_BREAK = re.compile(r"_+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _identifiers(node: ast.AST) -> Iterable[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, (ast.arg, ast.keyword)) and node.arg:  # a keyword of `**kwargs` has none
        yield node.arg


def _rotary_identifier(tree: ast.AST) -> str:
    """The first identifier of the tree that marks rotary / ALiBi code ("" if none). Settings handed on are
    not code: an upper-case constant (``DEFAULT_ROPE_BASE_FREQUENCY``) or a keyword argument's name
    (``rope_base_frequency=...``) does not count (gemma 3.3.0's ``gm/nn/_config.py`` and ``_transformer.py``
    only pass Gemma's RoPE settings to the modules that apply them)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword):
            continue
        for name in _identifiers(node):
            if name.isupper():
                continue
            if _ROTARY_IDENT.search(name) or any(w.lower() in _ROTARY_WORDS for w in _WORD_BREAK.split(name)):
                return name
    return ""


def _module_level_import(tree: ast.Module) -> tuple[ast.stmt, str] | None:
    """The first import of a framework the scan does not model that runs when the module is imported (at
    module level, also under ``if`` / ``try`` / ``with``; not inside a function or class: transformers'
    torch models import TensorFlow only inside ``load_tf_weights_in_*``)."""
    todo = list(reversed(tree.body))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if node.module and node.level == 0 else [])
            mod = next((m for m in mods if m.split(".")[0] in _OTHER_FRAMEWORKS), None)
            if mod is not None:
                return node, mod
        elif isinstance(node, (ast.If, ast.Try, ast.TryStar, ast.With, ast.For, ast.While)):
            inner = [*node.body, *getattr(node, "orelse", ()), *getattr(node, "finalbody", ()),
                     *(s for h in getattr(node, "handlers", ()) for s in h.body)]
            todo.extend(reversed(inner))
    return None


def _framework_note(tree: ast.Module, text: str, path: str) -> list[Finding]:
    """RP117 (info) once per file that imports, at module level, a framework the scan does not analyse and
    holds rotary or ALiBi code (an identifier says so: :data:`_ROTARY_WORDS`), at the first such import. A
    file of other position code (learned or absolute position embeddings) gets no note: on transformers
    4.57.1's tree the former test (any mention of "position" and an import anywhere) noted 159 files, 11
    of them rotary or ALiBi (TF / Flax Llama, Mistral, Gemma, GPT-J, ESM, IDEFICS, RoFormer, Flax BLOOM);
    this one notes those 11."""
    first = _module_level_import(tree)
    if first is None:
        return []
    rotary = _rotary_identifier(tree)
    if not rotary:
        return []
    node, mod = first
    top = mod.split(".")[0]
    return [Finding.of(
        DF.FRAMEWORK_NOT_ANALYSED,
        f"this file computes with {_OTHER_FRAMEWORKS[top]} (line {node.lineno} imports `{mod}`), whose dtype rules "
        f"the static scan does not model (it follows torch's): its rotary / ALiBi code (`{rotary}`) was not "
        f"analysed, and any finding here comes from names alone",
        path=path, line=node.lineno, column=node.col_offset + 1, framework=top)]


def _parse_quietly(text: str, path: str) -> ast.Module:
    """``ast.parse`` with the compiler's warnings silenced: an invalid escape sequence is a SyntaxWarning,
    which a process running with warnings as errors (``-W error``, pytest) would turn into a syntax error of
    a valid file (modded-nanogpt's train_gpt2.py)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, filename=path)


def scan_source(source: str | bytes, path: str = "-", *, length: int = DEFAULT_LENGTH) -> list[Finding]:
    """Findings for one module's source (bytes are decoded per PEP 263). Never raises on bad code.

    A file that parses but whose walk stops early (nesting beyond even the deep-stack thread's
    limit) gets RE004 with what was found before it: never a silent all-clear.
    """
    if isinstance(source, bytes):
        try:
            enc, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
            text = source.decode(enc)
        except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
            return [Finding.of(IO.UNDECODABLE_FILE, f"cannot decode the file: {exc}", path=path)]
        if text.startswith("\ufeff"):
            text = text[1:]
    else:
        text = source
    words = sum(1 for _ in _WORD.finditer(text)) if len(text) > MAX_AST_WORDS else 0
    if words > MAX_AST_WORDS:
        return [Finding.of(IO.INCOMPLETE_ANALYSIS, f"not analysed: {words:,} names and numbers, more than the "
                           f"{MAX_AST_WORDS:,} whose syntax tree fits in memory (about 1 KB a node)", path=path)]
    try:  # always parse: a syntax error is reported even in a file with nothing else to find
        tree = _run_deep(lambda: _parse_quietly(text, path))
    except SyntaxError as exc:
        line = exc.lineno or 1
        col = exc.offset or 1
        return [Finding.of(IO.SYNTAX_ERROR, f"cannot parse: {exc.msg}", path=path, line=line, column=max(col, 1))]
    except RecursionError:
        return [Finding.of(IO.INCOMPLETE_ANALYSIS, "not analysed: the parser ran out of recursion depth (nesting "
                           "deeper than any real code)", path=path)]
    except MemoryError:
        return [Finding.of(IO.INCOMPLETE_ANALYSIS, "not analysed: the parser gave up (MemoryError: nesting deeper "
                           "than any real code, or too large)", path=path)]
    except ValueError as exc:  # null bytes
        return [Finding.of(IO.SYNTAX_ERROR, f"cannot parse: {exc}", path=path)]
    note = _framework_note(tree, text, path)
    if not any(w in text for w in TRIGGERS):
        return note  # no trigger word: nothing can match, skip the walk
    try:
        checker = _run_deep(lambda: Checker(tree, path, text, length=length))
    except (RecursionError, MemoryError) as exc:
        return [Finding.of(IO.INCOMPLETE_ANALYSIS, f"not analysed: the checker failed ({type(exc).__name__})",
                           path=path)]
    findings = _noqa_filter(checker.findings + note, checker.lines)
    if checker.incomplete:
        findings.append(Finding.of(
            IO.INCOMPLETE_ANALYSIS, f"analysis stopped early: an expression nested deeper than "
            f"{_DEEP_RECURSION:,} levels; findings after it may be missing", path=path))
    return findings


def scan_file(path: str | os.PathLike, *, length: int = DEFAULT_LENGTH, display: str | None = None,
              max_bytes: int = MAX_FILE_BYTES) -> list[Finding]:
    """Findings for one file; never an exception.

    A path that is not a regular file (a FIFO, a device, also behind a symlink such as a ``.py``
    linked to ``/dev/zero``) or cannot be read gives RE003 before anything is read; a file over
    ``max_bytes`` gives RE004 and is not parsed.
    """
    from ...safeio import open_regular

    shown = display if display is not None else str(path)
    try:
        with open_regular(str(path)) as fh:
            data = fh.read(max_bytes + 1)
    except UsageError as exc:
        why = str(exc)
        why = why[len(str(path)) + 2:] if why.startswith(f"{path}: ") else why
        return [Finding.of(IO.UNREADABLE_FILE, f"cannot read the file: {why}", path=shown)]
    except OSError as exc:
        return [Finding.of(IO.UNREADABLE_FILE, f"cannot read the file: {exc.strerror or exc}", path=shown)]
    if len(data) > max_bytes:
        from ...safeio import fmt_bytes

        return [Finding.of(IO.INCOMPLETE_ANALYSIS, f"not analysed: larger than the {fmt_bytes(max_bytes)} limit "
                           "(--max-file-size to raise it)", path=shown)]
    return scan_source(data, shown, length=length)


def python_files(paths: Sequence[str | os.PathLike], unscanned: list | None = None, lazy: bool = False):
    """The .py files named or found (recursively, sorted) under ``paths``: a list, or with ``lazy`` an
    iterator that walks each directory as its files are used (after the same checks, all made first),
    so a scan of 50,000 files keeps no list of them.

    ``UsageError`` for a missing path, for a file given explicitly that is not ``.py``, for a
    named path that is not a regular file (a FIFO, a device; checked with ``stat`` before any
    read), and for a directory with no .py file in it (nothing to check is almost always a wrong
    path). Inside directories such files are listed and reported as RE003 by :func:`scan_file`.
    Hidden directories and virtual environments' ``site-packages`` below a given directory are
    entered like any other (the user chose the directory), except ``__pycache__`` and ``.git``.
    Directories that could not be entered (unreadable, a path over PATH_MAX, symbolic links,
    which are not followed) are appended to ``unscanned`` as ``(path, why)``
    (:func:`ropelaw.safeio.walk_files`: iterative, any depth).
    """
    from ...safeio import regular_file, walk_files

    out: list = []
    if not paths:
        raise UsageError("no paths given")
    for raw in paths:
        if not str(raw).strip():  # Path("") is ".": an empty argument (unset variable) would scan the cwd
            raise UsageError("empty path given (say `.` to scan the current directory)")
        p = Path(raw)
        if not p.exists() and not p.is_symlink():
            raise UsageError(f"no such file or directory: {raw}")
        if p.is_dir():
            # lazy: the walk appends what it could not enter to ``unscanned`` as it goes (read it after)
            gaps: list = unscanned if lazy and unscanned is not None else []
            before = len(gaps)
            walk = walk_files(str(p), (".py",), lambda d: d in ("__pycache__", ".git"), gaps)
            first = next(walk, None)  # nothing to check in a directory is bad input, found before any scan
            if first is None and len(gaps) == before:
                raise UsageError(f"no Python files found in {raw}")
            found = (Path(f) for f in itertools.chain([first] if first is not None else [], walk))
            out.append(found if lazy else list(found))
            if unscanned is not None and gaps is not unscanned:
                unscanned.extend(gaps)
        elif p.suffix == ".py":
            regular_file(str(p))
            out.append([p])
        else:
            raise UsageError(f"not a Python file: {raw} (audit code reads .py files; for a checkpoint "
                             f"use `ropelaw audit checkpoint`)")
    return itertools.chain.from_iterable(out) if lazy else [f for part in out for f in part]


def scan_paths(paths: Sequence[str | os.PathLike], *, length: int = DEFAULT_LENGTH,
               select: list[str] | None = None, ignore: list[str] | None = None,
               progress: bool = False, max_bytes: int = MAX_FILE_BYTES) -> ScanResult:
    """Scan files and directories (see :func:`python_files`) and filter the findings.

    A directory that could not be entered is an RE005 finding. The whole scan runs in one thread
    with the deep-recursion stack (:func:`_run_deep`), not one thread per file: creating two
    512 MiB-stack threads for every file cost 1 ms a file."""
    unscanned: list = []
    # without a progress bar the directories are walked as their files are scanned (no list of 50,000
    # paths); a bar needs the count first
    files = python_files(paths, unscanned, lazy=not progress)
    iterator: Iterable[Path] = files
    if progress and len(files) > 1:
        from tqdm import tqdm

        iterator = tqdm(files, desc="scanning", unit="file", file=sys.stderr, leave=False, mininterval=0.25)
    count = 0

    def scan_all() -> list[Finding]:
        nonlocal count
        found: list[Finding] = []
        for f in iterator:
            count += 1
            found.extend(scan_file(f, length=length, max_bytes=max_bytes))
        return found

    findings = _run_deep(scan_all)
    findings.extend(Finding.of(IO.DIRECTORY_NOT_SCANNED, f"not scanned: {why}", path=path) for path, why in unscanned)
    return ScanResult(select_findings(findings, select, ignore), count)
