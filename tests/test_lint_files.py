"""File lists as CI and pre-commit pass them, and the pre-commit hook run by pre-commit itself.

Contract (commands/lint.py): a named file is handled exactly as the same file found in a
directory scan. Parsed but without RoPE settings -> ``PATH: skipped: why`` and counted; cannot
be parsed -> RE101 / RE102 finding; exit 2 only for a path that is missing / not a regular file /
cannot be opened, or when nothing given could be read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ropelaw.cli import main

ROOT = Path(__file__).resolve().parents[1]
LLAMA2 = ROOT / "tests" / "configs" / "llama-2-7b.json"

WORKFLOW = "name: ci\non: [push, pull_request]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n" \
           "      - uses: actions/checkout@v4\n"
COMPOSE = "services:\n  web:\n    image: nginx:1.27\n    ports: ['8080:80']\n"
# the first lines of public configs (hidden_size / heads / positions): bert-base-uncased, gpt2, bloom-560m
BERT = {"architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": 768, "num_attention_heads": 12,
        "max_position_embeddings": 512, "position_embedding_type": "absolute"}
GPT2 = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_positions": 1024}
BLOOM = {"architectures": ["BloomForCausalLM"], "model_type": "bloom", "hidden_size": 1024, "n_head": 16}
# a Megatron-style training config: trained at 4,096 with base 1e4 but advertising 32,768 tokens: RL101
BROKEN = {"hidden_size": 4096, "num_attention_heads": 32, "rotary_base": 10000, "seq_length": 4096,
          "max_position_embeddings": 32768}


def ordinary_repo(root: Path) -> dict[str, Path]:
    """A repository with workflow YAML, a compose file, non-RoPE model configs and one sound config."""
    files = {
        "workflow": root / ".github" / "workflows" / "ci.yml",
        "compose": root / "compose.yaml",
        "bert": root / "bert" / "config.json",
        "gpt2": root / "gpt2" / "config.json",
        "bloom": root / "bloom" / "config.json",
        "llama": root / "model" / "config.json",
        "pyproject": root / "pyproject.toml",
        "mkdocs": root / "mkdocs.yml",
        "k8s": root / "deploy" / "k8s.yaml",
        "cfn": root / "infra" / "stack.yaml",
        # YAML whose top level is not a mapping: not configs (skipped, never exit 2): a list (pre-commit's own
        # hook manifest, an Ansible playbook), comments only (NeMo's tp_overlap files), a stream whose first
        # document is empty
        "hooks": root / ".pre-commit-hooks.yaml",
        "playbook": root / "ansible" / "site.yml",
        "comments": root / "conf" / "overlap.yaml",
        "k8s_list": root / "deploy" / "list.yaml",
    }
    for p in files.values():
        p.parent.mkdir(parents=True, exist_ok=True)
    files["workflow"].write_text(WORKFLOW)
    files["compose"].write_text(COMPOSE)
    files["bert"].write_text(json.dumps(BERT, indent=2))
    files["gpt2"].write_text(json.dumps(GPT2, indent=2))
    files["bloom"].write_text(json.dumps(BLOOM, indent=2))
    shutil.copy(LLAMA2, files["llama"])
    files["pyproject"].write_text('[project]\nname = "demo"\nversion = "0.1"\n')
    # ordinary YAML that plain yaml.safe_load refuses: application tags and a multi-document stream
    files["mkdocs"].write_text("site_name: demo\nmarkdown_extensions:\n  - pymdownx.emoji:\n"
                               "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n")
    files["k8s"].write_text("apiVersion: v1\nkind: Service\n---\napiVersion: apps/v1\nkind: Deployment\n")
    files["cfn"].write_text("Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\n    Properties:\n"
                            "      BucketName: !Ref Name\n")
    shutil.copy(ROOT / ".pre-commit-hooks.yaml", files["hooks"])
    files["playbook"].write_text("- hosts: all\n  tasks:\n    - name: ping\n      ping:\n")
    files["comments"].write_text("# userbuffer settings: none for this shape\n")
    files["k8s_list"].write_text("---\n# generated\n---\napiVersion: v1\nkind: List\nitems: []\n")
    return files


def test_named_files_without_rope_settings_are_skipped_like_a_directory_scan(tmp_path, capsys):
    f = ordinary_repo(tmp_path)
    named = [str(f[k]) for k in ("llama", "workflow", "compose", "bert", "gpt2", "bloom", "pyproject", "mkdocs",
                                 "k8s", "cfn", "hooks", "playbook", "comments", "k8s_list")]
    listed = "skipped: not a config: its top level is a list, not a mapping of settings"
    empty = "skipped: not a config: its top level is empty (no document, or comments only), not a mapping of settings"
    none = ("skipped: no RoPE settings found (need head_dim, rotary_dim, kv_channels or hidden_size with "
            "num_attention_heads)")
    # quiet by default (issue 36, as ruff): the summary counts what was skipped
    assert main(["lint", *named]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "1 informational finding not shown (RL103; --select RL103 shows it).",
        "All checks passed: no findings in 1 config."]
    # --verbose: each file's line
    assert main(["lint", "--verbose", *named]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{f['llama']}: ok (d=128, base 10,000, trained 4,096, target 4,096, bound 4,096)",
        f"{f['workflow']}: skipped: no RoPE settings found (need head_dim, rotary_dim, kv_channels or hidden_size "
        f"with num_attention_heads)",
        f"{f['compose']}: skipped: no RoPE settings found (need head_dim, rotary_dim, kv_channels or hidden_size "
        f"with num_attention_heads)",
        f"{f['bert']}: skipped: model_type 'bert' uses learned absolute positions, not RoPE",
        f"{f['gpt2']}: skipped: model_type 'gpt2' uses learned absolute positions, not RoPE",
        f"{f['bloom']}: skipped: model_type 'bloom' uses ALiBi, not RoPE",
        f"{f['pyproject']}: {none}",
        f"{f['mkdocs']}: {none}",  # !!python/name: read as plain data (nothing imported)
        f"{f['k8s']}: {none}",  # a multi-document stream: its first document
        f"{f['cfn']}: {none}",  # !Ref
        f"{f['hooks']}: {listed}",
        f"{f['playbook']}: {listed}",
        f"{f['comments']}: {empty}",
        f"{f['k8s_list']}: {empty}",  # its first document is empty
        "Skipped 13 files without RoPE settings.",
        "1 informational finding not shown (RL103; --select RL103 shows it).",
        "All checks passed: no findings in 1 config.",
    ]
    # the same files found by a directory scan: the same lines (sorted by path there; hidden
    # directories such as .github are not scanned)
    assert main(["lint", "-v", str(tmp_path)]) == 0
    scan = capsys.readouterr().out.splitlines()
    assert sorted(scan[:-3]) == sorted(out[:1] + out[2:-3])
    assert scan[-3:] == ["Skipped 12 files without RoPE settings."] + out[-2:]


@pytest.mark.parametrize("key", ["hooks", "playbook", "comments", "k8s_list"])
def test_a_named_file_that_is_not_a_config_is_said_so_and_passes(tmp_path, capsys, key):
    """Alone, as pre-commit passes a lone changed .pre-commit-hooks.yaml: the note says why, exit 0 (ruff
    passes over a file it does not handle); lint --format json lists it as skipped; plan, which needs a
    config, refuses it with the same reason (exit 2)."""
    f = ordinary_repo(tmp_path)
    assert main(["lint", str(f[key])]) == 0  # quiet by default (issue 36): the summary counts it
    assert capsys.readouterr().out.splitlines() == ["No findings: no config analysed (1 file without RoPE settings)."]
    assert main(["lint", "--verbose", str(f[key])]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{f[key]}: skipped: not a config: its top level is ")
    assert out[-1] == "No findings: no config analysed (1 file without RoPE settings)."
    assert main(["lint", str(f[key]), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [s["path"] for s in doc["skipped"]] == [str(f[key])] and doc["findings"] == []
    assert main(["plan", str(f[key]), "--target", "32k"]) == 2
    assert capsys.readouterr().err == f"ropelaw: error: {out[0].replace(': skipped: ', ': ', 1)}\n"


def test_only_files_without_rope_settings_is_clean(tmp_path, capsys):
    f = ordinary_repo(tmp_path)
    assert main(["lint", str(f["workflow"]), str(f["bert"])]) == 0
    assert capsys.readouterr().out.splitlines() == ["No findings: no config analysed (2 files without RoPE settings)."]
    assert main(["lint", "--verbose", str(f["workflow"]), str(f["bert"])]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == ["Skipped 2 files without RoPE settings.",
                                                         "No findings: no config analysed (2 files without RoPE "
                                                         "settings)."]


def test_a_directory_scan_says_once_which_shell_scripts_it_did_not_read(tmp_path, capsys):
    """Issue 32: a scan never ends in "All checks passed" after files it found and did not read (launch
    scripts are read when named); one line says how many, the summary line agrees; JSON lists each."""
    shutil.copy(LLAMA2, tmp_path / "config.json")
    (tmp_path / "scripts").mkdir()
    for name in ("pretrain_gpt.sh", "train_ppo.sh"):
        (tmp_path / "scripts" / name).write_text("torchrun pretrain_gpt.py --num-attention-heads 32 --hidden-size 4096 "
                                                  "--seq-length 4096 --position-embedding-type rope\n")
    assert main(["lint", str(tmp_path), "--ignore", "RL"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == ["2 shell scripts (*.sh) not read: a directory scan reads config files; name a launch script "
                        "to lint it (Megatron-LM, MaxText, veRL, OpenRLHF).",
                        "No findings in 1 config; 2 shell scripts not read."]
    assert not any("All checks passed" in line for line in out)
    # named as well: read there, not counted as unread
    named = tmp_path / "scripts" / "pretrain_gpt.sh"
    main(["lint", str(tmp_path), str(named), "--ignore", "RL"])
    assert capsys.readouterr().out.splitlines()[-1] == "No findings in 2 configs; 1 shell script not read."
    assert main(["lint", str(tmp_path), "--format", "json", "--ignore", "RL"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(Path(s["path"]).name for s in doc["skipped"]) == ["pretrain_gpt.sh", "train_ppo.sh"]
    # findings: the count of scripts not read joins the gaps of the summary
    (tmp_path / "config.json").write_text(json.dumps(BROKEN))
    assert main(["lint", str(tmp_path)]) == 1
    assert capsys.readouterr().out.splitlines()[-1].endswith("in 1 config (2 shell scripts not read).")
    # a directory of shell scripts only: nothing to lint there (exit 2), and the message says what it found
    (tmp_path / "config.json").unlink()
    assert main(["lint", str(tmp_path / "scripts")]) == 2
    err = capsys.readouterr().err
    assert "no config files found in" in err and "(2 shell scripts (*.sh) not read" in err


def test_broken_file_among_others_is_a_finding_alone_it_is_bad_input(tmp_path, capsys):
    f = ordinary_repo(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text('{"hidden_size": ')
    assert main(["lint", str(bad), str(f["llama"]), str(f["workflow"])]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:1:1: RE102 malformed-config malformed JSON" in out
    assert out.strip().endswith("Found 1 finding (1 error) in 2 configs (1 not analysed).")
    assert main(["lint", str(bad)]) == 2  # nothing given could be read
    err = capsys.readouterr().err
    assert err.startswith(f"ropelaw: error: {bad}: malformed JSON") and len(err.splitlines()) == 1


def test_missing_path_is_bad_input_even_among_good_files(tmp_path, capsys):
    f = ordinary_repo(tmp_path)
    missing = tmp_path / "nope.yaml"
    assert main(["lint", str(f["llama"]), str(missing)]) == 2
    assert capsys.readouterr().err == f"ropelaw: error: {missing}: no such file or directory\n"
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)  # refused before opening (a FIFO would block): RE101 as in a directory scan
    assert main(["lint", str(f["llama"]), str(fifo)]) == 1
    assert f"{fifo}:1:1: RE101 unreadable-config is a FIFO (named pipe), not a regular file; refused" \
        in capsys.readouterr().out
    assert main(["lint", str(fifo)]) == 2  # alone: nothing given could be read
    assert capsys.readouterr().err == f"ropelaw: error: {fifo}: is a FIFO (named pipe), not a regular file; refused\n"


def test_named_file_of_another_kind_is_skipped_unless_alone(tmp_path, capsys):
    f = ordinary_repo(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text("# demo\n")
    assert main(["lint", str(readme), str(f["llama"])]) == 0
    assert "README.md" not in capsys.readouterr().out  # quiet by default
    assert main(["lint", "-v", str(readme), str(f["llama"])]) == 0
    assert f"{readme}: skipped: not a config file (expected .json, .yaml, .yml or .toml)" in capsys.readouterr().out
    assert main(["lint", str(readme)]) == 2
    assert capsys.readouterr().err.startswith(f"ropelaw: error: {readme}: not a config file")


def test_json_lists_skipped_files_and_hidden_info(tmp_path, capsys):
    f = ordinary_repo(tmp_path)
    assert main(["lint", str(f["llama"]), str(f["bert"]), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["skipped"] == [{"path": str(f["bert"]),
                               "reason": "model_type 'bert' uses learned absolute positions, not RoPE"}]
    assert doc["summary"]["hidden_info"] == 1 and doc["findings"] == []
    assert main(["lint", str(f["llama"]), "--format", "json", "--select", "RL103"]) == 1
    shown = json.loads(capsys.readouterr().out)["findings"]
    assert [(x["code"], x["severity"]) for x in shown] == [("RL103", "info")]


# -------------------------------------------------------------------------------------- pre-commit
def _hook() -> dict:
    """The hook exactly as shipped in .pre-commit-hooks.yaml."""
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in hooks] == ["ropelaw-lint"]
    return hooks[0]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main",
                    *args], cwd=repo, check=True, capture_output=True)


def _pre_commit(repo: Path, *args: str, home: Path) -> subprocess.CompletedProcess:
    # one invocation for all files (pre-commit splits them across CPUs otherwise): stable output
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never", "PRE_COMMIT_NO_CONCURRENCY": "1"}
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600)


def test_pre_commit_hook_passes_in_an_ordinary_repository_and_fails_naming_a_broken_config(tmp_path):
    """pre-commit itself runs the shipped hook's id, entry, files and types (as a local hook using
    this interpreter, so no install and no network): it passes in a repository with workflow
    YAML, a compose file, BERT / GPT-2 / BLOOM configs, pyproject.toml and a sound model config (and
    its own .pre-commit-config.yaml), and fails naming the file when a config is broken."""
    pytest.importorskip("pre_commit")
    hook = _hook()
    assert hook["entry"] == "ropelaw lint --force-exclude" and hook["language"] == "python"
    repo = tmp_path / "repo"
    repo.mkdir()
    ordinary_repo(repo)
    local = {k: hook[k] for k in ("id", "name", "files", "types_or") if k in hook}
    local.update(language="system", entry=f"{sys.executable} -m ropelaw lint --force-exclude")
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]}))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    home = tmp_path / "pc-home"
    ok = _pre_commit(repo, "run", "--all-files", "--verbose", home=home)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # quiet on clean and unrelated files: the summary says the model config was linted, the rest skipped
    assert "Passed" in ok.stdout and "skipped:" not in ok.stdout and ": ok (" not in ok.stdout
    assert "All checks passed: no findings in 1 config." in ok.stdout
    # a broken training config: advertised context far past what the base supports
    (repo / "train").mkdir()
    (repo / "train" / "config.json").write_text(json.dumps(BROKEN, indent=2))
    _git(repo, "add", "-A")
    bad = _pre_commit(repo, "run", "--all-files", home=home)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "Failed" in bad.stdout and "train/config.json:6:3: RL101 target-beyond-bound" in bad.stdout
    # RL101 + RL103 past 4,096; the rest skipped
    assert "Found 2 findings (1 error, 1 warning) in 2 configs." in bad.stdout
    # the project's configuration, as the hook reads it (issue 36): train/ excluded (pre-commit names the file:
    # --force-exclude in the hook's entry leaves it out all the same), the model config's RL103 ignored
    (repo / "pyproject.toml").write_text('[project]\nname = "demo"\n\n[tool.ropelaw.lint]\nexclude = ["train"]\n')
    _git(repo, "add", "-A")
    ok = _pre_commit(repo, "run", "--all-files", "--verbose", home=home)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "All checks passed: no findings in 1 config." in ok.stdout and "train/config.json" not in ok.stdout


def _offline(out: str) -> bool:
    low = out.lower()
    return any(s in low for s in ("connection", "name resolution", "network is unreachable", "no matching distribution",
                                  "could not find a version"))


def test_pre_commit_try_repo_installs_the_hook_from_this_checkout(tmp_path):
    """The hook as users get it (language: python): `pre-commit try-repo` against a copy of this
    checkout installs ropelaw with pip into pre-commit's own virtualenv and runs it. pip needs the
    package index for the build backend and the dependencies; without it the test is skipped with
    the reason (the local-hook test above still runs the same manifest offline)."""
    pytest.importorskip("pre_commit")
    src = tmp_path / "ropelaw-src"
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                            text=True, check=True).stdout.split("\n")
    for rel in filter(None, listed):
        if (ROOT / rel).is_file() and not rel.startswith(("notebooks/", "audits/", "benchmarks/", "tests/")):
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    _git(src, "init", "-q")
    _git(src, "add", "-A")
    _git(src, "commit", "-qm", "snapshot")
    repo = tmp_path / "repo"
    repo.mkdir()
    ordinary_repo(repo)
    (repo / "train.json").write_text(json.dumps(BROKEN, indent=2))  # not matched: only config.json, yaml, toml
    (repo / "train.yaml").write_text(yaml.safe_dump(BROKEN, sort_keys=False))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    home = tmp_path / "pc-home"
    # one run (the install is the slow part): the broken config fails the hook, the rest is skipped
    bad = _pre_commit(repo, "try-repo", str(src), "ropelaw-lint", "--all-files", home=home)
    out = bad.stdout + bad.stderr
    if bad.returncode != 1 and "Installing environment" in out and _offline(out):
        log = home / "pre-commit.log"
        pytest.skip(f"pip could not reach the package index to install the hook: "
                    f"{(log.read_text() if log.exists() else out)[-300:]!r}")
    assert bad.returncode == 1, out
    assert "ropelaw lint (RoPE settings of model / training configs)" in out and "Failed" in out
    assert "train.yaml:5:1: RL101 target-beyond-bound" in out and "train.json" not in out
    assert "Found 2 findings (1 error, 1 warning) in 2 configs." in out  # model/config.json linted too, quietly
    assert ": ok (" not in out and "skipped:" not in out
