"""Every module's ``__all__`` names what the module defines: ``from ropelaw.x import *`` works.

``numfmt.__all__`` once named ``plain_exponent`` while the function was ``plainexponent``, so the
star import raised AttributeError. Modules are found by reading their source (``__all__`` assigned
at top level), then imported; a module whose optional dependency is missing is skipped, naming it.
"""

from __future__ import annotations

import ast
import importlib
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "ropelaw"


def _modules_with_all() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
                isinstance(t, ast.Name) and t.id == "__all__"
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))
               for node in tree.body):
            rel = path.relative_to(PACKAGE.parent).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            out.append(".".join(parts))
    return out


MODULES = _modules_with_all()


def test_the_modules_are_found():
    assert "ropelaw.numfmt" in MODULES and "ropelaw.report" in MODULES and len(MODULES) >= 30, MODULES


@pytest.mark.parametrize("name", MODULES)
def test_star_import_gives_every_name_of_all(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:  # an optional extra ([torch], [plot]) not installed
        pytest.skip(f"{name} needs {exc.name}")
    names = list(module.__all__)
    assert len(names) == len(set(names)), f"{name}.__all__ repeats a name"
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what the module does not define: {missing}"
    namespace: dict = {}
    exec(f"from {name} import *", namespace)  # noqa: S102 - the statement under test
    assert set(names) <= set(namespace), name
