"""Launch scripts and RL post-training configs (issue 32): Megatron-LM's ``--enable-*`` model builders, NeMo
models named elsewhere, veRL and OpenRLHF. Expected values are derived here from the frameworks' code as
cited (the differentials under tests/differential run that code on every example of the corpus)."""

from __future__ import annotations

import math
import os
import pathlib

import pytest

from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import load_config

ROOT = pathlib.Path(__file__).resolve().parents[1]
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus"))
EXAMPLES = CORPUS / "frameworks-examples"

# NVIDIA/Megatron-LM@d98e8a64 examples/post_training/modelopt/conf/openai/gpt-oss-120b.sh, the flags that matter
GPT_OSS_FLAGS = """MODEL_ARGS=" \\
    --bf16 --num-layers 36 --hidden-size 2880 --num-attention-heads 64 --group-query-attention \\
    --num-query-groups 8 --kv-channels 64 --seq-length 4096 --max-position-embeddings 40960 \\
    --rotary-percent 1.0 --rotary-base 150000 --window-attn-skip-freq 2 {extra} --enable-gpt-oss \\
    --window-size 127,0 \\
"
"""


def gpt_oss_script(tmp_path, extra=""):
    p = tmp_path / "gpt-oss.sh"
    p.write_text(GPT_OSS_FLAGS.format(extra=extra))
    return p


def test_megatron_enable_gpt_oss_is_the_builders_yarn(tmp_path):
    """``--enable-gpt-oss``: Megatron-LM@d98e8a64 ``megatron/post_training/model_builder.py`` 298-310 sets YaRN x32,
    original 131,072, beta 32 / 1, mscale 1 / 0, no rounding, on the config GPTModel reads; it was skipped as
    "'learned_absolute' is not RoPE", exit 0. Attention factor: get_mscale(32, 1) / get_mscale(32, 0) =
    0.1 ln 32 + 1 = 1.3466 (megatron-core ``_yarn_get_concentration_factor``)."""
    cfg = load_config(str(gpt_oss_script(tmp_path)))
    r = lint_config(cfg)
    g, local = r.layers
    assert (g.spec.d, g.spec.base, g.spec.scheme) == (64, 150000.0, "yarn")
    assert {k: v.raw for k, v in cfg.layers[0].params.items() if k != "attention_factor"} == {
        "factor": 32.0, "original_max_position_embeddings": 131072, "beta_fast": 32.0, "beta_slow": 1.0,
        "truncate": False}
    assert g.scheme_result.attention_factor == 0.1 * math.log(32) + 1
    assert round(g.scheme_result.attention_factor, 4) == 1.3466
    assert (cfg.train_len.raw, cfg.target.raw) == (4096, 40960)
    assert local.window == 128  # --window-size 127,0: keys 0..127 back
    assert "megatron/post_training/model_builder.py" in cfg.layers[0].scheme.note


def test_megatron_enable_gpt_oss_overrides_the_scripts_yarn_flags(tmp_path):
    """The builder assigns the config after the flags are read: a script's own YaRN flags do not reach the
    rotary; they are named in a note, not reported as unread."""
    cfg = load_config(str(gpt_oss_script(tmp_path, "--position-embedding-type rope --rotary-scaling-factor 4 "
                                                   "--mscale 0.707")))
    assert cfg.layers[0].scheme.raw == "yarn" and cfg.layers[0].params["factor"].raw == 32.0
    assert any("overrides --position-embedding-type, --rotary-scaling-factor, --mscale" in n for n in cfg.notes)
    assert cfg.unread == []


def test_megatron_yarn_flags_of_a_non_mla_model(tmp_path):
    """``--position-embedding-type yarn`` without MLA: the YaRN fields come from --yarn-* flags
    (Megatron-LM@d98e8a64 ``argument_utils.py`` ``_apply_yarn_config_from_args``: --yarn-original-max-position-
    embeddings, --yarn-beta-fast / -slow, --no-yarn-correction-range-round-to-int), not from MLA's
    --original-max-position-embeddings."""
    p = tmp_path / "yarn.sh"
    p.write_text("torchrun pretrain_gpt.py --num-attention-heads 32 --hidden-size 4096 --seq-length 4096 "
                 "--max-position-embeddings 32768 --position-embedding-type yarn --rotary-scaling-factor 8 "
                 "--yarn-original-max-position-embeddings 4096 --original-max-position-embeddings 2048 "
                 "--yarn-beta-fast 16 --no-yarn-correction-range-round-to-int --load ckpt\n")
    cfg = load_config(str(p))
    params = {k: v.raw for k, v in cfg.layers[0].params.items() if k != "attention_factor"}
    assert params == {"factor": 8.0, "original_max_position_embeddings": 4096, "beta_fast": 16, "beta_slow": 1,
                      "truncate": False}


