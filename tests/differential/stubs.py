"""Stand-ins for the modules a framework imports that the code under test never runs (checkpoint stores,
data pipelines, cloud clients, GPU kernels): every attribute of a stand-in module is a do-nothing object.
Each differential names the modules it stands in for."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import types


class Anything:
    """A stand-in value: calls, attributes, items, ``|``, ``+`` and bases all give another stand-in."""

    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return a[0] if len(a) == 1 and callable(a[0]) and not k else Anything()  # a decorator returns its function

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything()

    def __getitem__(self, key):
        return Anything()

    def __iter__(self):
        return iter(())

    def __mro_entries__(self, bases):
        return (object,)

    def __or__(self, other):
        return Anything()

    __ror__ = __add__ = __radd__ = __or__

    def __bool__(self):
        return False


class Stubs(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """A meta-path finder giving stand-ins for the modules named (a name and everything under it)."""

    def __init__(self, names: tuple[str, ...]):
        self.names = names

    def find_spec(self, name, path, target=None):
        if any(name == s or name.startswith(s + ".") for s in self.names):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        m = types.ModuleType(spec.name)
        m.__path__ = []

        def attr(name):
            if name.startswith("__"):
                raise AttributeError(name)
            return Anything()
        m.__getattr__ = attr
        return m

    def exec_module(self, module):
        pass
