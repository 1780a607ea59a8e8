"""Round trip over the real corpus (issue 34): for every config of ``../shared/corpus`` that a writer reads
(Hugging Face, axolotl, Megatron-LM, litgpt, torchtitan, LLaMA-Factory, MaxText) and every option of its
plan to 4x its training length, the edit ``plan --apply`` would write is read back by the loader as that file (in its own
folder: a MaxText or axolotl file reads the files it names from there) and linted (default rules):

- the file reads as the option (scheme, base, factor), and its other keys, comments and line endings are
  the original's;
- lint reports no error the original file did not have (what ``plan`` states: it refuses such an edit);
- an edit ``plan`` refuses carries its reason.

The corpus is required (ROPELAW_REQUIRE_CORPUS=1 in CI); a file listed nowhere is never skipped silently.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from ropelaw.errors import UsageError

CORPUS = Path(os.environ.get("ROPELAW_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus"))
SUFFIXES = (".json", ".yaml", ".yml", ".toml")


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        if os.environ.get("ROPELAW_REQUIRE_CORPUS"):
            pytest.fail(f"corpus required and missing: {CORPUS}")
        pytest.skip(f"no corpus at {CORPUS} (ROPELAW_CORPUS)")
    return sorted(p for p in CORPUS.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file())


def planned(path: Path):
    """The plan with every option's edit checked, as ``ropelaw plan`` makes it; None for a file that is not
    a plannable RoPE config of a dialect with a writer."""
    from ropelaw.commands.plan import evaluated, parse
    from ropelaw.lint.loader import load_config
    from ropelaw.lint.writers import WRITERS

    try:
        train = load_config(str(path)).train_len.number()
        if train is None:
            return None
        p, cfg, dialect, text, checked = evaluated(parse([str(path), "--target", str(min(4 * int(train), 2 ** 31 - 1))]))
    except (UsageError, ValueError):
        return None  # not a RoPE config, a model named elsewhere, several RoPE groups: plan exits 2
    if dialect not in WRITERS:
        return None
    return p, cfg, text, checked


def errors(cfg) -> Counter:
    from ropelaw.commands.lint import default_select
    from ropelaw.findings import select_findings
    from ropelaw.lint.check import lint_config

    return Counter(f.code for f in select_findings(lint_config(cfg).findings, default_select(), None)
                   if f.severity == "error")


def test_every_writer_and_option_round_trips_through_lint():
    from ropelaw.lint.loader import load_config, load_text

    tried = Counter()
    for path in corpus_files():
        got = planned(path)
        if got is None:
            continue
        p, cfg, text, checked = got
        before = errors(load_config(str(path), target=p.target))
        for o in p.options[1:]:
            if o.edit is None:
                continue
            if o.edit.refused:
                assert o.edit.refused.strip(), (path, o.name)
                tried["refused"] += 1
                continue
            result, _ = checked[o.name]
            back = load_text(str(path), result.text, target=p.target)  # in the original's folder, as lint reads it
            spec, want = back.spec(0), o.spec
            where = f"{path} --apply {o.name}"
            assert spec.scheme == ("default" if o.name in ("base", "ntk") else want.scheme), where
            if o.name in ("base", "ntk") or o.parameters.get("base") is not None:
                assert spec.base == want.base, where
            if o.name not in ("base", "ntk", "train") and want.param("factor") is not None:
                assert spec.param("factor") == want.param("factor"), where
            new = errors(back) - before
            assert not new, f"{where}: lint errors the original does not have: {sorted(new)}"
            kept = [ln for ln in text.splitlines() if ln.lstrip().startswith("#")]
            assert all(ln in result.text for ln in kept), f"{where}: a comment lost"
            assert ("\r\n" in text) == ("\r\n" in result.text), f"{where}: line endings changed"
            tried[cfg.fmt] += 1
    assert tried["json"] > 300 and tried["yaml"] > 500 and tried["refused"] > 100, tried
