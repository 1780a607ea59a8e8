"""Write small checkpoints with a target's own code, for ``ropelaw audit checkpoint``.

Run with the target's install dir on PYTHONPATH (``audits/run.py`` does this):

    python audits/targets/make_checkpoints.py KIND OUT_DIR

KIND is ``hf:MODEL_TYPE`` (a tiny randomly initialised ``AutoModelForCausalLM`` from the installed
transformers, cast with ``model.to(dtype)`` as ``model.bfloat16()`` / DeepSpeed do, then written by
the library's own ``save_pretrained``: ``pytorch_model.bin`` in old releases, ``model.safetensors``
in new ones), ``rotary-embedding-torch`` or ``x-transformers`` (the module's ``state_dict`` after the
cast, written with ``torch.save`` and with ``safetensors``). No weights are downloaded; nothing here
loads a file. Prints one JSON line per written file: {"file", "dtype", "writer"}.
"""

from __future__ import annotations

import json
import os
import sys
import warnings

import torch

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}

# Tiny configs: 1 layer, head dim 64 (2 heads of 64 = hidden 128), real rotary settings otherwise.
HF_CONFIGS = {
    "llama": dict(vocab_size=64, hidden_size=128, intermediate_size=128, num_hidden_layers=1,
                  num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=2048),
    "gpt_neox": dict(vocab_size=64, hidden_size=128, intermediate_size=128, num_hidden_layers=1,
                     num_attention_heads=2, max_position_embeddings=2048),
}


def _emit(path: str, dtype: str, writer: str) -> None:
    print(json.dumps({"file": path, "dtype": dtype, "writer": writer}), flush=True)


def hf(model_type: str, out_dir: str) -> None:
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.for_model(model_type, **HF_CONFIGS[model_type])
    for name, dtype in DTYPES.items():
        torch.manual_seed(0)
        model = AutoModelForCausalLM.from_config(config)  # float32 build
        model = model.to(dtype)                            # the "cast" scenario
        target = os.path.join(out_dir, f"{model_type}-{name}")
        model.save_pretrained(target)
        for file in sorted(os.listdir(target)):
            if file.endswith((".bin", ".safetensors")):
                _emit(os.path.join(target, file), name, f"transformers {transformers.__version__} save_pretrained")


def _save_module(module: torch.nn.Module, stem: str, name: str) -> None:
    from safetensors.torch import save_file

    state = {k: v.detach().contiguous() for k, v in module.state_dict().items()}
    torch.save(state, stem + ".pt")
    _emit(stem + ".pt", name, "torch.save(state_dict)")
    save_file(state, stem + ".safetensors")
    _emit(stem + ".safetensors", name, "safetensors.torch.save_file(state_dict)")


def rotary_embedding_torch(out_dir: str) -> None:
    from rotary_embedding_torch import RotaryEmbedding

    for name, dtype in DTYPES.items():
        module = RotaryEmbedding(dim=64).to(dtype)
        _save_module(module, os.path.join(out_dir, f"rotary_embedding-{name}"), name)


def x_transformers(out_dir: str) -> None:
    from x_transformers import Decoder, TransformerWrapper

    for name, dtype in DTYPES.items():
        torch.manual_seed(0)
        model = TransformerWrapper(num_tokens=64, max_seq_len=0,
                                   attn_layers=Decoder(dim=128, depth=1, heads=2, rotary_pos_emb=True))
        model = model.to(dtype)
        _save_module(model, os.path.join(out_dir, f"decoder-{name}"), name)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    kind, out_dir = argv
    os.makedirs(out_dir, exist_ok=True)
    warnings.filterwarnings("ignore")
    if kind.startswith("hf:"):
        hf(kind[3:], out_dir)
    elif kind == "rotary-embedding-torch":
        rotary_embedding_torch(out_dir)
    elif kind == "x-transformers":
        x_transformers(out_dir)
    else:
        print(f"unknown checkpoint kind {kind!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
