"""The terminal examples of README.md and of every page under docs/ print what the page shows.

The rule (stated in docs/usage.md, "The examples on these pages are tests", for everyone who adds one): inside a fenced
block, a line starting with ``$ ropelaw `` is a command, run from the repository root; the lines
after it, up to the next ``$ `` line or the end of the block, are exactly what it prints (stdout,
then stderr), trailing spaces and trailing blank lines aside. A line consisting of ``...`` stands
for any number of lines (zero or more): the only allowed elision. A ``# comment`` after the
command is a shell comment and is not passed on. Every input a command names lives in the
repository.

The expected text is the page itself (the documentation is the specification here); its numbers
are checked against independent derivations in the other test files. A command shown with the same
output on several pages (README's front-page examples are also on their pages) runs once.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# README, then the pages of the documentation site (mkdocs.yml), the generated rule pages included
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]
ELISION = "..."


@dataclass(frozen=True)
class Example:
    line: int  # 1-based line of the `$ ropelaw` command in its page
    command: str
    expected: tuple[str, ...]
    page: str = "README.md"  # relative to the repository root


def page_examples(text: str, page: str = "README.md") -> list[Example]:
    """Every ``$ ropelaw ...`` command inside a fenced block, with the output the page shows for it."""
    examples: list[Example] = []
    in_block = False
    current: tuple[int, str] | None = None
    out: list[str] = []

    def close() -> None:
        nonlocal current, out
        if current is not None:
            while out and not out[-1].strip():
                out.pop()
            examples.append(Example(current[0], current[1], tuple(out), page))
        current, out = None, []

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if line.lstrip().startswith("```"):
            close()
            in_block = not in_block
            continue
        if not in_block:
            continue
        if line.startswith("$ "):
            close()
            if line.startswith("$ ropelaw ") or line == "$ ropelaw":
                current = (number, line[2:])
            continue
        if current is not None:
            out.append(line)
    return examples


# Examples that run torch code on this machine (`audit module`, `audit hf`) print measurements
# (phase errors, drift, magnitude) computed with the CPU's vector math: numpy's and torch's SIMD
# cos/sin differ in the last ulp between AVX-512, AVX2 and baseline code, and the last printed
# digit can follow (0.00366 rad with AVX2/AVX-512, 0.00365 with numpy's baseline x86-64-v2 code).
# Their text is compared exactly, integers exactly, and decimal numbers within 0.5% or one unit of
# their last printed digit, whichever is larger. docs/usage.md's note on examples says so.
PLATFORM_MATH = ("ropelaw audit module", "ropelaw audit hf")
REL_TOL = 0.005
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])")


def _last_digit_unit(token: str) -> float:
    """The value of one unit in the last printed digit of a decimal token (``0.00366`` -> 1e-5)."""
    mant, _, exp = token.lower().partition("e")
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return 10.0 ** (-decimals + (int(exp) if exp else 0))


def line_matches(expected: str, actual: str, tolerant: bool = False) -> bool:
    """Equal, or (``tolerant``) equal text with integers equal and decimals within the tolerance."""
    if expected == actual:
        return True
    if not tolerant:
        return False
    want, got = _NUMBER.split(expected), _NUMBER.split(actual)
    if want != got:  # the text around the numbers, which must be identical
        return False
    for a, b in zip(_NUMBER.findall(expected), _NUMBER.findall(actual), strict=True):
        if a == b:
            continue
        if not any(c in a + b for c in ".eE"):
            return False  # integers: exact
        x, y = float(a.replace(",", "")), float(b.replace(",", ""))
        tol = max(REL_TOL * max(abs(x), abs(y)), _last_digit_unit(a), _last_digit_unit(b))
        if abs(x - y) > tol * (1 + 1e-9):
            return False
    return True


def output_matches(expected: list[str], actual: list[str], tolerant: bool = False) -> bool:
    """Line by line; a line ``...`` in ``expected`` matches zero or more lines of ``actual``."""
    memo: dict[tuple[int, int], bool] = {}

    def match(i: int, j: int) -> bool:
        key = (i, j)
        if key not in memo:
            if i == len(expected):
                ok = j == len(actual)
            elif expected[i] == ELISION:
                ok = any(match(i + 1, k) for k in range(j, len(actual) + 1))
            else:
                ok = j < len(actual) and line_matches(expected[i], actual[j], tolerant) and match(i + 1, j + 1)
            memo[key] = ok
        return memo[key]

    return match(0, 0)


def run_example(command: str) -> tuple[int, list[str]]:
    argv = shlex.split(command, comments=True)
    assert argv[0] == "ropelaw", command
    env = {**os.environ, "COLUMNS": "100", "PYTHONWARNINGS": "ignore"}
    # a model named elsewhere is looked for in the Hugging Face cache: the examples see none (an empty one)
    for var in ("TRANSFORMERS_CACHE", "PYTORCH_TRANSFORMERS_CACHE", "PYTORCH_PRETRAINED_BERT_CACHE", "HF_HOME"):
        env.pop(var, None)
    env["HF_HUB_CACHE"] = str(ROOT / "tests" / "fixtures" / "no-hub-cache")
    proc = subprocess.run([sys.executable, "-m", "ropelaw", *argv[1:]], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    text = proc.stdout + proc.stderr
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return proc.returncode, lines


EXAMPLES = [e for page in PAGES
            for e in page_examples(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))]
# one run per distinct (command, shown output); the first place it is shown names the test
RUNS: dict[tuple[str, tuple[str, ...]], list[Example]] = {}
for _e in EXAMPLES:
    RUNS.setdefault((_e.command, _e.expected), []).append(_e)


def test_the_documentation_has_examples():
    # the pages show bound, base, dims, schemes, plan, exact, audit, lint and rule runs
    commands = {shlex.split(e.command)[1] for e in EXAMPLES}
    assert {"bound", "base", "dims", "schemes", "plan", "exact", "audit", "lint"} <= commands, commands


@pytest.mark.parametrize("shown", list(RUNS.values()),
                         ids=[f"{s[0].page}:L{s[0].line}:{s[0].command}" for s in RUNS.values()])
def test_example_prints_what_its_page_shows(shown: list[Example]):
    example = shown[0]
    code, actual = run_example(example.command)
    assert code in (0, 1, 2), f"{example.command}: exit code {code}\n" + "\n".join(actual)
    assert not any(line.startswith("Traceback") for line in actual), "\n".join(actual)
    expected = list(example.expected)
    if not output_matches(expected, actual, tolerant=example.command.startswith(PLATFORM_MATH)):
        pytest.fail(
            f"{', '.join(f'{e.page} line {e.line}' for e in shown)}: $ {example.command}\n"
            f"--- expected (the page; a line '...' elides)\n" + "\n".join(expected) +
            "\n--- actual\n" + "\n".join(actual) + "\n---",
            pytrace=False,
        )


# --- the matcher itself: a specification of the rule above

def test_platform_math_tolerance():
    row = "default     100.00%   100.00%         0   7.0e-08     0.00366 rad     0.39%  clean"
    assert line_matches(row, row.replace("0.00366", "0.00365"), tolerant=True)  # one unit in the last digit
    assert line_matches(row, row.replace("7.0e-08", "7.1e-08"), tolerant=True)
    assert not line_matches(row, row.replace("0.00366", "0.00365"))  # only where the example runs torch
    assert not line_matches(row, row.replace("0.00366", "0.00376"), tolerant=True)  # 2.7%: a real change
    assert not line_matches(row, row.replace("  0   ", "  1   "), tolerant=True)  # integers exactly
    assert not line_matches(row, row.replace("clean", "drift"), tolerant=True)  # text exactly
    assert line_matches("at position 7327 of 8,192", "at position 7327 of 8,192", tolerant=True)
    assert not line_matches("a 1,024 rows", "a 1,025 rows", tolerant=True)
    assert not line_matches("x 100.0 y", "x 100.6 y", tolerant=True)  # 0.6% > 0.5%
    assert line_matches("x 100.0 y", "x 100.4 y", tolerant=True)
    examples = [e for e in EXAMPLES if e.command.startswith(PLATFORM_MATH)]
    assert examples and all("audit" in e.command for e in examples)


def test_elision_matches_zero_or_more_lines():
    assert output_matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert output_matches(["a", "...", "b"], ["a", "b"])
    assert output_matches(["...", "c"], ["a", "b", "c"])
    assert output_matches(["a", "..."], ["a"])
    assert not output_matches(["a", "...", "d"], ["a", "b", "c"])
    assert not output_matches(["a", "c"], ["a", "b", "c"])  # no silent shortening
    assert not output_matches(["a"], ["a", "b"])


def test_examples_are_parsed_with_their_output_and_comments_dropped():
    text = "\n".join([
        "```", "$ ropelaw bound --d 8   # note", "line 1", "", "$ ropelaw exact", "x", "...", "```",
        "$ ropelaw not-in-a-block", "```bash", "ropelaw plot  # no $: not an example", "```",
    ])
    got = page_examples(text, "docs/x.md")
    assert {e.page for e in got} == {"docs/x.md"}
    assert [(e.line, e.command, e.expected) for e in got] == [
        (2, "ropelaw bound --d 8   # note", ("line 1",)),
        (5, "ropelaw exact", ("x", "...")),
    ]
    assert shlex.split(got[0].command, comments=True) == ["ropelaw", "bound", "--d", "8"]
    assert re.fullmatch(r"L\d+:.*", f"L{got[0].line}:{got[0].command}")


def test_example_checkpoints_are_what_their_script_makes(tmp_path):
    """The committed checkpoint examples come from tests/fixtures/checkpoints/make_examples.py.

    The pickle and the safetensors header and inv_freq must match byte for byte; the cos/sin
    caches within one bf16 step (2^-8), since libm's float32 cos may differ by an ulp by platform.
    """
    import json
    import struct

    import ml_dtypes
    import numpy as np

    folder = ROOT / "tests" / "fixtures" / "checkpoints"
    subprocess.run([sys.executable, str(folder / "make_examples.py"), str(tmp_path)], check=True)
    assert (tmp_path / "evil.pt").read_bytes() == (folder / "evil.pt").read_bytes()

    def tensors(path: Path) -> dict[str, np.ndarray]:
        raw = path.read_bytes()
        (n,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8:8 + n])
        out = {}
        for name, info in header.items():
            lo, hi = info["data_offsets"]
            assert info["dtype"] == "BF16"
            a = np.frombuffer(raw[8 + n + lo:8 + n + hi], dtype=ml_dtypes.bfloat16).reshape(info["shape"])
            out[name] = a.astype(np.float64)
        return out

    made, committed = tensors(tmp_path / "llama-bf16.safetensors"), tensors(folder / "llama-bf16.safetensors")
    assert sorted(made) == sorted(committed)
    for name in made:
        if name.endswith("inv_freq"):
            assert np.array_equal(made[name], committed[name]), name
        else:
            assert made[name].shape == committed[name].shape == (1, 1, 1024, 128)
            assert np.max(np.abs(made[name] - committed[name])) <= 2.0 ** -8, name
