"""The house rules of issue 37, checked over the package's source (tests/architecture_scan.py, ast only):

- no hand-written function over 80 lines;
- the library never imports the command layer (ropelaw/commands/, cli.py);
- no private name (``_x``) imported across modules;
- the static checker's shared state declared in one place: every ``self.<attr>`` its mixins set or read is an
  attribute annotated on ``ropelaw/audit/static/state.py``'s ``CheckerState`` (or a method of theirs), and
  nothing else declares one;
- the Hugging Face engine's per-model special cases are data rows (ropelaw/lint/table_rows.py), not branches: its
  modules (``ENGINE_MODULES``) compare no model type or architecture name with a string literal and write no
  model type as a string.

What breaks them today is stated below as debt, measured 2026-12-07 (main 1915bae). A new offender fails; so does
one that grew, and an entry that no longer offends (the debt is paid: delete it), so the lists only shrink.
``python tests/architecture_scan.py`` prints the current state in this form.
"""

from __future__ import annotations

import ast

from architecture_scan import (MAX_FUNCTION_LINES, branches_in, library_imports_of_commands, long_functions,
                               model_branches, model_types, modules, static_checker_state, underscore_imports)

# module:function -> lines
LONG_FUNCTIONS: dict[str, int] = {}

LIBRARY_IMPORTS_COMMANDS: set[tuple[str, str]] = set()

# importing module -> private names it imports from other modules
UNDERSCORE_IMPORTS: dict[str, int] = {}


def _compare(now: dict, debt: dict, what: str) -> list[str]:
    problems = [f"new: {k} ({v} {what})" for k, v in now.items() if k not in debt]
    problems += [f"grew: {k} ({debt[k]} -> {v} {what})" for k, v in now.items() if k in debt and v > debt[k]]
    problems += [f"paid (delete it from the debt): {k}" for k in debt if k not in now]
    return problems


def test_no_function_over_the_limit():
    assert not _compare(long_functions(), LONG_FUNCTIONS, f"lines, limit {MAX_FUNCTION_LINES}")


def test_the_library_never_imports_the_commands():
    now = library_imports_of_commands()
    assert now <= LIBRARY_IMPORTS_COMMANDS, f"new: {sorted(now - LIBRARY_IMPORTS_COMMANDS)}"
    assert now >= LIBRARY_IMPORTS_COMMANDS, f"paid (delete it from the debt): {sorted(LIBRARY_IMPORTS_COMMANDS - now)}"


def test_no_private_name_imported_across_modules():
    assert not _compare(dict(underscore_imports()), UNDERSCORE_IMPORTS, "private names imported")


def test_the_static_checkers_shared_state_is_declared_in_one_place():
    assert not static_checker_state()


def test_undeclared_static_checker_state_is_found():
    """The check sees what it is for: a mixin that sets, reads or annotates state CheckerState does not declare."""
    trees = [(name, tree) for name, _, tree in modules() if name.startswith("ropelaw.audit.static")]
    flow = next(tree for name, tree in trees if name == "ropelaw.audit.static.flow")
    method = next(n for n in ast.walk(flow) if isinstance(n, ast.FunctionDef) and n.name == "_union")
    method.body[:0] = ast.parse("self._undeclared = 1\nprint(self._unread)\nself._graph: int = 0").body
    problems = static_checker_state(trees)
    assert sorted(p.split(" ", 1)[1].split(",")[0] for p in problems) == [
        "annotates self._graph outside CheckerState", "reads self._unread", "sets self._undeclared"]


def test_the_hf_engine_has_no_per_model_branches():
    assert not model_branches()


# special cases the engine held as code before they became rows (table.py's _load_table until 2026-12-07), and
# comparisons of the same shape that are no model branch
BRANCHES = ('arch == "chatglm"', '"ChatGLM" in arch_names', 'arch.startswith("hunyuan")',
            'layer_arch == "llama4_text"', 'arch in ("gemma2", "gemma3_text", "gemma3")', 'self.arch == "qwen"',
            'x in ("gpt_neox", "phi3")', 'DISPATCH = {"dbrx": 1}')
NOT_BRANCHES = ('dia.name == "hf"', 'scheme == "dynamic"', 't == "sliding_attention"', 'rv["scheme"] == x',
                'k.startswith("rope_")')


def test_the_branch_check_finds_branches():
    types = model_types()
    assert {"dbrx", "gemma3_text", "llama4_text", "gpt_neox", "phi3"} <= types
    assert all(branches_in(ast.parse(src), types) for src in BRANCHES)
    assert not any(branches_in(ast.parse(src), types) for src in NOT_BRANCHES)
