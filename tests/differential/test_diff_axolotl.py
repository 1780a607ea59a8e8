"""axolotl's own model-config loading on every example config of its repository (axolotl-ai-cloud/axolotl@067b021c,
2026-07-24; pinned: axolotl==0.18.0, released 2026-07-17, 9 commits before it) against ropelaw's reading.

Run on CPU from the wheel: ``loaders/utils.py`` ``load_model_config`` (taken from its source alone:
``AutoConfig.from_pretrained(base_model_config or base_model, trust_remote_code, revision=revision_of_model)``, then
``setattr`` of each ``overrides_of_model_config`` key) on a fake Hugging Face cache of real config.json files
(tests/corpus/hub_models.json; an example naming a model whose file is not in the corpus is skipped, naming it),
and the rotary transformers builds for the text model (its ``*RotaryEmbedding`` class). transformers: the installed \
one (the README suite's 4.57.1;
the .ci/run step also runs this file under 5.23.0; axolotl 0.18.0 pins 5.14.1, not installed here).

Not run, and mirrored here: axolotl's pydantic validation (``utils/schemas/``; it imports most of axolotl): its
aliases (``model_config`` -> ``overrides_of_model_config``, ``model_revision`` -> ``revision_of_model``,
``schemas/deprecated.py`` ``RemappedParameters`` / ``schemas/model.py``) and its default ``sequence_len`` 512
(``schemas/config.py``); ``check_model_config`` (use_cache, multimodal and LoRA checks: nothing of the rotary) is a
stub. The config object axolotl passes around is a ``DictDefault`` (a missing key reads None): a dict subclass
that does the same stands in for it.
"""

from __future__ import annotations

import ast
import json

import pytest
import yaml

from frameworks import (example, example_files, fake_hub, offline_hub, ropelaw_rotary, same_frequencies,
                        refused_by_transformers, transformers_rotary, unpacked)
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import NotARopeConfig, load_config

FILES = example_files("axolotl")
ALIASES = {"model_config": "overrides_of_model_config", "model_revision": "revision_of_model"}


class DictDefault(dict):
    """axolotl's ``utils/dict.py`` ``DictDefault``, for reading: a missing key is None."""

    def __getattr__(self, name):
        return self.get(name)


@pytest.fixture(scope="module")
def load_model_config(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    root = unpacked(tmp_path_factory, "axolotl", "0.18.0") / "axolotl"
    src = (root / "loaders" / "utils.py").read_text()
    fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "load_model_config")
    ns = {"AutoConfig": transformers.AutoConfig, "transformers": transformers, "DictDefault": DictDefault,
          "PretrainedConfig": transformers.PretrainedConfig, "addict": None,
          "check_model_config": lambda cfg, model_config: None}
    exec(compile(ast.Module([fn], []), "axolotl/loaders/utils.py", "exec"), ns)
    return ns["load_model_config"]


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    return fake_hub(tmp_path_factory.mktemp("axolotl-hub"))


@pytest.mark.parametrize("rel", FILES)
def test_axolotl_reads_its_examples_as_axolotl_loads_them(load_model_config, hub, monkeypatch, rel):
    path = example("axolotl", rel)
    cache, held = hub
    data = yaml.safe_load(path.read_text())
    cfg = DictDefault({ALIASES.get(k, k): v for k, v in data.items()}) if isinstance(data, dict) else None
    name = (cfg.base_model_config or cfg.base_model) if cfg is not None else None
    if not isinstance(name, str):  # no model: a cloud launcher's settings (modal, baseten)
        with pytest.raises(NotARopeConfig):
            load_config(str(path))
        return
    if name not in held:
        pytest.skip(f"{rel} names {name}, whose config.json is not in the corpus yet (tests/corpus/hub_models.json)")
    offline_hub(monkeypatch, cache)
    config = load_model_config(cfg)
    r = lint_config(load_config(str(path)))
    if refused_by_transformers(config, r):
        return
    theirs, attention = transformers_rotary(config)
    ours = ropelaw_rotary(r)
    same_frequencies(theirs, ours.inv_freq)
    assert ours.attention == pytest.approx(attention, rel=1e-12)
    assert ours.tune == (cfg.sequence_len or 512) and r.config.model.source == "hf-cache"


PERTURBED = {  # overrides_of_model_config of an axolotl config naming meta-llama/Llama-3.2-1B (llama3 x32, base 5e5)
    "rope_theta": {"rope_theta": 1000000.0},
    "rope_scaling": {"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}},
    "rope_scaling+theta": {"rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                            "original_max_position_embeddings": 8192,
                                            "rope_theta": 1000000.0}},
    "rope_parameters+theta": {"rope_parameters": {"rope_type": "linear", "factor": 2.0, "rope_theta": 500000.0}},
    "partial_rotary_factor": {"partial_rotary_factor": 0.5},
}


