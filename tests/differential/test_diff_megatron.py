"""Megatron-LM's own argument parsing and model building on every example and recipe of the corpus, against
what ropelaw reads: rotary dims, base, the frequency of every pair (scheme and parameters), YaRN's attention
factor, training length (``--seq-length``) and context (``--max-position-embeddings``), sliding window.

Megatron-LM's training code is on PyPI only inside megatron-core's wheels from 0.17 (``megatron/training``),
which require Python 3.12: the CI step "Megatron-LM" downloads megatron-core==0.19.2 for Python 3.12 (``pip
download --no-deps --python-version 3.12 --only-binary=:all:``; the release closest to the corpus commit
NVIDIA/Megatron-LM@d98e8a64, which is 295 commits past core_v0.19.0 on main; their rotary classes,
``GPTModel.__init__``'s rotary choice and ``_apply_yarn_config_from_args`` are the same code, the diffs being
caching and CUDA graphs) and imports it on Python 3.11 with two stated patches: ``typing.override`` (new in
3.12) given as the identity while the package imports, and ``megatron.core.transformer.moe.ops.paged_stash``
(Triton kernels, GPU only) given as a stand-in module. Then, per file:

- the argument vector: a launch script's words as ropelaw's shell reader expands them (``script_argv``: the
  script is never run), or a functional test's ``MODEL_ARGS`` turned into flags as Megatron's harness does
  (``tests/functional_tests/shell_test_utils/_run_training.sh``: ``true`` -> the flag alone, lists -> their
  items, anything else -> ``--flag value``);
- ``parse_args(ignore_unknown_args=True)`` and ``validate_args`` (Megatron's defaults, types, last flag wins,
  its refusals), ``core_transformer_config_from_args``;
- ``GPTModel`` built on torch's ``meta`` device (no weights) with the local layer spec until it constructs its
  rotary embedding (``RotaryEmbedding``, ``YarnRotaryEmbedding`` or, for MLA, the attention's own): its class
  and arguments are recorded there, and the same class is then built on the CPU with them
  (``torch.cuda.current_device`` answered ``"cpu"``) to give the frequencies and YaRN's concentration factor.

Not run: Megatron-LM's ``megatron/post_training`` (the ModelOpt builder behind ``--enable-gpt-oss``) and the
``pretrain_*.py`` entry points are in no wheel; tests/test_framework_runtimes.py reads the builder from its
source (``ROPELAW_MEGATRON_LM``). ``--yaml-cfg`` files go through ``yaml_arguments.py``, not run here.

Each file's verdict is recorded in ``megatron_examples.json`` beside this file (``repo@commit path``, sha256,
verdict) and must not change unnoticed; ``python tests/differential/test_diff_megatron.py`` prints the table
and, with ``--write``, regenerates the manifest.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import io
import json
import math
import os
import pathlib
import sys
import time
import types
import warnings
import zipfile

import pytest

import corpus_examples as examples

ROOT = pathlib.Path(__file__).resolve().parents[2]
DL = pathlib.Path(os.environ.get("ROPELAW_FRAMEWORK_DL", ROOT.parent / "shared" / "dl"))
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus"))
VERSION = "0.19.2"
REPO, COMMIT = "NVIDIA/Megatron-LM", "d98e8a64ddf34856e74b24714e3bedb2f5a39553"
MANIFEST = pathlib.Path(__file__).with_name("megatron_examples.json")
# files of the repository at COMMIT that are not in SOURCES.tsv yet (read from a snapshot, never committed)
EXTRA = {"examples/post_training/modelopt/conf/openai/gpt-oss-20b.sh":
         "3bb0ed881dc8de5e38872a949541f54d1eac4780e093475e850042a5db690232"}


def corpus_entries() -> list[tuple[str, pathlib.Path, str]]:
    """``(path in the repository, where the corpus holds it, sha256)`` of every Megatron-LM example
    (corpus_examples.rows)."""
    out = [(path, CORPUS / rel, sha) for path, (rel, sha) in examples.rows("Megatron-LM").items()]
    for path, sha in EXTRA.items():
        out.append((path, CORPUS / "frameworks-examples" / "Megatron-LM" / path, sha))
    return sorted(out)


# ------------------------------------------------------------------------------------------- Megatron's side
def load_megatron(root: pathlib.Path) -> types.SimpleNamespace:
    """megatron-core's modules from the unpacked wheel at ``root`` (see the module docstring for the patches)."""
    import typing

    import torch

    for name in [m for m in sys.modules if m == "megatron" or m.startswith("megatron.")]:
        del sys.modules[name]  # megatron-core 0.16.1 from another test: not this one
    kernels = types.ModuleType("megatron.core.transformer.moe.ops.paged_stash")
    kernels.__getattr__ = lambda name: None  # Triton kernels: never called on this path
    sys.modules[kernels.__name__] = kernels
    had_override = hasattr(typing, "override")
    if not had_override:
        typing.override = lambda f: f  # Python 3.12's typing.override, as the identity
    sys.path.insert(0, str(root))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from megatron.core import parallel_state
            from megatron.core.models.common.embeddings import rotary_pos_embedding, yarn_rotary_pos_embedding
            from megatron.core.models.gpt.gpt_layer_specs import get_gpt_layer_local_spec
            from megatron.core.models.gpt.gpt_model import GPTModel
            from megatron.training import arguments
    finally:
        if not had_override:
            del typing.override
    from megatron.core.transformer import transformer_config

    for mod in (arguments, transformer_config):  # Transformer Engine's version checks: as if TE >= 2.14 were there
        mod.is_te_min_version = lambda *a, **k: True
    return types.SimpleNamespace(torch=torch, arguments=arguments, GPTModel=GPTModel, spec=get_gpt_layer_local_spec,
                                 parallel_state=parallel_state, rope=rotary_pos_embedding,
                                 yarn=yarn_rotary_pos_embedding, root=root)


