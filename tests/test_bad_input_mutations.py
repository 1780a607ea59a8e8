"""Exit 2 only for the user's input, detected as such: mutated real configs through every dialect.

Real configs of the corpus (every dialect that reads some of them, and the launch scripts) are
mutated as a user's file can be wrong: a key the dialect reads deleted, set to null, to a string,
a numeric string, a number beyond float range (``10**400``), ``1e308``, negative, zero, a fraction,
``NaN``, a boolean, a list or a mapping; and the text itself truncated or cut by a line. Each
mutant goes through ``ropelaw lint`` (the dialect's reading and every rule) and ``ropelaw plan``
(a plan to twice the training length). The only allowed outcomes are a result or ``UsageError``
(the declared bad-input type, exit 2 / RE102 naming the problem); any other exception is a bug in
ropelaw that the CLI would report as exit 3 / RE104, and fails here with the file, the mutation and
the place it was raised.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import math
import os
import pathlib
import traceback

import pytest

from ropelaw.errors import UsageError
from ropelaw.lint import dialects
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import load_config, load_mapping
from ropelaw.lint.parse import read_document

REPO = pathlib.Path(__file__).resolve().parents[1]
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", REPO.parent / "shared" / "corpus"))
REQUIRE = os.environ.get("ROPELAW_REQUIRE_CORPUS") == "1"
PER_DIALECT = 2  # files per dialect: the first and the last of the corpus in path order
MUTATIONS = [("deleted", None), ("null", None), ("a string", "abc"), ("a numeric string", "12"),
             ("an int beyond float range", 10**400), ("1e308", 1e308), ("negative", -1), ("zero", 0),
             ("a fraction", 0.5), ("NaN", math.nan), ("a boolean", True), ("a list", [1, 2]),
             ("a mapping", {"a": 1})]


def _corpus() -> pathlib.Path:
    if not CORPUS.is_dir():
        if REQUIRE:
            pytest.fail(f"real corpus {CORPUS} is missing (ROPELAW_REQUIRE_CORPUS=1)")
        pytest.skip(f"real corpus {CORPUS} is missing (set ROPELAW_CORPUS)")
    return CORPUS


@functools.lru_cache(maxsize=1)
def _files_by_dialect() -> dict[str, list[str]]:
    """Up to PER_DIALECT corpus files per dialect that reads keys of them (``shell``: launch scripts)."""
    found: dict[str, list[str]] = {}
    for folder, _, names in sorted(os.walk(_corpus())):
        for name in sorted(names):
            path = os.path.join(folder, name)
            if name.endswith(".sh"):
                found.setdefault("shell", []).append(path)
                continue
            if not name.lower().endswith((".json", ".yaml", ".yml", ".toml")):
                continue
            try:
                data, _, _ = read_document(path)
                cfg = load_config(path)
            except UsageError:
                continue
            if not any(v.key for v in cfg.inputs):  # all from a preset or a base file: nothing of its own to mutate
                continue
            found.setdefault(dialects.pick(data).name, []).append(path)
    return {k: sorted({v[0], v[-1]})[:PER_DIALECT] for k, v in found.items()}


def _path_of(data, dotted: str):
    """The key path in ``data`` of a Value's dotted key (keys matched as the dialects match them)."""
    node, path = data, []
    norm = lambda k: str(k).strip().lower().replace("-", "_")  # noqa: E731
    for part in dotted.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node, path = node[int(part)], path + [int(part)]
            continue
        if not isinstance(node, dict):
            return None
        key = next((k for k in node if norm(k) == norm(part)), None)
        if key is None:
            return None
        node, path = node[key], path + [key]
    return path


def _mutated(data, path, how, value):
    out = copy.deepcopy(data)
    node = out
    for p in path[:-1]:
        node = node[p]
    if how == "deleted":
        del node[path[-1]]
    else:
        node[path[-1]] = copy.deepcopy(value)
    return out


def _lint_and_plan(cfg) -> None:
    from ropelaw.plan import plan_config

    lint_config(cfg)
    train = cfg.train_len.number() if cfg.train_len is not None else None
    target = int(2 * train) if train is not None and 1 <= train < 2**40 else 131072
    with contextlib.suppress(UsageError):  # a declared refusal: what the test allows
        plan_config(cfg, target)


