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
        pytest.skip(f"NVIDIA/Megatron-LM@d98e8a64 examples/post_training/modelopt/conf/openai/{name} not under {CORPUS}")
    r = lint_config(load_config(str(path)))
    assert [(g.spec.d, g.spec.base, g.spec.scheme, g.window) for g in r.layers] == [
        (64, 150000.0, "yarn", None), (64, 150000.0, "yarn", 128)]
    assert [f.code for f in r.findings if f.severity != "info"] == ["RL102"]
