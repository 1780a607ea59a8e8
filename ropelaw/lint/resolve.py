"""A model a training config names elsewhere: its ``config.json``, from where users keep it.

axolotl ``base_model``, LLaMA-Factory ``model_name_or_path`` (v1: ``model:``), llm-foundry
``pretrained_model_name_or_path``, veRL ``actor_rollout_ref.model.path``, NeMo
``restore_from_path`` ... hold no rotary dims or base: the model's own config does, which these
frameworks load through transformers (``AutoConfig.from_pretrained``). :func:`find` looks for it, in
order, and never on the network:

1. ``--model-config PATH``: that file, or the ``config.json`` in that directory (the user's word);
2. a local directory of that name holding the file: transformers reads a directory before the Hub
   (``utils/hub.py`` ``cached_files``: ``os.path.isdir(path_or_repo_id)``), relative to the working
   directory, as the framework resolves it;
3. the Hugging Face cache, exactly as ``huggingface_hub.try_to_load_from_cache`` finds a file
   (huggingface_hub 0.36.2 and 1.33.0, ``file_download.py``): ``<cache>/models--<org>--<name>/``,
   ``refs/<revision>`` names the commit (revision default ``main``; a commit hash names itself),
   ``snapshots/<commit>/config.json`` is the file, and ``.no_exist/<commit>/config.json`` records that
   the repository has none. The cache is ``$HF_HUB_CACHE``, else ``$HUGGINGFACE_HUB_CACHE``, else
   ``$HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``, else ``~/.cache/huggingface/hub``
   (huggingface_hub ``constants.py``); transformers 4.x reads ``$TRANSFORMERS_CACHE`` (then
   ``$PYTORCH_TRANSFORMERS_CACHE``, ``$PYTORCH_PRETRAINED_BERT_CACHE``) instead when set
   (transformers 4.57.1 ``utils/hub.py``; 5.x dropped them): that directory is looked in first;
4. ropelaw's table of published models (``ropelaw/data/presets_axolotl.json``), only where no file is available,
   and never silently: RV032 says the values are the table's and how to get the model's own file.

None of them: :func:`needed` (RV031), naming the model and the command that fetches its file. The
file found is read by the Hugging Face dialect (:func:`read_model`), so the model's values mean what
they mean in that ``config.json`` linted alone, and every value says where it came from.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, overload

from ..errors import UsageError
from .model import LoadedConfig, ModelNeeded, Overrides, Value, as_problem
from .model_config import HOW, check_model_config_path, fetch_command, given_file  # noqa: F401  (re-exported)

FILE = "config.json"
# huggingface_hub utils/_validators.py REPO_ID_REGEX (with its "--" / ".." / length rules below)
_REPO_ID = re.compile(r"^(\b[\w\-.]+\b/)?\b[\w\-.]+\b$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class ModelConfig:
    """The config of a model named elsewhere, as found: ``source`` is ``--model-config``,
    ``directory``, ``hf-cache`` or ``table``; ``file`` the file read (None for the table); ``commit``
    the cache snapshot; ``origin`` one line saying where the values came from."""

    name: str
    data: dict
    source: str
    origin: str
    file: str | None = None
    commit: str | None = None
    revision: str | None = None  # as the training config names it (None: main)
    table_source: str | None = None  # the table row's own provenance (source "table")
    table_note: str | None = None  # the row's note (a value taken from the Hub's config.json, and why)
    key: str | None = None  # the key of the training config naming the model, and its line and column
    at: tuple = (1, 1)
    loaded: Any = None  # the file read alone by the Hugging Face dialect (LoadedConfig), set by read_model

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "key": self.key, "source": self.source, "file": self.file, "commit": self.commit,
                "revision": self.revision, "from": self.origin}


def is_repo_id(name: str) -> bool:
    """``name`` is a valid Hub repository id (huggingface_hub ``validate_repo_id``): what
    ``from_pretrained`` looks up in the cache when ``name`` is not a local directory."""
    return (0 < len(name) <= 96 and bool(_REPO_ID.match(name)) and "--" not in name and ".." not in name
            and not name.endswith(".git"))


def hub_caches() -> list[str]:
    """The cache directories transformers reads, in the order :func:`find` tries them."""
    out = []
    for var in ("TRANSFORMERS_CACHE", "PYTORCH_TRANSFORMERS_CACHE", "PYTORCH_PRETRAINED_BERT_CACHE"):
        if os.environ.get(var):  # transformers 4.x: the first set wins, else HF_HUB_CACHE
            out.append(os.environ[var])
            break
    home = os.path.expandvars(os.path.expanduser(os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")))
    hub = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE") or os.path.join(home, "hub")
    hub = os.path.expandvars(os.path.expanduser(hub))
    return out + ([hub] if hub not in out else [])


@dataclass(frozen=True)
class CacheLookup:
    """What one cache holds for a repository: ``path`` of the file, or why not (``why``)."""

    path: str | None
    commit: str | None
    why: str


def cached_file(cache: str, repo_id: str, revision: str | None = None, filename: str = FILE) -> CacheLookup:
    """``filename`` of model ``repo_id`` at ``revision`` in ``cache``: huggingface_hub's
    ``try_to_load_from_cache`` step by step (module docstring), with the reason when it is not there."""
    revision = revision or "main"
    repo = os.path.join(cache, "models--" + repo_id.replace("/", "--"))
    if not os.path.isdir(repo):
        return CacheLookup(None, None, f"not in the Hugging Face cache {cache}")
    commit = revision
    ref = os.path.join(repo, "refs", revision)
    if os.path.isdir(os.path.join(repo, "refs")) and os.path.isfile(ref):
        with open(ref, encoding="utf-8") as fh:
            commit = fh.read(4096)  # as huggingface_hub reads it (not stripped)
    if os.path.isfile(os.path.join(repo, ".no_exist", commit, filename)):
        return CacheLookup(None, commit, f"the Hugging Face cache {cache} records that {repo_id} has no {filename} "
                                         f"at {revision}")
    snaps = os.path.join(repo, "snapshots")
    held = sorted(os.listdir(snaps)) if os.path.isdir(snaps) else []
    if commit not in held:
        what = f"revision {revision}" + (f" (commit {commit})" if commit != revision else "")
        return CacheLookup(None, None, f"the Hugging Face cache {cache} holds {repo_id} but not its {what}"
                                       + (f"; it holds {', '.join(s[:12] for s in held[:4])}" if held else ""))
    path = os.path.join(snaps, commit, filename)
    if not os.path.isfile(path):
        return CacheLookup(None, commit, f"the snapshot {commit[:12]} of {repo_id} in the Hugging Face cache {cache} "
                                         f"has no {filename}")
    return CacheLookup(path, commit, "")


def _read(path: str) -> dict:
    from .parse import read_document

    data, _, _ = read_document(path)
    if not isinstance(data, Mapping):
        raise UsageError(f"{path}: the model's config is not a mapping of settings")
    return dict(data)


def table_entry(name: str) -> dict | None:
    """ropelaw's table row of Hub model ``name`` (``ropelaw/data/presets_axolotl.json``), or None."""
    from .dialects._framework import presets

    return presets("axolotl")["presets"].get(name)