def _outcome(run) -> str | None:
    """None when ``run()`` gives a result or a UsageError, else where the undeclared exception came from."""
    try:
        run()
    except UsageError:
        return None
    except Exception as exc:  # noqa: BLE001 - the point of the test
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return f"{type(exc).__name__}: {str(exc)[:120]} at {os.path.basename(frame.filename)}:{frame.lineno}"
    return None


# Dialects with no file of the corpus read on its own, and why: not mutated here (veRL's YAML each name
# their model by a path this machine lacks, RV031 without --model-config; OpenRLHF is read from launch
# scripts, whose text mutations run under "shell")
ELSEWHERE = {"verl": "every veRL YAML of the corpus names its model by path (RV031 without --model-config)",
             "openrlhf": "OpenRLHF is read from launch scripts (the 'shell' cases)",
             "gguf": "the corpus holds no GGUF (binary model files); tests/test_hostile_gguf.py mutates one the gguf "
                     "package writes: 28 corruptions, every truncation and a fuzzer"}


def test_the_corpus_gives_every_dialect():
    found = _files_by_dialect()
    missing = {d.name for d in dialects.dialects()} - set(found)
    assert missing <= set(ELSEWHERE), f"no corpus file is read by {sorted(missing - set(ELSEWHERE))}"
    assert "shell" in found


def _cases():
    try:
        found = _files_by_dialect()
    except BaseException:  # noqa: BLE001 - the corpus check above says why
        return []
    return [(dialect, path) for dialect, paths in sorted(found.items()) for path in paths]


@pytest.mark.parametrize("dialect,path", _cases(), ids=lambda x: os.path.basename(str(x))[-48:])
def test_mutated_values_are_results_or_declared_bad_input(dialect, path):
    if path.endswith(".sh"):
        pytest.skip("a launch script's values are text: its mutations are the text ones below")
    cfg = load_config(path)
    data, _, fmt = read_document(path)
    keys = sorted({v.key for v in cfg.inputs if v.key})
    assert keys, f"{path}: the dialect read no key"
    bad, tried = [], 0
    for i, key in enumerate(keys):  # each key two kinds of damage, every kind over a file's keys
        at = _path_of(data, key)
        if not at:
            continue
        for how, value in (MUTATIONS[i % len(MUTATIONS)], MUTATIONS[(i + 6) % len(MUTATIONS)]):
            mutant = _mutated(data, at, how, value)
            tried += 1
            where = _outcome(lambda mutant=mutant: _lint_and_plan(load_mapping(mutant, None, path=path, fmt=fmt)))
            if where:
                bad.append(f"{key} {how}: {where}")
    assert tried, f"{path}: no key could be mutated"
    assert not bad, f"{path} ({dialect}): undeclared exceptions (ropelaw's bugs, exit 3):\n" + "\n".join(bad)


@pytest.mark.parametrize("dialect,path", _cases(), ids=lambda x: os.path.basename(str(x))[-48:])
def test_cut_texts_are_results_or_declared_bad_input(dialect, path, tmp_path):
    text = pathlib.Path(path).read_bytes()
    lines = text.splitlines(keepends=True)
    mutants = {f"cut at {k}/3": text[: len(text) * k // 3] for k in (1, 2)}
    mutants["middle line deleted"] = b"".join(lines[: len(lines) // 2] + lines[len(lines) // 2 + 1:])
    mutants["a NUL byte inside"] = text[: len(text) // 2] + b"\0" + text[len(text) // 2:]
    bad = []
    for how, body in mutants.items():
        f = tmp_path / f"m{len(bad)}{pathlib.Path(path).suffix}"
        f.write_bytes(body)
        where = _outcome(lambda f=f: _lint_and_plan(load_config(str(f))))
        if where:
            bad.append(f"{how}: {where}")
    assert not bad, f"{path} ({dialect}): undeclared exceptions (ropelaw's bugs, exit 3):\n" + "\n".join(bad)
