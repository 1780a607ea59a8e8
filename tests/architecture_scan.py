"""What tests/test_architecture.py checks, measured over the package's source (ast only, nothing imported).

``python tests/architecture_scan.py`` prints the current offenders in the form test_architecture.py states
its debt, to update it when debt is paid.
"""

from __future__ import annotations

import ast
import json
import pathlib
import re
from collections import Counter

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ropelaw"
MAX_FUNCTION_LINES = 80
# The command layer: the CLI and ropelaw/commands/ may import the library, never the reverse.
COMMAND_MODULES = ("ropelaw.commands", "ropelaw.cli", "ropelaw.__main__")
# The Hugging Face table engine: its per-model special cases are data rows (ropelaw/lint/table_rows.py), so these
# modules compare no model type or architecture name with a string literal.
ENGINE_MODULES = ("ropelaw.lint.table", "ropelaw.lint.layer_groups")
# names the engine gives a model type or an `architectures` entry (arch, model_type, root_mt, layer_arch, ...)
MODEL_NAME = re.compile(r"\b(\w*arch\w*|\w*model_type\w*|\w*_mt|mt)\b")


def modules():
    """``(dotted name, path, ast)`` of every module of the package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        yield name, path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def _target(name: str, path: pathlib.Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    parts = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    parts = parts[:len(parts) - node.level + 1]
    return ".".join(parts + ([node.module] if node.module else []))


def long_functions() -> dict[str, int]:
    """``module:Class.function`` -> its lines (def to last line, docstring included), over the limit."""
    out: dict[str, int] = {}

    def walk(node, mod, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = child.end_lineno - child.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    out[f"{mod}:{prefix}{child.name}"] = lines
                walk(child, mod, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, mod, f"{prefix}{child.name}.")
            else:
                walk(child, mod, prefix)

    for name, _, tree in modules():
        walk(tree, name, "")
    return out


def library_imports_of_commands() -> set[tuple[str, str]]:
    """``(library module, command module it imports)``."""
    out = set()
    for name, path, tree in modules():
        if name.startswith(COMMAND_MODULES):
            continue
        for node in ast.walk(tree):
            targets = ([_target(name, path, node)] if isinstance(node, ast.ImportFrom) else
                       [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            out.update((name, t) for t in targets if t.startswith("ropelaw.commands"))
    return out


def underscore_imports() -> Counter:
    """importing module -> how many private names (``_x``) it imports from other modules."""
    out: Counter = Counter()
    for name, path, tree in modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and _target(name, path, node) != name:
                out[name] += sum(a.name.startswith("_") and not a.name.startswith("__") for a in node.names)
    return +out


# The static checker: the mixins of ropelaw/audit/static/checker.py's Checker and the class that declares
# the state they share (every attribute annotated on it, with what it holds).
STATIC_CHECKER = "ropelaw.audit.static"
STATIC_STATE = ("ropelaw.audit.static.state", "CheckerState")


def static_checker_state(trees: list[tuple[str, ast.Module]] | None = None) -> list[str]:
    """What breaks "the static checker's shared state is declared in one place": a ``self.<attr>`` read in a
    class of the checker's modules that is neither an attribute annotated on :data:`STATIC_STATE` nor a method
    (or class-level alias) of one of those classes; a ``self.<attr> = ...`` of an attribute not annotated there;
    an annotation of shared state anywhere else (``self.x: T = ...``, or a class-level annotation).
    ``trees``: ``(module, ast)`` to read instead of the package's modules."""
    if trees is None:
        trees = [(name, tree) for name, _, tree in modules()]
    found = [(name, cls) for name, tree in trees if name.startswith(STATIC_CHECKER)
             for cls in ast.walk(tree) if isinstance(cls, ast.ClassDef)]
    state = [cls for name, cls in found if (name, cls.name) == STATIC_STATE]
    if len(state) != 1:
        return [f"{STATIC_STATE[0]}:{STATIC_STATE[1]} not found"]
    # the checker's classes: the state and every class that inherits it (by name, within the package)
    inheritors = {STATIC_STATE[1]}
    while True:
        more = {c.name for _, c in found if any(isinstance(b, ast.Name) and b.id in inheritors for b in c.bases)}
        if more <= inheritors:
            break
        inheritors |= more
    classes = [(name, cls) for name, cls in found if cls.name in inheritors]
    declared = {s.target.id for s in state[0].body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    problems = []
    members = set()
    for name, cls in classes:
        for s in cls.body:
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                members.add(s.name)
            elif isinstance(s, ast.Assign):
                members.update(t.id for t in s.targets if isinstance(t, ast.Name))
            elif isinstance(s, ast.AnnAssign) and cls is not state[0]:
                problems.append(f"{name}:{cls.name} declares {ast.unparse(s.target)} outside {STATIC_STATE[1]}")
    for name, cls in classes:
        for node in ast.walk(cls):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Attribute)
                    and isinstance(node.target.value, ast.Name) and node.target.value.id == "self"):
                problems.append(f"{name}:{node.lineno} annotates {ast.unparse(node.target)} outside "
                                f"{STATIC_STATE[1]}")
            if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"):
                continue
            if isinstance(node.ctx, ast.Store) and node.attr not in declared:
                problems.append(f"{name}:{node.lineno} sets self.{node.attr}, not declared in {STATIC_STATE[1]}")
            elif node.attr not in declared and node.attr not in members:
                problems.append(f"{name}:{node.lineno} reads self.{node.attr}, neither declared in "
                                f"{STATIC_STATE[1]} nor a method")
    return problems