def find(name: str, *, given: str | None = None, revision: str | None = None, table: bool = True) -> ModelConfig | None:
    """The config of the model ``name`` (module docstring: ``--model-config``, a local directory, the
    Hugging Face cache, the table), or None."""
    path = given_file(given)
    if path is not None:
        return ModelConfig(name, _read(path), "--model-config", f"--model-config {path}", file=path, revision=revision)
    local = os.path.join(name, FILE)
    if os.path.isdir(name) and os.path.isfile(local):
        return ModelConfig(name, _read(local), "directory", local, file=local, revision=revision)
    if is_repo_id(name):
        for cache in hub_caches():
            hit = cached_file(cache, name, revision)
            if hit.path is not None:
                at = f"{revision} = " if revision and revision != hit.commit else ""
                return ModelConfig(name, _read(hit.path), "hf-cache",
                                   f"{hit.path} (Hugging Face cache, {at}snapshot {(hit.commit or '')[:12]})",
                                   file=hit.path, commit=hit.commit, revision=revision)
    entry = table_entry(name) if table and not revision else None
    if entry is not None:
        return ModelConfig(name, dict(entry["values"]), "table", f"ropelaw's table: {entry['source']}",
                           revision=revision, table_source=entry["source"], table_note=entry.get("note"))
    return None


def why_missing(name: str, revision: str | None = None, filename: str = FILE) -> tuple[str, str, str]:
    """``(why find() found no file for name, every place it looked or "", what would give it)``."""
    if not is_repo_id(name):
        where = "no such directory here" if not os.path.isdir(name) else f"the directory has no {filename}"
        return f"{name!r} is a path on the machine that trains ({where}), not a Hub repository id", "", HOW
    places = [f"no directory {name!r} here" if not os.path.isdir(name) else f"the directory {name!r} has no {filename}"]
    places += [cached_file(c, name, revision, filename).why for c in hub_caches()]
    if table_entry(name) is None or revision:
        places.append("not in ropelaw's table of published models")
    return (f"its {filename} is not on this machine", "; ".join(places),
            f"run `{fetch_command(name, revision, filename)}` and lint again, or {HOW}")


def needed(path: str, key: Value, revision: str | None = None) -> ModelNeeded:
    """RV031 for the model named at ``key`` (``revision``: the revision the config names); where it looked is in
    the message, or, when that would run past the limit (a long cache path), the finding's note."""
    from .sources import fit

    at = f" at revision {revision}" if revision else ""
    why, looked, fix = why_missing(str(key.raw).strip(), revision)
    head = f"{key.key} {key.raw!r}{at} names the model; {why}"
    if not looked:
        return ModelNeeded(f"{path}: {head}", key.line, key.column, fix=fix)
    message, notes = fit(head, f" ({looked}; ropelaw never downloads)",
                         " (ropelaw never downloads; the note says where it looked)")
    return ModelNeeded(f"{path}: {message}", key.line, key.column, fix=fix, notes=tuple(notes))


