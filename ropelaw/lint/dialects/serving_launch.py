"""Where vLLM and SGLang launches are written, found without running anything: shell scripts, docker-compose
and Kubernetes YAML, and Python files constructing an engine.

- a command line (a shell script's, or the words of a YAML ``command:`` / ``args:``): ``vllm serve [MODEL]
  ...``, ``python -m vllm.entrypoints.openai.api_server ...``, ``sglang serve ...``, ``python -m
  sglang.launch_server ...``; the arguments after the launcher are the launch's;
- docker-compose (``services.<name>``: ``image``, ``entrypoint`` + ``command``, ``environment``) and Kubernetes
  containers (``image``, ``command`` + ``args``, ``env``): a string is split as a shell splits it; an image
  ``vllm/vllm-openai`` passes arguments that name no launcher to its ENTRYPOINT, vLLM's OpenAI server, read
  with ``--model`` only: vLLM's ``docker/Dockerfile`` (vllm-project/vllm@0000977e) runs ``python3 -m
  vllm.entrypoints.openai.api_server``, which takes no positional model, and which entrypoint a later image
  has is not read here;
- Python: ``LLM(...)`` (vLLM, when the file imports ``vllm``) and ``Engine(...)`` (SGLang, when it imports
  ``sglang``), read with :mod:`ast`: keyword arguments are ``EngineArgs`` / ``ServerArgs`` fields, so
  ``max_model_len=`` is ``--max-model-len``; only literal values are read (``ast.literal_eval``), a value
  computed by the program is said and not guessed.

The version a launch targets: a ``vllm==V`` / ``sglang==V`` pin in the file, an image tag (``vllm/vllm-openai:
v0.10.1``, ``lmsysorg/sglang:v0.5.4-cu129``), a pin in ``requirements*.txt``, ``pyproject.toml`` or ``uv.lock``
in the file's folder; else the runtime's current version (:data:`~.serving_args.Runtime.current`).
"""

from __future__ import annotations

import ast
import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Mapping

from .serving_args import SGLANG, VLLM, Runtime

__all__ = ["Launch", "in_shell", "in_yaml", "in_yaml_stream", "in_python", "target_version"]

MODULES = {"vllm.entrypoints.openai.api_server": VLLM, "sglang.launch_server": SGLANG}
BINARIES = {"vllm": VLLM, "sglang": SGLANG}
VLLM_IMAGE = "vllm/vllm-openai"
PY_CALLS = {"LLM": VLLM, "Engine": SGLANG}


@dataclass
class Launch:
    """One launch: the runtime, its arguments (``words``, each with its ``(line, column)`` in ``places``) or, for
    Python, ``kwargs`` (field name -> (value, (line, column))); ``at``: the launcher's place; ``launcher`` as
    written; ``env`` the variables it runs with; ``image`` the container image (YAML)."""

    runtime: Runtime
    launcher: str
    at: tuple[int, int]
    words: list = field(default_factory=list)
    places: list[tuple[int, int]] = field(default_factory=list)
    kwargs: dict | None = None
    env: dict = field(default_factory=dict)
    image: str = ""
    positional_model: bool = False  # vllm serve MODEL


def launcher_in(words: list[str]) -> tuple[Runtime, int, str, bool] | None:
    """``(runtime, index of its first argument, launcher, takes a positional model)`` of ``words``, or None."""
    for i, w in enumerate(words):
        base = os.path.basename(w)
        if base in BINARIES and i + 1 < len(words) and words[i + 1] == "serve":
            return BINARIES[base], i + 2, f"{base} serve", base == "vllm"
        if w == "-m" and i + 1 < len(words) and words[i + 1] in MODULES:
            return MODULES[words[i + 1]], i + 2, f"python -m {words[i + 1]}", False
    return None