def harness_argv(model_args: dict) -> list[str]:
    """``MODEL_ARGS`` as Megatron's functional-test harness passes them (see the module docstring)."""
    import re

    argv: list[str] = []
    for key, value in model_args.items():
        if value == "" or value is None:
            continue
        if value is True:
            argv.append(str(key))
            continue
        if isinstance(value, list):  # yq's tostring: a flow sequence
            value = "[" + ", ".join(str(v) for v in value) + "]"
        text = "false" if value is False else "true" if value is True else str(value).strip()
        if "$" in text:
            continue  # a value the harness takes from its environment: any value Megatron accepts
        if re.fullmatch(r"\[[^]]+\]", text):  # brackets stripped, the rest split into words by eval
            argv += [str(key)] + text[1:-1].split()
        else:  # quoted when it holds spaces, | or parentheses: one word
            argv += [str(key), text]
    return argv


def where(exc: BaseException) -> str:
    """``file.py:line`` of the innermost frame of Megatron's code in ``exc``'s traceback."""
    import traceback

    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/megatron/" in f.filename]
    return f"{pathlib.Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"


class Built(Exception):
    """Raised by the recording stand-in of a rotary class once GPTModel has chosen it."""


def megatron_rotary(m: types.SimpleNamespace, argv: list[str]) -> dict:
    """What Megatron builds from ``argv``: ``{"refused": why}``, ``{"rope": False, ...}`` or the rotary's values."""
    args_mod = m.arguments
    saved = sys.argv
    sys.argv = ["pretrain_gpt.py"] + argv
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            args = args_mod.parse_args(ignore_unknown_args=True)
    except SystemExit:
        return {"refused": "argparse: " + (err.getvalue().strip().splitlines() or ["?"])[-1][:160]}
    except Exception as exc:  # noqa: BLE001  a type function of Megatron's parser raised
        return {"refused": f"argparse: {type(exc).__name__}: {str(exc)[:160]}"}
    finally:
        sys.argv = saved
    # the machine the script asks for: as many ranks as its parallel sizes multiply to, a compute capability
    # 9.0 GPU (validate_args asks torch.cuda for it), RoPE fusion off (a Transformer Engine kernel, not here)
    args.world_size = math.prod(max(int(getattr(args, k, None) or 1), 1) for k in (
        "tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
        "expert_model_parallel_size", "expert_tensor_parallel_size", "tensor_parallel_num_weight_shards"))
    args.apply_rope_fusion = args.moe_permute_fusion = False  # Transformer Engine kernels
    environ = dict(os.environ)
    if not (getattr(args, "use_megatron_fsdp", False) or getattr(args, "use_torch_fsdp2", False)):
        os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"  # what Megatron's launchers export for tensor parallelism
    cuda = m.torch.cuda
    capability, properties = cuda.get_device_capability, cuda.get_device_properties
    cuda.get_device_capability = lambda *a, **k: (9, 0)
    cuda.get_device_properties = lambda *a, **k: types.SimpleNamespace(major=9, minor=0, name="stand-in",
                                                                       total_memory=80 << 30)
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            args_mod.validate_args(args, {})
            cfg = args_mod.core_transformer_config_from_args(args)
    except (Exception, SystemExit) as exc:  # noqa: BLE001  Megatron's own refusal (AssertionError, exit() ...)
        cuda.get_device_capability, cuda.get_device_properties = capability, properties
        os.environ.clear()
        os.environ.update(environ)
        return {"refused": f"{type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"
                           f" ({where(exc)})"}
    try:
        pe = args.position_embedding_type
        out = {"pe": pe, "seq": args.seq_length, "max_pos": args.max_position_embeddings,
               "window": list(cfg.window_size) if cfg.window_size is not None else None,
               "skip": cfg.window_attn_skip_freq, "mla": bool(cfg.multi_latent_attention)}
        if pe not in ("rope", "yarn", "mrope") and not cfg.multi_latent_attention:
            return {**out, "rope": False}
        return {**out, "rope": True, **build_rotary(m, cfg, args)}
    finally:
        cuda.get_device_capability, cuda.get_device_properties = capability, properties
        os.environ.clear()
        os.environ.update(environ)  # validate_args exports NVTE_* switches


