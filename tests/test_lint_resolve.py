"""A model a training config names elsewhere (``ropelaw/lint/resolve.py``): read from the Hugging Face
cache exactly where huggingface_hub finds it, from a local directory, from ``--model-config``; else RV031
naming the model and the command that fetches its config.json; ropelaw's table never silently (RV032).

The caches are built here in a temporary directory the way huggingface_hub lays them out (``blobs/`` holding
the bytes, ``snapshots/<commit>/config.json`` a symbolic link to the blob, ``refs/<branch>`` naming the
commit), holding real published config.json files of the corpus (``$ROPELAW_CORPUS/hf``, byte-exact, listed
in tests/corpus/hf_manifest.json); the truth for where a file is found is huggingface_hub's own
``try_to_load_from_cache`` (the installed one), and for what the file means, linting it alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import subprocess
import sys

import pytest

from ropelaw.cli import main
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import ModelNeeded, load_config
from ropelaw.lint import resolve

ROOT = pathlib.Path(__file__).resolve().parents[1]
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus"))
MANIFEST = {c["file"]: c for c in json.loads((ROOT / "tests" / "corpus" / "hf_manifest.json").read_text())["configs"]}
LLAMA32 = "MatthewGoldsberry__LLM-Projects__Llama-3.2-1B__config.json"  # Llama 3.2 1B: llama3 x32, 131,072
QWEN25 = "infinityarpan__qwen-25-api__models__Qwen2.5-0.5B-Instruct__config.json"  # Qwen2.5 0.5B Instruct
COMMIT_A = "a" * 40
COMMIT_B = "b" * 40


def corpus_config(name: str) -> bytes:
    """The bytes of a corpus config.json, checked against the manifest's sha256; skip naming it when absent."""
    path = CORPUS / "hf" / name
    if not path.is_file():
        if os.environ.get("ROPELAW_REQUIRE_CORPUS"):
            pytest.fail(f"{name} is not in {CORPUS / 'hf'} (ROPELAW_REQUIRE_CORPUS is set)")
        pytest.skip(f"{name} is not in {CORPUS / 'hf'} (ROPELAW_CORPUS)")
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == MANIFEST[name]["sha256"], name
    return data