@pytest.mark.parametrize("case", sorted(PERTURBED))
def test_axolotl_overrides_as_transformers_5_runs_them(load_model_config, hub, monkeypatch, tmp_path, case):
    """Perturbed: axolotl sets ``overrides_of_model_config`` on the config after transformers built it. Under
    transformers 5 (axolotl 0.18.0 pins 5.14.1) the RoPE lives in ``rope_parameters`` by then: ``rope_theta`` changes
    nothing, a ``rope_scaling`` without its own ``rope_theta`` makes the rotary unbuildable (TypeError), one with it
    and ``partial_rotary_factor`` take effect. ropelaw reads them so (RV019 warning, RV033) whatever transformers is
    installed; this runs where transformers 5 is (the .ci/run step's .venv-tf5)."""
    import transformers

    if int(transformers.__version__.split(".")[0]) < 5:
        pytest.skip(f"transformers {transformers.__version__}: axolotl 0.18.0 runs transformers 5 (.venv-tf5 "
                    "runs this)")
    cache, held = hub
    if "meta-llama/Llama-3.2-1B" not in held:
        pytest.skip("meta-llama/Llama-3.2-1B's config.json is not in the corpus")
    offline_hub(monkeypatch, cache)
    over = PERTURBED[case]
    cfg = DictDefault({"base_model": "meta-llama/Llama-3.2-1B", "sequence_len": 4096,
                       "overrides_of_model_config": over})
    path = tmp_path / "ax.yaml"
    path.write_text(yaml.safe_dump(dict(cfg)))
    r = lint_config(load_config(str(path)))
    codes = {f.code for f in r.findings}
    import warnings

    try:
        with warnings.catch_warnings():  # transformers 5: "`rope_scaling` is deprecated ... Set `rope_parameters`
            warnings.simplefilter("ignore", FutureWarning)  # instead, with `rope_type` and `rope_theta` included"
            theirs, attention = transformers_rotary(load_model_config(cfg))
    except TypeError:  # the rotary cannot be built: axolotl's run stops
        assert "RV033" in codes, codes
        return
    ours = ropelaw_rotary(r)
    same_frequencies(theirs, ours.inv_freq)
    assert ours.attention == pytest.approx(attention, rel=1e-12)
    assert ("RV019" in codes) == (case == "rope_theta"), codes  # an override that changes nothing is said


@pytest.mark.parametrize("theta", [1e6, None], ids=["rope_theta-1e6", "class-default"])
def test_plan_apply_for_odd_rotary_dims_as_axolotl_runs_it(load_model_config, tmp_path, monkeypatch, theta):
    """`ropelaw plan --apply linear` on an axolotl file whose base model (a local GLM-4.5 config.json) rotates 65
    dims, read as 66 at base^(66/65): axolotl's load_model_config on the edited file builds, under transformers 5,
    the model's own frequencies base^(-2k/65) / 8 (its rotary built from the unedited config.json, divided by the
    linear factor 8), and ropelaw reads the edited file as that. Before 2026-12-07 the writer put the effective
    10,000^(66/65) = 11,522.3 in the override for a model without rope_theta: 11,522.3^(-2k/65) / 8 ran."""
    import os
    import subprocess
    import sys

    import transformers

    if int(transformers.__version__.split(".")[0]) < 5:
        pytest.skip(f"transformers {transformers.__version__}: axolotl 0.18.0 runs transformers 5 (.venv-tf5 runs "
                    "this)")
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({
        "model_type": "glm4_moe", "hidden_size": 512, "num_attention_heads": 4, "num_key_value_heads": 4,
        "head_dim": 130, "partial_rotary_factor": 0.5, "max_position_embeddings": 8192, "num_hidden_layers": 1,
        **({"rope_theta": theta} if theta else {})}))
    path, out = tmp_path / "ax.yml", tmp_path / "out.yml"
    path.write_text(f"base_model: {model}\nsequence_len: 8192\n")
    done = subprocess.run([sys.executable, "-m", "ropelaw", "plan", str(path), "--train", "8192", "--target", "65536",
                           "--apply", "linear", "-o", str(out)], capture_output=True, text=True,
                          env={**os.environ, "ROPELAW_HF_SEMANTICS": "5.23.0"})
    assert done.returncode == 0, done.stderr
    original, _ = transformers_rotary(transformers.AutoConfig.from_pretrained(str(model)))
    assert len(original) == 33  # ceil(65 / 2)
    import warnings

    with warnings.catch_warnings():  # transformers 5: "`rope_scaling` is deprecated ..."
        warnings.simplefilter("ignore", FutureWarning)
        theirs, _ = transformers_rotary(load_model_config(DictDefault(yaml.safe_load(out.read_text()))))
    same_frequencies(theirs, [x / 8 for x in original])
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", "5.23.0")
    same_frequencies(theirs, ropelaw_rotary(lint_config(load_config(str(out)))).inv_freq)
