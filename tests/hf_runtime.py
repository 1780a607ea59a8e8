"""What the installed transformers does with a config.json: refuses it, warns, or runs it.

:func:`run_config` writes the mapping to a temporary ``config.json`` and loads it the way a user does
(``AutoConfig.from_pretrained`` on the folder), then builds the model's rotary embedding and, when asked,
a one-layer model (only ``num_hidden_layers``, ``vocab_size`` and ``intermediate_size`` shrunk: keys no
RoPE code reads) and runs its forward on a few positions. It records the stage that raised (with the
exception), and every warning transformers logged on the way (its ``logging`` records and Python
warnings). Used by the severity-parity test (an RV error must mean transformers refuses or crashes)
and by the corpus tests (which compare ropelaw's frequencies with the rotary transformers builds).

Runs in either shared virtualenv (transformers 4.57.1 or 5.23.0); nothing here is version-specific
except :func:`rotary_of`, which finds the rotary module the way each version's models create it.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Outcome:
    """``stage``: ``"config"``, ``"rotary"``, ``"model"`` or ``"forward"`` where it raised, else ``None``."""

    stage: str | None = None
    error: str = ""  # "KeyError: 'mrope'"
    warnings: list = field(default_factory=list)  # every warning message transformers logged
    config: object = None
    rotary: object = None
    model: object = None  # the one-layer model (run_config(build=True) or forward=True)

    @property
    def raised(self) -> bool:
        return self.stage is not None

    def warned(self, pattern: str) -> bool:
        import re

        return any(re.search(pattern, w) for w in self.warnings)

    def behaviour(self, pattern: str | None = None) -> str:
        """``"raises"``, ``"warns"`` (a warning matching ``pattern``, any when None) or ``"runs"``."""
        if self.raised:
            return "raises"
        if self.warnings if pattern is None else self.warned(pattern):
            return "warns"
        return "runs"


class _Collect(logging.Handler):
    def __init__(self, out: list):
        super().__init__(logging.WARNING)
        self.out = out

    def emit(self, record):
        self.out.append(record.getMessage())


@contextlib.contextmanager
def collect_warnings(out: list):
    """Every transformers log record >= WARNING and every Python warning, into ``out`` (not printed).
    ``warning_once``'s cache is cleared first: a message logged by an earlier case must show again."""
    from transformers.utils import logging as tlog

    with contextlib.suppress(AttributeError):
        tlog.warning_once.cache_clear()
    logger = logging.getLogger("transformers")
    handler = _Collect(out)
    saved = (logger.level, logger.propagate, list(logger.handlers))
    disabled = logging.root.manager.disable  # a generator's logging.disable(WARNING) would hide everything
    logging.disable(logging.NOTSET)
    logger.handlers = [handler]
    logger.setLevel(logging.WARNING)
    logger.propagate = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        out.extend(str(w.message) for w in caught)
    finally:
        logger.setLevel(saved[0])
        logger.propagate = saved[1]
        logger.handlers = saved[2]
        logging.disable(disabled)


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def load_config(mapping: dict):
    """transformers' config object for a config.json mapping, loaded from a file as users load it."""
    from transformers import AutoConfig

    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "config.json").write_text(json.dumps(mapping))
        return AutoConfig.from_pretrained(tmp, trust_remote_code=False)  # never run a repository's code


def text_config(config):
    """The language model's config: ``get_text_config()`` where the class has it."""
    get = getattr(config, "get_text_config", None)
    text = get() if callable(get) else config
    return text if hasattr(text, "model_type") else config  # a text_config the class keeps as a plain dict


def rotary_of(model) -> object:
    """The first rotary embedding module of ``model`` (a module whose class name ends in RotaryEmbedding)."""
    for m in model.modules():
        if type(m).__name__.endswith("RotaryEmbedding"):
            return m
    return None


def rotary_class(config):
    """The text model's ``*RotaryEmbedding`` class, from its modeling module (by model_type)."""
    import importlib

    tc = text_config(config)
    mt = tc.model_type
    for name in (mt, mt.removesuffix("_text"), getattr(config, "model_type", mt)):
        try:
            mod = importlib.import_module(f"transformers.models.{name}.modeling_{name}")
        except ImportError:
            continue
        for attr in dir(mod):
            cls = getattr(mod, attr)
            if (attr.endswith("TextRotaryEmbedding") or (attr.endswith("RotaryEmbedding") and "Vision" not in attr)) \
                    and isinstance(cls, type):
                return cls
    return None


SHRINK = {"num_hidden_layers": 1, "vocab_size": 64, "intermediate_size": 32, "moe_intermediate_size": 32,
          "shared_expert_intermediate_size": 32, "intermediate_size_mlp": 32}