def resolve(path: str, key: Value, given: str | None, revision: Value | None = None) -> ModelConfig:
    """:func:`find` for the model named at ``key``, or RV031 (:func:`needed`)."""
    rev = str(revision.raw) if revision is not None and revision.raw not in (None, "") else None
    if not isinstance(key.raw, str) or not key.raw.strip():
        raise ModelNeeded(f"{path}: {key.key} names no model ({key.raw!r})", key.line, key.column, fix=HOW)
    got = find(key.raw.strip(), given=given, revision=rev)
    if got is None:
        raise needed(path, key, rev)
    return got


def read_model(doc, o: Overrides, name_v: Value, model: ModelConfig, overrides: dict[str, str], computed: dict,
               arch: str) -> LoadedConfig:
    """``model``'s config (with this document's ``overrides`` laid over it) read by the Hugging Face
    dialect, each value pointing back at this document: ``overrides`` (config key -> dotted key of this
    file that replaced it), ``computed`` (config key -> (the key of this file that made the framework
    compute it, how)), the rest at ``name_v`` and naming ``model.origin``. Lengths: the model's; tuning
    and dtype: the caller's. ``LoadedConfig.model`` is ``model``, with its file read alone (its own
    findings, at its own lines: ``lint_config`` reports them)."""
    from .loader import load_mapping
    from .parse import read_document

    data = dict(model.data)
    cfg = load_mapping(data, {}, path=doc.path, fmt=doc.fmt, dialect="hf")
    alone = None
    if model.file is not None:
        raw, positions, fmt = read_document(model.file)
        alone = load_mapping(raw, positions, path=model.file, fmt=fmt, dialect="hf")
    src = f"{name_v.key} {name_v.raw!r}"  # where the model came from is said once (LintReport, RV032, JSON "model")

    @overload
    def repoint(v: Value) -> Value: ...

    @overload
    def repoint(v: Value | None) -> Value | None: ...

    def repoint(v: Value | None) -> Value | None:
        if v is None or v.key is None and not v.note:
            return v
        top = (v.key or "").split(".")[0]
        if top in overrides:
            line, col = doc.at(tuple(overrides[top].split(".")))
            return Value(v.raw, overrides[top] + (v.key or "")[len(top):], line, col, v.note, v.expect)
        if top in computed:
            at, why = computed[top]
            return Value(v.raw, None, at.line, at.column, f"{v.key or v.note} from {at.key} {at.raw!r}: {why}",
                         v.expect)
        what = f"{v.key} of {src}" if v.key else f"{v.note} [{src}]"
        return Value(v.raw, None, name_v.line, name_v.column, what if v.key is None else
                     (what + (f"; {v.note}" if v.note else "")), v.expect)

    def ours(v: Value | None) -> bool:  # a value this document set (an override) or made the framework compute
        top = ((v.key if v is not None else None) or "").split(".")[0]
        return top in overrides or top in computed
    layers = [replace(g, d=repoint(g.d), base=repoint(g.base), scheme=repoint(g.scheme), block=repoint(g.block),
                      window=repoint(g.window), chunk=repoint(g.chunk),
                      params={k: repoint(p) for k, p in g.params.items()})
              for g in cfg.layers]
    inputs = [repoint(v) for v in cfg.inputs if ours(v)] + doc.inputs
    problems = [p._replace(value=repoint(p.value)) for p in map(as_problem, cfg.problems) if ours(p.value)] \
        if alone is not None else list(cfg.problems)
    refusals = [(ver, repoint(v), why) for ver, v, why in cfg.refusals if ours(v)] if alone is not None \
        else list(cfg.refusals)
    train = Value(o.train, None, 1, 1, "--train", "int") if o.train is not None else repoint(cfg.train_len)
    target = Value(o.target, None, 1, 1, "--target", "int") if o.target is not None else repoint(cfg.target)
    return replace(cfg, arch=arch, kind="training", head_dim=repoint(cfg.head_dim), layers=layers,
                   max_pos=repoint(cfg.max_pos), original_max=repoint(cfg.original_max), train_len=train,
                   target=target, tune_len=None, dtype=repoint(cfg.dtype), inputs=inputs, problems=problems,
                   refusals=refusals, notes=list(cfg.notes) + ([f"{model.name}: {model.table_note}"]
                                                               if model.table_note else []),
                   considered=sorted(doc.considered),
                   unread=[v for v in cfg.unread if ours(v)] if alone is not None else list(cfg.unread),
                   model=replace(model, loaded=alone, key=name_v.key, at=(name_v.line, name_v.column)))

