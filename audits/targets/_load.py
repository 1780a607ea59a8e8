"""Load one framework source file without its package's ``__init__`` chain (a stated import patch).

Training frameworks import their whole stack from ``package/__init__.py`` (distributed layers,
CUDA extensions, config managers, lightning, ...), none of which the rotary code needs. The
factories here import the rotary module itself from the install directory on PYTHONPATH: packages
become empty namespace packages (their ``__init__.py`` is not run), ``.py`` files load unchanged,
and the few imports a rotary module makes of heavier parts are replaced by the small stand-ins the
factory names (``stubs``). The rotary code that runs is the framework's own, byte for byte, unless a
factory states a text patch (``patch``: a device string, for instance).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any


def site_root(top: str) -> Path:
    """The PYTHONPATH entry holding the top-level package ``top`` (the target's install directory)."""
    for entry in sys.path:
        if entry and (Path(entry) / top).exists():  # a package, or a script at the root (``model.py``)
            return Path(entry)
    raise ImportError(f"{top} is not on PYTHONPATH (run through audits/run.py, which sets it)")


class _NoInitFinder(importlib.abc.MetaPathFinder):
    def __init__(self, root: Path, top: str, patch: dict[str, list[tuple[str, str]]]):
        self.root, self.top, self.patch = root, top, patch

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] != self.top:
            return None
        base = self.root.joinpath(*fullname.split("."))
        if base.is_dir():
            spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
            spec.submodule_search_locations = [str(base)]
            return spec
        file = base.with_suffix(".py")
        if not file.is_file():
            return None
        if fullname in self.patch:
            return importlib.util.spec_from_loader(fullname, _PatchedLoader(file, self.patch[fullname]),
                                                   origin=str(file))
        return importlib.util.spec_from_file_location(fullname, file)


class _PatchedLoader(importlib.abc.Loader):
    def __init__(self, file: Path, replacements: list[tuple[str, str]]):
        self.file, self.replacements = file, replacements

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        text = self.file.read_text()
        for old, new in self.replacements:
            if old not in text:
                raise ImportError(f"patch target {old!r} not found in {self.file}")
            text = text.replace(old, new)
        module.__file__ = str(self.file)
        exec(compile(text, str(self.file), "exec"), module.__dict__)


def load(module: str, stubs: dict[str, dict[str, Any]] | None = None,
         patch: dict[str, list[tuple[str, str]]] | None = None) -> types.ModuleType:
    """Import ``module`` (dotted) from the install dir with no package ``__init__`` run.

    ``stubs``: module name -> attributes of a stand-in module put in ``sys.modules`` first.
    ``patch``: module name -> (old, new) text replacements applied to that file's source.
    """
    top = module.split(".")[0]
    for name, attrs in (stubs or {}).items():
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
    if not any(isinstance(f, _NoInitFinder) and f.top == top for f in sys.meta_path):
        sys.meta_path.insert(0, _NoInitFinder(site_root(top), top, patch or {}))
    return importlib.import_module(module)


def identity_decorator(*args: Any, **kwargs: Any):
    """``@deco`` and ``@deco(...)`` that return the function unchanged."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda fn: fn


def load_definitions(module_path: str, names: list[str], namespace: dict[str, Any],
                     patch: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """Execute only the top-level definitions ``names`` of a framework file (from the install dir).

    For modules whose imports pull a whole distributed stack: the classes / functions named run
    unchanged (compiled with the file's real name and line numbers, so ``inspect`` and
    ``torch.jit.script`` find their source), in ``namespace`` (the imports they use). ``patch``:
    (old, new) text replacements inside those definitions (a device string), stated by the caller.
    """
    import ast

    top = module_path.split("/")[0]
    file = site_root(top) / module_path
    text = file.read_text()
    tree = ast.parse(text, filename=str(file))
    keep = [n for n in tree.body if getattr(n, "name", None) in names]
    missing = set(names) - {n.name for n in keep}
    if missing:
        raise ImportError(f"{sorted(missing)} not found in {file}")
    if patch:
        lines = text.splitlines(keepends=True)
        for n in keep:
            seg = "".join(lines[n.lineno - 1:n.end_lineno])
            for old, new in patch:
                seg = seg.replace(old, new)
            lines[n.lineno - 1:n.end_lineno] = [seg] + [""] * (n.end_lineno - n.lineno)
        tree = ast.parse("".join(lines), filename=str(file))
        keep = [n for n in tree.body if getattr(n, "name", None) in names]
    name = module_path[:-3].replace("/", ".")
    mod = types.ModuleType(name)  # registered, so that dataclasses and pickling find the definitions' module
    mod.__file__ = str(file)
    mod.__dict__.update(namespace)
    sys.modules.setdefault(name, mod)
    ns = sys.modules[name].__dict__ if sys.modules[name] is mod else mod.__dict__
    exec(compile(ast.Module(body=keep, type_ignores=[]), str(file), "exec"), ns)
    return ns