def build_rotary(m: types.SimpleNamespace, cfg, args) -> dict:
    """GPTModel on the meta device until its rotary embedding is constructed; that class, built on the CPU
    with the same arguments: its class, dims, base, per-pair frequency (float32) and concentration factor."""
    torch = m.torch
    classes = (m.rope.RotaryEmbedding, m.yarn.YarnRotaryEmbedding, m.rope.MultimodalRotaryEmbedding)
    seen: dict = {}
    real_init = {c: c.__init__ for c in classes}

    def spy(cls):
        def init(self, *a, **kw):
            seen.update(cls=cls, args=a, kwargs=kw)
            raise Built
        return init
    for c in classes:
        c.__init__ = spy(c)
    cfg.use_cpu_initialization = True
    # a Transformer Engine kernel and sequence parallelism: the local spec's torch LayerNorm refuses them
    cfg.persist_layer_norm = cfg.sequence_parallel = False
    try:
        spec = m.spec(cfg.num_moe_experts, False, cfg.qk_layernorm, cfg.multi_latent_attention)
        with torch.device("meta"), warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            m.GPTModel(config=cfg, transformer_layer_spec=spec, vocab_size=128,
                       max_sequence_length=args.max_position_embeddings,
                       position_embedding_type=args.position_embedding_type, rotary_percent=args.rotary_percent,
                       rotary_base=args.rotary_base, rope_scaling=args.use_rope_scaling,
                       rope_scaling_factor=args.rope_scaling_factor,
                       seq_len_interpolation_factor=args.rotary_seq_len_interpolation_factor)
        return {"built": None}
    except Built:
        pass
    except Exception as exc:  # noqa: BLE001
        return {"built_error": f"{type(exc).__name__}: {str(exc)[:160]}"}
    finally:
        for c, init in real_init.items():
            c.__init__ = init
    cls, a, kw = seen["cls"], seen["args"], dict(seen["kwargs"])
    kw.pop("cp_group", None)
    kw["use_cpu_initialization"] = True
    real = torch.cuda.current_device
    torch.cuda.current_device = lambda: "cpu"  # get_emb moves its buffers to the GPU: kept on the CPU
    try:
        emb = cls(*a, **kw)
        if isinstance(emb, m.yarn.YarnRotaryEmbedding):
            freqs, mscale = emb.get_emb(2)
            half = freqs.shape[-1] // 2
            inv = freqs[1, 0, 0, :half].double().tolist()
        else:
            inv = emb.get_freqs_non_repeated(2)[1].double().tolist()
            mscale = 1.0
    finally:
        torch.cuda.current_device = real
    return {"cls": cls.__name__, "d": 2 * len(inv), "base": float(kw.get("rotary_base", 10000.0)),
            "inv_freq": inv, "attention": float(mscale)}