def cache_repo(cache: pathlib.Path, repo_id: str, snapshots: dict[str, bytes | None], refs: dict[str, str],
               no_exist: tuple[str, ...] = ()) -> pathlib.Path:
    """``cache/models--org--name`` as huggingface_hub writes it: each snapshot's config.json a symbolic link
    into ``blobs/`` (None: a snapshot without config.json), ``refs/<name>`` holding a commit (no newline)."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    for commit, data in snapshots.items():
        snap = repo / "snapshots" / commit
        snap.mkdir(parents=True, exist_ok=True)
        if data is not None:
            blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
            blob.write_bytes(data)
            (snap / "config.json").symlink_to(os.path.relpath(blob, snap))
    for name, commit in refs.items():
        (repo / "refs" / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / "refs" / name).write_text(commit)
    for commit in no_exist:
        (repo / ".no_exist" / commit).mkdir(parents=True, exist_ok=True)
        (repo / ".no_exist" / commit / "config.json").write_text("")
    return repo


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """An empty Hugging Face cache that every cache variable points at (no other cache is looked in)."""
    cache = tmp_path / "hub"
    cache.mkdir()
    for var in ("TRANSFORMERS_CACHE", "PYTORCH_TRANSFORMERS_CACHE", "PYTORCH_PRETRAINED_BERT_CACHE",
                "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.chdir(tmp_path)
    return cache


def write(tmp_path: pathlib.Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def derived(r) -> tuple:
    a = r.layers[0]
    s = a.spec
    return (s.d, s.base, s.scheme, s.param_dict(), s.train_len, a.scheme_result.attention_factor)


# ------------------------------------------------------------------------- where the file is found
def test_the_cache_is_read_where_huggingface_hub_finds_the_file(hub):
    """Every layout (refs/main and another branch, a commit named directly, a revision not held, a
    snapshot without the file, the file recorded as absent, a repository not cached) resolves to the path
    huggingface_hub's try_to_load_from_cache returns, or to nothing where it returns nothing."""
    hf_hub = pytest.importorskip("huggingface_hub")
    llama, qwen = corpus_config(LLAMA32), corpus_config(QWEN25)
    cache_repo(hub, "meta-llama/Llama-3.2-1B", {COMMIT_A: llama, COMMIT_B: qwen},
               {"main": COMMIT_A, "dev": COMMIT_B, "pr/1": COMMIT_B})
    cache_repo(hub, "org/no-config", {COMMIT_A: None}, {"main": COMMIT_A})
    cache_repo(hub, "org/absent", {COMMIT_A: llama}, {"main": COMMIT_B}, no_exist=(COMMIT_B,))
    cache_repo(hub, "org/no-refs", {COMMIT_A: llama}, {})
    cases = [("meta-llama/Llama-3.2-1B", r) for r in (None, "main", "dev", "pr/1", COMMIT_A, COMMIT_B, "c" * 40, "v2")]
    cases += [("org/no-config", None), ("org/absent", None), ("org/absent", COMMIT_A), ("org/no-refs", None),
              ("org/no-refs", COMMIT_A), ("org/not-cached", None)]
    for repo_id, rev in cases:
        theirs = hf_hub.try_to_load_from_cache(repo_id, "config.json", cache_dir=str(hub), revision=rev)
        ours = resolve.cached_file(str(hub), repo_id, rev)
        assert ours.path == (theirs if isinstance(theirs, str) else None), (repo_id, rev)
        got = resolve.find(repo_id, revision=rev, table=False)
        assert (got.file if got else None) == ours.path, (repo_id, rev)
        if ours.path is None:
            assert ours.why, (repo_id, rev)
    # the reasons name what the cache holds
    assert "holds meta-llama/Llama-3.2-1B but not its revision v2" in resolve.cached_file(
        str(hub), "meta-llama/Llama-3.2-1B", "v2").why
    assert "records that org/absent has no config.json" in resolve.cached_file(str(hub), "org/absent").why
    assert "has no config.json" in resolve.cached_file(str(hub), "org/no-config").why


CACHE_ENV = [
    {},
    {"HF_HOME": "{tmp}/home"},
    {"XDG_CACHE_HOME": "{tmp}/xdg"},
    {"HF_HOME": "{tmp}/home", "XDG_CACHE_HOME": "{tmp}/xdg"},
    {"HUGGINGFACE_HUB_CACHE": "{tmp}/legacy", "HF_HOME": "{tmp}/home"},
    {"HF_HUB_CACHE": "{tmp}/hub", "HUGGINGFACE_HUB_CACHE": "{tmp}/legacy", "HF_HOME": "{tmp}/home"},
    {"HF_HOME": "~/somewhere"},
]


@pytest.mark.parametrize("env", CACHE_ENV, ids=lambda e: "+".join(sorted(e)) or "defaults")
def test_the_cache_directory_is_huggingface_hubs(tmp_path, monkeypatch, env):
    """The directory looked in is huggingface_hub's constants.HF_HUB_CACHE under the same environment
    (computed at its import: read in a fresh interpreter)."""
    pytest.importorskip("huggingface_hub")
    clean = {k: v for k, v in os.environ.items() if k not in (
        "HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME", "TRANSFORMERS_CACHE",
        "PYTORCH_TRANSFORMERS_CACHE", "PYTORCH_PRETRAINED_BERT_CACHE")}
    clean.update({k: v.format(tmp=tmp_path) for k, v in env.items()})
    theirs = subprocess.run([sys.executable, "-c",
                             "from huggingface_hub import constants; print(constants.HF_HUB_CACHE)"],
                            env=clean, capture_output=True, text=True, check=True).stdout.strip()
    for k in ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME", "TRANSFORMERS_CACHE",
              "PYTORCH_TRANSFORMERS_CACHE", "PYTORCH_PRETRAINED_BERT_CACHE"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v.format(tmp=tmp_path))
    assert resolve.hub_caches() == [theirs]
    # transformers 4.x reads TRANSFORMERS_CACHE instead when it is set: looked in first
    monkeypatch.setenv("TRANSFORMERS_CACHE", str(tmp_path / "tf"))
    assert resolve.hub_caches() == [str(tmp_path / "tf"), theirs]


