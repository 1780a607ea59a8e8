"""Round trip over the real corpus (issue 34): for every config of ``../shared/corpus`` that a writer reads
(Hugging Face, axolotl, Megatron-LM flag files and launch scripts, litgpt, torchtitan, LLaMA-Factory, MaxText) and \
every option of its
plan to 4x its training length, the edit ``plan --apply`` would write is read back by the loader as that file (in its \
own
folder: a MaxText or axolotl file reads the files it names from there) and linted (default rules):

- the file reads as the option (scheme, base, factor), and its other keys, comments and line endings are
  the original's;
- lint reports no error the plan did not state: each error of the edited file is one the original file has
  (the same code; RL101 only with the same message: the original's says nothing of the option's reach; an
  RV030 lists fewer unread keys once the edit drops one), or one the option's edit states (``Edit.stated``: RL101 \
where lint reads the new
  base as the pretraining base), whose statement is checked against Liu et al.'s formulas written out here
  (a run from scratch at its base is at the critical base: bound T; pre-trained at b and continued at beta:
  2 pi beta^(d_extra/d), d_extra = 2 ceil((d/2) log_b(T / 2 pi))); an edit that would add any other error
  is one ``plan`` refuses;
- an edit ``plan`` refuses carries its reason.

The corpus is required (ROPELAW_REQUIRE_CORPUS=1 in CI); a file listed nowhere is never skipped silently.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from ropelaw.errors import UsageError

CORPUS = Path(os.environ.get("ROPELAW_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus"))
SUFFIXES = (".json", ".yaml", ".yml", ".toml", ".sh")  # .sh: Megatron launch scripts, edited in place


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
        p, cfg, dialect, text, checked = evaluated(parse([str(path), "--target", str(min(4 * int(train),
                                                                                         2 ** 31 - 1))]))
    except (UsageError, ValueError):
        return None  # not a RoPE config, a model named elsewhere, several RoPE groups: plan exits 2
    if dialect not in WRITERS:
        return None
    return p, cfg, text, checked


def errors(cfg) -> Counter:
    """``(code, message)`` of every error ``ropelaw lint`` reports on ``cfg`` (default rules)."""
    from ropelaw.commands.lint import default_select
    from ropelaw.findings import select_findings
    from ropelaw.lint.check import lint_config

    return Counter((f.code, f.message) for f in select_findings(lint_config(cfg).findings, default_select(), None)
                   if f.severity == "error")


def liu_bound(d: int, train: int, pretrain: float, base: float, tune: int | None) -> float:
    """Liu et al. 2023 (arXiv 2310.05209) written out: d_extra = 2 ceil((d/2) log_b(T / 2 pi)) from the
    pretraining base b; a base beta above b: max(2 pi beta^(d_extra/d), T_tune); beta = b (a run from scratch
    at its base, at the critical base): T_tune."""
    u = tune or train
    if base <= pretrain:
        return float(u)
    d_extra = 2 * math.ceil(d / 2 * math.log(train / (2 * math.pi)) / math.log(pretrain))
    return max(2 * math.pi * base ** (d_extra / d), u)


def check_statement(where: str, why: str, spec, want, target: int) -> None:
    """The RL101 an edit states: lint's bound (from scratch at the file's base) is below the target, and the
    plan's (pre-trained at the original base) reaches it, both as Liu et al.'s formulas give them."""
    got = re.search(r"RL101 \(bound ([\d.,e+]+)\).* the plan's bound ([\d.,e+]+) is for weights pre-trained at base",
                    why)
    assert got, (where, why)
    lint_b, plan_b = (float(g.replace(",", "")) for g in got.groups())  # as printed: 4,096 or 1.82212e12

    def near(x: float, y: float) -> bool:
        return abs(x - y) <= max(1.0, 1e-5 * y)

    assert near(lint_b, liu_bound(spec.d, spec.train_len, spec.base, spec.base, spec.tune_len)), (where, why)
    tune = want.tune_len if want.tune_len and want.tune_len > spec.train_len else None
    assert near(plan_b, liu_bound(spec.d, spec.train_len, want.pretrain_base, spec.base, tune)), (where, why)
    assert lint_b < target <= plan_b, (where, why)


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
            if o.name in ("yarn", "linear"):  # trained at T; a run at the target is read as the fine-tune it costs
                assert spec.train_len == want.train_len and spec.tuning_length in (want.train_len, p.target), where
                tried["tuned at the target"] += spec.tuning_length == p.target > want.train_len
            had = {c for c, _ in before if c != "RL101"}  # the original's RL101 says nothing of the option's reach
            new = [e for e in errors(back) - before if e[0] not in o.edit.stated and e[0] not in had]
            assert not new, f"{where}: lint errors the plan does not state: {sorted(new)}"
            for code, why in o.edit.stated.items():
                assert code == "RL101" and any(c == code for c, _ in errors(back)), (where, code)
                check_statement(where, why, spec, want, p.target)
                tried["stated"] += 1
            kept = [ln for ln in text.splitlines() if ln.lstrip().startswith("#")]
            assert all(ln in result.text for ln in kept), f"{where}: a comment lost"
            assert ("\r\n" in text) == ("\r\n" in result.text), f"{where}: line endings changed"
            if cfg.fmt == "shell":  # a value replaced where it is: at most one line gone per changed flag
                gone = set(text.splitlines()) - set(result.text.splitlines())
                assert len(gone) <= len(o.edit.changes), (where, sorted(gone))
            tried[cfg.fmt] += 1
    assert tried["json"] > 300 and tried["yaml"] > 500 and tried["refused"] > 100 and tried["stated"] > 200, tried
    assert tried["shell"] > 100, tried
    assert tried["tuned at the target"] > 100, tried
