"""Python files a framework configures its runs with (ropelaw/lint/pyfiles.py): never run, never passed over in
silence. A directory scan says once how many it did not read and what to lint instead, and then never says "All
checks passed"; a named one is skipped with that reason (exit 2 when nothing else was given); other Python
files are source code and not counted. Every Python file of the frameworks-examples corpus is recognised."""

from __future__ import annotations

import csv
import json
import os
import pathlib

import pytest

from ropelaw.cli import main
from ropelaw.lint.pyfiles import KINDS, kind_of, reason

CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", pathlib.Path(__file__).resolve().parents[2] / "shared" /
                                     "corpus"))
SOURCES = CORPUS / "frameworks-examples" / "SOURCES.tsv"
OLMO_CORE = """from olmo_core.nn.transformer import TransformerConfig

SEQUENCE_LENGTH = 4096


def build_model_config(common):
    return TransformerConfig.olmo2_7B(vocab_size=common.tokenizer.padded_vocab_size())
"""
NANOTRON = "from nanotron.config import Config, ModelArgs\n\nconfig = Config(model=ModelArgs())\n"
REGISTRY = "from torchtitan.trainer import Trainer\n\nfrom . import model_registry\n\n\ndef llama3_8b():\n    pass\n"
CONFIG = '{"model_type": "llama", "head_dim": 128, "rope_theta": 500000.0, "max_position_embeddings": 8192}\n'


def run(capsys, *argv):
    code = main(["lint", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_kinds_by_imports(tmp_path):
    files = {"train.py": OLMO_CORE, "config_tiny.py": NANOTRON, "config_registry.py": REGISTRY,
             "helper.py": "import torch\n\nx = 1\n", "olmo_core_named.py": "import os\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    got = {name: kind_of(str(tmp_path / name)) for name in files}
    assert got == {"train.py": "olmo-core-script", "config_tiny.py": "nanotron-script",
                   "config_registry.py": "torchtitan-registry", "helper.py": None, "olmo_core_named.py": None}


def test_scan_says_what_it_did_not_read(tmp_path, capsys):
    (tmp_path / "config.json").write_text(CONFIG)
    (tmp_path / "scripts").mkdir()
    for i in range(2):
        (tmp_path / "scripts" / f"OLMo2-{i}.py").write_text(OLMO_CORE)
    (tmp_path / "scripts" / "util.py").write_text("def f():\n    return 1\n")  # source code: not counted
    code, out, _ = run(capsys, tmp_path)
    lines = out.splitlines()
    assert code == 0 and "All checks passed" not in out
    assert lines[-2] == ("2 Python config files not read (ropelaw never runs Python): OLMo-core Python launch script "
                         "(2): " + KINDS["olmo-core-script"][1] + ".")
    assert lines[-1] == "No findings in 1 config; 2 Python config files not read."
    assert "util.py" not in out
    code, out, _ = run(capsys, tmp_path, "--format", "json")
    skipped = json.loads(out)["skipped"]
    assert [(pathlib.Path(s["path"]).name, s["reason"]) for s in skipped] == [
        (f"OLMo2-{i}.py", reason("olmo-core-script")) for i in range(2)]


def test_directory_of_python_configs_only_says_so(tmp_path, capsys):
    (tmp_path / "config_registry.py").write_text(REGISTRY)
    code, _, err = run(capsys, tmp_path)
    assert code == 2 and "no config files found" in err
    assert "1 Python config file not read (ropelaw never runs Python): torchtitan config registry (Python) (1)" in err


def test_named_script_is_skipped_with_its_reason(tmp_path, capsys):
    script = tmp_path / "OLMo2-7B.py"
    script.write_text(OLMO_CORE)
    code, _, err = run(capsys, script)
    assert code == 2 and err.strip().endswith(f"{script}: {reason('olmo-core-script')}")
    cfg = tmp_path / "config.json"
    cfg.write_text(CONFIG)
    code, out, _ = run(capsys, script, cfg)
    assert code == 0 and f"{script}: skipped: {reason('olmo-core-script')}" in out


def test_every_python_file_of_the_corpus_is_recognised():
    """The 91 Python rows of frameworks-examples/SOURCES.tsv (OLMo-core 60, torchtitan 25, nanotron 6): each is
    one of the kinds a scan names (none passed over as source code)."""
    if not SOURCES.is_file():
        pytest.skip(f"no {SOURCES} (ROPELAW_CORPUS)")
    want = {"OLMo-core": {"olmo-core-script"}, "nanotron": {"nanotron-script"},
            "torchtitan": {"torchtitan-registry", "torchtitan-flavors"}}
    seen: dict = {}
    with open(SOURCES, encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if not row["path"].endswith(".py"):
                continue
            path = CORPUS / "frameworks-examples" / row["framework"] / row["path"]
            if not path.is_file():
                continue  # listed by the corpus tests
            kind = kind_of(str(path))
            assert kind in want[row["framework"]], (row["path"], kind)
            seen[row["framework"]] = seen.get(row["framework"], 0) + 1
    assert seen == {"OLMo-core": 60, "nanotron": 6, "torchtitan": 25}