# --------------------------------------------------------------------------------------------- the verdict
def ropelaw_reading(path: pathlib.Path) -> dict:
    from ropelaw.errors import UsageError
    from ropelaw.lint.check import lint_config
    from ropelaw.lint.loader import NotARopeConfig, UnreadConfig, load_config

    try:
        cfg = load_config(str(path))
    except UnreadConfig as exc:
        return {"cannot": exc.code}
    except NotARopeConfig as exc:
        return {"skipped": str(exc).split(": ", 1)[-1]}
    except UsageError as exc:
        return {"error": str(exc).split(": ", 1)[-1][:120]}
    r = lint_config(cfg)
    groups = [{"d": g.spec.d, "base": g.spec.base, "scheme": g.spec.scheme, "window": g.window,
               "inv_freq": list(g.scheme_result.inv_freq), "attention": g.scheme_result.attention_factor}
              for g in r.layers]
    return {"groups": groups, "train": cfg.train_len.raw, "target": cfg.target.raw}


def compare(theirs: dict, ours: dict) -> str:
    """``right`` / ``says it cannot`` / ``not a model`` / ``not run here`` / ``misread: ...``."""
    if "error" in ours and theirs.get("refused", "").startswith("no Megatron argument vector"):
        return "not a model: " + ours["error"][:60]
    if theirs.get("builder"):
        return "not run here: " + theirs["builder"]
    if "cannot" in ours or "error" in ours:
        return "says it cannot: " + ours.get("cannot", ours.get("error", ""))
    if "refused" in theirs:
        if "skipped" in ours:
            return "not a model: " + theirs["refused"][:60]
        return "not run here: Megatron refuses: " + theirs["refused"]
    if not theirs.get("rope"):
        if "skipped" in ours:
            return "right: no rotary"
        return f"misread: Megatron builds no rotary (position embedding {theirs['pe']})"
    if "skipped" in ours:
        return f"misread: skipped ({ours['skipped'][:60]}), Megatron builds {theirs.get('cls')}"
    if "cls" not in theirs:
        return "not run here: Megatron's GPTModel failed: " + str(theirs.get("built_error"))[:120]
    bad = []
    want_window = None
    if theirs["window"] is not None and theirs["window"][0] >= 0 and theirs["skip"] != 1:
        want_window = theirs["window"][0] + 1
    for g in ours["groups"]:
        if g["d"] != theirs["d"]:
            bad.append(f"d {g['d']} vs {theirs['d']}")
        if g["base"] != theirs["base"]:
            bad.append(f"base {g['base']:g} vs {theirs['base']:g}")
        # strict=False: a d that differs is said above; the pairs both have are still compared
        worst = max(abs(x - y) / y for x, y in zip(g["inv_freq"], theirs["inv_freq"], strict=False))
        if worst > 2.0 ** -18:  # float32 against float64, YaRN's float32 ramp included (64 ulps)
            bad.append(f"frequencies differ by {worst:.2g} ({g['scheme']})")
        if not math.isclose(g["attention"], theirs["attention"], rel_tol=1e-6):
            bad.append(f"attention factor {g['attention']:g} vs {theirs['attention']:g}")
    windows = sorted({g["window"] for g in ours["groups"]}, key=lambda w: (w is not None, w))
    if want_window is None and windows != [None]:
        bad.append(f"window {windows} vs none")
    if want_window is not None and want_window not in windows:
        bad.append(f"window {windows} vs {want_window}")
    if ours["train"] != theirs["seq"]:
        bad.append(f"training length {ours['train']} vs --seq-length {theirs['seq']}")
    if ours["target"] != theirs["max_pos"]:
        bad.append(f"context {ours['target']} vs --max-position-embeddings {theirs['max_pos']}")
    return "misread: " + "; ".join(bad) if bad else "right"


