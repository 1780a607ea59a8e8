"""OLMo's own config loading and rotary against ropelaw's reading, on every OLMo training config of the corpus
(``frameworks-examples/OLMo``: allenai/OLMo@59a53e3f ``configs/``, with the rows kept elsewhere in the corpus).

OLMo is ai2-olmo==0.6.0 from its wheel (the last release; the corpus commit is nine months later, and its
configs use keys 0.6.0 does not know: such a file is ``refused`` by OLMo's own loader here, recorded so).
``TrainConfig.load`` (OmegaConf over OLMo's dataclasses) reads each file; ``olmo.model.RotaryEmbedding``
(``d_model // n_heads``, ``rope_theta``) rotates unit vectors at positions 0 and 1, and each pair's angle is
compared with ropelaw's frequency; also the head dim, the base, whether the model uses RoPE at all
(``rope``; ALiBi or learned positions otherwise) and the training length (``max_sequence_length``).

Patches, stated: ``olmo/__init__.py`` (which imports the tokenizer and data stack) is not run; ``boto3``,
``botocore``, ``s3transfer``, ``datasets``, ``google`` (cloud storage), ``cached_path`` and ``requests``,
which only OLMo's remote-file helpers use, are stand-ins (``stubs.py``). Runs in the CI step "OLMo" of
.ci/run (``ROPELAW_FRAMEWORK_DL`` holding the wheel, omegaconf beside it); otherwise skipped, naming what
is missing.
"""

from __future__ import annotations

import glob
import os
import pathlib
import sys
import types
import zipfile

import corpus_examples as examples
import pytest
from rotation import pair_angles

from ropelaw.errors import UsageError
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import ModelNeeded, NoRopeFound, NotARopeConfig, load_config

ROOT = pathlib.Path(__file__).resolve().parents[2]
DL = pathlib.Path(os.environ.get("ROPELAW_FRAMEWORK_DL", ROOT.parent / "shared" / "dl"))
VERSION = "0.6.0"
STUBBED = ("boto3", "botocore", "s3transfer", "datasets", "google", "cached_path", "requests")
# files OLMo 0.6.0's loader refuses here: a key added after the release; a ${path.choose:...} interpolation
# (save_folder) none of whose paths exists on this machine
REFUSED = {"configs/custom_dataset_example.yaml": "Key 'custom_dataset' not in 'DataConfig'",
           "configs/official-0724/OLMo-1B.yaml": "FileNotFoundError raised while resolving interpolation"}


@pytest.fixture(scope="module")
def olmo(tmp_path_factory):
    torch = pytest.importorskip("torch")
    pytest.importorskip("omegaconf", reason="OLMo's config loader needs omegaconf: the CI step 'OLMo' of .ci/run")
    from stubs import Stubs

    hits = sorted(glob.glob(str(DL / "**" / f"ai2_olmo-{VERSION}-*.whl"), recursive=True))
    if not hits:
        pytest.skip(f"no ai2-olmo=={VERSION} wheel under {DL} (pip download --no-deps -d {DL}/olmo "
                    f"ai2-olmo=={VERSION}; ROPELAW_FRAMEWORK_DL)")
    root = tmp_path_factory.getbasetemp() / f"ai2-olmo-{VERSION}"
    if not root.is_dir():
        zipfile.ZipFile(hits[-1]).extractall(root)
    stubs = Stubs(STUBBED)
    sys.meta_path.insert(0, stubs)
    sys.path.insert(0, str(root))
    pkg = types.ModuleType("olmo")
    pkg.__path__ = [str(root / "olmo")]
    sys.modules["olmo"] = pkg
    try:
        import olmo.config as config
        import olmo.model as model

        yield torch, config, model
    finally:
        sys.meta_path.remove(stubs)
        sys.path.remove(str(root))
        for k in [k for k in sys.modules if k == "olmo" or k.startswith("olmo.")]:
            del sys.modules[k]


def olmo_angles(torch, model, cfg) -> tuple[list[float], int]:
    """Each pair's rotation at position 1 (fastest first) from ``RotaryEmbedding.forward`` on unit vectors."""
    d = cfg.d_model // cfg.n_heads
    cfg.init_device = "cpu"
    rope = model.RotaryEmbedding(cfg, model.BufferCache())
    eye = torch.eye(d, dtype=torch.float32)[None, :, None, :].expand(1, d, 2, d)  # (B, heads, T, head dim)
    q, _ = rope(eye.contiguous(), eye.contiguous())
    return pair_angles(q[0, :, 0, :].numpy(), q[0, :, 1, :].numpy()), d


def outcome(torch, config, model, key: str) -> tuple[str, str]:
    path = examples.path_of("OLMo", key, {})
    try:
        cfg = config.TrainConfig.load(str(path)).model
    except Exception as exc:
        return "refused", f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
    try:
        r = lint_config(load_config(str(path)))
    except (NoRopeFound, NotARopeConfig, ModelNeeded, UsageError) as exc:
        uses = "rope" if cfg.rope else "alibi" if cfg.alibi else "learned"
        return ("right", "") if not cfg.rope and isinstance(exc, NotARopeConfig) else \
            ("misread" if cfg.rope else "cannot", f"OLMo uses {uses}; ropelaw: {exc}")
    if not cfg.rope:
        return "misread", "OLMo uses no RoPE (model.rope false); ropelaw analysed it"
    angles, d = olmo_angles(torch, model, cfg)
    g = r.layers[0]
    ours = sorted((float(x) for x in g.scheme_result.inv_freq), reverse=True)
    bad = []
    if g.spec.d != d or g.spec.base != cfg.rope_theta:
        bad.append(f"d {g.spec.d} / base {g.spec.base} vs OLMo {d} / {cfg.rope_theta}")
    elif max(abs(a - o) / o for a, o in zip(angles, ours, strict=True)) > 2e-5:
        bad.append("frequencies differ")
    if g.spec.train_len != cfg.max_sequence_length:
        bad.append(f"trained {g.spec.train_len} vs OLMo max_sequence_length {cfg.max_sequence_length}")
    return ("misread", "; ".join(bad)) if bad else ("right", "")


@pytest.mark.parametrize("key", examples.keys("OLMo", {}) or ["(no corpus)"])
def test_olmo_file(olmo, key):
    if key == "(no corpus)":
        pytest.skip(f"no {examples.SOURCES} (ROPELAW_CORPUS)")
    got, why = outcome(*olmo, key)
    want = ("refused", REFUSED[key]) if key in REFUSED else ("right", "")
    assert got == want[0] and want[1] in why, (key, got, why)