def run_config(mapping: dict, *, forward: bool = True, build: bool = False, positions: int = 8,
               far: int | None = None) -> Outcome:
    """Load ``mapping`` as transformers does, build its rotary (and with ``build`` or ``forward`` a one-layer
    model; with ``forward`` run it on ``positions`` tokens, then at position ``far`` if given)."""
    import torch

    out = Outcome()
    with collect_warnings(out.warnings):
        try:
            out.config = load_config(copy.deepcopy(mapping))
        except Exception as exc:  # noqa: BLE001 - the outcome is what transformers raised
            out.stage, out.error = "config", _error(exc)
            return out
        tc = text_config(out.config)
        cls = rotary_class(out.config)
        try:
            if cls is not None:  # GPT-J / CodeGen build their sin/cos table in the attention module
                out.rotary = cls(config=tc)
        except Exception as exc:  # noqa: BLE001
            out.stage, out.error = "rotary", _error(exc)
            return out
        if not (forward or build):
            return out
        small = {k: v for k, v in SHRINK.items() if hasattr(tc, k)}
        try:
            from transformers import AutoModel, AutoModelForCausalLM

            cfg = copy.deepcopy(tc)
            for k, v in small.items():
                setattr(cfg, k, v)
            for k in ("pad_token_id", "bos_token_id", "eos_token_id"):  # ids of the real vocabulary
                if getattr(cfg, k, None) is not None:
                    setattr(cfg, k, 0)
            if isinstance(getattr(cfg, "layer_types", None), list) and hasattr(cfg, "num_hidden_layers") \
                    and not isinstance(getattr(type(cfg), "layer_types", None), property):
                # one layer of each type (Gemma 3 builds a rotary table per type present); 5.23.0's Jamba derives
                # its layer_types from the layer periods (a property without a setter): left to it
                cfg.layer_types = list(dict.fromkeys(cfg.layer_types))
                cfg.num_hidden_layers = len(cfg.layer_types)
            torch.manual_seed(0)
            try:
                model = AutoModelForCausalLM.from_config(cfg).eval()
            except ValueError:  # a multimodal model's text config: its text model (AutoModel) runs the rotary
                try:
                    model = AutoModel.from_config(cfg).eval()
                except ValueError:  # 4.57.1 Mllama: its text config is the composite's causal LM's own class
                    from ropelaw.lint.layers.shrunk import model_class

                    model = model_class(cfg, out.config)(cfg).eval()
        except Exception as exc:  # noqa: BLE001
            out.stage, out.error = "model", _error(exc)
            return out
        out.model = model
        if not forward:
            return out
        try:
            with torch.no_grad():
                ids = torch.arange(positions)[None] % cfg.vocab_size
                model(input_ids=ids)
                if far is not None:
                    model(input_ids=ids[:, :1], position_ids=torch.tensor([[far]]))
        except Exception as exc:  # noqa: BLE001
            out.stage, out.error = "forward", _error(exc)
    return out


def transformers_version() -> str:
    import transformers

    return transformers.__version__


def rotary_tables(rotary) -> dict:
    """``{layer type or "all": (inv_freq as float64 numpy, attention factor)}`` of a built rotary module:
    one table, or one per layer type (5.x Gemma 3 / per-type rotaries: ``{type}_inv_freq`` buffers)."""
    if rotary is None:
        return {}
    if hasattr(rotary, "inv_freq"):
        return {"all": (rotary.inv_freq.double().numpy(), float(getattr(rotary, "attention_scaling", 1.0)))}
    out = {}
    for lt in getattr(rotary, "layer_types", ()) or ():
        inv = getattr(rotary, f"{lt}_inv_freq", None)
        if inv is not None:
            out[lt] = (inv.double().numpy(), float(getattr(rotary, f"{lt}_attention_scaling", 1.0)))
    return out


def model_rotary_tables(model) -> dict:
    """Every rotary table of a built model: ``{module name or name/layer type: (inv_freq, attention)}``
    (4.57.1 Gemma 3: ``rotary_emb`` and ``rotary_emb_local``; 5.23.0: one module with a table per type)."""
    out = {}
    for name, m in model.named_modules():
        if type(m).__name__.endswith("RotaryEmbedding") and "vision" not in name.lower():
            for key, table in rotary_tables(m).items():
                out[name.rsplit(".", 1)[-1] + ("" if key == "all" else "/" + key)] = table
    return out


def verdict(outcome: Outcome) -> str:
    """The manifest's words for an outcome: "runs", or "refuses: <exception>" (first line)."""
    if not outcome.raised:
        return "runs"
    return "refuses: " + outcome.error.splitlines()[0][:160]