def test_repo_ids_are_huggingface_hubs(tmp_path):
    """A name is looked up in the cache only when huggingface_hub would accept it as a repository id."""
    hf_hub = pytest.importorskip("huggingface_hub")
    from huggingface_hub.utils import HFValidationError

    for name in ("gpt2", "Qwen/Qwen3-8B", "org/name.v1", "org/na-me_2", "saves/qwen3-4b/full/sft", "/abs/path",
                 "./local", "org--x/y", "a..b/c", "-x/y", "org/name.git", "a" * 97, "", "org/", "org name/x"):
        try:
            hf_hub.utils.validate_repo_id(name)
            theirs = True
        except HFValidationError:
            theirs = False
        assert resolve.is_repo_id(name) == theirs, name


# ---------------------------------------------------------------------- what the training config gets
AXOLOTL = "base_model: meta-llama/Llama-3.2-1B\nsequence_len: 8192\nbf16: true\ndatasets:\n  - path: x\n"


def test_a_cached_model_is_read_as_its_config_json(hub, tmp_path, capsys):
    """An axolotl config naming a cached model gets exactly that config.json's reading (d, base, scheme,
    parameters, training length, attention factor), each value naming the snapshot it came from; the
    output says where the model came from."""
    llama = corpus_config(LLAMA32)
    repo = cache_repo(hub, "meta-llama/Llama-3.2-1B", {COMMIT_A: llama}, {"main": COMMIT_A})
    alone = tmp_path / "alone.json"
    alone.write_bytes(llama)
    p = write(tmp_path, "ax.yaml", AXOLOTL)
    r = lint_config(load_config(p))
    truth = lint_config(load_config(str(alone)))
    assert derived(r) == derived(truth) == (64, 500000.0, "llama3", {
        "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
        8192, 1.0)
    snap = str(repo / "snapshots" / COMMIT_A / "config.json")
    m = r.config.model
    assert (m.source, m.file, m.commit, m.key, m.at) == ("hf-cache", snap, COMMIT_A, "base_model", (1, 1))
    base = r.setup()["derived"]["base"]
    assert base["from"] == "rope_theta of base_model 'meta-llama/Llama-3.2-1B'" and base["line"] is None
    assert m.origin == f"{snap} (Hugging Face cache, snapshot {COMMIT_A[:12]})"  # said once, not in each value
    assert r.setup()["model"] == {"name": "meta-llama/Llama-3.2-1B", "key": "base_model", "source": "hf-cache",
                                  "file": snap, "commit": COMMIT_A, "revision": None, "from": m.origin}
    assert not [f for f in r.findings if f.code in ("RV031", "RV032")]
    assert main(["lint", p, "--select", "RV", "--verbose"]) == 0  # the ok line says where the model came from
    out = capsys.readouterr().out
    assert out.startswith(f"{p}: ok (d=64, base 500,000, llama3 x32, trained 8,192, tuned 8,192, target 131,072, ")
    assert out.splitlines()[0].endswith("; model meta-llama/Llama-3.2-1B from the Hugging Face cache)")
    second = write(tmp_path, "ax2.yaml", AXOLOTL)
    assert main(["lint", p, second, "--target", "4M", "--output-format", "concise"]) == 1  # past the bounds
    lines = capsys.readouterr().out.splitlines()
    findings = [ln for ln in lines if ln.startswith((p, second))]
    assert len(findings) >= 2 and not [ln for ln in findings if "Hugging Face cache" in ln]
    assert [ln for ln in lines if "Hugging Face cache" in ln] == [f"Model meta-llama/Llama-3.2-1B: {m.origin}."]


def test_the_revision_the_config_names_is_the_one_read(hub, tmp_path):
    """axolotl revision_of_model / LLaMA-Factory model_revision: that branch's snapshot, not main's; a
    revision the cache does not hold is RV031 with the command that fetches it (never another snapshot)."""
    llama, qwen = corpus_config(LLAMA32), corpus_config(QWEN25)
    cache_repo(hub, "meta-llama/Llama-3.2-1B", {COMMIT_A: llama, COMMIT_B: qwen}, {"main": COMMIT_A, "dev": COMMIT_B})
    main_r = lint_config(load_config(write(tmp_path, "a.yaml", AXOLOTL)))
    dev = lint_config(load_config(write(tmp_path, "b.yaml", AXOLOTL + "revision_of_model: dev\n")))
    lf = lint_config(load_config(write(tmp_path, "c.yaml", "model_name_or_path: meta-llama/Llama-3.2-1B\n"
                                                         f"model_revision: {COMMIT_B}\nstage: "
                                                         "sft\ncutoff_len: 1024\n")))
    assert main_r.layers[0].spec.base == 500000.0 and main_r.config.model.commit == COMMIT_A
    assert dev.config.model.commit == lf.config.model.commit == COMMIT_B
    assert dev.layers[0].spec.base == lf.layers[0].spec.base == 1000000.0  # Qwen2.5's rope_theta
    with pytest.raises(ModelNeeded) as exc:
        load_config(write(tmp_path, "d.yaml", AXOLOTL + "revision_of_model: v9\n"))
    assert "'meta-llama/Llama-3.2-1B' at revision v9 names the model" in str(exc.value)
    assert "holds meta-llama/Llama-3.2-1B but not its revision v9" in str(exc.value) + "".join(exc.value.notes)
    assert exc.value.fix.startswith("run `hf download meta-llama/Llama-3.2-1B config.json --revision v9` and "
                                    "lint again")


def test_model_config_flag_then_local_directory_then_cache(hub, tmp_path):
    """--model-config wins over everything; a local directory of that name wins over the cache (transformers
    reads a directory first); the cache over ropelaw's table."""
    llama, qwen = corpus_config(LLAMA32), corpus_config(QWEN25)
    cache_repo(hub, "meta-llama/Llama-3.2-1B", {COMMIT_A: llama}, {"main": COMMIT_A})
    p = write(tmp_path, "ax.yaml", AXOLOTL)
    assert load_config(p).model.source == "hf-cache"
    local = tmp_path / "meta-llama" / "Llama-3.2-1B"  # relative to the working directory, as the framework resolves it
    local.mkdir(parents=True)
    (local / "config.json").write_bytes(qwen)
    cfg = load_config(p)
    assert (cfg.model.source, cfg.model.file, cfg.layers[0].base.raw) == ("directory", os.path.join(
        "meta-llama/Llama-3.2-1B", "config.json"), 1000000.0)
    given = tmp_path / "given.json"
    given.write_bytes(llama)
    cfg = load_config(p, model_config=str(given))
    assert (cfg.model.source, cfg.layers[0].base.raw) == ("--model-config", 500000.0)


def test_not_found_is_rv031_with_the_command(hub, tmp_path, capsys):
    """Nowhere on this machine: RV031 at the key naming the model, every place looked in, and the command
    that fetches the file; a name that is a path is said to be one (no Hub command for it)."""
    p = write(tmp_path, "lf.yaml", "stage: sft\nmodel_name_or_path: someone/private-7b\ncutoff_len: 4096\n")
    with pytest.raises(ModelNeeded) as exc:
        load_config(p)
    e = exc.value
    assert (e.code, e.line, e.column) == ("RV031", 2, 1)
    said = str(e) + "".join(e.notes)  # in the message, or its note when a long cache path would take it past 300
    assert f"not in the Hugging Face cache {hub}" in said and "ropelaw never downloads" in str(e)
    assert e.fix == ("run `hf download someone/private-7b config.json` and lint again, or pass its config.json "
                     "with --model-config PATH (or the directory holding it)")
    assert main(["lint", p]) == 1
    out = capsys.readouterr().out
    assert f"{p}:2:1: RV031 model-config-needed model_name_or_path 'someone/private-7b' names the model" in out
    assert "All checks passed" not in out
    p = write(tmp_path, "lf2.yaml", "stage: sft\nmodel_name_or_path: saves/qwen3-4b/full/sft\ncutoff_len: 4096\n")
    with pytest.raises(ModelNeeded) as exc:
        load_config(p)
    assert "'saves/qwen3-4b/full/sft' is a path on the machine that trains (no such directory here)" in str(exc.value)
    assert "hf download" not in exc.value.fix and "--model-config PATH" in exc.value.fix


def test_the_table_never_stands_in_silently(hub, tmp_path, capsys):
    """A model only ropelaw's table has: its values are used and RV032 (a warning) says they are the table's
    and how to get the model's own file; with the file in the cache, the file wins and RV032 is gone."""
    p = write(tmp_path, "ax.yaml", AXOLOTL)
    r = lint_config(load_config(p))
    rv032 = [f for f in r.findings if f.code == "RV032"]
    assert [(f.severity, f.line, f.column) for f in rv032] == [("warning", 1, 1)]
    assert "its config.json is not on this machine; the model's values are ropelaw's table, not" in rv032[0].message
    assert rv032[0].sources == ("ropelaw's table: meta-llama/Llama-3.2-1B as litgpt==0.5.13 litgpt/config.py "
                                "Config.from_name('Llama-3.2-1B')",)  # the row's provenance, beside the message
    assert rv032[0].fix.startswith("run `hf download meta-llama/Llama-3.2-1B config.json` and lint again")
    assert r.config.model.source == "table" and r.setup()["model"]["source"] == "table"
    assert main(["lint", p]) == 1 and "RV032 model-config-from-table" in capsys.readouterr().out
    cache_repo(hub, "meta-llama/Llama-3.2-1B", {COMMIT_A: corpus_config(LLAMA32)}, {"main": COMMIT_A})
    r = lint_config(load_config(p))
    assert r.config.model.source == "hf-cache" and not [f for f in r.findings if f.code == "RV032"]
    # a named revision is never the table's (the table has no revisions): RV031
    with pytest.raises(ModelNeeded):
        load_config(write(tmp_path, "rev.yaml", AXOLOTL.replace("Llama-3.2-1B", "Llama-3.2-3B")
                          + "revision_of_model: v1\n"))


def test_the_model_files_own_findings_are_reported_at_its_lines(hub, tmp_path):
    """What the model's config.json itself gets when linted alone (a value finding) is reported at that file's
    own line and column, once: the training config does not take it over."""
    data = json.loads(corpus_config(LLAMA32))
    data["rope_scaling"]["factor"] = "32"  # a string: RV002 invalid-type in the model's own file
    text = json.dumps(data, indent=2).encode()
    repo = cache_repo(hub, "meta-llama/Llama-3.2-1B", {COMMIT_A: text}, {"main": COMMIT_A})
    snap = str(repo / "snapshots" / COMMIT_A / "config.json")
    alone = [(f.code, f.line, f.column) for f in lint_config(load_config(snap)).findings if f.code.startswith("RV")]
    r = lint_config(load_config(write(tmp_path, "ax.yaml", AXOLOTL)))
    mine = [(f.code, f.line, f.column) for f in r.findings if f.path == snap]
    assert mine == alone and alone
    line = next(i for i, t in enumerate(text.decode().splitlines(), 1) if '"factor": "32"' in t)
    assert alone[0][1] == line


def test_the_model_files_findings_once_for_all_configs_naming_it(hub, tmp_path, capsys):
    """Two training configs naming the same cached model with a finding of its own: the finding is printed once."""
    data = json.loads(corpus_config(LLAMA32))
    data["rope_scaling"]["factor"] = "32"
    repo = cache_repo(hub, "meta-llama/Llama-3.2-1B", {COMMIT_A: json.dumps(data).encode()}, {"main": COMMIT_A})
    snap = str(repo / "snapshots" / COMMIT_A / "config.json")
    d = tmp_path / "runs"
    d.mkdir()
    write(d, "a.yaml", AXOLOTL)
    write(d, "b.yaml", AXOLOTL.replace("8192", "4096"))
    assert main(["lint", str(d), "--select", "RV"]) == 1
    out = capsys.readouterr().out
    assert sum(line.startswith(f"{snap}:") for line in out.splitlines()) == 1, out


# ---------------------------------------------------------------------------------- ropelaw's table
HUB_MODELS = json.loads((ROOT / "tests" / "corpus" / "hub_models.json").read_text())["models"]


def hub_file(repo_id: str) -> pathlib.Path:
    """The file of a tests/corpus/hub_models.json entry (the corpus, or ROPELAW_CORPUS_NEW for the files fetched
    this round), sha256 checked; skip naming it when it is in neither (a fetched file not added yet)."""
    e = HUB_MODELS[repo_id]
    new = os.environ.get("ROPELAW_CORPUS_NEW")
    path = next((p for p in (CORPUS / e["file"], pathlib.Path(new) / e["file"] if new else None)
                 if p is not None and p.is_file()), None)
    if path is None:
        pytest.skip(f"{e['file']} ({repo_id}, {e['repo']}@{e['commit']} {e['path']}) is not in {CORPUS} yet")
    assert hashlib.sha256(path.read_bytes()).hexdigest() == e["sha256"], repo_id
    return path


def reading(r) -> list[tuple]:
    """Every layer group as lint reads it: dims, base, scheme and parameters, lengths, window."""
    out = []
    for a in r.layers:
        s = a.spec
        out.append((a.label, s.d, s.base, s.scheme, sorted((k, v) for k, v in s.param_dict().items()),
                    s.train_len, a.length, a.window))
    return out


@pytest.mark.parametrize("repo_id", sorted(r for r in HUB_MODELS if resolve.table_entry(r) is not None))
def test_a_table_row_reads_as_the_models_own_file(hub, tmp_path, repo_id):
    """Where the corpus holds a model's real config.json, ropelaw's table row for it gives the same reading
    (every layer group's dims, base, scheme, parameters, lengths and window) as the file does."""
    path = hub_file(repo_id)
    p = write(tmp_path, "ax.yaml", f"base_model: {repo_id}\nsequence_len: 1024\n")
    from_table = lint_config(load_config(p))
    from_file = lint_config(load_config(p, model_config=str(path)))
    assert from_table.config.model.source == "table" and from_file.config.model.source == "--model-config"
    assert reading(from_table) == reading(from_file)


@pytest.mark.parametrize("repo_id", ["microsoft/Phi-3.5-mini-instruct", "microsoft/Phi-3-mini-128k-instruct",
                                     "microsoft/Phi-4-mini-instruct", "Qwen/Qwen2.5-7B-Instruct",
                                     "Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen2.5-7B-Instruct-1M", "Qwen/QwQ-32B"])
def test_rows_litgpt_encodes_differently_are_not_in_the_table(hub, tmp_path, repo_id):
    """litgpt==0.5.13 runs these models otherwise than their config.json asks (LongRoPE; the YaRN-extended
    131,072 of Qwen2.5's model cards where the Instruct config.json says 32,768): no row, RV031 asks for the file."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "scripts"))
    from presets import not_the_hub_config

    assert not_the_hub_config(repo_id) and resolve.table_entry(repo_id) is None
    with pytest.raises(ModelNeeded) as exc:
        load_config(write(tmp_path, "ax.yaml", f"base_model: {repo_id}\nsequence_len: 4096\n"))
    assert f"`hf download {repo_id} config.json`" in exc.value.fix


def test_phi_3_5_from_its_own_file_is_longrope(hub, tmp_path):
    """axolotl's examples/phi/lora-3.5.yaml fine-tunes microsoft/Phi-3.5-mini-instruct at 4,096 (here in its
    format): from the model's config.json (heldout-r2/hub, the Hub's values) it is LongRoPE over an original
    4,096 with max 131,072 and transformers' attention factor sqrt(1 + ln(32) / ln(4096)) = 1.19024, not the
    plain RoPE at 4,096 that litgpt's table gave."""
    import math

    path = CORPUS / "heldout-r2" / "hub" / "onnxdiag_Phi-3.5-mini-instruct.json"
    if not path.is_file():
        pytest.skip(f"{path} is not in the corpus (ROPELAW_CORPUS)")
    p = write(tmp_path, "lora-3.5.yaml", "base_model: microsoft/Phi-3.5-mini-instruct\nsequence_len: 4096\n"
                                         "bf16: auto\ndatasets:\n  - path: x\n")
    r = lint_config(load_config(p, model_config=str(path)))
    a = r.layers[0]
    assert (a.spec.d, a.spec.scheme, a.spec.train_len, r.config.max_pos.raw) == (96, "longrope", 4096, 131072)
    assert a.scheme_result.attention_factor == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)), rel=1e-12)
    assert round(a.scheme_result.attention_factor, 5) == 1.19024
