"""The checker's shared state, declared once: every attribute the mixins of
:class:`~ropelaw.audit.static.checker.Checker` read or set (:mod:`.structure`, :mod:`.dtypes`,
:mod:`.buffers`, :mod:`.triggers`, :mod:`.flow`) is annotated on :class:`CheckerState`, which each of
them inherits, with what it holds; ``__init__`` gives each its starting value. :meth:`CheckerState.report`
is the one way a finding is added. tests/test_architecture.py checks that the static checker's modules use
no other ``self.<attribute>`` than these and the mixins' methods."""

from __future__ import annotations

import ast
from typing import Any

from ...findings import Finding, Rule
from .names import LINE_BREAK
from .syntax import Function
from .values import HeldFinding

# (name, registering node, registered value or None, the method that registers it): Structure._registrations
Registration = tuple[str, ast.AST, ast.AST | None, Function]


def path_suffix(data: dict[str, Any]) -> str:
    """The finding's path, from its data: where the positions were made, where they were cast (the finding's
    own line), where they were used (an angle product or cos / sin)."""
    parts = []
    if data.get("made_at"):
        parts.append(f"made at line {data['made_at']} by {data['made_by']}")
    if data.get("cast_at"):
        parts.append(f"cast at line {data['cast_at']}")
    if data.get("used_at"):
        parts.append(f"used at line {data['used_at']} in {data['used_in']}")
    elif data.get("cast_at"):
        parts.append("not used in this function (returned)")
    return f" (path: {', '.join(parts)})" if parts else ""


class CheckerState:
    """What the checker holds while it walks one module."""

    # the file
    path: str  # the file's path as findings show it
    length: int  # the context length the messages' numbers are computed at
    source: str  # the module's source text
    lines: list[str]  # its lines, split at Python's own line ends (the noqa comment lookup and the trigger-word test)
    _tree: ast.Module  # the module's syntax tree
    _classes: dict[str, ast.ClassDef]  # the module's top-level classes by name
    _module_funcs: dict[str, Function]  # the module's top-level functions by name
    # the output
    findings: list[Finding]  # what the walk found, in the order it was reported
    _seen: set[tuple[str, int, int]]  # (code, line, column) already reported: one finding per place and rule
    incomplete: bool  # the walk stopped early (an absurdly deep expression): scan_source reports RE004
    # where the walk is
    _autocast: list[str]  # the enclosing autocast regions, innermost last: "on" / "on-cpu" / "off" / "unknown"
    _class: ast.ClassDef | None  # the class being walked
    _fn: Function | None  # the function being walked (to follow local names)
    _deferred: list[HeldFinding]  # position casts in rotary code, reported where used (or at the function's end)
    _complex_args: set[int]  # ids of calls inside the arguments of a complex constructor (RP114)
    # the class being walked (saved and restored around a nested class)
    _class_buffers: frozenset[str]  # its frequency buffers (Buffers._buffers_of)
    _plain_attrs: frozenset[str] | None  # its `self.X` that are never a buffer or parameter (None: not computed yet)
    _repaired: frozenset[str]  # its buffers an _apply / to override or a float32 guard restores after every cast
    _float32_at_init: frozenset[str]  # its buffers registered in explicit float32 at construction
    # facts about the file, computed once when first needed (None: not yet)
    _graph: tuple[frozenset[str], frozenset[str]] | None  # (construction methods, construction-only methods)
    _build_only: frozenset[str] | None  # module functions only construction-only methods call
    _calls: dict[str, list[ast.Call]] | None  # every call of the file by callee name (its leaf)
    _subclasses: dict[str, list[ast.ClassDef]] | None  # class name -> its in-file subclasses (Structure._family)
    _registrations_of: dict[int, list[Registration]]  # id(class) -> its buffer registrations (memo)
    _parameters_of: dict[int, list[Registration]]  # id(class) -> its parameter registrations (memo)
    _param_nodes: set[tuple[ast.AST, ast.AST | None]]  # (node, value) of parameter registrations (RP123 only)
    _read_later: dict[str, frozenset[str]]  # class name -> `self.X` its family reads outside construction-only code
    _angle_attrs: dict[tuple[str, str], bool]  # (class, attribute) assigned float32 angles (gpt-neox's self.emb)
    _notes: dict[str, str]  # format -> its collision note at `length` (Triggers._note, memo)
    _float_scalar_memo: dict[int, bool]  # node id -> a Python float inside it (syntax's memoised subtree test)
    _float_tensor_memo: dict[int, bool]  # node id -> a visibly float tensor inside it

    def __init__(self, tree: ast.Module, path: str, source: str, length: int) -> None:
        self.path = path
        self.length = length
        self.source = source
        self.lines = LINE_BREAK.split(source)  # Python's own lines (str.splitlines also splits at \f,
        # \x1c-\x1e, NEL and U+2028, which shifted the noqa comment lookup of every later line by one)
        self._tree = tree
        self._classes = {}
        self._module_funcs = {}
        self.findings = []
        self._seen = set()
        self.incomplete = False
        self._autocast = []
        self._class = None
        self._fn = None
        self._deferred = []
        self._complex_args = set()
        self._class_buffers = frozenset()
        self._plain_attrs = frozenset()
        self._repaired = frozenset()
        self._float32_at_init = frozenset()
        self._graph = None
        self._build_only = None
        self._calls = None
        self._subclasses = None
        self._registrations_of = {}
        self._parameters_of = {}
        self._param_nodes = set()
        self._read_later = {}
        self._angle_attrs = {}
        self._notes = {}
        self._float_scalar_memo = {}
        self._float_tensor_memo = {}

    def report(self, rule: Rule, node: ast.AST, message: str, fix: str | None = None, **data: Any) -> None:
        """Append a finding of ``rule`` at ``node`` (once per rule and place); a message about positions gets
        their path (where made, cast, used) from ``data``."""
        line, col = getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1
        key = (rule.code, line, col)
        if key in self._seen:
            return
        self._seen.add(key)
        if ("made_at" in data or "used_at" in data or "cast_at" in data) and "(path: " not in message:
            message += path_suffix(data)  # where the value was made, what cast it, where it was used
        self.findings.append(Finding.of(rule, message, path=self.path, line=line, column=col, fix=fix, **data))
