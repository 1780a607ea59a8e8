"""llama.cpp's own HF-to-GGUF conversion, run on a config.json alone: the GGUF metadata and the RoPE tensors it
writes (no weights, no vocabulary).

The conversion code is read from the llama-cpp-python==0.3.36 sdist (``vendor/llama.cpp/conversion/``,
``convert_hf_to_gguf.py``'s package, and the ``gguf-py`` it ships: PyPI's gguf 0.19.0 lacks constants 32 of
its modules use), extracted to a directory given by ``$ROPELAW_LLAMACPP_SRC`` (``.ci/run`` downloads the
sdist with ``pip download --no-deps`` and extracts those folders); it is never committed. For each config
the model class the conversion registers for ``architectures[0]`` is built on a directory holding only that
config.json and asked for what it writes: ``set_gguf_parameters()`` (the metadata) and
``generate_extra_tensors()`` (``rope_freqs.weight``, ``rope_factors_long/short.weight``); the file is
written by the conversion's own ``GGUFWriter``. Loading puts the sdist's gguf-py in place of the installed
``gguf`` for the rest of the process: run it in a pytest process of its own (the CI step does).
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from ropelaw.runtimes import LLAMACPP_PIN

PIN = LLAMACPP_PIN


def source() -> Path | None:
    """The extracted ``vendor/llama.cpp`` of the pinned sdist, or None."""
    root = os.environ.get("ROPELAW_LLAMACPP_SRC")
    if not root:
        return None
    p = Path(root)
    for cand in (p, p / "vendor" / "llama.cpp", p / "llama_cpp_python-0.3.36" / "vendor" / "llama.cpp"):
        if (cand / "conversion" / "__init__.py").is_file() and (cand / "gguf-py" / "gguf").is_dir():
            return cand
    return None


def load() -> Any:
    """The conversion package (``conversion``), its gguf-py first on sys.path."""
    src = source()
    if src is None:
        raise RuntimeError("set ROPELAW_LLAMACPP_SRC to the extracted llama-cpp-python==0.3.36 sdist")
    for p in (str(src), str(src / "gguf-py")):
        if p not in sys.path:
            sys.path.insert(0, p)
    sys.modules.pop("gguf", None)
    for name in [m for m in sys.modules if m == "gguf" or m.startswith("gguf.")]:
        del sys.modules[name]
    logging.getLogger("hf-to-gguf").setLevel(logging.ERROR)
    conv = importlib.import_module("conversion")
    if hasattr(conv, "load_all_models"):
        conv.load_all_models()
    return conv


class NotConverted(Exception):
    """The conversion has no class for the architecture, or its metadata step needs files beside config.json."""


def convert(config: dict, out: Path) -> dict:
    """Write ``out`` (a GGUF of the conversion's metadata and RoPE tensors) from ``config``; returns
    ``{"arch": gguf architecture, "class": the conversion's class, "keys": {key: value}}``."""
    conv = load()
    import gguf  # the conversion's own gguf-py (load() put it first)

    archs = config.get("architectures") or []
    if not archs:
        raise NotConverted("no architectures in config.json")
    try:
        cls = conv.ModelBase.from_model_architecture(archs[0], conv.ModelType.TEXT)
    except NotImplementedError:
        raise NotConverted(f"llama.cpp's conversion has no class for {archs[0]}") from None
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "config.json").write_text(json.dumps(config))
        try:
            model = cls(d, gguf.LlamaFileType.ALL_F32,
                        d / "x.gguf")  # its own load_hparams: AutoConfig, then config.json
            model.set_gguf_parameters()
            extra = list(model.generate_extra_tensors())
        except Exception as exc:  # the metadata step of this class needs more than config.json
            raise NotConverted(f"{cls.__name__}: {type(exc).__name__}: {str(exc)[:160]}") from None
        w = model.gguf_writer
        for name, t in extra:
            w.add_tensor(name, t.numpy())
        w.write_header_to_file(path=out)
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        keys = {k: getattr(v, "value", v) for k, v in w.kv_data[0].items()}
    return {"arch": gguf.MODEL_ARCH_NAMES[cls.model_arch], "class": cls.__name__, "keys": keys,
            "tensors": [n for n, _ in extra]}
