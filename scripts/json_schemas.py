"""The JSON Schemas of every command's ``--format json`` output (docs/schemas/, version 1).

Each schema is inferred from the outputs of the runs in :data:`RUNS` (real inputs: the repository's
configs and fixtures), then committed: tests/test_json_schemas.py validates the outputs of the same runs
against the committed files (jsonschema), and fails when an output no longer fits (a key renamed, a type
changed: bump the version, regenerate, say so in docs/usage.md). Runs that need files the repository
does not hold (an experiment's --out folder, a model directory for eval-length) use ``{scratch}``, a
temporary folder made once per process, where :func:`scratch` writes them. Regenerate with:

    python scripts/json_schemas.py
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "schemas"
VERSION = 1
RUNS = {
    "bound": [["bound", "--d", "128", "--train", "4096", "--base", "1e6"],
              ["bound", "--d", "128", "--train", "4096", "--base", "1e6", "--scheme", "rerope", "--param",
               "window=512"],
              ["bound", "--d", "128", "--train", "4096", "--base", "500", "--scheme", "yarn", "--factor", "8"]],
    "base": [["base", "--d", "128", "--train", "4096", "--target", "32768", "--base", "1e4"]],
    "dims": [["dims", "--d", "16", "--train", "4096", "--base", "1e6"]],
    "schemes": [["schemes"], ["schemes", "yarn", "--d", "128", "--train", "4096", "--base", "1e4", "--factor", "8"]],
    "exact": [["exact", "--dtype", "bf16", "--length", "8192"], ["exact", "--dtype", "fp16", "--length", "100000"]],
    "plan": [["plan", "tests/configs/llama-3.2-1b.json", "--target", "256k"]],
    "lint": [["lint", "tests/configs/llama-2-7b.json", "tests/configs/gemma-3-4b-it.json", "--target", "32768"],
             ["lint", "tests/configs/llama-2-7b.json"],
             ["lint", "tests/fixtures/hf_runtime/ministral3-query-scale.json"],  # query_scale (RL106)
             ["lint", "tests/fixtures/hf_runtime/llama-4-scout.json"],  # query_scale of NoPE layers (Llama 4)
             ["lint", "tests/fixtures/hf_runtime/mllama-cross-attention.json"],  # a cross-attention group
             # a model named elsewhere: from ropelaw's table (RV032), from --model-config, from the Hugging Face cache
             ["lint", "tests/fixtures/frameworks/axolotl/tinker_sft.yaml"],
             ["lint", "tests/fixtures/frameworks/rl/openrlhf_sft.sh", "--model-config",
              "tests/configs/llama-2-7b.json"],
             ["lint", "{hub}/sft.yaml"],
             # a finding's notes (every parameter of the scheme) and fixes available ([*]: summary.fixes)
             ["lint", "tests/configs/llama-3.1-8b.json", "--select", "ALL"],
             ["lint", "tests/fixtures/lint/fixable-rv019.json", "--select", "RV019"]],
    "audit-code": [["audit", "code", "tests/fixtures/static"]],
    # audit module and audit hf print one report type (audit/report.py): one schema for both
    "audit-module": [["audit", "module", "tests/fixtures/runtime/rotary.py:current_positions_buggy", "--length",
                      "1024"],
                     ["audit", "hf", "llama", "--length", "1024", "--scenario", "cast"]],
    "audit-checkpoint": [["audit", "checkpoint", "tests/fixtures/checkpoints/llama-bf16.safetensors"]],
    "rule": [["rule", "RL101"], ["rule", "--all"]],
    # one schema for the four experiments and bound --sweep: the keys every one writes are required, the
    # others typed
    "experiment": [["experiment", name, "--smoke", "--out", "{scratch}/experiments"]
                   for name in ("bound", "extrapolation", "keynorm", "schemes")]
                  + [["experiment", "bound", "--sweep", "--smoke", "--out", "{scratch}/experiments"]],
    "eval-length": [["eval-length", "{scratch}/tiny-llama", "--text", "README.md", "--lengths", "32,64",
                     "--tokenizer", "bytes", "--bands", "2", "--samples", "1", "--threads", "1"],
                    ["eval-length", "{scratch}/tiny-llama", "--text", "README.md", "--lengths", "64",
                     "--tokenizer", "bytes", "--bands", "2", "--samples", "1", "--threads", "1",
                     "--method", "rerope", "--window", "16"]],
}


# Outputs of training or scoring a model: their numbers (and whether a value is null, such as a seed
# comparison without a verdict) depend on the machine's floating point, so their schemas are written from
# this machine's runs and checked against the outputs, not regenerated and compared in the tests.
MEASURED = {"experiment", "eval-length"}


@functools.cache
def scratch() -> str:
    """A temporary folder (removed at exit) holding what the runs need: a 2-layer Llama with random
    weights saved as config.json + model.safetensors (eval-length reads nothing else; its numbers do not
    matter here, only their types)."""
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="ropelaw-schemas-")
    atexit.register(shutil.rmtree, folder, True)
    import torch
    import transformers

    cfg = transformers.LlamaConfig(vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32,
                                   rope_theta=10000.0, tie_word_embeddings=False)
    torch.manual_seed(0)
    transformers.LlamaForCausalLM(cfg).save_pretrained(f"{folder}/tiny-llama", safe_serialization=True)
    return folder


@functools.cache
def hub() -> str:
    """A temporary folder (removed at exit) holding a Hugging Face cache of tests/configs/llama-2-7b.json as
    ``meta-llama/Llama-2-7b-hf`` (refs/main naming its snapshot) and an axolotl config naming that model at
    ``revision_of_model: main``: the run reads it from the cache (``HF_HUB_CACHE``)."""
    import atexit
    import shutil
    import tempfile

    folder = pathlib.Path(tempfile.mkdtemp(prefix="ropelaw-schemas-hub-"))
    atexit.register(shutil.rmtree, str(folder), True)
    repo = folder / "hub" / "models--meta-llama--Llama-2-7b-hf"
    commit = "0" * 40
    from ropelaw.safeio import write_atomic

    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "refs").mkdir()
    write_atomic(str(repo / "refs" / "main"), commit)
    write_atomic(str(repo / "snapshots" / commit / "config.json"),
                 (ROOT / "tests" / "configs" / "llama-2-7b.json").read_text(encoding="utf-8"))
    write_atomic(str(folder / "sft.yaml"), "base_model: meta-llama/Llama-2-7b-hf\nrevision_of_model: main\n"
                                           "sequence_len: 4096\n")
    return str(folder)


def output(argv: list[str]):
    """The parsed ``--format json`` output of ``ropelaw argv`` run from the repository root (each run once
    per process: the tests validate and compare the same outputs)."""
    return json.loads(_output_text(tuple(argv)))


@functools.cache
def _output_text(argv: tuple[str, ...]) -> str:
    import os

    from ropelaw.cli import main

    if any("{scratch}" in a for a in argv):
        argv = tuple(a.replace("{scratch}", scratch()) for a in argv)
    uses_hub, cache = any("{hub}" in a for a in argv), os.environ.get("HF_HUB_CACHE")
    if uses_hub:
        argv = tuple(a.replace("{hub}", hub()) for a in argv)
        os.environ["HF_HUB_CACHE"] = f"{hub()}/hub"
    buf = io.StringIO()
    here = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(buf):
            code = main([*argv, "--format", "json"])
    finally:
        os.chdir(here)
        if uses_hub and cache is None:
            del os.environ["HF_HUB_CACHE"]
        elif uses_hub:
            os.environ["HF_HUB_CACHE"] = cache
    assert code in (0, 1), (argv, code)
    return buf.getvalue()


_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null", list: "array",
          dict: "object"}


def infer(samples: list) -> dict:
    """A schema every sample fits: types seen, object keys (required: those in every sample), items."""
    types = sorted({_TYPES[type(s)] for s in samples})
    if "integer" in types and "number" in types:
        types.remove("integer")
    if "number" in types and "null" not in types:  # a float is null where it is not finite (docs/usage.md)
        types.append("null")
    schema: dict = {"type": types[0] if len(types) == 1 else types}
    objs = [s for s in samples if isinstance(s, dict)]
    if objs:
        keys = sorted({k for o in objs for k in o})
        schema["properties"] = {k: infer([o[k] for o in objs if k in o]) for k in keys}
        schema["required"] = [k for k in keys if all(k in o for o in objs)]
    items = [x for s in samples if isinstance(s, list) for x in s]
    if items:
        schema["items"] = infer(items)
    return schema


def schema_of(name: str) -> dict:
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"urn:ropelaw:schema:{name}:{VERSION}",
            "title": f"ropelaw {name.replace('-', ' ')} --format json, version {VERSION}",
            **infer([output(argv) for argv in RUNS[name]])}


def main() -> None:
    from ropelaw.safeio import write_atomic

    OUT.mkdir(parents=True, exist_ok=True)
    for name in RUNS:
        write_atomic(str(OUT / f"{name}.schema.json"), json.dumps(schema_of(name), indent=1, sort_keys=True) + "\n")
    print(f"{OUT}: {len(RUNS)} schemas, version {VERSION}", file=sys.stderr)


if __name__ == "__main__":
    main()
