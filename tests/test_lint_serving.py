"""vLLM and SGLang launches (ropelaw/lint/dialects/serving*.py): shell lines, docker-compose / Kubernetes YAML and
Python ``LLM(...)`` / ``Engine(...)`` read as the runtime version they target reads them.

Expected values are derived here by hand from the runtimes' source at the pins (serving_args.py names them):
vLLM 0.32.0 / 0.11.0 ``_get_and_verify_max_len``, SGLang 0.5.23 ``get_context_length``, vLLM's
``human_readable_int``. The parser is checked against vLLM's and SGLang's own argparse in
tests/differential/test_diff_serving.py (CI step 'serving arguments').
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ropelaw.cli import main
from ropelaw.lint.dialects.serving_args import SGLANG, VLLM, parse_argv, vllm_int
from ropelaw.lint.dialects.serving_length import derived_length, served_default
from ropelaw.lint.loader import load_config

ROOT = Path(__file__).resolve().parents[1]
QWEN3 = str(ROOT / "tests" / "configs" / "qwen3-8b.json")  # max_position_embeddings 40,960, no scaling
QWEN25_YARN = str(ROOT / "tests" / "configs" / "qwen2.5-7b-instruct-yarn.json")  # yarn x4 from 32,768
YARN4 = '{"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}'


def lint(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["lint", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def codes(out: str) -> list[str]:
    return sorted(w for line in out.splitlines() for w in line.split()[1:2] if w[:2] in ("RV", "RL", "RP", "RS", "RE"))


def names(cfg) -> list[str]:
    """The rule names of a loaded config's problems (a Rule object or its name, first in each)."""
    return [getattr(p[0], "name", p[0]) for p in cfg.problems]


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