@pytest.mark.parametrize("name", ["gpt-oss-120b.sh"])
def test_megatron_gpt_oss_corpus_script(name):
    path = EXAMPLES / "Megatron-LM" / "examples" / "post_training" / "modelopt" / "conf" / "openai" / name
    if not path.is_file():
        pytest.skip(f"NVIDIA/Megatron-LM@d98e8a64 examples/post_training/modelopt/conf/openai/{name} not "
                    f"under {CORPUS}")
    r = lint_config(load_config(str(path)))
    assert [(g.spec.d, g.spec.base, g.spec.scheme, g.window) for g in r.layers] == [
        (64, 150000.0, "yarn", None), (64, 150000.0, "yarn", 128)]
    assert [f.code for f in r.findings if f.severity != "info"] == ["RL102"]


# ------------------------------------------------------------------------------------------------ veRL, OpenRLHF
FIXTURES = ROOT / "tests" / "fixtures" / "frameworks" / "rl"
LLAMA2 = str(ROOT / "tests" / "configs" / "llama-2-7b.json")


def test_verl_script_reads_the_model_overrides_and_the_rollout_length():
    """veRL's main_ppo with Hydra overrides: the model's config.json (here --model-config), its
    max_position_embeddings raised by override_config (positions accepted, not trained: the frequencies stay),
    rollouts of max_prompt_length + max_response_length = 2,048 + 8,192 tokens ($((...)) evaluated) as the
    tuning length and target: a context extension of a model trained at 4,096 (was: read as a Megatron
    script and skipped)."""
    cfg = load_config(str(FIXTURES / "verl_grpo.sh"), model_config=LLAMA2)
    assert (cfg.layers[0].d.raw, cfg.layers[0].base.raw, cfg.train_len.raw) == (128, 10000.0, 4096)
    assert (cfg.tune_len.raw, cfg.target.raw) == (10240, 10240)
    assert any("max_position_embeddings 32768 lets the model take" in n for n in cfg.notes)
    codes = [f.code for f in lint_config(cfg).findings]
    assert "RL103" in codes


def test_verl_and_openrlhf_name_the_model_they_need(tmp_path):
    """A model that is neither local, given, cached nor a preset: RV031 naming it, never a skip."""
    from ropelaw.lint.loader import ModelNeeded

    s = tmp_path / "run.sh"
    s.write_text("python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=org/unseen-model-x "
                 "data.max_prompt_length=512\n")
    with pytest.raises(ModelNeeded, match="actor_rollout_ref.model.path 'org/unseen-model-x' names the model"):
        load_config(str(s))
    y = tmp_path / "grpo.yaml"  # a Hydra config extending ppo_trainer without a model: veRL's default model
    y.write_text("defaults:\n  - ppo_trainer\n  - _self_\ndata:\n  max_prompt_length: 1024\nactor_rollout_ref:\n"
                 "  rollout:\n    name: sglang\n")
    with pytest.raises(ModelNeeded, match="veRL trains its default model '~/models/deepseek-llm-7b-chat'"):
        load_config(str(y))
    o = tmp_path / "ppo.sh"
    o.write_text("python3 -m openrlhf.cli.train_ppo_ray --actor.model_name_or_path org/unseen-model-x "
                 "--data.max_len 4096\n")
    with pytest.raises(ModelNeeded, match="actor.model_name_or_path 'org/unseen-model-x' names the model"):
        load_config(str(o))


def test_openrlhf_here_document_flags():
    """OpenRLHF's examples keep their flags in a here-document run as ``deepspeed --module $cmd``: model,
    --data.max_len (the tuning length and target), --ds.param_dtype."""
    cfg = load_config(str(FIXTURES / "openrlhf_sft.sh"), model_config=LLAMA2)
    assert (cfg.train_len.raw, cfg.tune_len.raw, cfg.target.raw, cfg.dtype.raw) == (4096, 8192, 8192, "bf16")
    assert cfg.tune_len.key == "data.max_len" and cfg.tune_len.line == 4


@pytest.mark.parametrize("expr,env", [("$((1024 * 2))", {}), ("$((a + b))", {"a": "$((1024 * 2))", "b": "8192"}),
                                      ("$(((a + b) * 3 / 2))", {"a": "7", "b": "4"}), ("$((-7 / 2))", {}),
                                      ("$((7 % -3))", {})])