def megatron_argv(path: pathlib.Path) -> list[str] | None:
    """The argument vector Megatron gets from ``path`` (see the module docstring), None if it gives none."""
    import yaml

    from ropelaw.lint.dialects.megatron import parse_shell, script_argv

    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix in (".sh", ".bash"):
        try:
            flags, _ = parse_shell(text)
            words = script_argv(text)
        except Exception:  # noqa: BLE001  ropelaw cannot split it: said by its reading
            return None
        argv = []
        for k, v in flags.items():
            if not k.startswith("--") or (isinstance(v, str) and "$" in v):
                continue  # a value the script takes from its environment: any value Megatron accepts
            argv += [k] if v is True else [k, str(v)]
        # a flag given twice with different values: argparse keeps the last one (appended again)
        for k, v in flags.items():
            later = [words[i + 1] for i, w in enumerate(words[:-1]) if w == k and not words[i + 1].startswith("--")]
            if v is not True and later and later[-1] != v and "$" not in later[-1]:
                argv += [k, later[-1]]
        return argv
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if isinstance(data, dict) and isinstance(data.get("MODEL_ARGS"), dict):
        return harness_argv(data["MODEL_ARGS"])
    return None


def verdict(m, path: pathlib.Path) -> tuple[str, dict, dict]:
    argv = megatron_argv(path)
    ours = ropelaw_reading(path)
    if argv is None:
        theirs = {"refused": "no Megatron argument vector (not a launch script or MODEL_ARGS file)"}
    elif "--enable-gpt-oss" in argv:  # megatron/post_training's ModelOpt builder: in no wheel
        theirs = {"builder": "--enable-gpt-oss: Megatron-LM's ModelOpt builder is in no wheel (its YaRN is read "
                             "from its source: tests/test_framework_runtimes.py)"}
    else:
        theirs = megatron_rotary(m, argv)
    return compare(theirs, ours), theirs, ours


# ------------------------------------------------------------------------------------------------ the tests
@pytest.fixture(scope="module")
def megatron(tmp_path_factory):
    pytest.importorskip("torch")
    hits = sorted(glob.glob(str(DL / "**" / f"megatron_core-{VERSION}-*.whl"), recursive=True))
    if not hits:
        pytest.skip(f"no megatron-core=={VERSION} wheel under {DL} (pip download --no-deps --python-version 3.12 "
                    f"--only-binary=:all: -d {DL}/megatron-core megatron-core=={VERSION}; ROPELAW_FRAMEWORK_DL)")
    root = tmp_path_factory.getbasetemp() / f"megatron-core-{VERSION}"
    if not root.is_dir():
        zipfile.ZipFile(hits[-1]).extractall(root)
    m = load_megatron(root)
    yield from distributed(m)