# --- the length the runtime derives (hand derivations from each version's source) ------------------------------
@pytest.mark.parametrize("block, mpe, v32, v11, sgl", [
    (None, 40960, 40960, 40960, 40960),
    ({"rope_type": "linear", "factor": 2.0}, 4096, 8192, 8192, 8192),
    ({"rope_type": "dynamic", "factor": 2.0}, 4096, 8192, 8192, 8192),
    # YaRN: 0.32.0 leaves max_position_embeddings as it is; 0.11.0 multiplies the original length; SGLang: factor 1
    # when original_max_position_embeddings is in the block
    ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, 32768, 32768, 131072, 32768),
    ({"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}, 32768, 32768, 32768, 32768),
    ({"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}, 131072, 131072, 131072, 131072),
    ({"rope_type": "linear", "factor": None}, 4096, 4096, 4096, 4096),
])
def test_derived_length_as_each_runtime_derives_it(block, mpe, v32, v11, sgl):
    hf = {"model_type": "llama", "max_position_embeddings": mpe, **({"rope_scaling": block} if block else {})}
    assert derived_length(VLLM, "0.32.0", hf)[0] == v32
    if not (block and block.get("factor") is None):
        assert derived_length(VLLM, "0.11.0", hf)[0] == v11
        assert derived_length(SGLANG, "0.5.23", hf)[0] == sgl


def test_derived_length_keys_model_max_length_and_default():
    # vLLM: the smallest key, then model_max_length replaces it; nothing: 2,048 (both runtimes)
    assert derived_length(VLLM, "0.32.0", {"max_position_embeddings": 8192, "seq_length": 4096})[0] == 4096
    assert derived_length(VLLM, "0.32.0", {"max_position_embeddings": 8192, "model_max_length": 131072})[0] == 131072
    assert derived_length(SGLANG, "0.5.23", {"max_position_embeddings": 8192, "seq_length": 4096})[0] == 4096
    assert derived_length(SGLANG, "0.5.23", {"max_position_embeddings": 8192, "max_seq_len": 16384})[0] == 16384
    assert derived_length(VLLM, "0.32.0", {})[0] == derived_length(SGLANG, "0.5.23", {})[0] == 2048
    # gemma3: its length is already scaled
    assert derived_length(VLLM, "0.32.0", {"model_type": "gemma3_text", "max_position_embeddings": 131072,
                                           "rope_scaling": {"rope_type": "linear", "factor": 8.0}})[0] == 131072
    # a text_config holds the text model's
    assert derived_length(VLLM, "0.32.0", {"text_config": {"max_position_embeddings": 1000}})[0] == 1000


def test_longrope_is_served_at_its_original_length_by_vllm_0_32():
    hf = {"max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
          "rope_scaling": {"type": "longrope", "long_factor": [1.0], "short_factor": [1.0]}}
    assert served_default(VLLM, "0.32.0", hf, 131072)[0] == 4096
    assert served_default(VLLM, "0.11.0", hf, 131072)[0] == 131072


# --- argument parsing as the runtimes parse (vllm/utils/argparse_utils.py; argparse) --------------------------------
def test_vllm_human_readable_int():
    assert [vllm_int(x, "0.32.0") for x in ("32k", "32K", "25.6k", "1M", "2t", "131072", " 8192 ")] == \
        [32000, 32768, 25600, 1048576, 2 * 10 ** 12, 131072, 8192]
    with pytest.raises(ValueError):
        vllm_int("1.5K", "0.32.0")  # no decimals with a binary suffix
    with pytest.raises(ValueError):
        vllm_int("2t", "0.11.0")  # 0.11.0 has no t / T


def test_vllm_flag_spellings():
    p = parse_argv(VLLM, "0.32.0", ["M", "--max_model_len=32k", "--hf-overrides", '{"rope_theta": 1}',
                                    "--hf-overrides.rope_scaling.factor", "4",
                                    "--hf_overrides.rope_scaling.rope_type=yarn"])
    assert p.values["--max-model-len"] == ("32k", 1)
    # the keys given one by one are passed after everything else: they replace the whole JSON argument
    assert p.values["--hf-overrides"][0] == {"rope_scaling": {"factor": 4, "rope_type": "yarn"}}
    assert parse_argv(VLLM, "0.32.0",
                      ["--max-model-len", "1", "--max-model-len", "2"]).values["--max-model-len"][0] == "2"


def test_rope_flags_removed_in_vllm_0_11_1():
    for version, refused in (("0.11.0", 0), ("0.10.2", 0), ("0.11.1", 2), ("0.32.0", 2)):
        p = parse_argv(VLLM, version, ["--rope-scaling", "{}", "--rope_theta", "1e6"])
        assert len(p.refused) == refused, version


def test_sglang_has_no_underscore_spelling():
    p = parse_argv(SGLANG, "0.5.23", ["--model", "X", "--context_length", "9", "--context-length=8"])
    assert p.values == {"--model-path": ("X", 0), "--context-length": ("8", 4)}
    assert len(p.refused) == 1 and "--context_length" in p.refused[0][1]


# --- whole launches ---------------------------------------------------------------------------------------------
def test_vllm_line_beyond_the_model_is_refused_and_overrides_are_said(tmp_path, capsys):
    script = write(tmp_path, "serve.sh",
                   f"vllm serve Qwen/Qwen3-8B --max-model-len 128K \\\n  --hf-overrides '{YARN4}'\n")
    code, out, _ = lint(capsys, script, "--model-config", QWEN3)
    assert code == 1 and {"RV041", "RV042"} <= set(codes(out))
    assert "--max-model-len 131,072 is beyond the model's 40,960" in out  # 128K = 131,072; YaRN not multiplied
    assert f"{script}:1:26: RV041" in out and f"{script}:2:3: RV042" in out
    cfg = load_config(script, model_config=QWEN3)
    assert cfg.target.raw == 131072 and cfg.layers[0].scheme.raw == "yarn" and cfg.served_by == "vLLM 0.32.0 (current)"


def test_the_environment_variable_lets_vllm_serve_longer(tmp_path, capsys):
    script = write(tmp_path, "serve.sh",
                   "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve Qwen/Qwen3-8B --max-model-len 65536\n")
    code, out, _ = lint(capsys, script, "--model-config", QWEN3)
    assert code == 1 and "RV041" not in codes(out)  # served: analysed at 65,536, past Qwen3-8B's bound
    cfg = load_config(script, model_config=QWEN3)
    assert cfg.target.raw == 65536 and "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in cfg.target.note
    assert any(c.startswith("RL") for c in codes(out))


def test_a_version_pinned_in_the_script_keeps_rope_scaling(tmp_path, capsys):
    line = f"vllm serve Qwen/Qwen3-8B --max-model-len 131072 --rope-scaling '{json.loads(YARN4)['rope_scaling']}'"
    line = line.replace("'", '"').replace('"{', "'{").replace('}"', "}'")
    pinned = write(tmp_path, "old.sh", "pip install vllm==0.10.2\n" + line + "\n")
    cfg = load_config(pinned, model_config=QWEN3)
    # 0.11.0's rules: YaRN's length is original x factor = 131,072, accepted; the override is RV042 only
    assert names(cfg) == ["served-rope-override"] and cfg.served_by == "vLLM 0.10.2"
    current = write(tmp_path, "new.sh", line + "\n")
    found = names(load_config(current, model_config=QWEN3))
    assert found.count("runtime-refuses-setting") == 2  # --rope-scaling gone; 131,072 beyond 40,960


def test_compose_and_kubernetes(tmp_path):
    compose = write(tmp_path, "docker-compose.yaml", "services:\n  llm:\n    image: vllm/vllm-openai:v0.10.1\n"
                    "    command: --model Qwen/Qwen3-8B --max-model-len 32768\n")
    cfg = load_config(compose, model_config=QWEN3)
    assert cfg.target.raw == 32768 and cfg.served_by == "vLLM 0.10.1" \
        and (cfg.target.line, cfg.target.column) == (4, 36)
    k8s = write(tmp_path, "deploy.yaml", "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
                "      - name: s\n        image: lmsysorg/sglang:v0.5.4-cu129\n        command: [python3, -m, "
                "sglang.launch_server]\n        args: [--model-path, Qwen/Qwen3-8B, --context-length, '65536']\n"
                "        env:\n        - {name: SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN, value: 'true'}\n")
    cfg = load_config(k8s, model_config=QWEN3)
    assert cfg.target.raw == 65536 and cfg.served_by == "SGLang 0.5.4" and not cfg.problems
    assert "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=true" in cfg.target.note


def test_sglang_merges_a_partial_rope_override(tmp_path):
    script = write(tmp_path, "sgl.sh", "python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct "
                   "--json-model-override-args '{\"rope_scaling\": {\"factor\": 2.0}}'\n")
    cfg = load_config(script, model_config=QWEN25_YARN)
    g = cfg.layers[0]
    assert g.scheme.raw == "yarn" and g.params["factor"].raw == 2.0  # merged: the type and original length kept
    assert g.params["original_max_position_embeddings"].raw == 32768
    assert cfg.target.raw == 32768  # original_max_position_embeddings in the block: SGLang does not multiply


def test_python_engine_calls(tmp_path, capsys):
    py = write(tmp_path, "run.py", "from vllm import LLM\nllm = LLM('Qwen/Qwen3-8B', max_model_len=32768,\n"
               "          hf_overrides={'rope_theta': 2000000})\n")
    cfg = load_config(py, model_config=QWEN3)
    assert cfg.target.raw == 32768 and cfg.layers[0].base.raw == 2000000
    assert names(cfg) == ["served-rope-override"] and cfg.layers[0].base.line == 3
    sgl = write(tmp_path, "eng.py", "import sglang as sgl\nengine = sgl.Engine(model_path='Qwen/Qwen3-8B')\n")
    assert load_config(sgl, model_config=QWEN3).target.raw == 40960
    computed = write(tmp_path, "c.py", "from vllm import LLM\nimport os\nLLM(os.environ['M'])\n")
    code, out, _ = lint(capsys, computed, "--model-config", QWEN3)
    assert code == 1 and codes(out) == ["RV031"] and "computed by the program" in out
    other = write(tmp_path, "util.py", "import vllm\nx = 1\n")
    code, _, err = lint(capsys, other)
    assert code == 2 and "no vLLM LLM(...) or SGLang Engine(...)" in err


def test_version_from_a_requirements_file_beside_it(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch\nvllm[audio]==0.9.2\n")
    script = write(tmp_path, "serve.sh", "vllm serve Qwen/Qwen3-8B --rope-theta 2000000\n")
    cfg = load_config(script, model_config=QWEN3)
    assert cfg.served_by == "vLLM 0.9.2" and cfg.layers[0].base.raw == 2000000.0
    assert "requirements.txt" in cfg.notes[-1]


def test_model_from_the_hf_cache_or_rv031(tmp_path, capsys, monkeypatch):
    cache = tmp_path / "hub"
    snap = cache / "models--Qwen--Qwen3-8B" / "snapshots" / ("a" * 40)
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(Path(QWEN3).read_text())
    (cache / "models--Qwen--Qwen3-8B" / "refs").mkdir()
    (cache / "models--Qwen--Qwen3-8B" / "refs" / "main").write_text("a" * 40)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    script = write(tmp_path, "serve.sh", "vllm serve Qwen/Qwen3-8B\n")
    code, out, _ = lint(capsys, script, "--verbose")
    assert code == 0 and "served by vLLM 0.32.0 (current)" in out and "Hugging Face cache" in out
    missing = write(tmp_path, "m.sh", "vllm serve example-org/no-such-model --max-model-len 8192\n")
    code, out, _ = lint(capsys, missing)
    assert code == 1 and codes(out) == ["RV031"] and "hf download example-org/no-such-model config.json" in out


def test_vllm_serves_dynamic_ntk_as_plain_rope(tmp_path, capsys):
    """vLLM 0.32.0's DynamicNTKScalingRotaryEmbedding: base x (f L / L - (f - 1))^(d/(d-2)) = base (measured on its
    own cache in tests/differential/test_diff_vllm_rope.py); it serves L x f = 8,192 tokens with plain RoPE."""
    model = tmp_path / "config.json"
    model.write_text(json.dumps({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
                                 "num_hidden_layers": 32, "max_position_embeddings": 4096, "rope_theta": 10000.0,
                                 "rope_scaling": {"type": "dynamic", "factor": 2.0}}))
    script = write(tmp_path, "serve.sh", "vllm serve my/model\n")
    cfg = load_config(script, model_config=str(model))
    assert cfg.layers[0].scheme.raw == "default" and cfg.target.raw == 8192
    assert "server-ignores-setting" in names(cfg)
    code, out, _ = lint(capsys, script, "--model-config", str(model))
    assert code == 1 and "RL101" in codes(out)  # 8,192 past the bound 4,096 of plain RoPE at 10,000
    old = write(tmp_path, "old.sh", "pip install vllm==0.10.1\nvllm serve my/model\n")
    cfg = load_config(old, model_config=str(model))  # 0.11.0's rules: dynamic NTK at 8,192, as transformers
    assert cfg.layers[0].scheme.raw == "dynamic" and "server-ignores-setting" not in names(cfg)


def test_a_kubernetes_stream_with_the_server_in_a_later_document(tmp_path):
    deployment = (ROOT / "tests" / "fixtures" / "serving" / "sglang-deployment.yaml").read_text()
    stream = write(tmp_path, "k8s.yaml", "---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n" + deployment)
    cfg = load_config(stream, model_config=QWEN3)
    assert cfg.served_by == "SGLang 0.5.23" and cfg.target.raw == 32768
    assert cfg.target.line == 5 + deployment.split("\n").index(
        '          args: ["--model-path", "Qwen/Qwen3-8B", "--context-length", "32768"]') + 1


# --- a GGUF served by vLLM / SGLang (serving_gguf.py; the runtimes' source read there) -------------------------
LLAMA31 = str(ROOT / "tests" / "configs" / "llama-3.1-8b.json")  # llama3 x8 from 8,192, base 500,000, 131,072


def _gguf(tmp_path: Path, config: str | None = None) -> Path:
    from gguf_files import llama31

    folder = tmp_path / "model"
    folder.mkdir()
    llama31(folder / "m.gguf")  # Llama 3.1 8B as the conversion writes it: its bands in rope_freqs.weight
    if config is not None:
        (folder / "config.json").write_text(Path(config).read_text())
    return folder


def test_vllm_reads_a_ggufs_config_from_its_folder_never_its_metadata(tmp_path, capsys):
    """vllm-gguf-plugin 0.0.5 ``_get_gguf_config_source``: no --hf-config-path / --tokenizer: the GGUF's folder."""
    _gguf(tmp_path)
    script = write(tmp_path, "serve.sh", "vllm serve model/m.gguf --max-model-len 32768\n")
    code, out, _ = lint(capsys, script)
    assert code == 1 and codes(out) == ["RV031"]
    assert "vllm-gguf-plugin==0.0.5" in out and f"{tmp_path / 'model'} has no config.json" in out
    (tmp_path / "model" / "config.json").write_text(Path(LLAMA31).read_text())
    cfg = load_config(script)  # the folder's config.json, which matches the GGUF (base, length, llama3 bands)
    assert cfg.layers[0].scheme.raw == "llama3" and cfg.layers[0].base.raw == 500000.0 and cfg.target.raw == 32768
    assert names(cfg) == []
    (tmp_path / "model" / "config.json").write_text(Path(QWEN3).read_text())
    cfg = load_config(script)
    assert names(cfg) == ["served-rope-override"]
    message = cfg.problems[0][2]
    assert "rope_theta 1e+06 where the GGUF's llama.rope.freq_base is 500000" in message
    assert "max_position_embeddings 40,960 where the GGUF's llama.context_length is 131,072" in message
    assert "no RoPE scaling where the GGUF has the rope_freqs.weight tensor" in message


def test_vllm_gguf_config_from_hf_config_path_then_tokenizer(tmp_path):
    _gguf(tmp_path)
    (tmp_path / "llama").mkdir()
    (tmp_path / "llama" / "config.json").write_text(Path(LLAMA31).read_text())
    (tmp_path / "qwen").mkdir()
    (tmp_path / "qwen" / "config.json").write_text(Path(QWEN3).read_text())
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)  # the runtime resolves the directories from where it runs
    try:
        by_tok = load_config(write(tmp_path, "a.sh", "vllm serve model/m.gguf --tokenizer llama\n"))
        both = load_config(write(tmp_path, "b.sh", "vllm serve model/m.gguf --tokenizer llama --hf-config-path qwen\n"))
        py = load_config(write(tmp_path, "c.py", "from vllm import LLM\nLLM(model='model/m.gguf', tokenizer='qwen')\n"))
    finally:
        os.chdir(cwd)
    assert by_tok.layers[0].scheme.raw == "llama3" and names(by_tok) == [] and by_tok.target.raw == 131072
    assert both.layers[0].base.raw == 1000000.0 and names(both) == ["served-rope-override"]
    assert py.layers[0].base.raw == 1000000.0 and both.target.raw == 40960


def test_a_gguf_not_here_or_an_older_vllm_is_rv031(tmp_path, capsys):
    code, out, _ = lint(capsys, write(tmp_path, "a.sh", "vllm serve ./absent.gguf\n"))
    assert code == 1 and codes(out) == ["RV031"] and "'./absent.gguf': the GGUF is not here" in out
    code, out, _ = lint(capsys, write(tmp_path, "b.sh", "sglang serve --model-path absent.gguf\n"))
    assert code == 1 and codes(out) == ["RV031"] and "the GGUF is not here" in out
    _gguf(tmp_path, LLAMA31)
    code, out, _ = lint(capsys, write(tmp_path, "c.sh", "pip install vllm==0.10.2\nvllm serve model/m.gguf\n"))
    assert code == 1 and codes(out) == ["RV031"] and "how vLLM 0.11.0 builds a GGUF's config" in out


def test_sglang_serves_a_ggufs_metadata_without_its_scaling(tmp_path, capsys):
    """SGLang 0.5.23 get_config: no config.json beside the GGUF -> transformers 5.19.0's conversion (checked against
    transformers' own load_gguf_checkpoint in tests/differential/test_diff_serving_gguf.py): base and length from
    the metadata, no scaling; Llama 3.1's bands (the rope_freqs tensor) are not served."""
    _gguf(tmp_path)
    script = write(tmp_path, "serve.sh",
                   "python -m sglang.launch_server --model-path model/m.gguf --context-length 32768\n")
    cfg = load_config(script)
    assert cfg.layers[0].scheme.raw == "default" and cfg.layers[0].base.raw == 500000.0
    assert cfg.train_len.raw == 131072 and cfg.target.raw == 32768 and cfg.served_by == "SGLang 0.5.23 (current)"
    assert names(cfg) == ["served-rope-override"] and "the rope_freqs.weight tensor is not served" in cfg.problems[0][2]
    code, out, _ = lint(capsys, script)
    assert code == 1 and "RV042" in codes(out)
    (tmp_path / "model" / "config.json").write_text(Path(LLAMA31).read_text())  # the config beside it wins
    cfg = load_config(script)
    assert cfg.layers[0].scheme.raw == "llama3" and names(cfg) == []


def test_sglang_refuses_a_gguf_transformers_cannot_convert(tmp_path, capsys):
    from gguf_files import write_gguf

    write_gguf(tmp_path / "o.gguf", "olmo2", {"{arch}.context_length": 4096, "{arch}.rope.freq_base": 500000.0})
    code, out, _ = lint(capsys, write(tmp_path, "s.sh", "sglang serve --model-path o.gguf\n"))
    assert code == 1 and codes(out) == ["RV031"] and "GGUF model with architecture olmo2 is not supported yet" in out


def test_vllm_ntk_is_said_not_modelled(tmp_path, capsys):
    """vLLM's 'ntk' (theta_i = (b f)^(-2i/d) f^(-2/d), measured on its own cache in test_diff_vllm_rope.py) is not
    ropelaw's NTK-aware 'ntk': RV030, no analysis made with the other formula."""
    model = tmp_path / "config.json"
    model.write_text(json.dumps({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
                                 "num_hidden_layers": 32, "max_position_embeddings": 4096, "rope_theta": 10000.0,
                                 "rope_scaling": {"rope_type": "ntk", "factor": 4.0}}))
    for text, said in (("vllm serve my/model --max-model-len 16384\n", "theta_i = (b f)^(-2i/d) f^(-2/d)"),
                       ("pip install vllm==0.10.2\nvllm serve my/model\n", "how vLLM 0.11.0 serves rope_type 'ntk'")):
        code, out, _ = lint(capsys, write(tmp_path, "serve.sh", text), "--model-config", str(model))
        assert code == 1 and codes(out) == ["RV030"] and said in out and "RL10" not in out
    mixed = json.loads(model.read_text())
    mixed["rope_scaling"]["mixed_b"] = 0.5
    model.write_text(json.dumps(mixed))
    code, out, _ = lint(capsys, write(tmp_path, "serve.sh", "vllm serve my/model\n"), "--model-config", str(model))
    assert codes(out) == ["RV030"] and "exp(ln f ((i+1) / (d/2))^mixed_b)" in out
    code, out, _ = lint(capsys, write(tmp_path, "s.sh", "sglang serve --model-path my/model\n"), "--model-config",
                        str(model))  # SGLang 0.5.23's factory.py: no 'ntk' branch, ValueError
    assert codes(out) == ["RV030"] and "Unknown RoPE scaling type ntk" in out


def test_abbreviations_are_read_as_argparse_reads_them(tmp_path, capsys):
    """argparse (allow_abbrev on in both runtimes): a unique prefix is the flag, two or more are 'ambiguous option'
    (exit 2); checked against the runtimes' parsers with all their flags in test_diff_serving_args.py."""
    script = write(tmp_path, "serve.sh", "vllm serve Qwen/Qwen3-8B --max-model 128K\n")
    cfg = load_config(script, model_config=QWEN3)
    assert cfg.target.raw == 131072 and names(cfg) == ["runtime-refuses-setting"]  # beyond 40,960, as spelled out
    code, out, _ = lint(capsys, write(tmp_path, "a.sh", "vllm serve Qwen/Qwen3-8B --max 4096\n"), "--model-config",
                        QWEN3)
    assert code == 1 and "RV041" in codes(out) and "--max: ambiguous option: could match" in out
    sgl = load_config(write(tmp_path, "s.sh", "sglang serve --model-p Qwen/Qwen3-8B --context-l 8192\n"),
                      model_config=QWEN3)
    assert sgl.target.raw == 8192 and names(sgl) == []
    p = parse_argv(VLLM, "0.10.2", ["Q", "--max-model", "4096"])  # a version whose flags are not tabled: passed over
    assert p.values == {} and p.refused == []


def test_sglang_gpt_oss_gguf_scaling_is_said_not_modelled(tmp_path, capsys):
    """transformers 5.19.0 rebuilds gpt-oss's rope_scaling from each key's length field (parts[0]), not its value:
    RV031, never a guess (test_diff_serving_gguf.py runs transformers' own branch)."""
    from gguf_files import write_gguf

    write_gguf(tmp_path / "g.gguf", "gpt-oss", {"{arch}.context_length": 131072, "{arch}.rope.freq_base": 150000.0,
                                                "{arch}.rope.scaling.type": "yarn", "{arch}.rope.scaling.factor": 32.0})
    code, out, _ = lint(capsys, write(tmp_path, "s.sh", "sglang serve --model-path g.gguf\n"))
    assert code == 1 and codes(out) == ["RV031"] and "which ropelaw does not model" in out and "length field" in out


def test_a_remote_gguf_reference(tmp_path, capsys, monkeypatch):
    """vllm-gguf-plugin 0.0.5 ``repo_id:quant_type`` (its README: ``vllm serve Qwen/Qwen3-0.6B-GGUF:Q8_0 --tokenizer
    Qwen/Qwen3-0.6B``): the config from --tokenizer, else the GGUF repository's config.json; SGLang downloads the
    file (resolve_hf_gguf_reference): RV031 naming it. The quant types are gguf==0.19.0's enums (checked here)."""
    import gguf

    from ropelaw.lint.dialects.serving_gguf import FILE_TYPES, GGML_TYPES, remote_gguf

    assert set(gguf.GGMLQuantizationType._member_names_) == GGML_TYPES
    assert {n[len("MOSTLY_"):] for n in gguf.LlamaFileType._member_names_ if n.startswith("MOSTLY_")} == FILE_TYPES
    assert remote_gguf("Qwen/Qwen3-0.6B-GGUF:Q8_0") == ("Qwen/Qwen3-0.6B-GGUF", "Q8_0")
    assert remote_gguf("org/m-GGUF:UD-Q4_K_XL") == ("org/m-GGUF", "UD-Q4_K_XL")  # the plugin's own examples
    assert remote_gguf("org/m-GGUF:Q4_K_M") and remote_gguf("org/m-GGUF:IQ2_M")
    assert remote_gguf("org/m-GGUF:RANDOM") is None and remote_gguf("org:Q8_0") is None
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    code, out, _ = lint(capsys, write(tmp_path, "a.sh", "vllm serve Qwen/Qwen3-0.6B-GGUF:Q8_0\n"))
    assert code == 1 and codes(out) == ["RV031"] and "hf download Qwen/Qwen3-0.6B-GGUF config.json" in out
    assert "the GGUF's repository 'Qwen/Qwen3-0.6B-GGUF'" in out
    (tmp_path / "qwen").mkdir()
    (tmp_path / "qwen" / "config.json").write_text(Path(QWEN3).read_text())
    monkeypatch.chdir(tmp_path)
    cfg = load_config(write(tmp_path, "b.sh", "vllm serve Qwen/Qwen3-0.6B-GGUF:Q8_0 --tokenizer qwen\n"))
    assert cfg.layers[0].base.raw == 1000000.0 and cfg.target.raw == 40960
    code, out, _ = lint(capsys, write(tmp_path, "c.sh", "sglang serve --model-path Qwen/Qwen3-0.6B-GGUF:Q8_0\n"))
    assert codes(out) == ["RV031"] and "downloads the GGUF of Qwen/Qwen3-0.6B-GGUF named *-Q8_0.gguf" in out
