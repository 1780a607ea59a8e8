"""Building real Hugging Face rotary embeddings from small configs (no weights) and auditing them."""

from __future__ import annotations

import importlib
import inspect
from typing import Any
from collections.abc import Callable, Iterable

from ..errors import UsageError
from .conventions import convention_of, parameters_of
from .measure import DEFAULT_CHUNK
from .module import ModuleAudit, audit_module, require_torch, runtime_findings
from .scenarios import SCENARIOS
from .target import init_cache_length, source_of


_HF_PREFERRED = {"gpt_neox": "GPTNeoX", "gptj": "GPTJ", "qwen2": "Qwen2", "phi3": "Phi3"}


def hf_rotary_factory(model_type: str, overrides: dict[str, Any] | None = None, length: int | None = None
                      ) -> tuple[Callable[[], Any], dict[str, Any]]:
    """A zero-argument factory building ``model_type``'s rotary embedding from a small config.

    Uses the installed transformers: ``AutoConfig.for_model(model_type, **overrides)`` (no
    weights), then the architecture's ``*RotaryEmbedding`` class with whichever constructor the
    version has: ``(config=..., device=None)`` (>= 4.4x) or ``(dim, max_position_embeddings,
    base)`` (<= 4.37 and kin). Returns (factory, info) with info keys transformers_version,
    model_type, class, module_file, constructor, head_dim, rotary_dim, base,
    max_position_embeddings (the value the module is built with), max_position_embeddings_config,
    max_position_embeddings_note.

    Legacy classes build a cos/sin cache for max_position_embeddings positions at init and
    rebuild it in forward only beyond (:func:`init_cache_length`). When ``length`` is given, the
    config's max_position_embeddings covers it, the user did not set it (``overrides``) and a
    float32 build holds such a cache, the module is built with :func:`rebuild_max_positions`
    (``length // 4``) instead, so that the audit runs the rebuild path; the note says so.
    """
    from ..errors import require

    transformers = require("transformers", "hf", "`audit hf`")
    config = _small_config(transformers, model_type, overrides)
    cls = _rotary_class(transformers, model_type)
    head_dim, rotary_dim, base, config_notes = _rope_dims_of(model_type, config)
    max_pos = getattr(config, "max_position_embeddings", 2048) or 2048
    params = [p.name for p in parameters_of(cls.__init__)]

    def make(mpe: int) -> tuple[Callable[[], Any], str]:
        if "config" in params:
            cfg = config
            if mpe != max_pos:
                import copy

                cfg = copy.deepcopy(config)
                cfg.max_position_embeddings = mpe
            return (lambda: cls(config=cfg)), "config"
        kwargs: dict[str, Any] = {}
        if "max_position_embeddings" in params:
            kwargs["max_position_embeddings"] = mpe
        if "base" in params:
            kwargs["base"] = base
        return (lambda: cls(rotary_dim, **kwargs)), "dim, max_position_embeddings, base"

    factory, ctor = make(max_pos)
    used, note = max_pos, None
    if (length is not None and "max_position_embeddings" not in (overrides or {}) and max_pos >= length
            and ("config" in params or "max_position_embeddings" in params)
            and convention_of(cls.forward) == "hf-legacy"):
        import torch

        # a cheap test build with 16 positions (the config's value may be millions of rows): a class
        # whose init cache has exactly max_position_embeddings rows would cover the audited length
        small = min(16, max_pos)
        old = torch.get_default_dtype()
        torch.set_default_dtype(torch.float32)
        try:
            cached = init_cache_length(make(small)[0]())
        except Exception:  # the audit itself reports a factory that raises
            cached = None
        finally:
            torch.set_default_dtype(old)
        if cached == small:
            used = rebuild_max_positions(length, max_pos)
            factory, ctor = make(used)
            note = (f"max_position_embeddings {used:,} instead of the config's {max_pos:,}: {cls.__name__} builds "
                    f"its cos/sin cache at init for max_position_embeddings positions and rebuilds it in forward "
                    f"only beyond; {max_pos:,} would cover the audited {length:,} and hide the rebuild path "
                    f"(--config max_position_embeddings={max_pos} audits the init cache)")
    path, line = source_of(cls)
    info = {"transformers_version": transformers.__version__, "model_type": model_type,
            "class": cls.__name__, "module_file": path, "line": line, "constructor": ctor,
            "head_dim": head_dim, "rotary_dim": rotary_dim, "base": _config_base(model_type, base),
            "max_position_embeddings": used, "max_position_embeddings_config": max_pos,
            "max_position_embeddings_note": note, "config_notes": config_notes}
    return factory, info