def model_types() -> set[str]:
    """Every model_type a transformers version ropelaw follows knows (ropelaw/data/hf_types.json, read as JSON)."""
    data = json.loads((PACKAGE / "data" / "hf_types.json").read_text(encoding="utf-8"))
    return {t.lower() for v in data["versions"].values() for t in v["model_types"]}


def _literals(node: ast.AST) -> list[str]:
    """The string literals ``node`` is (a constant, or a tuple / list / set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _literals(e)]
    return []


def _model_branch(node: ast.AST, types: set[str]) -> bool:
    """A comparison (``==``, ``in``, ``.startswith``, ...) of a model type or architecture name with a string
    literal: by the name of the compared expression, or by the literal being a model type."""
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
          and node.func.attr in ("startswith", "endswith")):
        operands = [node.func.value, *node.args]
    else:
        return False
    literals = [s for o in operands for s in _literals(o)]
    named = any(not _literals(o) and MODEL_NAME.search(ast.unparse(o)) for o in operands)
    return bool(literals) and (named or any(s.lower() in types for s in literals))


def branches_in(tree: ast.AST, types: set[str]) -> list[str]:
    """``line: source`` of each per-model branch (:func:`_model_branch`) in ``tree``, and of each model type
    written there as a string (a dispatch dict, a tuple of types: a row's business)."""
    return [f"{node.lineno}: {ast.unparse(node)}" for node in ast.walk(tree)
            if _model_branch(node, types) or (isinstance(node, ast.Constant) and isinstance(node.value, str)
                                              and node.value.lower() in types)]


def model_branches(names=ENGINE_MODULES) -> list[str]:
    """``module:line: source`` of each per-model special case written as code in the engine's modules."""
    types = model_types()
    return [f"{name}:{where}" for name, _, tree in modules() if name in names for where in branches_in(tree, types)]


if __name__ == "__main__":
    print("LONG_FUNCTIONS =", dict(sorted(long_functions().items())))
    print("LIBRARY_IMPORTS_COMMANDS =", sorted(library_imports_of_commands()))
    print("UNDERSCORE_IMPORTS =", dict(sorted(underscore_imports().items())))
    print("STATIC_CHECKER_STATE problems =", static_checker_state())


    print("MODEL_BRANCHES =", model_branches())