def test_shell_arithmetic_is_bashs(expr, env):
    """veRL's scripts compute lengths with ``$((...))``: evaluated as bash does (integer, truncating division);
    bash itself is the reference (our own expressions only)."""
    import shutil
    import subprocess

    from ropelaw.lint.dialects.verl import shell_arithmetic

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash")
    script = "".join(f"{k}={v}; " for k, v in env.items()) + f"echo {expr}"
    want = subprocess.run([bash, "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    assert shell_arithmetic(expr, env) == want


@pytest.mark.parametrize("framework,n", [("verl", 138), ("OpenRLHF", 16)])
def test_rl_scripts_of_the_corpus_are_read_or_named(framework, n):
    """Every launch script of veRL and OpenRLHF in the corpus: read, RV031 naming the model, or skipped for a
    stated reason; never a traceback."""
    from ropelaw.errors import UsageError
    from ropelaw.lint.loader import NotARopeConfig, UnreadConfig

    root = EXAMPLES / framework
    scripts = sorted(root.rglob("*.sh"))
    if not scripts:
        pytest.skip(f"no {framework} scripts under {root}")
    assert len(scripts) == n
    kinds = {}
    for p in scripts:
        try:
            load_config(str(p))
            kind = "read"
        except UnreadConfig as exc:
            kind = exc.code
        except (NotARopeConfig, UsageError):
            kind = "skipped"
        kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds.get("read", 0) + kinds.get("RV031", 0) >= (n * 3) // 4, kinds


# ------------------------------------------------------------------------------------------------ NeMo .nemo models
ARCHIVE = {"target": "nemo.collections.nlp.models.language_modeling.megatron_gpt_model.MegatronGPTModel",
           "mcore_gpt": True, "encoder_seq_length": 4096, "max_position_embeddings": 4096, "hidden_size": 4096,
           "num_attention_heads": 32, "position_embedding_type": "rope", "rotary_base": 10000, "precision": "bf16"}


def nemo_finetuning(tmp_path, restore: str) -> pathlib.Path:
    import yaml

    p = tmp_path / "megatron_gpt_finetuning_config.yaml"
    p.write_text(yaml.safe_dump({"trainer": {"devices": 8, "precision": "bf16"},
                                 "model": {"restore_from_path": restore, "tensor_model_parallel_size": 1,
                                           "data": {"train_ds": {"max_seq_length": 8192}}}}, sort_keys=False))
    return p


def test_nemo_finetuning_names_its_model(tmp_path):
    """NeMo's fine-tuning configs name the model with ``model.restore_from_path: ???``: RV031 naming it (was
    "no RoPE settings found", a silent skip), or the archive's model_config.yaml (--model-config, an extracted
    directory, or the .nemo tar itself, read without extracting) with the fine-tuning length as the tuning
    length."""
    import tarfile

    import yaml

    from ropelaw.lint.loader import ModelNeeded

    with pytest.raises(ModelNeeded, match=r"model.restore_from_path '\?\?\?' names the model \(a .nemo archive\)"):
        load_config(str(nemo_finetuning(tmp_path, "???")))
    mc = tmp_path / "model_config.yaml"
    mc.write_text(yaml.safe_dump(ARCHIVE))
    cfg = load_config(str(nemo_finetuning(tmp_path, "???")), model_config=str(mc))
    assert (cfg.layers[0].d.raw, cfg.layers[0].base.raw, cfg.train_len.raw, cfg.tune_len.raw) == (128, 10000, 4096,
                                                                                                  8192)
    nemo = tmp_path / "llama.nemo"
    with tarfile.open(nemo, "w") as tar:
        tar.add(mc, arcname="./model_config.yaml")
    cfg = load_config(str(nemo_finetuning(tmp_path, str(nemo))))
    assert (cfg.train_len.raw, cfg.tune_len.raw) == (4096, 8192)
    assert any(f"{nemo}: model_config.yaml" in n for n in cfg.notes)


def test_megatron_script_without_model_flags_names_where_they_are(tmp_path):
    """A Megatron script that runs a model it gives no flags for (a checkpoint it loads, a script it sources)
    is RV031 saying where the flags are, not a skip; one that does neither is still a skip."""
    from ropelaw.lint.loader import ModelNeeded, NotARopeConfig

    p = tmp_path / "finetune.sh"
    p.write_text('source "${SCRIPT_DIR}/conf/arguments.sh"\ntorchrun finetune.py --finetune --load ckpt/llama\n')
    with pytest.raises(ModelNeeded, match="--load 'ckpt/llama' runs a model this script gives no flags for"):
        load_config(str(p))
    p.write_text('. ./CONFIG.sh\nsrun python pretrain_gpt.py $OPTIONS\n')
    with pytest.raises(ModelNeeded, match=r"the model flags come from './CONFIG.sh' \(sourced on line 1\)"):
        load_config(str(p))
    p.write_text("python tools/preprocess_data.py --input data.json --workers 8\n")
    with pytest.raises(NotARopeConfig):
        load_config(str(p))


def test_verl_rope_scaling_override_reaches_the_model(tmp_path):
    """``override_config.rope_scaling`` replaces the model's rope_scaling (verl's update_model_config sets the
    keys on the Hugging Face config): YaRN x4 on Llama 2, the value pointing at the override."""
    p = tmp_path / "run.sh"
    p.write_text("python3 -m verl.trainer.main_ppo actor_rollout_ref.model.path=meta-llama/Llama-2-7b-hf \\\n"
                 "  data.max_prompt_length=1024 data.max_response_length=15360 \\\n"
                 "  '+actor_rollout_ref.model.override_config.rope_scaling={rope_type: yarn, factor: 4.0, "
                 "original_max_position_embeddings: 4096}'\n")
    cfg = load_config(str(p), model_config=LLAMA2)
    g = cfg.layers[0]
    assert (g.scheme.raw, g.params["factor"].raw, cfg.tune_len.raw) == ("yarn", 4.0, 16384)
    assert g.scheme.key == "actor_rollout_ref.model.override_config.rope_scaling.rope_type"
    assert g.scheme.line == 3
