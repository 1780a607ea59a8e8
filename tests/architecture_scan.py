"""What tests/test_architecture.py checks, measured over the package's source (ast only, nothing imported).

``python tests/architecture_scan.py`` prints the current offenders in the form test_architecture.py states
its debt, to update it when debt is paid.
"""

from __future__ import annotations

import ast
import pathlib
from collections import Counter

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ropelaw"
MAX_FUNCTION_LINES = 80
# The command layer: the CLI and ropelaw/commands/ may import the library, never the reverse.
COMMAND_MODULES = ("ropelaw.commands", "ropelaw.cli", "ropelaw.__main__")


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


if __name__ == "__main__":
    print("LONG_FUNCTIONS =", dict(sorted(long_functions().items())))
    print("LIBRARY_IMPORTS_COMMANDS =", sorted(library_imports_of_commands()))
    print("UNDERSCORE_IMPORTS =", dict(sorted(underscore_imports().items())))
    print("STATIC_CHECKER_STATE problems =", static_checker_state())
