"""The offline corpus and the repeated / non-repeated test samples.

Corpus: the top-level ``*.py`` files of the running Python's standard library
(``sysconfig.get_paths()["stdlib"]``; 168 files, 4.7 MB for CPython 3.11.7). Why this text:
it is on every machine that can run ropelaw, needs no download and no licence question
(PSF licence, read in place, nothing copied into the repository), it is real text written by
people (code, comments, docstrings) with the long-range structure length extrapolation
needs (names defined far above their use), and its files are long enough for 8x and 16x the
toy training length. Tokens are bytes (vocabulary 256): no tokenizer to build or ship.

The split is by file, decided by the file name alone (sha256 of the name, 1 file in 8 held
out), so it does not depend on the order in which the directory is listed. The contents
depend on the CPython version: results record ``python_version`` and the corpus checksum.

Samples (Su's protocol, seed 000 and kexue.fm/archives/9603, at toy scale):
- non-repeated: ``length + 1`` consecutive bytes of a held-out file region;
- repeated: a ``train_len``-byte window of held-out text tiled to ``length + 1`` bytes, so
  every position past ``train_len`` can be predicted by copying from one period back.
"""

from __future__ import annotations

import hashlib
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import torch

from ..errors import UsageError

__all__ = ["Corpus", "load_corpus", "stdlib_files", "encode", "random_windows", "repeated_samples",
           "nonrepeated_samples", "HELD_OUT_ONE_IN"]

HELD_OUT_ONE_IN = 8  # one file in 8 is test text: ~0.6 MB, thousands of 1K-byte windows
SEPARATOR = b"\n\n"  # between files: the corpus stays plain Python text


def stdlib_files(root: str | Path | None = None) -> list[Path]:
    """Top-level ``*.py`` files of the standard library, sorted by name (no tests, no packages)."""
    path = Path(root) if root is not None else Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in path.glob("*.py") if p.is_file())
    if not files:
        raise UsageError(f"no Python sources found in {path}: the corpus needs the standard library's .py files")
    return files


def held_out(name: str) -> bool:
    """True for the files of the test split: sha256(name) mod 8 == 0 (order-independent)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big") % HELD_OUT_ONE_IN == 0


def encode(data: bytes) -> torch.Tensor:
    """Bytes -> token ids (uint8 storage, values 0..255)."""
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).clone()


@dataclass(frozen=True)
class Corpus:
    """Train and test token streams (uint8) with their provenance."""

    train: torch.Tensor  # (N_train,) uint8
    test: torch.Tensor  # (N_test,) uint8
    source: str  # where the text came from
    files_train: int
    files_test: int
    sha256: str  # of the concatenated train + test bytes, to compare runs across machines

    def describe(self) -> dict:
        return {"source": self.source, "train_bytes": int(self.train.numel()), "test_bytes": int(self.test.numel()),
                "files_train": self.files_train, "files_test": self.files_test, "sha256": self.sha256}


def load_corpus(root: str | Path | None = None, max_bytes: int | None = None) -> Corpus:
    """The stdlib corpus (see the module docstring); ``max_bytes`` caps each split (smoke tests)."""
    files = stdlib_files(root)
    train, test = bytearray(), bytearray()
    n_train = n_test = 0
    for f in files:
        data = f.read_bytes() + SEPARATOR
        if held_out(f.name):
            test += data
            n_test += 1
        else:
            train += data
            n_train += 1
    if not n_test or not n_train:
        raise UsageError(f"the corpus needs files in both splits, got {n_train} train and {n_test} test")
    if max_bytes is not None:
        train, test = train[:max_bytes], test[:max_bytes]
    digest = hashlib.sha256(bytes(train) + bytes(test)).hexdigest()
    src = str(files[0].parent)
    return Corpus(encode(bytes(train)), encode(bytes(test)), f"Python standard library *.py in {src}",
                  n_train, n_test, digest)


def random_windows(stream: torch.Tensor, length: int, count: int, generator: torch.Generator) -> torch.Tensor:
    """``count`` windows of ``length + 1`` consecutive tokens at random offsets: (count, length+1) int64.

    Inputs are ``w[:, :-1]``, next-token targets ``w[:, 1:]``.
    """
    n = stream.numel() - (length + 1)
    if n < 1:
        raise UsageError(f"a window of {length + 1} tokens does not fit in {stream.numel()} tokens of text")
    starts = torch.randint(0, n + 1, (count,), generator=generator)  # (count,) int64
    idx = starts.unsqueeze(1) + torch.arange(length + 1).unsqueeze(0)  # (count, length+1)
    return stream[idx].long()


def nonrepeated_samples(stream: torch.Tensor, length: int, count: int, seed: int) -> torch.Tensor:
    """Held-out windows of ``length + 1`` consecutive tokens, fixed by ``seed``: (count, length+1) int64."""
    g = torch.Generator().manual_seed(seed)
    return random_windows(stream, length, count, g)


def repeated_samples(stream: torch.Tensor, length: int, period: int, count: int, seed: int) -> torch.Tensor:
    """``period``-token windows tiled to ``length + 1`` tokens (Su's "repeated" samples): (count, length+1).

    Token t of a sample equals token t - period for every t >= period.
    """
    if period < 1:
        raise UsageError(f"period must be >= 1, got {period}")
    g = torch.Generator().manual_seed(seed)
    base = random_windows(stream, period - 1, count, g)  # (count, period)
    reps = -(-(length + 1) // period)
    return base.repeat(1, reps)[:, : length + 1]