def in_shell(text: str) -> Launch | None:
    """The first vLLM / SGLang launch of a shell script (``megatron.shell_commands`` splits it), or None."""
    from .megatron import shell_commands, substitute

    lines = text.split("\n")
    for first, last, words, env in shell_commands(text):
        got = launcher_in(words)
        if got is None:
            continue
        rt, start, launcher, positional = got
        args = [substitute(w, env) or w for w in words[start:]]
        places = [place_in(lines, first, last, w) for w in words[start:]]
        prefix = "\n".join(lines[first - 1:last])
        run_env = dict(env)
        run_env.update(dict(re.findall(r"(?<![\w$])([A-Za-z_]\w*)=(\S*)", prefix.split(words[start - 1])[0])))
        return Launch(rt, launcher, place_in(lines, first, last, words[start - 1]), args, places, env=run_env,
                      positional_model=positional)
    return None


def place_in(lines: list[str], first: int, last: int, word: str) -> tuple[int, int]:
    """``(line, column)`` of ``word`` on lines ``first..last`` (1-based), else the first line."""
    for n in range(first - 1, min(last, len(lines))):
        col = lines[n].find(word)
        if col >= 0 and word:
            return n + 1, col + 1
    return first, 1


def in_yaml(data: Any, positions: Mapping | _Shifted, text: str = "") -> Launch | None:
    """The first vLLM / SGLang container of a docker-compose or Kubernetes document (module docstring)."""
    lines = text.split("\n")
    for path, node in _mappings(data, ()):
        words: list[str] = []
        places: list = []
        for key in ("entrypoint", "command", "args"):
            _words_of(node.get(key), path + (key,), positions, words, places, lines)
        image = node.get("image") if isinstance(node.get("image"), str) else ""
        got = launcher_in(words)
        if got is None and image.split(":")[0].endswith(VLLM_IMAGE) and words:
            got = (VLLM, 0, f"the {VLLM_IMAGE} image's entrypoint", False)
        if got is None:
            continue
        rt, start, launcher, positional = got
        at = places[start - 1] if start else positions.get(path + ("image",), (1, 1))
        return Launch(rt, launcher, at, words[start:], places[start:], env=_env(node.get("environment"),
                                                                                  node.get("env")),
                      image=image, positional_model=positional)
    return None


class _Shifted:
    """A document's positions moved down by the lines of the documents before it."""

    def __init__(self, positions: Mapping, lines: int):
        self.positions, self.lines = positions, lines

    def get(self, path: tuple, default: Any = None) -> Any:
        at = self.positions.get(path)
        return (at[0] + self.lines, at[1]) if at is not None else default


def in_yaml_stream(text: str, path: str) -> Launch | None:
    """The first vLLM / SGLang container of a multi-document YAML stream (a Kubernetes manifest with a Service
    before its Deployment): each document after a ``---`` line parsed on its own (the loader reads the first)."""
    from ...errors import UsageError
    from ..parse import parse_text

    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if re.match(r"---(\s|$)", line)][:1000]
    if starts and not any(ln.strip() and not ln.lstrip().startswith("#") for ln in lines[:starts[0]]):
        starts = starts[1:]  # a '---' opening the first document: that document is the one already read
    for n, first in enumerate(starts):
        last = starts[n + 1] if n + 1 < len(starts) else len(lines)
        try:
            data, positions = parse_text("\n".join(lines[first + 1:last]), "yaml", path)
        except UsageError:  # an empty document, a list, a scalar: no container there
            continue
        got = in_yaml(data, _Shifted(positions, first + 1), text)
        if got is not None:
            return got
    return None


def _mappings(node: Any, path: tuple, depth: int = 0):
    """Every mapping of the document holding ``command`` / ``args`` / ``entrypoint``, depth first."""
    if depth > 32:
        return
    if isinstance(node, Mapping):
        if any(k in node for k in ("command", "args", "entrypoint")):
            yield path, node
        for k, v in node.items():
            yield from _mappings(v, path + (k,), depth + 1)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _mappings(v, path + (i,), depth + 1)


def _words_of(value: Any, path: tuple, positions: Mapping | _Shifted, words: list, places: list, lines: list) -> None:
    """The words of a ``command`` / ``args`` value and their places (a string's words found on its lines)."""
    from ...errors import UsageError

    at = positions.get(path, (1, 1))
    if isinstance(value, str):
        try:
            split = shlex.split(value, comments=False, posix=True)
        except ValueError as exc:
            raise UsageError(f"line {at[0]:,}: cannot split {path[-1]} into words ({exc})") from None
        line, col = at
        for w in split:
            found = next(((n + 1, c + 1) for n in range(line - 1, min(line + 200, len(lines)))
                          for c in [lines[n].find(w, col if n == line - 1 else 0)] if c >= 0), at)
            line, col = found
            words.append(w)
            places.append(found)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                words.append(str(v))
                places.append(positions.get(path + (i,), at))


