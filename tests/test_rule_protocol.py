"""Rules as objects (issue 37): a loader problem carries the rule object it is reported by, and every
property of a rule lives on :class:`ropelaw.findings.Rule`.

Before, a loader problem named its rule by a string looked up in a module's globals; a name no rule has
(NeMo's and Megatron's "invalid-window-size") silently became RV001 with RV001's documented fix, which
is about LongRoPE factor lists and JSON numbers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ropelaw.findings import all_rules, get_rule
from ropelaw.lint.check import Linting, lint_config
from ropelaw.lint.loader import load_config
from ropelaw.lint.model import Problem

PACKAGE = Path(__file__).resolve().parent.parent / "ropelaw"
RV001_FIX = get_rule("RV001").fix.strip().splitlines()[0]

NEMO = """\
trainer:
  precision: bf16
model:
  mcore_gpt: true
  encoder_seq_length: 4096
  max_position_embeddings: 4096
  num_layers: 32
  hidden_size: 4096
  num_attention_heads: 32
  position_embedding_type: rope
  rotary_base: 10000
"""


def _lint(tmp_path, name: str, text: str):
    p = tmp_path / name
    p.write_text(text)
    return lint_config(load_config(str(p)))


@pytest.mark.parametrize("extra,key,fix", [
    ("  window_size: [4096]\n", "model.window_size", "write model.window_size as [left, right]"),
    ("  window_size: [4096, 0]\n  window_attn_skip_freq: often\n", "model.window_attn_skip_freq",
     "write model.window_attn_skip_freq as a whole number N >= 1"),
])
def test_a_nemo_window_problem_gets_its_own_fix_not_rv001s_longrope_advice(tmp_path, extra, key, fix):
    r = _lint(tmp_path, "nemo.yaml", NEMO + extra)
    rv = [f for f in r.findings if f.code.startswith("RV")]
    assert [(f.code, f.message.split(" ")[0]) for f in rv] == [("RV001", key)]
    assert rv[0].fix.startswith(fix) and "LongRoPE" not in rv[0].fix and rv[0].fix != RV001_FIX


def test_a_megatron_window_problem_gets_its_own_fix(tmp_path):
    flags = ("--num-layers: 32\n--hidden-size: 4096\n--num-attention-heads: 32\n--seq-length: 4096\n"
             "--max-position-embeddings: 4096\n--position-embedding-type: rope\n--rotary-base: 10000\n")
    r = _lint(tmp_path, "b.yaml", flags + "--window-size: 4096\n")
    rv = [f for f in r.findings if f.code.startswith("RV")]
    assert [f.code for f in rv] == ["RV001"]
    assert rv[0].fix.startswith("write --window-size as two whole numbers left,right") and "LongRoPE" not in rv[0].fix


def _problem_names(tree: ast.AST) -> list[str]:
    """String constants standing where a loader problem's rule goes: ``x.append(("name", ...))``."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append" \
                and node.args and isinstance(node.args[0], ast.Tuple) and len(node.args[0].elts) == 3:
            first = node.args[0].elts[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and "-" in first.value:
                out.append(first.value)
    return out


# the modules converted to Problem(RULE, ...): no rule name as a string in them. Code of other branches written
# before the conversion may still name a rule by a string (lint.model.as_problem): it must be a rule's name.
CONVERTED = ("lint/dialects/_framework.py", "lint/dialects/axolotl.py", "lint/dialects/gguf.py",
             "lint/dialects/gguf_factors.py", "lint/dialects/hf.py", "lint/dialects/hf_keys.py",
             "lint/dialects/litgpt.py", "lint/dialects/llamacpp_launch.py", "lint/dialects/llmfoundry.py",
             "lint/dialects/maxtext.py", "lint/dialects/megatron.py", "lint/dialects/nemo.py",
             "lint/dialects/olmo_core.py", "lint/dialects/ollama.py", "lint/layer_groups.py", "lint/sections.py",
             "lint/table.py")


def test_loader_problems_name_their_rule_object():
    """Problems are built as ``Problem(RULE, value, message)`` in every converted module; any string name left
    elsewhere is a rule's name (an unknown one is a KeyError, never a silent RV001). Nothing in the package looks
    a rule up in ``globals()``."""
    found = {str(p.relative_to(PACKAGE)): names for p in sorted(PACKAGE.rglob("*.py"))
             if (names := _problem_names(ast.parse(p.read_text(encoding="utf-8"))))}
    assert {rel: names for rel, names in found.items() if rel in CONVERTED} == {}
    known = {r.name for r in all_rules()}
    assert {rel: [n for n in names if n not in known] for rel, names in found.items()
            if set(names) - known} == {}
    rules_dirs = [PACKAGE / "lint" / "rules", PACKAGE / "audit" / "rules"]
    assert not [p for d in rules_dirs for p in d.glob("*.py") if "globals()" in p.read_text(encoding="utf-8")]


def test_the_name_finder_finds_a_string_problem():
    assert _problem_names(ast.parse('problems.append(("invalid-window-size", v, "m"))')) == ["invalid-window-size"]


def test_a_problem_naming_no_rule_is_an_error_never_rv001(tmp_path):
    from ropelaw.lint.rules import values

    p = tmp_path / "config.json"
    p.write_text('{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, '
                 '"max_position_embeddings": 4096, "rope_theta": 10000}')
    cfg = load_config(str(p))
    cfg.problems.append(("invalid-window-size", cfg.max_pos, "a name no rule has"))
    with pytest.raises(KeyError, match="no rule has this name"):
        values.check(Linting(cfg))
    cfg.problems[-1] = ("invalid-length", cfg.max_pos, "a rule's name")
    assert [f.code for f in values.check(Linting(cfg)) if f.message == "a rule's name"] == ["RV013"]
    cfg.problems[-1] = Problem(get_rule("RV013"), cfg.max_pos, "a rule object", fix="this fix")
    found = values.check(Linting(cfg))
    assert [(f.code, f.fix) for f in found if f.message == "a rule object"] == [("RV013", "this fix")]


def test_rule_properties_live_on_rule():
    """The properties commands and reporters read, with the values the separate lists held before (the
    summary line's files not analysed and directories not scanned, the RV findings that do not explain a
    layer group left unanalysed, the finding --ignore cannot hide)."""
    rules = all_rules()
    assert {r.code for r in rules if r.gap == "file"} == {"RE001", "RE002", "RE003", "RE004", "RE101", "RE102"}
    assert {r.code for r in rules if r.gap == "directory"} == {"RE005", "RE103"}
    assert {r.code for r in rules if r.code.startswith("RV") and not r.explains_unanalysed} == {
        "RV004", "RV009", "RV010", "RV014", "RV019", "RV021", "RV022"}
    assert {r.code for r in rules if not r.filterable} == {"RE104"}
    assert {r.code for r in rules if not r.default_on} == {"RP201", "RL104"}
    import ropelaw.report as report
    from ropelaw.lint.rules import value_rules

    assert not hasattr(report, "_UNANALYSED") and not hasattr(report, "_UNSCANNED")
    assert not hasattr(value_rules, "NOT_EXPLAINING") and not hasattr(value_rules, "_PROBLEM_RULES")


def test_every_lint_check_has_one_signature_and_one_dispatch_list():
    """lint_config runs ``checks()`` in turn, each ``check(linting) -> list[Finding]`` (before: four signatures,
    ``(cfg)``, ``(cfg, found)``, ``(cfg, i, analysis)``, ``(cfg, i, analysis, shown_only)``, called one by one)."""
    import inspect

    from ropelaw.lint import check as lint_check
    from ropelaw.lint.rules import dtype, layers, lengths, reading, runtime, schemes, values

    modules = (dtype, layers, lengths, reading, runtime, schemes, values)
    for module in modules:
        params = list(inspect.signature(module.check).parameters)
        assert params == ["lt"], (module.__name__, params)
    for fn in lint_check.checks() + lint_check.model_checks():
        assert list(inspect.signature(fn).parameters) == ["lt"], fn
    source = inspect.getsource(lint_check.lint_config)
    assert not any(f"{m.__name__.rsplit('.', 1)[1]}.check(" in source for m in modules)


def test_the_dispatch_list_gives_the_findings_of_the_checks_in_turn(tmp_path):
    """A config with findings of several checks: lint_config's findings are exactly those of the checks in
    dispatch order, each seeing the findings before it."""
    from ropelaw.lint.check import _analyse, checks, length_problems

    p = tmp_path / "config.json"
    p.write_text('{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 10000, '
                 '"max_position_embeddings": 131072, "torch_dtype": "bfloat16", '
                 '"rope_scaling": {"rope_type": "default", "factor": 2.0}}')
    cfg = load_config(str(p), train=4096)
    bad = length_problems(cfg)
    lt = Linting(cfg, [_analyse(cfg, i, bad) for i in range(len(cfg.layers))], [], False, bad)
    by_check = []
    for c in checks():
        got = c(lt)
        by_check.append(got)
        lt.found.extend(got)
    assert [f for part in by_check for f in part] == lint_config(cfg).findings
    codes = [{f.code for f in part} for part in by_check]
    assert "RV025" in codes[0] and {"RL101", "RL103"} <= codes[6] and "RP201" in codes[-1]


def test_lints_help_names_the_rules_that_are_off_by_default_from_rule(capsys):
    """The off-by-default rules are Rule.default_on False; commands/lint.py types none of their codes."""
    from ropelaw.cli import main

    off = [r.code for r in all_rules() if not r.default_on]
    text = (PACKAGE / "commands" / "lint.py").read_text(encoding="utf-8")
    assert off and not [c for c in off if c in text]
    with pytest.raises(SystemExit):
        main(["lint", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert f"{' and '.join(off)} are off by default (--select {','.join(off)} to enable)" in out
    assert f"every rule but {' and '.join(off)}," in out