def distributed(m):
    """A one-process gloo group and Megatron's parallel state (GPTModel asks them for its process groups)."""
    dist = m.torch.distributed
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    os.environ.update(WORLD_SIZE="1", RANK="0", LOCAL_RANK="0")
    dist.init_process_group("gloo", rank=0, world_size=1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.parallel_state.initialize_model_parallel()
        yield m
    finally:
        m.parallel_state.destroy_model_parallel()
        dist.destroy_process_group()
        if sys.path is not None and str(m.root) in sys.path:
            sys.path.remove(str(m.root))
        for name in [k for k in sys.modules if k == "megatron" or k.startswith("megatron.")]:
            del sys.modules[name]


def manifest() -> dict:
    return json.loads(MANIFEST.read_text()) if MANIFEST.is_file() else {}


def test_every_example_has_a_verdict():
    entries = corpus_entries()
    if not entries:
        pytest.skip(f"no {CORPUS}/frameworks-examples/SOURCES.tsv (ROPELAW_CORPUS)")
    keys = {f"{REPO}@{COMMIT} {p}" for p, _, _ in entries}
    assert sorted(keys ^ set(manifest()["files"])) == []


ENTRIES = corpus_entries()


@pytest.mark.parametrize("path,local,sha", ENTRIES, ids=[e[0] for e in ENTRIES])
def test_megatron_reads_the_example_as_recorded(megatron, path, local, sha):
    """Every Megatron-LM example of the corpus: the verdict (right / not a model / not run here / says it cannot /
    misread with its reason) is the one recorded; a file not in the corpus yet is skipped by name."""
    want = manifest()["files"][f"{REPO}@{COMMIT} {path}"]
    if not local.is_file():
        pytest.skip(f"{REPO}@{COMMIT[:8]} {path} is not under {CORPUS} yet")
    assert hashlib.sha256(local.read_bytes()).hexdigest() == sha == want["sha256"]
    got, theirs, ours = verdict(megatron, local)
    assert got == want["verdict"], (theirs, {k: v for k, v in ours.items() if k != "groups"})


EXTRA_FLAGS = ["--seq-length", "3072", "--max-position-embeddings", "3072", "--rotary-base", "123457"]
# the same three flags as a launch line writes them, the length through nested shell defaults (bash(1); the
# expansion is checked against bash itself in tests/test_lint_shell.py)
EXTRA_LINE = "    --seq-length ${UNSET_LEN:-${UNSET_SEQ:-3072}} --max-position-embeddings 3072 --rotary-base 123457 \\"


def mutated(text: str) -> str | None:
    """``text`` with :data:`EXTRA_LINE` continued into the command after the last line holding one of its three
    flags, so that each is given again after its last occurrence (None where that line is not continued)."""
    lines = text.split("\n")
    at = [n for n, line in enumerate(lines) if any(f in line for f in EXTRA_FLAGS[::2])]
    if not at or not lines[at[-1]].rstrip().endswith("\\"):
        return None
    return "\n".join(lines[:at[-1] + 1] + [EXTRA_LINE] + lines[at[-1] + 1:])


def test_repeated_flags_and_nested_defaults_read_as_megatron_parses_them(megatron, tmp_path):
    """Mutations of every rotary example ropelaw reads right: the three flags given again later in the command
    (argparse keeps the last occurrence) with the length behind nested defaults ``${A:-${B:-3072}}``. Megatron's
    own parse_args gets the example's argument vector with the three flags appended; ropelaw reads the mutated
    script; the verdict must stay "right" (length, context, base, frequencies)."""
    done = 0
    for path, local, _sha in ENTRIES:
        want = manifest()["files"][f"{REPO}@{COMMIT} {path}"]["verdict"]
        if want != "right" or not local.is_file() or local.suffix != ".sh":
            continue
        text = mutated(local.read_text(encoding="utf-8", errors="replace"))
        argv = megatron_argv(local)
        if text is None or argv is None:
            continue
        theirs = megatron_rotary(megatron, argv + EXTRA_FLAGS)
        if not theirs.get("rope"):
            continue
        copy = tmp_path / f"{done}.sh"
        copy.write_text(text)
        ours = ropelaw_reading(copy)
        assert (theirs["seq"], theirs["max_pos"], theirs["base"]) == (3072, 3072, 123457.0), path
        assert compare(theirs, ours) == "right", (path, {k: v for k, v in ours.items() if k != "groups"})
        done += 1
    assert done >= 25, done  # 29 rotary examples of the corpus mutated (a count, not a result)


def main(argv: list[str]) -> int:
    """Print the table (and with --write, regenerate megatron_examples.json) from a wheel under DL."""
    import tempfile

    hits = sorted(glob.glob(str(DL / "**" / f"megatron_core-{VERSION}-*.whl"), recursive=True))
    root = pathlib.Path(tempfile.mkdtemp()) / "mc"
    zipfile.ZipFile(hits[-1]).extractall(root)
    session = distributed(load_megatron(root))
    m = next(session)  # the generator kept: its end tears the process group down
    old = manifest().get("files", {})
    files, counts = {}, {}
    for path, local, sha in corpus_entries():
        key = f"{REPO}@{COMMIT} {path}"
        if not local.is_file():
            files[key] = old.get(key, {"sha256": sha, "verdict": "not in the corpus yet"})
            continue
        t0 = time.perf_counter()
        v, theirs, ours = verdict(m, local)
        if time.perf_counter() - t0 > 1:
            print(f"slow: {path} {time.perf_counter() - t0:.1f} s")
        files[key] = {"sha256": sha, "verdict": v}
        kind = v.split(":")[0]
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "misread" or "-v" in argv:
            print(f"{path}: {v}")
    print(json.dumps(counts, indent=1))
    if "--write" in argv:
        MANIFEST.write_text(json.dumps({"megatron-core": VERSION, "repo": REPO, "commit": COMMIT, "files": files},
                                       indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