def _small_config(transformers: Any, model_type: str, overrides: dict[str, Any] | None) -> Any:
    """``AutoConfig.for_model(model_type, **overrides)`` (no weights), or a one-line error naming the type."""
    try:
        return transformers.AutoConfig.for_model(model_type, **(overrides or {}))
    except KeyError:
        raise UsageError(f"transformers {transformers.__version__} has no model type {model_type!r}") from None
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        if "Unrecognized model" in first or "does not recognize" in first:
            raise UsageError(f"transformers {transformers.__version__} has no model type {model_type!r}") from None
        raise UsageError(f"cannot build a {model_type!r} config with transformers {transformers.__version__}: "
                         f"{type(exc).__name__}: {first}") from None


def _rotary_class(transformers: Any, model_type: str) -> type[Any]:
    """The ``*RotaryEmbedding`` class of ``model_type``'s modeling module: the one named for the architecture
    (``_HF_PREFERRED``'s prefix where the class name is spelt otherwise), else the shortest name."""
    mod_name = f"transformers.models.{model_type}.modeling_{model_type}"
    try:
        module = importlib.import_module(mod_name)
    except Exception as exc:
        raise UsageError(f"cannot import {mod_name}: {type(exc).__name__}: {exc}") from None
    classes: list[tuple[str, type[Any]]] = [
        (n, c) for n, c in vars(module).items()
        if inspect.isclass(c) and n.endswith("RotaryEmbedding") and c.__module__ == module.__name__]
    if not classes:
        raise UsageError(f"{model_type}: transformers {transformers.__version__} defines no *RotaryEmbedding class "
                         "(this architecture may not use RoPE in this version)")
    prefix = _HF_PREFERRED.get(model_type, "")
    plain = [c for n, c in classes if n.lower() == f"{model_type.replace('_', '')}rotaryembedding"
             or (prefix and n == f"{prefix}RotaryEmbedding")]
    return plain[0] if plain else min(classes, key=lambda nc: len(nc[0]))[1]


def _rope_dims_of(model_type: str, config: Any) -> tuple[int | None, int | None, Any, list[str]]:
    """``(head_dim, rotary_dim, base, notes)`` of a transformers config, through the linter's loader.

    The one place that derives head dim, rotary dims and base from a config is
    :func:`ropelaw.lint.loader.load_mapping` (``qk_rope_head_dim``, ``kv_channels``,
    ``partial_rotary_factor`` / ``rotary_pct``, ``rope_theta`` / ``rotary_emb_base`` /
    ``rope_parameters``, ChatGLM's ``rope_ratio``, architecture defaults); this reads its
    result. A dimension that cannot be derived is ``None``; a base that is not a number is
    returned as written (:func:`_config_base` reports it); ``notes`` are the loader's
    assumptions (e.g. a base taken from the architecture's default).
    """
    from ..lint.loader import load_mapping

    label = f"{model_type} config"
    try:
        loaded = load_mapping(config.to_dict(), path=label, dialect="hf")
    except ValueError as exc:  # UsageError / NotARopeConfig: one line naming the config
        raise UsageError(f"{model_type}: cannot read the RoPE settings of its config: {exc}") from None
    main = loaded.layers[0]

    def whole(v) -> int | None:
        x = v.number() if v is not None else None
        return int(x) if x is not None else None

    base = main.base.number()
    return whole(loaded.head_dim), whole(main.d), main.base.raw if base is None else base, list(loaded.notes)


def rebuild_max_positions(length: int, config_value: int) -> int:
    """max_position_embeddings that makes a legacy class rebuild its cache for ``length`` positions.

    min(config_value, max(1, length // 4)): strictly below ``length`` for length >= 2, so
    ``forward(x, seq_len=length)`` takes the rebuild branch (``seq_len > max_seq_len_cached``)
    and every audited position comes from the rebuilt cache; 2,048 at the default 8,192.
    """
    return max(1, min(int(config_value), length // 4))


def _config_base(model_type: str, base: Any) -> float:
    """The config's RoPE base as a float, or a one-line error naming the key to fix."""
    try:
        return float(base)
    except (TypeError, ValueError):
        raise UsageError(f"{model_type}: the config's rope_theta is {base!r}, not a number "
                         "(--config rope_theta=10000)") from None


def audit_hf(model_type: str, dtype: str = "bf16", length: int = 8192, scenarios: Iterable[str] = SCENARIOS,
             base: float | None = None, overrides: dict[str, Any] | None = None, chunk: int = DEFAULT_CHUNK,
             progress: bool = False) -> ModuleAudit:
    """:func:`audit_module` on the rotary embedding of a transformers architecture (no weights)."""
    require_torch()
    factory, info = hf_rotary_factory(model_type, overrides, length=length)
    audit = audit_module(factory, dtype, length, scenarios, base=base, head_dim=info["head_dim"], chunk=chunk,
                         progress=progress, name=f"transformers {info['transformers_version']} {info['class']}")
    audit.path, audit.line = info["module_file"] or "-", info["line"]
    audit.max_position_embeddings = info["max_position_embeddings"]
    if info["max_position_embeddings_note"]:
        audit.notes.insert(0, info["max_position_embeddings_note"])
    audit.findings = runtime_findings(audit)
    return audit