def _env(compose: Any, k8s: Any) -> dict:
    out: dict[str, str] = {}
    if isinstance(compose, Mapping):
        out.update({str(k): str(v) for k, v in compose.items() if v is not None})
    elif isinstance(compose, list):
        out.update(dict(str(x).split("=", 1) for x in compose if "=" in str(x)))
    if isinstance(k8s, list):
        out.update({str(e["name"]): str(e["value"]) for e in k8s if isinstance(e, Mapping) and "name" in e
                    and "value" in e})
    return out


def in_python(text: str, path: str) -> Launch | None:
    """The first ``LLM(...)`` (the file imports vllm) or ``Engine(...)`` (it imports sglang) call of a Python
    file, read with :mod:`ast` (never run), or None."""
    from ...errors import UsageError

    imports = {name: re.search(rf"^\s*(?:from|import)\s+{name}\b", text, re.M) is not None
               for name in ("vllm", "sglang")}
    if not any(imports.values()):
        return None
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise UsageError(f"{path}: not Python that parses ({exc.__class__.__name__}); nothing read") from None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        rt = PY_CALLS.get(name)
        if rt is None or not imports[rt.name]:
            continue
        kwargs = {kw.arg: (_literal(kw.value), (kw.value.lineno, kw.value.col_offset + 1))
                  for kw in node.keywords if kw.arg}
        if node.args and "model" not in kwargs and "model_path" not in kwargs:
            kwargs["model" if rt is VLLM else "model_path"] = (_literal(node.args[0]),
                                                               (node.args[0].lineno, node.args[0].col_offset + 1))
        return Launch(rt, f"{name}(...)", (node.lineno, node.col_offset + 1), kwargs=kwargs)
    return None


class Computed:
    """A keyword argument's value that the program computes (not a literal): never guessed."""

    def __init__(self, source: str):
        self.source = source

    def __repr__(self) -> str:
        return self.source


def _literal(node: ast.AST) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return Computed(ast.unparse(node)[:80])


_PIN = r"\b{name}(?:-cpu)?(?:\[[^\]]*\])?\s*===?\s*v?(\d+(?:\.\d+)+(?:\.post\d+)?)"


def target_version(rt: Runtime, path: str, text: str, image: str = "") -> tuple[str, str]:
    """``(version, where it was named)``: the file's pin, its image tag, a pin in a lock file in its folder; else
    ``rt.current`` (module docstring)."""
    m = re.search(_PIN.format(name=rt.name), text, re.I)
    if m:
        return m.group(1), f"{rt.name}=={m.group(1)} in the file"
    tag = re.match(r"^(?:[\w.\-/]+/)?(?:vllm-openai|vllm-cpu|sglang)[\w.\-]*:v?(\d+(?:\.\d+)+(?:\.post\d+)?)", image)
    if tag:
        return tag.group(1), f"the image {image}"
    folder = os.path.dirname(os.path.abspath(path))
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    for name in names:
        if not (re.fullmatch(r"requirements.*\.txt|pyproject\.toml|uv\.lock", name)):
            continue
        got = _lock_pin(rt, os.path.join(folder, name), name)
        if got:
            return got, f"{rt.name}=={got} in {name}"
    return rt.current, "the current version: no version named in the file or beside it"


def _lock_pin(rt: Runtime, path: str, name: str) -> str | None:
    from ...safeio import read_regular

    try:
        text = read_regular(path, 1 << 22, "lock file").decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - an unreadable lock file names no version
        return None
    if name == "uv.lock":
        m = re.search(rf'^name = "{rt.name}"\s*\nversion = "([^"]+)"', text, re.M)
    else:
        m = re.search(_PIN.format(name=rt.name), text, re.I)
    return m.group(1) if m else None
