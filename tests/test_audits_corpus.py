"""Issue 33's rotary-code corpus (audits/corpus.py): the static scan's findings on each real file equal the
judged ones (every true and false positive listed, nothing else), each brute force gives the counts the
manifest records, and the runtime audit of the code it can call agrees with the brute force.

The files are read from the wheels / sdists that CI's corpus step downloads (`pip download --no-deps`, the
pins of audits/corpus.py) into $ROPELAW_AUDIT_CORPUS; an entry whose archive is absent is skipped, naming
it; the brute forces (numpy) always run. Entries published only in a repository (``repo@commit path`` +
sha256) are read from a source store (audits/run.py ``source_roots()``) and skip, naming the file, until it is
in ../shared/corpus/audit-sources.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "audits"))

import brute_force  # noqa: E402
import corpus  # noqa: E402

STORE = Path(os.environ.get("ROPELAW_AUDIT_CORPUS", ROOT / "audits" / "_work" / "corpus"))
ENTRIES = {e.name: e for e in corpus.ENTRIES}


def _repository_file(entry: corpus.Entry, dest: Path) -> Path:
    """A file read from a repository at a pinned commit, copied from the first source store holding it with the
    manifest's sha256 (audits/run.py ``source_roots()``: $ROPELAW_AUDIT_SOURCES, ../shared/corpus/audit-sources,
    the local fetch stores) to ``dest / entry.path``; skips naming it when no store has it."""
    import run

    for root in run.source_roots():
        f = root / entry.local
        if f.is_file() and hashlib.sha256(f.read_bytes()).hexdigest() == entry.sha256:
            (dest / entry.path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest / entry.path)
            return dest
    pytest.skip(f"{entry.repo}@{entry.commit} {entry.path}: not in ../shared/corpus/audit-sources yet (nor in "
                f"{', '.join(str(r) for r in run.source_roots())}, with sha256 {entry.sha256[:12]}...)")


def unpack(entry: corpus.Entry, dest: Path) -> Path:
    """The archive's package folder (the one holding ``entry.path``) unpacked below ``dest``; skips naming
    the archive when it is not in the store. A repository file: :func:`_repository_file`."""
    if entry.repo:
        return _repository_file(entry, dest)
    archive = STORE / entry.archive
    if not archive.is_file():
        pytest.skip(f"{entry.pin}: {archive} not downloaded (CI's corpus step: pip download --no-deps -d "
                    f"$ROPELAW_AUDIT_CORPUS {entry.pin})")
    top = entry.path.split("/")[0]
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as z:
            for m in z.namelist():
                if m.startswith(top + "/") and m.endswith(".py") and ".." not in m:
                    z.extract(m, dest)
    else:
        with tarfile.open(archive) as tf:
            for m in tf.getmembers():
                rel = m.name.split("/", 1)[1] if "/" in m.name else ""
                if m.isfile() and rel.startswith(top + "/") and rel.endswith(".py") and ".." not in rel:
                    m.name = rel
                    tf.extract(m, dest)
    return dest


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_static_findings_are_the_judged_ones(name, tmp_path):
    from ropelaw.audit.static import scan_file

    entry = ENTRIES[name]
    site = unpack(entry, tmp_path)
    file = site / entry.path
    assert hashlib.sha256(file.read_bytes()).hexdigest() == entry.sha256, f"{entry.pin} {entry.path} changed"
    got = sorted((f.code, f.line) for f in scan_file(file))
    want = sorted((code, line) for code, line, _, _ in entry.findings)
    assert got == want, f"{entry.pin} {entry.path}\n  judged {want}\n  found  {got}"


@pytest.mark.parametrize("name, i", [(n, i) for n, e in sorted(ENTRIES.items()) for i in range(len(e.truths))])
def test_brute_force_counts_are_the_recorded_ones(name, i):
    t = ENTRIES[name].truths[i]
    got = brute_force.run(t.brute, t.dtype, t.length)
    assert (got["exact"], got["distinct"]) == (t.exact, t.distinct)


RUNTIME = [(n, i) for n, e in sorted(ENTRIES.items()) for i, t in enumerate(e.truths) if t.factory]
@pytest.mark.torch
@pytest.mark.parametrize("name, i", RUNTIME)
def test_runtime_audit_agrees_with_the_brute_force(name, i, tmp_path, monkeypatch):
    from ropelaw.audit.runtime import audit_module

    entry = ENTRIES[name]
    t = entry.truths[i]
    site = unpack(entry, tmp_path)
    monkeypatch.syspath_prepend(str(site))
    a = audit_module(f"{ROOT / 'audits' / 'targets' / 'corpus_factories.py'}:{t.factory}", t.dtype, t.length,
                     [t.scenario])
    s = a.scenarios[0]
    assert (s.exact, s.distinct) == (t.exact, t.distinct), (name, t.scenario, t.dtype, s.exact, s.distinct)


# ---------------------------------------------------------------- brute forces of code the runtime audit does not call
# (Truth.not_run): the library's own rotary code, run by torch on CPU from the archive, gives the tables whose counts
# the brute force records. Each function returns (angles(p) -> (cos, sin), w, offset) read from what the code made.


def _methods(file: Path, cls: str, names: list[str], namespace: dict) -> dict:
    """The methods ``names`` of class ``cls`` of ``file``, compiled alone (with the file's name and line numbers) in
    ``namespace``: the library's lines, without its class's base classes and imports."""
    import ast

    tree = ast.parse(file.read_text(), filename=str(file))
    (klass,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    defs = [n for n in klass.body if isinstance(n, ast.FunctionDef) and n.name in names]
    assert {d.name for d in defs} == set(names), (cls, names)
    ns = dict(namespace)
    exec(compile(ast.Module(body=defs, type_ignores=[]), str(file), "exec"), ns)
    return {n: ns[n] for n in names}


def _class(file: Path, cls: str, namespace: dict):
    """The top-level class ``cls`` of ``file``, compiled alone in ``namespace`` (the names it uses)."""
    import ast

    tree = ast.parse(file.read_text(), filename=str(file))
    node = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    ns = dict(namespace)
    exec(compile(ast.Module(body=node, type_ignores=[]), str(file), "exec"), ns)
    return ns[cls]


def _rows(c, s):
    c, s = c.double().numpy(), s.double().numpy()
    return lambda p: (c[p.astype(int)], s[p.astype(int)])


def _eva02(site: Path, dtype, length: int):
    import numpy as np
    import torch

    fns = _methods(site / "mmpretrain/models/utils/position_encoding.py", "RotaryEmbeddingFast",
                   ["compute_position_embedding"], {"torch": torch})
    emb = type("Rope", (), {"half_dim": 32, "theta": 10000.0, "patch_resolution": (length, length)})()
    cos, sin = fns["compute_position_embedding"](emb)  # __init__ registers these as buffers; a cast rounds them
    cos, sin = cos.to(dtype).view(length, length, 64), sin.to(dtype).view(length, length, 64)
    freq = (1.0 / 10000.0 ** (torch.arange(0, 32, 2).float() / 32)).double().numpy()
    # the height axis: columns 0 .. 15 of the first 32 (its 16 frequencies, `.repeat(1, 2)`), grid column 0
    return _rows(cos[:, 0, :16], sin[:, 0, :16]), np.float32(32 / length) * freq, None


def _levjepa(site: Path, dtype, length: int):
    import math

    import einops
    import torch

    rope = _class(site / "vit_pytorch/levjepa.py", "VideoRotaryEmbedding",
                  {"torch": torch, "Module": torch.nn.Module, "pi": math.pi, "rearrange": einops.rearrange,
                   "repeat": einops.repeat})(64).to(dtype)
    # VideoTransformer.forward's coordinates (levjepa.py:284-291) for `length` frames of 1 x 1 patches
    grid = torch.cartesian_prod(torch.arange(length), torch.arange(1), torch.arange(1))
    coords = grid / torch.tensor([length, 1, 1], dtype=torch.float)
    coords = ((coords - 0.5) * 2)[None]
    sin, cos = rope(coords)
    s = rope.scales.double().numpy()
    # the frame axis: angles 0 .. 9 (`(i j)`, i the axis), each twice (`(d j)`)
    return _rows(cos[0, :, 0:20:2], sin[0, :, 0:20:2]), 2 * s * math.pi / length, -s * math.pi


def _ltx(site: Path, dtype, length: int):
    import math

    import torch

    fns = _methods(site / "ltx_video/models/transformers/transformer3d.py", "Transformer3DModel",
                   ["get_fractional_positions", "precompute_freqs_cis"], {"torch": torch, "math": math})
    model = type("Transformer3DModel", (), {**fns, "inner_dim": 2048, "positional_embedding_theta": 10000.0,
                                            "positional_embedding_max_pos": [20, 2048, 2048], "dtype": dtype})()
    grid = torch.zeros(1, 3, length)
    grid[0, 1] = torch.arange(length, dtype=torch.float32) * 32  # pixel rows of the latent rows (VAE factor 32)
    cos, sin = model.precompute_freqs_cis(grid)
    cols = [2 + 2 * (3 * f + 1) for f in range(341)]  # 2 padding columns, then (frequency, axis) pairs, each twice
    # the frequencies it multiplies by, `indices * math.pi / 2` in float32 as precompute_freqs_cis computes them
    ind = (10000.0 ** torch.linspace(0, 1, 341) * math.pi / 2).double().numpy()
    return _rows(cos[0][:, cols], sin[0][:, cols]), ind / 32, -ind


TORCH_RUN = {"eva02_cast": ("mmpretrain", _eva02), "levjepa_cast": ("vit_pytorch", _levjepa),
             "ltx_video_cast": ("ltx_video", _ltx)}
NOT_RUN = [(n, i) for n, e in sorted(ENTRIES.items()) for i, t in enumerate(e.truths) if t.brute in TORCH_RUN]


@pytest.mark.torch
@pytest.mark.parametrize("name, i", NOT_RUN)
def test_the_librarys_code_run_by_torch_gives_the_brute_force_counts(name, i, tmp_path):
    torch = pytest.importorskip("torch")
    entry = ENTRIES[name]
    t = entry.truths[i]
    assert t.not_run and not t.factory
    site = unpack(entry, tmp_path)
    angles, w, offset = TORCH_RUN[t.brute][1](site, {"bf16": torch.bfloat16, "fp16": torch.float16}[t.dtype], t.length)
    got = brute_force.counts(angles, w, t.length, offset=offset)
    assert (got["exact"], got["distinct"]) == (t.exact, t.distinct), (name, t.dtype, t.length, got)
