"""Levanter: a read-the-code test standing in for a differential. Levanter's releases on PyPI are 1.0.1 and 1.1
(October 2023), two years before the corpus commit (stanford-crfm/levanter@9263f81e, September 2025), and its
successor marin-levanter (0.2.1.dev202605292307 onwards) starts eight months after it: layers/rotary.py,
models/llama.py, main/train_lm.py and compat/hf_checkpoints.py all differ from 9263f81e's (compared here by hand,
36 to 572 changed lines each). Neither is the code the corpus's configs were written for, and 9263f81e cannot be
fetched in CI: Levanter's config loading is written out again below from its source at 9263f81e (not committed
here), line by line with where it is, independently of ropelaw's dialect, and every Levanter YAML of the corpus
(``frameworks-examples/levanter``, with the rows kept elsewhere in the corpus) is read both ways.

- which ``main`` reads a file (each is a draccus dataclass; draccus refuses keys a dataclass lacks):
  ``lora_lm.py`` (``LoraLmConfig``: ``initialize_from_hf`` names the model, no ``model`` field) by ``lora`` /
  ``peft_save_path`` / ``max_train_length``; ``sample_lm.py`` / ``eval_lm.py`` by ``hf_checkpoint``;
  ``eval_harness.py`` by ``checkpoint_is_hf: true`` with ``checkpoint_path``; ``sft.py`` / ``sft_mixture.py``
  by a field of theirs that ``TrainLmConfig`` lacks (``max_seq_len``, ``model_name_or_path``,
  ``supervised_data``, ...) and no ``data`` field; else ``train_lm.py`` (``TrainLmConfig``, line 37). A file with
  no model and none of these (``config/data/*``, ``config/optim/*``: sections that other files ``!include``) is
  no run;
- ``initialize_from_hf: Union[bool, str]`` decoded by draccus (``decode_union`` tries bool first; ``decode_bool``
  takes only true / false / "true" / "false"); Levanter tests its truth (``train_lm.py`` line 79, ``sft.py``
  line 108);
- ``train_lm.py`` lines 79-96: ``use_hf_model_config`` replaces the model by the Hugging Face config of the
  checkpoint only inside ``if config.initialize_from_hf``; the checkpoint is that name, or with ``true`` the
  class's ``hf_checkpoint_converter()`` reference (``LlamaConfig.reference_checkpoint``, llama.py line 80);
- ``sft.py`` / ``sft_mixture.py`` lines 108-133: with ``initialize_from_hf`` the model is
  ``from_hf(model_name_or_path).default_config`` (of ``initialize_from_hf`` when it is a name) with ``seq_len =
  max_seq_len``; without it ``trainer.initialize_from`` is required and the file's model section is built;
- a model section: ``LmConfig`` choice by ``type`` (registered at 9263f81e: gemma, gemma2, gemma3, gpt2,
  gpt2_hyena, llama, mistral, mixtral, olmo2, qwen, qwen3, whisper); gpt2 learns its positions, gpt2_hyena has no
  attention, whisper is not a rotary decoder; head ``head_dim or hidden_dim // num_heads``; ``rope`` a
  ``RotaryEmbeddingsConfig`` choice (rotary.py lines 76-243: default theta 10,000 factor 1; llama3 theta 500,000
  factor 8, low 1, high 4, original 8,192; yarn theta 10,000 factor 1 ...); ``seq_len`` the length;
- ``LlamaConfig.from_hf_config`` (llama.py lines 105-120): ``seq_len = max_position_embeddings``, head
  ``hidden_size // num_attention_heads``, rope ``RotaryEmbeddingsConfig.from_hf_config(rope_theta, rope_scaling)``
  (rotary.py lines 58-62: the ``rope_type`` / ``type`` choice, its parameters from the dict).
"""

from __future__ import annotations

import json

import corpus_examples as examples
import pytest
import yaml
from frameworks import HUB_MODELS, fake_hub, hub_model_file, offline_hub

from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import ModelNeeded, NotARopeConfig, load_config

REGISTERED = {"gemma", "gemma2", "gemma3", "gpt2", "gpt2_hyena", "llama", "mistral", "mixtral", "olmo2", "qwen",
              "qwen3", "whisper"}  # LmConfig.register_subclass at 9263f81e (src/levanter/models/*.py)
NOT_ROTARY = {"gpt2", "gpt2_hyena", "whisper"}
# class defaults read here: (seq_len, hidden_dim, num_heads, head_dim), the checkpoint of hf_checkpoint_converter()
CLASS = {"llama": ((2048, 4096, 32, None), "NousResearch/Llama-2-7b-hf"),  # llama.py lines 54-59, 80
         "qwen3": ((2048, 4096, 32, None), "NousResearch/Llama-2-7b-hf"),  # Qwen3Config(LlamaConfig)
         "mixtral": ((8192, 4096, 32, None), "mistralai/Mixtral-8x7B-v0.1"),  # mixtral.py lines 64-68
         "gemma": ((8192, 2048, 8, 256), "google/gemma-2b")}  # gemma.py lines 83-89
ROPE = {"default": (None, {"theta": 10000.0, "factor": 1.0}),  # rotary.py lines 76-78
        "llama3": ("llama3", {"theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                              "original_max_position_embeddings": 8192}),  # lines 140-156
        "yarn": ("yarn", {"theta": 10000.0, "factor": 1.0, "beta_fast": 32.0, "beta_slow": 1.0,
                          "original_max_position_embeddings": 2048, "mscale": 1.0})}  # lines 237-243
SFT_FIELDS = ("max_seq_len", "model_name_or_path", "supervised_data", "chat_train_urls", "dataset_type",
              "mixture_weights", "messages_field")
SFT_DEFAULT = {"sft.py": ("NousResearch/Llama-2-7b-hf", 2048), "sft_mixture.py": ("marin-community/marin-8b-base",
                                                                                    2048)}


class _Loader(yaml.SafeLoader):
    """PyYAML with Levanter's ``!include`` (levanter/config.py): the included file's name (only ``data:`` and
    ``optimizer:`` sections are included in the corpus; neither holds the model)."""


_Loader.add_constructor("!include", lambda loader, node: {"!include": loader.construct_scalar(node)})


def draccus_bool_or_str(v):
    """``Union[bool, str]`` as draccus decodes it: True / False, or the name."""
    if v is True or v == "true":
        return True
    if v is False or v == "false" or v is None:
        return False
    return str(v)


def from_hf(config: dict, seq_len: int | None = None) -> dict:
    """``LlamaConfig.from_hf_config`` (llama.py lines 105-120) of a Hugging Face config.json."""
    scaling = config.get("rope_scaling")
    kind = (scaling.get("rope_type") or scaling.get("type") or "default") if scaling else "default"
    scheme, defaults = ROPE[kind]
    params = {k: scaling.get(k, v) for k, v in defaults.items() if k != "theta"} if scaling else {}
    return {"d": config["hidden_size"] // config["num_attention_heads"], "base": float(config["rope_theta"]),
            "scheme": scheme or "default", "params": params if scheme else {},
            "length": seq_len or config["max_position_embeddings"]}


def levanter_reading(data) -> dict | str:
    """What Levanter at 9263f81e runs from a file: ``{"named": checkpoint, ...}``, the built rotary, or why none."""
    if not isinstance(data, dict):
        return "no run"
    trainer = isinstance(data.get("trainer"), dict)
    init = draccus_bool_or_str(data.get("initialize_from_hf", False))
    if "model" not in data and isinstance(init, str) and trainer and any(
            k in data for k in ("lora", "peft_save_path", "max_train_length", "merged_hf_save_path")):
        return {"named": init.split("@")[0], "main": "lora_lm.py"}
    if isinstance(data.get("hf_checkpoint"), str) and data.get("checkpoint_path") is None and trainer:
        return {"named": data["hf_checkpoint"], "main": "sample_lm.py"}
    if data.get("checkpoint_is_hf") is True and isinstance(data.get("checkpoint_path"), str):
        return {"named": data["checkpoint_path"], "main": "eval_harness.py"}
    model = data.get("model")
    if not isinstance(model, dict):
        return "no run"
    kind = model.get("type")
    if kind not in REGISTERED:
        return "unregistered"
    if kind in NOT_ROTARY:
        return "not rotary"
    sft = trainer and "data" not in data and any(k in data for k in SFT_FIELDS)
    if sft and init:
        main = "sft_mixture.py" if "mixture_weights" in data else "sft.py"
        name = init if isinstance(init, str) else data.get("model_name_or_path", SFT_DEFAULT[main][0])
        return {"named": name, "main": main, "tune": data.get("max_seq_len", SFT_DEFAULT[main][1])}
    if not sft and init and data.get("use_hf_model_config") is True:
        ref = model.get("reference_checkpoint", CLASS[kind][1]) if kind in ("llama", "qwen3") else CLASS[kind][1]
        return {"named": init if isinstance(init, str) else ref, "main": "train_lm.py"}
    (seq, hidden, heads, head), _ = CLASS[kind]
    rope = model.get("rope") or {}
    scheme, defaults = ROPE[rope.get("type", "default")]
    values = {k: rope.get(k, v) for k, v in defaults.items()}
    if scheme == "yarn" and values["factor"] == 1.0:
        scheme = None  # factor 1: YaRN's every change is the identity (rotary.py lines 186-235)
    loaded = bool(init) or bool(data.get("initialize_from_checkpoint_path")) or sft or (
        trainer and bool(data["trainer"].get("initialize_from")))
    return {"d": model.get("head_dim") or model.get("hidden_dim", hidden) // model.get("num_heads", heads)
            if head is None else model.get("head_dim", head),
            "base": float(values["theta"]), "scheme": scheme or "default",
            "params": {k: float(v) if k != "original_max_position_embeddings" else v
                       for k, v in values.items() if k != "theta"} if scheme else {},
            "length": model.get("seq_len", seq), "from_start": scheme is not None and not loaded}


def ropelaw_reading(r) -> dict:
    s = r.layers[0].spec
    return {"d": s.d, "base": float(s.base), "scheme": s.scheme, "params": s.param_dict(), "length": s.train_len,
            "from_start": bool(s.pretrained_with_scheme)}


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    return fake_hub(tmp_path_factory.mktemp("levanter-hub"))


@pytest.mark.parametrize("key", examples.keys("levanter", {}) or ["(no corpus)"])
def test_levanter_file(key, hub, monkeypatch):
    if key == "(no corpus)":
        pytest.skip(f"no {examples.SOURCES} (ROPELAW_CORPUS)")
    path = examples.path_of("levanter", key, {})
    cache, held = hub
    offline_hub(monkeypatch, cache)
    want = levanter_reading(yaml.load(path.read_text(), Loader=_Loader))
    try:
        r = lint_config(load_config(str(path)))
    except ModelNeeded as exc:
        assert isinstance(want, dict) and "named" in want and want["named"] not in held, (key, want, str(exc))
        assert repr(want["named"]) in str(exc), (key, want, str(exc))
        return
    except NotARopeConfig as exc:
        assert isinstance(want, str), (key, want, str(exc))
        said = {"no run": "no RoPE settings found", "unregistered": "is not one of the model types registered",
                "not rotary": "not RoPE"}[want]
        assert said in str(exc), (key, want, str(exc))
        return
    assert isinstance(want, dict), (key, want, r.ok_line())
    assert not r.config.unread, (key, r.config.unread)
    if "named" in want:
        assert want["named"] in r.config.arch, (key, want, r.config.arch)
        if want["named"] not in held:  # ropelaw's table stands in for the Hub config: said, as RV032
            assert "RV032" in {f.code for f in r.findings}, (key, [f.code for f in r.findings])
            return
        hf = from_hf(json.loads(hub_model_file(want["named"]).read_text()))
        got = ropelaw_reading(r)
        assert {k: got[k] for k in ("d", "base", "scheme", "params")} == \
            {k: hf[k] for k in ("d", "base", "scheme", "params")}, key
        assert r.config.target.raw == hf["length"], key  # LlamaConfig.from_hf_config: seq_len
        if "tune" in want:
            assert r.config.tune_len.raw == want["tune"], key
        return
    assert ropelaw_reading(r) == want, key


def test_the_corpus_exercises_every_path():
    """Every kind of run of the read-the-code reading occurs in the corpus (so the test above compares each)."""
    if not examples.rows("levanter"):
        pytest.skip(f"no {examples.SOURCES} (ROPELAW_CORPUS)")
    seen = set()
    for key in examples.keys("levanter", {}):
        want = levanter_reading(yaml.load(examples.path_of("levanter", key, {}).read_text(), Loader=_Loader))
        seen.add(want if isinstance(want, str) else want.get("main") or ("rope", want["scheme"], want["from_start"]))
    assert {"no run", "unregistered", "not rotary", "lora_lm.py", "sample_lm.py", "sft.py", "sft_mixture.py",
            "train_lm.py", ("rope", "default", False), ("rope", "llama3", True),
            ("rope", "llama3", False)} <= seen, seen


@pytest.mark.parametrize("text, want", [
    # use_hf_model_config without initialize_from_hf: ignored (train_lm.py lines 79-96)
    ("model:\n  type: llama\nuse_hf_model_config: true\ntrainer: {}\n", (128, 10000.0, "default", 2048)),
    ("model:\n  type: llama\ninitialize_from_hf: 'false'\nuse_hf_model_config: true\ntrainer: {}\n",
     (128, 10000.0, "default", 2048)),
    # a yarn block with factor 1 is plain RoPE; llama3's defaults
    ("model:\n  type: llama\n  seq_len: 4096\n  rope:\n    type: yarn\ntrainer: {}\n", (128, 10000.0, "default", 4096)),
    ("model:\n  type: mixtral\n  rope:\n    type: llama3\n    factor: 16\ntrainer: {}\n", (128, 500000.0, "llama3",
                                                                                           8192)),
    # an SFT run without initialize_from_hf builds the model section (and is never a pre-training)
    ("max_seq_len: 1024\nmodel:\n  type: llama\n  hidden_dim: 2048\n  rope:\n    type: llama3\n"
     "trainer:\n  initialize_from: gs://run/ckpt\n", (64, 500000.0, "llama3", 2048)),
])
def test_written_configs_both_ways(tmp_path, hub, monkeypatch, text, want):
    """Paths the corpus does not exercise, read both ways."""
    cache, _ = hub
    offline_hub(monkeypatch, cache)
    p = tmp_path / "run.yaml"
    p.write_text(text)
    theirs = levanter_reading(yaml.safe_load(text))
    assert (theirs["d"], theirs["base"], theirs["scheme"], theirs["length"]) == want
    assert ropelaw_reading(lint_config(load_config(str(p)))) == theirs


def test_sft_named_model_is_the_hub_config(tmp_path, hub, monkeypatch):
    """sft.py with ``initialize_from_hf: true`` builds ``model_name_or_path``'s Hub config at ``max_seq_len``, not
    the file's model section (which here says something else): a real config.json of the corpus."""
    cache, held = hub
    name = "meta-llama/Llama-3.2-1B"
    if name not in held:
        pytest.skip(f"{HUB_MODELS[name]['file']} is not in the corpus")
    offline_hub(monkeypatch, cache)
    text = (f"max_seq_len: 16384\nmodel_name_or_path: {name}\ninitialize_from_hf: true\n"
            "model:\n  type: llama\n  hidden_dim: 1024\n  rope:\n    type: default\ntrainer:\n  mp: f32\n")
    p = tmp_path / "sft.yaml"
    p.write_text(text)
    want = levanter_reading(yaml.safe_load(text))
    assert want == {"named": name, "main": "sft.py", "tune": 16384}
    r = lint_config(load_config(str(p)))
    hf = from_hf(json.loads(hub_model_file(name).read_text()))
    got = ropelaw_reading(r)
    assert (got["d"], got["base"], got["scheme"], got["params"]) == (hf["d"], hf["base"], hf["scheme"], hf["params"])
    assert r.config.tune_len.raw == 16384 and name in r.config.arch
