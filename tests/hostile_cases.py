"""Generators of hostile inputs, one per class of issue 12; shared by the CI fuzz suite
(tests/test_hostile_fuzz.py, in-process, small sizes) and the sweep run by hand
(benchmarks/hostile_sweep.py, one subprocess per case, full sizes).

A :class:`Case` writes its files into a fresh directory and names the ``ropelaw`` arguments and
the exit codes allowed. Every case must end with one of them, never a traceback, never exit 3
(internal error); exit 2 must be one line on stderr; text/github output must hold no raw control
character from a file. ``scale`` is "ci" (fast, in-process) or "sweep" (the issue's sizes).
"""

from __future__ import annotations

import io
import json
import os
import random
import struct
import textwrap
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Iterator

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
BUGGY_PY = (FIXTURES / "static" / "rp101_positions_in_buffer_dtype.py").read_text()
CONFIGS = sorted((HERE / "configs").glob("*.json"))
FORGE = "n\n::error file=FORGED,line=1::forged\x1b[31m\u202e"

CLASSES = ("checkpoint-memory", "safetensors-header", "torch-valid", "lint", "non-regular", "audit-code",
           "output-forgery", "cli-arguments", "audit-module", "checkpoint-garbage", "reader-time", "reader-memory",
           "internal-errors", "partial-scans", "scan-scale", "wrong-results")


@dataclass
class Case:
    cls: str  # one of CLASSES
    name: str
    argv: list[str]  # "{d}" is replaced by the case's directory
    allowed: frozenset[int]
    write: Callable[[Path], None] = lambda d: None
    needs_torch: bool = False
    expect_in_out: str | None = None  # text that must appear on stdout (e.g. RP101 or RE004)
    expect_any: tuple[str, ...] = ()  # one of these must appear on stdout or stderr
    fmt: str = "text"
    env: dict = field(default_factory=dict)

    def args(self, d: Path) -> list[str]:
        return [a.replace("{d}", str(d)) for a in self.argv]


OK = frozenset({0, 1})
BAD = frozenset({2})
ANY = frozenset({0, 1, 2})


# ------------------------------------------------------------------------------- helpers
def remove_tree(path: Path | str) -> None:
    """Delete a case's directory, also one nested 1,100 deep (shutil.rmtree recurses per level and
    raises RecursionError there; pytest's own clean-up of old temporary directories would too)."""
    import shutil
    import subprocess

    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        subprocess.run(["rm", "-rf", "--", str(path)], check=False)


def safetensors_bytes(header, data: bytes = b"") -> bytes:
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(h)) + h + data


def _write_bytes(name: str, data: bytes) -> Callable[[Path], None]:
    return lambda d: (d / name).write_bytes(data)


def _write_text(name: str, text: str) -> Callable[[Path], None]:
    return lambda d: (d / name).write_text(text)


def _torch_save(name: str, make: Callable[[], object], deep: bool = False) -> Callable[[Path], None]:
    def write(d: Path) -> None:
        import torch

        obj = make()
        if not deep:
            torch.save(obj, d / name)
            return
        import sys
        import threading

        old = sys.getrecursionlimit()
        sys.setrecursionlimit(60_000)
        threading.stack_size(256 << 20)
        try:
            t = threading.Thread(target=lambda: torch.save(obj, d / name))
            t.start()
            t.join()
        finally:
            threading.stack_size(0)
            sys.setrecursionlimit(old)
    return write


# ------------------------------------------------------------------------------- classes
def checkpoint_memory(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Tiny files that asked for gigabytes: expanded views, zip bombs, sparse header lengths,
    shared references, large caches (memory-mapped and streamed)."""
    big = scale == "sweep"
    for i in range(n):
        kind = i % 5
        if kind == 0:
            e = rng.choice([2**20, 2**24, 2**29 if big else 2**26])
            yield Case("checkpoint-memory", f"expand-{e}", ["audit", "checkpoint", "{d}/v.pt"], OK,
                       _torch_save("v.pt", lambda e=e: {"rope.inv_freq": __import__("torch").ones(1).expand(e)}),
                       needs_torch=True)
        elif kind == 1:
            mb = rng.choice([16, 64, 512 if big else 64])

            def write(d: Path, mb=mb) -> None:
                import torch

                buf = io.BytesIO()
                torch.save({"rope.inv_freq": torch.ones(8)}, buf)
                src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
                with zipfile.ZipFile(d / "bomb.pt", "w", zipfile.ZIP_DEFLATED) as out:
                    for info in src.infolist():
                        data = src.read(info.filename)
                        if info.filename.endswith("/data/0"):
                            data = b"\0" * (mb << 20)
                        out.writestr(info.filename, data)
            yield Case("checkpoint-memory", f"zip-bomb-{mb}MiB", ["audit", "checkpoint", "{d}/bomb.pt"], BAD, write,
                       needs_torch=True)
        elif kind == 2:
            n_hdr = rng.choice([8 << 30, (1 << 40), 100_000_001, 2**64 - 1])
            tail = rng.choice([4096, 1 << 20])

            def write(d: Path, n_hdr=n_hdr, tail=tail) -> None:
                with open(d / "s.safetensors", "wb") as fh:
                    fh.write(struct.pack("<Q", n_hdr) + b"{")
                    fh.truncate(min(n_hdr + tail, 16 << 30))  # sparse: no disk used
            yield Case("checkpoint-memory", f"header-length-{n_hdr}", ["audit", "checkpoint", "{d}/s.safetensors"], BAD,
                       write)
        elif kind == 3:
            depth = rng.choice([20, 40, 60])

            def make(depth=depth):
                import torch

                x = [torch.ones(1)]
                for _ in range(depth):
                    x = [x, x]
                return {"a": x, "rope.inv_freq": torch.tensor([1.0, 0.1, 0.01])}
            yield Case("checkpoint-memory", f"shared-refs-{depth}", ["audit", "checkpoint", "{d}/s.pt"], OK,
                       _torch_save("s.pt", make), needs_torch=True)
        else:
            rows = rng.choice([1 << 16, 1 << 21 if big else 1 << 17])
            width = rng.choice([64, 128])

            def write(d: Path, rows=rows, width=width) -> None:
                nbytes = rows * width * 4
                hdr = {"rope.cos_cached": {"dtype": "F32", "shape": [rows, width], "data_offsets": [0, nbytes]},
                       "rope.sin_cached": {"dtype": "F32", "shape": [rows, width],
                                           "data_offsets": [nbytes, 2 * nbytes]}}
                h = json.dumps(hdr).encode()
                with open(d / "c.safetensors", "wb") as fh:
                    fh.write(struct.pack("<Q", len(h)) + h)
                    fh.truncate(8 + len(h) + 2 * nbytes)  # zeros, sparse
            yield Case("checkpoint-memory", f"large-cache-{rows}x{width}", ["audit", "checkpoint", "{d}/c.safetensors"],
                       OK, write)


_OFFSETS = [b"[0, 1e400]", b"[0, null]", b'["0", "8"]', b"[0.0, 8.0]", b"[-8, 0]", b"[8, 0]", b"[0, 99999999999]",
            b"[0, " + b"9" * 400 + b"]", b"[true, 8]", b"[0]", b"[0, 8, 16]", b"{}", b"null", b'"0-8"']
_SHAPES = [b"[4294967296, 4294967296]", b"[4611686018427387904, 4]", b"[-2]", b"[1.5]", b"[null]", b"2",
           b"[" + b"1, " * 100 + b"2]", b'["2"]', b"[2]", b"[]", b"[0]"]
_DTYPES = [b'"F32"', b'"BF16"', b'"F8_E4M3"', b'"X99"', b"7", b"null", b'"C64"', b'"F4"']


def safetensors_header(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Malformed headers: offsets, shapes, dtypes, nesting, 0-D/1-D caches, random byte damage."""
    for i in range(n):
        kind = i % 4
        if kind == 0:
            off, shp, dt = rng.choice(_OFFSETS), rng.choice(_SHAPES), rng.choice(_DTYPES)
            name = rng.choice([b"rope.inv_freq", b"rope.cos_cached", b"alibi_slopes", b"x.freqs_cis"])
            hdr = b'{"' + name + b'": {"dtype": ' + dt + b', "shape": ' + shp + b', "data_offsets": ' + off + b"}}"
            yield Case("safetensors-header", f"entry-{i}", ["audit", "checkpoint", "{d}/h.safetensors"], ANY,
                       _write_bytes("h.safetensors", safetensors_bytes(hdr, b"\0" * rng.choice([0, 8, 16]))))
        elif kind == 1:
            depth = rng.choice([1000, 10_000, 100_000])
            hdr = rng.choice([b'{"a":' * depth + b"1" + b"}" * depth, b"[" * depth + b"]" * depth])
            yield Case("safetensors-header", f"nested-{depth}", ["audit", "checkpoint", "{d}/n.safetensors"], BAD,
                       _write_bytes("n.safetensors", safetensors_bytes(hdr)))
        elif kind == 2:
            shape = rng.choice([[], [2], [1], [3, 0], [0, 4]])
            count = 1
            for s in shape:
                count *= s
            hdr = {"rope.cos_cached": {"dtype": "F32", "shape": shape, "data_offsets": [0, 4 * count]},
                   "rope.sin_cached": {"dtype": "F32", "shape": shape, "data_offsets": [4 * count, 8 * count]}}
            yield Case("safetensors-header", f"cache-shape-{shape}", ["audit", "checkpoint", "{d}/c.safetensors"], OK,
                       _write_bytes("c.safetensors", safetensors_bytes(hdr, b"\0" * 8 * count)))
        else:
            inv = struct.pack("<4f", 1.0, 0.1, 0.01, 0.001)
            good = bytearray(safetensors_bytes({"rope.inv_freq": {"dtype": "F32", "shape": [4],
                                                                  "data_offsets": [0, 16]}}, inv))
            for _ in range(rng.randint(1, 4)):
                good[rng.randrange(len(good))] = rng.randrange(256)
            yield Case("safetensors-header", f"damaged-{i}", ["audit", "checkpoint", "{d}/x.safetensors"], ANY,
                       _write_bytes("x.safetensors", bytes(good)))


def torch_valid(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Weights-only torch files that are valid but odd: cycles, deep nesting, sparse/quantized/meta."""
    for i in range(n):
        kind = i % 5
        if kind == 0:
            def make():
                c: list = []
                c.append(c)
                c.append(__import__("torch").ones(3))
                return c
            yield Case("torch-valid", f"cyclic-{i}", ["audit", "checkpoint", "{d}/c.pt"], OK, _torch_save("c.pt", make),
                       needs_torch=True)
        elif kind == 1:
            depth = rng.choice([100, 1000, 5000 if scale == "sweep" else 1500])

            def make(depth=depth):
                d = __import__("torch").ones(2)
                for _ in range(depth):
                    d = [d]
                return d
            # its one tensor lies below the 64 levels searched: nothing analysable, exit 2 (issue 23)
            yield Case("torch-valid", f"deep-{depth}", ["audit", "checkpoint", "{d}/d.pt"], BAD,
                       _torch_save("d.pt", make, deep=True), needs_torch=True)
        else:
            layout = ["sparse", "quantized", "meta"][kind - 2]

            def make(layout=layout):
                import warnings

                import torch

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = {"sparse": lambda: torch.ones(4).to_sparse(),
                         "quantized": lambda: torch.quantize_per_tensor(torch.ones(4), 0.1, 0, torch.qint8),
                         "meta": lambda: torch.ones(4, device="meta")}[layout]()
                return {"rope.inv_freq": t, "rope.cos_cached": t}
            yield Case("torch-valid", f"{layout}-{i}", ["audit", "checkpoint", "{d}/t.pt"], OK,
                       _torch_save("t.pt", make), needs_torch=True)


def _st_tensors(entries: dict) -> bytes:
    """A safetensors file from ``{name: (dtype code, shape, raw bytes)}``, offsets in order."""
    hdr, data, off = {}, b"", 0
    for name, (code, shape, raw) in entries.items():
        hdr[name] = {"dtype": code, "shape": list(shape), "data_offsets": [off, off + len(raw)]}
        data += raw
        off += len(raw)
    return safetensors_bytes(hdr, data)


_GOOD_INV = [10000.0 ** (-2 * i / 64) for i in range(32)]  # base 10,000, d = 64


def checkpoint_garbage(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Issue 23: rotary tensors whose values are no rotary frequencies, that cannot be measured, or
    files with no tensor at all: each must be a finding (exit 1) or bad input (exit 2), never
    "All checks passed"; and a deflated torch zip member must be read decompressed."""
    import numpy as np

    f32 = lambda v: np.asarray(v, np.float32).tobytes()  # noqa: E731
    inv_values = {  # name: (dtype code, torch dtype name, values) for inv_freq
        "ones": ("F32", "float32", [1.0] * 32), "increasing": ("F32", "float32", _GOOD_INV[::-1]),
        "1e30": ("F32", "float32", [1e30] * 32), "1e-30": ("F32", "float32", [1e-30] * 32),
        "above-one": ("F32", "float32", [10000.0 ** (2 * i / 64) for i in range(32)][::-1]),
        "bool": ("BOOL", "bool", [1] * 32), "complex": ("C64", "complex64", _GOOD_INV),
        "int64": ("I64", "int64", list(range(32))), "uint8": ("U8", "uint8", [1] * 32),
        "zeros": ("F32", "float32", [0.0] * 32), "nan": ("F32", "float32", _GOOD_INV[:-1] + [float("nan")]),
    }
    slopes = {"zero": [0.0] * 8, "negative": [-(2.0 ** (-h)) for h in range(1, 9)], "nan": [float("nan")] * 8,
              "scalar": 0.5}
    cases: list[Case] = []
    ck = ["audit", "checkpoint"]

    def torch_case(name: str, make: Callable[[], object], allowed=frozenset({1}), expect=("RP35",)) -> None:
        cases.append(Case("checkpoint-garbage", f"pt-{name}", [*ck, "{d}/c.pt"], allowed, _torch_save("c.pt", make),
                          needs_torch=True, expect_any=expect))

    def st_case(name: str, entries: dict, allowed=frozenset({1}), expect=("RP35",)) -> None:
        cases.append(Case("checkpoint-garbage", f"st-{name}", [*ck, "{d}/c.safetensors"], allowed,
                          _write_bytes("c.safetensors", _st_tensors(entries)), expect_any=expect))

    np_dt = {"F32": np.float32, "BOOL": np.bool_, "C64": np.complex64, "I64": np.int64, "U8": np.uint8}
    for key, (code, tdt, vals) in inv_values.items():
        st_case(f"inv-freq-{key}", {"rope.inv_freq": (code, [32], np.asarray(vals).astype(np_dt[code]).tobytes())})

        def make(tdt=tdt, vals=vals):
            import torch

            return {"rope.inv_freq": torch.tensor(vals).to(getattr(torch, tdt))}
        torch_case(f"inv-freq-{key}", make)
    for key, vals in slopes.items():
        shape = [] if key == "scalar" else [8]
        st_case(f"alibi-slopes-{key}", {"alibi.slopes": ("F32", shape, f32(vals))})
        torch_case(f"alibi-slopes-{key}", lambda vals=vals: {"alibi.slopes": __import__("torch").tensor(vals)})
    for shape in ([], [16]):
        count = 1 if not shape else shape[0]
        st_case(f"freqs-cis-{len(shape)}d", {"freqs_cis": ("C64", shape, np.ones(count, np.complex64).tobytes())})
        torch_case(f"freqs-cis-{len(shape)}d",
                   lambda shape=shape: {"freqs_cis": __import__("torch").ones(
                       shape, dtype=__import__("torch").complex64)})
    st_case("cache-1d", {"rope.cos_cached": ("F32", [64], f32([1.0] * 64)), "rope.sin_cached": ("F32", [64],
                                                                                                f32([0.0] * 64))})
    torch_case("cache-1d", lambda: {"rope.cos_cached": __import__("torch").ones(64),
                                    "rope.sin_cached": __import__("torch").zeros(64)})
    for code in ("X99", "F8_E8M0", "U16"):
        st_case(f"inv-freq-dtype-{code}", {"rope.inv_freq": (code, [32], b"\1" * (32 * (2 if code == "U16" else 1)))})
    st_case("cos-without-sin", {"rope.cos_cached": ("F32", [4, 8], f32([1.0] * 32))})

    def view(kind: str):
        import warnings

        import torch

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = {"expanded": lambda: torch.ones(1).expand(2**29 if scale == "sweep" else 2**20),
                 "sparse": lambda: torch.tensor(_GOOD_INV).to_sparse(),
                 "quantized": lambda: torch.quantize_per_tensor(torch.tensor(_GOOD_INV), 0.1, 0, torch.qint8),
                 "meta": lambda: torch.ones(32, device="meta")}[kind]()
        return {"rope.inv_freq": t}
    for kind in ("expanded", "sparse", "quantized", "meta"):
        torch_case(f"inv-freq-{kind}", lambda kind=kind: view(kind))

    def shared():
        x: list = [1]
        for _ in range(30):
            x = [x, x]
        return x

    def cyclic():
        c: list = [1, "a"]
        c.append(c)
        return c
    for key, make in (("shared-list", shared), ("cyclic-list", cyclic), ("empty-dict", dict),
                      ("ints", lambda: {"step": 5, "lr": [0.1, 0.2]})):
        torch_case(f"no-tensors-{key}", make, allowed=BAD, expect=("no tensors",))
    cases.append(Case("checkpoint-garbage", "st-no-tensors", [*ck, "{d}/c.safetensors"], BAD,
                      _write_bytes("c.safetensors", safetensors_bytes({"__metadata__": {"format": "pt"}})),
                      expect_any=("no tensors",)))

    def deflated(d: Path) -> None:  # torch.save's zip with the tensor member deflated by another tool
        import torch

        buf = io.BytesIO()
        torch.save({"rope.inv_freq": torch.tensor(_GOOD_INV)}, buf)
        src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
        with zipfile.ZipFile(d / "z.pt", "w") as out:
            for info in src.infolist():
                out.writestr(info.filename, src.read(info.filename),
                             compress_type=zipfile.ZIP_DEFLATED if "/data/" in info.filename else zipfile.ZIP_STORED)
    cases.append(Case("checkpoint-garbage", "pt-deflated-member", [*ck, "{d}/z.pt"], frozenset({0}), deflated,
                      needs_torch=True, expect_in_out="rotary dims 64, base 10,000"))
    for i in range(n):
        yield cases[i % len(cases)]


HEAD = {"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 10000, "max_position_embeddings": 4096}


def billion_laughs(levels: int) -> str:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return ("hidden_size: 4096\nnum_attention_heads: 32\nrope_theta: 10000\nrope_scaling:\n  type: linear\n"
            "  factor: 2\n  x:\n" + "".join(f"    {ln}\n" for ln in lines))


def lint(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Deep JSON, recursive anchors, alias bombs, huge integers, damaged real configs."""
    big = scale == "sweep"
    for i in range(n):
        kind = i % 6
        fmt = rng.choice(["text", "json"])
        tail = ["--format", fmt]
        if kind == 0:
            depth = rng.choice([30, 63, 64, 65, 900])
            width = rng.choice([10, 2000 if big else 200])
            inner = "[" + ",".join(["1"] * width) + "]"
            reps = 500 if big else 20
            text = json.dumps(HEAD)[:-1] + ', "x": ' + "[" * depth + ",".join([inner] * reps) + "]" * depth + "}"
            yield Case("lint", f"deep-json-{depth}", ["lint", "{d}/deep.json", *tail], ANY,
                       _write_text("deep.json", text), fmt=fmt)
        elif kind == 1:
            text = rng.choice(["rope_scaling: &a [*a]\n", "a: &a {b: *a}\n", "a: &a [1, [2, *a]]\n",
                               "hidden_size: 4096\nrope_scaling: &s {type: linear, factor: *s}\n"])
            yield Case("lint", f"recursive-yaml-{i}", ["lint", "{d}/r.yaml", *tail], BAD, _write_text("r.yaml", text),
                       fmt=fmt)
        elif kind == 2:
            levels = rng.choice([6, 8, 10, 12])
            yield Case("lint", f"billion-laughs-{levels}", ["lint", "{d}/lol.yaml", *tail], ANY,
                       _write_text("lol.yaml", billion_laughs(levels)), fmt=fmt)
        elif kind == 3:
            digits = rng.choice([310, 4300, 4301, 6000, 20_000 if big else 8000])
            which = rng.choice(["json", "yaml", "yamlhex", "tomlhex", "toml"])
            num = ("0x" + "f" * digits) if which.endswith("hex") else "9" * digits
            if which == "json":
                name, text = "n.json", json.dumps(HEAD)[:-1] + f', "rope_scaling": {{"factor": {num}}}}}'
            elif which.startswith("yaml"):
                name, text = "n.yaml", "".join(f"{k}: {v}\n" for k, v in HEAD.items()) + f"rope_theta_extra: {num}\n" \
                    + f"seq_length: {num}\n"
            else:
                name, text = "n.toml", "".join(f"{k} = {v}\n" for k, v in HEAD.items()).replace(
                    "rope_theta = 10000", f"rope_theta = {num}")
            yield Case("lint", f"huge-int-{which}-{digits}", ["lint", "{d}/" + name, *tail], ANY,
                       _write_text(name, text), fmt=fmt)
        else:
            src = rng.choice(CONFIGS).read_bytes()
            raw = bytearray(src)
            if kind == 4:
                raw = raw[: rng.randrange(len(raw))]
            else:
                for _ in range(rng.randint(1, 8)):
                    raw[rng.randrange(len(raw))] = rng.choice(b'{}[]":,\\0\n\x00\xff9e-')
            yield Case("lint", f"damaged-config-{i}", ["lint", "{d}/c.json", *tail], ANY,
                       _write_bytes("c.json", bytes(raw)), fmt=fmt)


def non_regular(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """FIFOs, devices and sockets, named and inside scanned directories, for every command."""
    targets = [("lint", "c.json", ["lint"]), ("code", "m.py", ["audit", "code"]),
               ("ckpt", "m.safetensors", ["audit", "checkpoint"]), ("ckpt", "m.pt", ["audit", "checkpoint"])]
    for i in range(n):
        what, fname, cmd = targets[i % len(targets)]
        kind = rng.choice(["fifo", "zero", "null", "socket"])
        inside = what != "ckpt" and rng.random() < 0.5

        def write(d: Path, kind=kind, fname=fname, inside=inside, what=what) -> None:
            where = d / "sub" if inside else d
            where.mkdir(exist_ok=True)
            p = where / fname
            if kind == "fifo":
                os.mkfifo(p)
            elif kind == "socket":
                import socket

                s = socket.socket(socket.AF_UNIX)
                try:
                    s.bind(str(p))
                finally:
                    s.close()
            else:
                p.symlink_to("/dev/zero" if kind == "zero" else "/dev/null")
            if inside:  # a good file next to it: the scan must go on
                if what == "lint":
                    (where / "ok.json").write_text(json.dumps(HEAD))
                else:
                    (where / "ok.py").write_text(BUGGY_PY)
        arg = "{d}/sub" if inside else "{d}/" + fname
        yield Case("non-regular", f"{what}-{kind}-{'in-dir' if inside else 'named'}", [*cmd, arg],
                   OK if inside else BAD, write, expect_any=("not a regular file",))


def audit_code(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Deep sums before a buggy line (RP101 or RE004, never a silent pass), huge files, damaged files."""
    big = scale == "sweep"
    for i in range(n):
        kind = i % 4
        if kind == 0:
            terms = rng.choice([900, 2900, 10_000, 60_000 if big else 20_000, 300_000 if big else 40_000])
            where = rng.choice(["module", "method"])
            s = " + ".join(f"w{j}" for j in range(terms))
            if where == "module":
                src = "import torch\nW = " + s + "\n" + BUGGY_PY
            else:
                src = BUGGY_PY.replace("        t = torch.arange(seq_len, device",
                                       "        s = " + s + "\n        t = torch.arange(seq_len, device", 1)
            yield Case("audit-code", f"sum-{terms}-{where}", ["audit", "code", "{d}/m.py"], frozenset({1}),
                       _write_text("m.py", src), expect_any=("RP101", "RE004"))
        elif kind == 1:
            mb = rng.choice([5, 50 if big else 6])
            yield Case("audit-code", f"big-file-{mb}MB", ["audit", "code", "{d}/big.py"], frozenset({1}),
                       _write_text("big.py", "x = 1\n" * (mb * (1 << 20) // 6) + BUGGY_PY), expect_any=("RE004",))
        elif kind == 2:
            nest = rng.choice(["(" * 300 + "1" + ")" * 300, "-" * 200_000 + "1", "[" * 5000 + "]" * 5000,
                               "f(" * 3000 + ")" * 3000, "not " * 100_000 + "x", "lambda: " * 10_000 + "1"])
            yield Case("audit-code", f"nesting-{i}", ["audit", "code", "{d}/n.py"], OK,
                       _write_text("n.py", "import torch\nx = " + nest + "\n"))
        else:
            raw = bytearray(BUGGY_PY.encode())
            for _ in range(rng.randint(1, 10)):
                raw[rng.randrange(len(raw))] = rng.choice(b"()[]{}:\n\t \\\x00\xff\"'#")
            yield Case("audit-code", f"damaged-{i}", ["audit", "code", "{d}/d.py"], OK,
                       _write_bytes("d.py", bytes(raw)))


def output_forgery(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Names from files with newlines and escape codes: tensor names, config keys, file names."""
    for i in range(n):
        fmt = ["text", "github"][i % 2]
        kind = (i // 2) % 3
        payload = rng.choice([FORGE, "\x1b]0;title\x07", "a\r::error::x", "\u2028::error file=FORGED::", "\x00\x9b2J",
                              "\udcff\udcfe"])  # the last: a file name that is not UTF-8
        if kind == 0:
            name = f"{payload}.inv_freq"
            data = safetensors_bytes({name: {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}},
                                     b"\x80\x3f\x00\x3f\x80\x3e\x00\x3e")
            yield Case("output-forgery", f"tensor-name-{i}", ["audit", "checkpoint", "{d}/f.safetensors",
                                                              "--format", fmt], frozenset({1}),
                       _write_bytes("f.safetensors", data), fmt=fmt)
        elif kind == 1:
            cfg = dict(HEAD, rope_theta="abc", **{payload: 1})
            fname = payload.replace("\x00", "").replace("/", "") + ".json"
            yield Case("output-forgery", f"config-{i}", ["lint", "{d}/cfgs", "--format", fmt], frozenset({1}),
                       lambda d, cfg=cfg, fname=fname: ((d / "cfgs").mkdir(), (d / "cfgs" / fname).write_text(
                           json.dumps(cfg))), fmt=fmt)
        else:
            fname = payload.replace("\x00", "").replace("/", "") + ".py"
            yield Case("output-forgery", f"py-name-{i}", ["audit", "code", "{d}/src", "--format", fmt],
                       frozenset({1}), lambda d, fname=fname: ((d / "src").mkdir(), (d / "src" / fname).write_text(
                           BUGGY_PY)), fmt=fmt)


_LENGTHS = ["1e308k", "1e308M", "9" * 5000, "1e400", "-1e308k", "nan", "inf", "0", "-1", "1.5", "4096.0000001",
            "9007199254740993", "1e16", "k", "", " ", "0x10", "1_0_0", "\x1b[31m"]


def cli_arguments(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Numbers and lengths beyond every limit, nested --param, for every command that takes them."""
    base = {"bound": ["bound", "--d", "128", "--base", "1e6", "--train"],
            "base": ["base", "--d", "128", "--train", "4096", "--target"],
            "exact": ["exact", "--dtype", "bf16", "--length"],
            "lint": ["lint", "{d}/c.json", "--train"],
            "audit": ["audit", "code", "{d}", "--length"],
            "plot": ["plot", "-o", "{d}/x.png", "--d", "128", "--base", "1e6", "--train"]}
    names = list(base)
    for i in range(n):
        if i % 3 == 2:
            depth = rng.choice([9, 100, 1000, 60_000])
            val = rng.choice(["[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth, "9" * 5000,
                              "[1e400]", "[NaN]", "-" * 50])
            argv = ["bound", "--d", "128", "--train", "4096", "--base", "1e6", "--scheme", "yarn", "--factor", "4",
                    "--param", f"beta_fast={val}"]
            yield Case("cli-arguments", f"param-{i}", argv, ANY)
            continue
        cmd = names[i % len(names)]
        value = rng.choice(_LENGTHS)
        argv = base[cmd][:-1] + [f"{base[cmd][-1]}={value}"]
        write = _write_text("c.json", json.dumps(HEAD)) if cmd == "lint" else (lambda d: None)
        yield Case("cli-arguments", f"{cmd}-{value[:12]!r}", argv, ANY, write)


USER_CODE = textwrap.dedent('''
    import sys, time, warnings
    import numpy as np
    sys.path.insert(0, {fixtures!r})
    import rotary

    def exit0():
        sys.exit(0)

    def exit_text():
        raise SystemExit("bye\\nsecond line")

    def interrupt():
        raise KeyboardInterrupt

    def multiline():
        raise ValueError("first line\\n::error file=FORGED::x\\x1b[31m")

    def noisy():
        warnings.warn("careful")
        np.float32(1) / np.float32(0)
        print("hello from user code")
        return rotary.legacy_buggy()

    def forever():
        while True:
            pass

    def sleeps():
        time.sleep(1000)

    def returns_none():
        return None

    def returns_junk():
        return "not a module"
''')


def audit_module(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """User code that exits, interrupts, warns, prints, loops or sleeps."""
    factories = [("exit0", BAD), ("exit_text", BAD), ("interrupt", BAD), ("multiline", BAD), ("noisy", OK),
                 ("forever", BAD), ("sleeps", BAD), ("returns_none", BAD), ("returns_junk", BAD)]
    for i in range(n):
        name, allowed = factories[i % len(factories)]
        fmt = rng.choice(["text", "json"])
        write = _write_text("user_code.py", USER_CODE.format(fixtures=str(FIXTURES / "runtime")))
        timeout = "60" if name == "noisy" else "2"  # noisy must finish; the others are stopped or refused
        yield Case("audit-module", f"{name}-{fmt}", ["audit", "module", "{d}/user_code.py:" + name, "--length", "64",
                                                     "--timeout", timeout, "--format", fmt], allowed, write,
                   needs_torch=True, fmt=fmt)


# ------------------------------------------------------------------- issue 23: the new classes
_YAML_HEAD = "".join(f"{k}: {v}\n" for k, v in HEAD.items())
_TOML_HEAD = "".join(f"{k} = {v}\n" for k, v in HEAD.items())
_MEGATRON = ("--num-layers 2 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
             "--max-position-embeddings 4096 --position-embedding-type rope")


def _pickle_bytes(obj) -> bytes:
    import pickle

    return pickle.dumps(obj, protocol=2)


def _zip_with_pickle(name: str, payload: bytes) -> Callable[[Path], None]:
    """A torch zip whose data.pkl is ``payload`` (a benign pickle of plain Python data)."""
    def write(d: Path) -> None:
        with zipfile.ZipFile(d / name, "w", zipfile.ZIP_STORED) as zf:
            zf.writestr("archive/data.pkl", payload)
            zf.writestr("archive/version", "3\n")
    return write


def reader_time(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Inputs that took super-linear time (issue 23): each must end quickly at any size."""
    big = scale == "sweep"
    k = (lambda sweep, ci: sweep if big else ci)  # noqa: E731
    code_n = k(4000, 100)
    bufs = ("import torch\nclass R(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            + "".join(f"        self.register_buffer('inv_freq{i}', 1.0 / (10000 ** (torch.arange(0, 64, 2).float() "
                      f"/ 64)))\n" for i in range(code_n))
            + "    def forward(self, x):\n"
            + "".join(f"        t{i} = torch.arange(x.shape[1], dtype=self.inv_freq{i}.dtype) * self.inv_freq{i}\n"
                      for i in range(code_n)) + "        return t0\n")
    locals_ = ("import torch\nclass R(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
               "        inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2).float() / 64))\n"
               + "".join(f"        v{i} = inv_freq * {i}\n        self.register_buffer('b{i}', v{i})\n"
                         for i in range(code_n))
               + "    def forward(self, x):\n        return torch.arange(x.shape[1], dtype=self.b0.dtype)\n")
    classes = "import torch\n" + "".join(
        f"class C{i}(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        f"        self.register_buffer('inv_freq', torch.ones(3))\n    def a(self, x):\n        return self.b(x)\n"
        f"    def b(self, x):\n        return torch.arange(x.shape[0], dtype=self.inv_freq.dtype)\n"
        f"    def forward(self, x):\n        return self.a(x)\n" for i in range(k(4000, 50)))
    einsum = "import torch\ny = torch.einsum('i,i->', " + ", ".join(["x"] * k(250_000, 5000)) + ")\n"
    # issue 30: an equation of 1.5M characters whose left indices all appear at the end of the right side
    # (`c not in rhs` per letter was quadratic), and a product chain of 8,000 factors `* inv_freq`
    eq = "i" * k(750_000, 5000) + "->" + "j" * k(749_997, 4997) + "i"
    einsum_eq = (f"import torch\ndef rope(inv_freq):\n    t = torch.arange(10)\n    return torch.einsum('{eq}', t, "
                 "inv_freq)\n")
    chain = ("import torch\nclass Rotary(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
             "        self.register_buffer('inv_freq', torch.ones(4))\n    def forward(self, x):\n"
             "        t = torch.arange(x.shape[1])\n        return t" + " * self.inv_freq" * k(8000, 300) + "\n")
    digits = "9" * k(100_000, 3000) + "x"
    cases = [
        Case("reader-time", "toml-header-spaces", ["lint", "{d}/h.toml"], ANY,
             _write_text("h.toml", "[" + " " * k(100_000, 5000) + "model]\nname = 'llama3'\n" + _TOML_HEAD)),
        Case("reader-time", "toml-nested-arrays", ["lint", "{d}/a.toml"], ANY,
             _write_text("a.toml", _TOML_HEAD + "x = " + "[" * k(400_000, 5000) + "]" * k(400_000, 5000) + "\n")),
        Case("reader-time", "yaml-numeric-string", ["lint", "{d}/n.yaml"], OK,
             _write_text("n.yaml", _YAML_HEAD.replace("rope_theta: 10000", f'rope_theta: "{digits}"'))),
        Case("reader-time", "toml-numeric-string", ["lint", "{d}/n.toml"], OK,
             _write_text("n.toml", _TOML_HEAD.replace("rope_theta = 10000", f'rope_theta = "{digits}"'))),
        Case("reader-time", "megatron-yaml-numeric-string", ["lint", "{d}/m.yaml"], ANY,
             _write_text("m.yaml", "num_layers: 2\nhidden_size: 4096\nnum_attention_heads: 32\n"
                                   f"position_embedding_type: rope\nseq_length: \"{digits}\"\n")),
        Case("reader-time", "omegaconf-spaces", ["lint", "{d}/o.yaml"], ANY,
             _write_text("o.yaml", _YAML_HEAD.replace("rope_theta: 10000",
                                                      'rope_theta: "${' + " " * k(20_000, 3000) + 'x"'))),
        Case("reader-time", "megatron-sh-quoted-string", ["lint", "{d}/q.sh"], OK,
             _write_text("q.sh", f'torchrun pretrain_gpt.py {_MEGATRON} --data-path "{"a" * k(40_000, 2000)}"\n')),
        Case("reader-time", "megatron-sh-continuations", ["lint", "{d}/c.sh"], ANY,  # over 1 MiB at sweep size
             _write_text("c.sh", f"torchrun pretrain_gpt.py {_MEGATRON} \\\n"
                         + "".join(f"  --flag{i} {i} \\\n" for i in range(k(60_000, 1000))) + "  --rotary-base 1e4\n")),
        Case("reader-time", "audit-code-buffers-read", ["audit", "code", "{d}/b.py"], OK, _write_text("b.py", bufs)),
        Case("reader-time", "audit-code-buffers-from-locals", ["audit", "code", "{d}/l.py"], OK,
             _write_text("l.py", locals_)),
        Case("reader-time", "audit-code-classes-self-calls", ["audit", "code", "{d}/c.py"], OK,
             _write_text("c.py", classes)),
        Case("reader-time", "audit-code-einsum-line", ["audit", "code", "{d}/e.py"], OK, _write_text("e.py", einsum)),
        Case("reader-time", "audit-code-einsum-equation", ["audit", "code", "{d}/q.py"], OK,
             _write_text("q.py", einsum_eq)),
        Case("reader-time", "audit-code-product-chain", ["audit", "code", "{d}/p.py"], OK,
             _write_text("p.py", chain)),
        Case("reader-time", "yaml-flow-items", ["lint", "{d}/f.yaml"], BAD,
             _write_text("f.yaml", _YAML_HEAD + "x: [" + ", ".join(["1"] * k(4_000_000, 300_000)) + "]\n"),
             expect_any=("comma-separated items",)),
        Case("reader-time", "yaml-keys", ["lint", "{d}/k.yaml"], BAD,
             _write_text("k.yaml", _YAML_HEAD + "x:\n" + "".join(f"  k{i}: 1\n" for i in range(k(500_000, 270_000)))),
             expect_any=("comma-separated items",)),
        Case("reader-time", "malicious-pickle-60MB", ["audit", "checkpoint", "{d}/evil.pt"], BAD,
             _write_bytes("evil.pt", b"\x80\x02" + b"K\x01" * (k(30_000_000, 9_000_000)) + b"cposix\nsystem\n."),
             expect_any=("refused",)),
    ]
    for i in range(n):
        yield cases[i % len(cases)]


def reader_memory(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Inputs that asked for gigabytes (issue 23): each must stay well under 1 GB."""
    big = scale == "sweep"
    k = (lambda sweep, ci: sweep if big else ci)  # noqa: E731
    dbl = ["A=xxxxxxxx"] + [f"V{i}=${{{'A' if i == 0 else f'V{i - 1}'}}}${{{'A' if i == 0 else f'V{i - 1}'}}}"
                            for i in range(27)]
    bomb = (_YAML_HEAD.replace("rope_theta: 10000\n", "") + "s: &s " + "x" * 16384 + "\nrope_theta: ["
            + ", ".join(["*s"] * k(200_000, 1100)) + "]\n")

    def ints_state_dict(d: Path) -> None:
        import torch

        torch.save({"rope.inv_freq": torch.tensor([1.0, 0.1, 0.01]), "steps": list(range(k(5_000_000, 100_000)))},
                   d / "s.pt")

    def empty_tensors(d: Path) -> None:
        count = k(1_000_000, 20_000)
        hdr = {f"t{i}": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(count)}
        (d / "e.safetensors").write_bytes(safetensors_bytes(hdr))
    cases = [
        Case("reader-memory", "shell-variable-doubling", ["lint", "{d}/d.sh"], BAD,
             _write_text("d.sh", "\n".join(dbl) + f"\ntorchrun pretrain_gpt.py {_MEGATRON} --data-path $V26\n"),
             expect_any=("expand to more than",)),
        Case("reader-memory", "yaml-alias-string-bomb", ["lint", "{d}/b.yaml", "--format", "json"], BAD,
             _write_text("b.yaml", bomb), fmt="json", expect_any=("extra characters of text",)),
        Case("reader-memory", "state-dict-int-list", ["audit", "checkpoint", "{d}/s.pt"], ANY, ints_state_dict,
             needs_torch=True),
        Case("reader-memory", "benign-50MB-pickle", ["audit", "checkpoint", "{d}/p.pt"], BAD,
             _zip_with_pickle("p.pt", _pickle_bytes(list(range(k(10_000_000, 3_500_000))))),
             expect_any=("data.pkl",)),
        Case("reader-memory", "toml-dotted-keys", ["lint", "{d}/t.toml"], BAD,
             _write_text("t.toml",
                         _TOML_HEAD + "".join(f"k{i}" + ".a" * 60 + " = 1\n" for i in range(k(100_000, 600)))),
             expect_any=("squared parts",)),
        Case("reader-memory", "python-ast-nodes", ["audit", "code", "{d}/n.py"], frozenset({1}),
             _write_text("n.py", "import torch\nx = [" + "1," * k(2_000_000, 410_000) + "]\n"), expect_any=("RE004",)),
        Case("reader-memory", "safetensors-metadata", ["audit", "checkpoint", "{d}/m.safetensors"], BAD,
             _write_bytes("m.safetensors", safetensors_bytes(
                 {"__metadata__": {f"k{i}": "v" * 80 for i in range(k(1_000_000, 380_000))},
                  "rope.inv_freq": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 8)),
             expect_any=("refused",)),
        Case("reader-memory", "empty-tensors", ["audit", "checkpoint", "{d}/e.safetensors"], ANY, empty_tensors),
    ]
    for i in range(n):
        yield cases[i % len(cases)]


def internal_errors(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Valid input that raised (issue 23): JSON of every YAML/TOML type, deep trees, timeouts."""
    depth = 1100

    def deep(what: str) -> Callable[[Path], None]:
        def write(d: Path) -> None:
            fd = os.open(d, os.O_RDONLY)
            try:
                for _ in range(depth):
                    os.mkdir("d", dir_fd=fd)
                    new = os.open("d", os.O_RDONLY, dir_fd=fd)
                    os.close(fd)
                    fd = new
                name = "m.py" if what == "code" else "c.json"
                body = BUGGY_PY if what == "code" else json.dumps(HEAD)
                with open(os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as fh:
                    fh.write(body)
            finally:
                os.close(fd)
            (d / ("top.py" if what == "code" else "top.json")).write_text(
                BUGGY_PY if what == "code" else json.dumps(HEAD))
        return write
    values = {"binary": "rope_theta: !!binary aGVsbG8=", "set": "rope_theta: !!set {a, b}",
              "date": "rope_theta: 2001-12-14", "timestamp": "rope_theta: 2001-12-14t21:59:43.10-05:00",
              "date-key": "rope_theta: 10000\nx:\n  2001-01-01: y"}
    cases = [Case("internal-errors", f"json-yaml-{key}", ["lint", "{d}/v.yaml", "--format", "json"], OK,
                  _write_text("v.yaml", _YAML_HEAD.replace("rope_theta: 10000", v)), fmt="json")
             for key, v in values.items()]
    cases += [Case("internal-errors", f"json-toml-{key}", ["lint", "{d}/v.toml", "--format", "json"], OK,
                   _write_text("v.toml", _TOML_HEAD.replace("rope_theta = 10000", v)), fmt="json")
              for key, v in {"time": "rope_theta = 07:32:00", "datetime": "rope_theta = 1979-05-27T07:32:00Z",
                             "date": "rope_theta = 1979-05-27"}.items()]
    cases += [Case("internal-errors", "deep-tree-lint", ["lint", "{d}"], ANY, deep("lint")),
              Case("internal-errors", "deep-tree-audit-code", ["audit", "code", "{d}"], frozenset({1}), deep("code"))]
    cases += [Case("internal-errors", f"timeout-{t}", ["audit", "module", "{d}/user_code.py:noisy", "--length", "64",
                                                       "--timeout", t], BAD,
                   _write_text("user_code.py", USER_CODE.format(fixtures=str(FIXTURES / "runtime"))),
                   needs_torch=True, expect_any=("out of range",)) for t in ("1e308", "1e-300")]
    for i in range(n):
        yield cases[i % len(cases)]


def partial_scans(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Directory scans that passed files they never read, or stopped at one bad file (issue 23)."""
    def symlinked(what: str) -> Callable[[Path], None]:
        def write(d: Path) -> None:
            (d / "elsewhere").mkdir()
            (d / "scan").mkdir()
            if what == "code":
                (d / "elsewhere" / "m.py").write_text(BUGGY_PY)
                (d / "scan" / "ok.py").write_text("x = 1\n")
            else:
                (d / "elsewhere" / "c.json").write_text(json.dumps(HEAD))
                (d / "scan" / "ok.json").write_text(json.dumps(HEAD))
            (d / "scan" / "link").symlink_to(d / "elsewhere", target_is_directory=True)
        return write

    def long_path(d: Path) -> None:
        fd = os.open(d, os.O_RDONLY)
        try:
            for _ in range(21):  # 21 x 201 bytes: past PATH_MAX (4,096)
                os.mkdir("d" * 200, dir_fd=fd)
                new = os.open("d" * 200, os.O_RDONLY, dir_fd=fd)
                os.close(fd)
                fd = new
            with open(os.open("m.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as fh:
                fh.write(BUGGY_PY)
        finally:
            os.close(fd)
        (d / "top.py").write_text("x = 1\n")

    def unreadable(d: Path) -> None:
        (d / "private").mkdir()
        (d / "private" / "m.py").write_text(BUGGY_PY)
        (d / "ok.py").write_text("x = 1\n")
        os.chmod(d / "private", 0)  # read anyway by root: RP101 then; RE005 for anyone else

    def one_bad(d: Path) -> None:
        (d / "a.yaml").write_text(_YAML_HEAD)
        (d / "b.yaml").write_text(_YAML_HEAD + "rope_scaling:\n  factor: ${a.²}\n  type: linear\na: [1]\n")
        (d / "c.json").write_text(json.dumps(HEAD))
    cases = [Case("partial-scans", "symlinked-dir-code", ["audit", "code", "{d}/scan"], frozenset({1}),
                  symlinked("code"), expect_any=("RE005",)),
             Case("partial-scans", "symlinked-dir-lint", ["lint", "{d}/scan"], frozenset({1}), symlinked("lint"),
                  expect_any=("RE103",)),
             Case("partial-scans", "path-over-path-max", ["audit", "code", "{d}"], frozenset({1}), long_path,
                  expect_any=("RE005",)),
             Case("partial-scans", "unreadable-dir", ["audit", "code", "{d}"], frozenset({1}), unreadable,
                  expect_any=("RE005", "RP101")),
             Case("partial-scans", "no-python-files", ["audit", "code", "{d}"], BAD,
                  _write_text("README.md", "# nothing\n"), expect_any=("no Python files",)),
             Case("partial-scans", "one-bad-interpolation", ["lint", "{d}", "--format", "json"], frozenset({1}),
                  one_bad, fmt="json", expect_any=("c.json",))]
    for i in range(n):
        yield cases[i % len(cases)]


def scan_scale(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Directories of many small files: audit code and lint --format json (issue 23)."""
    count = 50_000 if scale == "sweep" else 300

    def pys(d: Path) -> None:
        (d / "src").mkdir()
        for i in range(count):
            (d / "src" / f"m{i:05d}.py").write_text(BUGGY_PY if i % 50 == 0 else "import torch\nx = torch.arange(8)\n")

    def cfgs(d: Path) -> None:
        (d / "cfg").mkdir()
        for i in range(count):
            (d / "cfg" / f"c{i:05d}.json").write_text(
                json.dumps(dict(HEAD, max_position_embeddings=4096 * (1 + i % 3))))
    cases = [Case("scan-scale", f"audit-code-{count}-files-{fmt}", ["audit", "code", "{d}/src", "--format", fmt],
                  frozenset({1}), pys, fmt=fmt) for fmt in ("text", "github", "json")]
    cases += [Case("scan-scale", f"lint-{count}-configs-{fmt}", ["lint", "{d}/cfg", "--format", fmt], OK, cfgs, fmt=fmt)
              for fmt in ("json", "text")]
    for i in range(n):
        yield cases[i % len(cases)]


def wrong_results(rng: random.Random, n: int, scale: str) -> Iterator[Case]:
    """Results that were wrong (issue 23), each with the text the right one shows."""
    chain = "".join(f"k{i}: ${{k{i + 1}}}\n" for i in range(18)) + "k18: 500000\n"
    cases = [
        Case("wrong-results", "omegaconf-chain-of-18", ["lint", "{d}/c.yaml", "--format", "json"], OK,
             _write_text("c.yaml", _YAML_HEAD.replace("rope_theta: 10000", "rope_theta: ${k0}") + chain), fmt="json",
             expect_in_out='"base": {"value": 500000'),
        Case("wrong-results", "duplicate-yaml-key", ["lint", "{d}/c.yaml"], frozenset({1}),
             _write_text("c.yaml", _YAML_HEAD + "rope_theta: 0.5\n"), expect_in_out="c.yaml:5:1: RV005"),
        Case("wrong-results", "megatron-unbalanced-quote", ["lint", "{d}/run.sh"], BAD,
             _write_text("run.sh", f"torchrun pretrain_gpt.py {_MEGATRON} --rotary-base \"1e4\n"),
             expect_any=("never closed",)),
        Case("wrong-results", "sarif-uri", ["audit", "code", "{d}/a b.py", "--format", "sarif"], frozenset({1}),
             _write_text("a b.py", BUGGY_PY), fmt="json", expect_in_out="a%20b.py"),
        Case("wrong-results", "noqa-after-form-feed", ["audit", "code", "{d}/m.py"], frozenset({1}),
             _write_text("m.py", "# header\fcomment\n" + BUGGY_PY), expect_in_out="RP101"),
    ]
    for i in range(n):
        yield cases[i % len(cases)]


GENERATORS = {"checkpoint-memory": checkpoint_memory, "safetensors-header": safetensors_header,
              "torch-valid": torch_valid, "lint": lint, "non-regular": non_regular, "audit-code": audit_code,
              "output-forgery": output_forgery, "cli-arguments": cli_arguments, "audit-module": audit_module,
              "checkpoint-garbage": checkpoint_garbage, "reader-time": reader_time, "reader-memory": reader_memory,
              "internal-errors": internal_errors, "partial-scans": partial_scans, "scan-scale": scan_scale,
              "wrong-results": wrong_results}


def all_cases(seed: int, per_class: dict[str, int] | int, scale: str = "ci") -> list[Case]:
    rng = random.Random(seed)
    out = []
    for cls, gen in GENERATORS.items():
        n = per_class if isinstance(per_class, int) else per_class.get(cls, 0)
        out.extend(gen(rng, n, scale))
    return out


_CONTROL_CHARS = set(chr(c) for c in range(0x20)) - {"\n"} | {"\x7f", "\u202e", "\u2028", "\x9b", "\ufffd"}


def problems(case: Case, code: int, out: str, err: str) -> list[str]:
    """What is wrong with one outcome (empty: the case passed)."""
    bad = []
    if "Traceback (most recent call last)" in err or "Traceback (most recent call last)" in out:
        bad.append("traceback")
    if code == 3:
        bad.append("internal error: " + err.strip()[:200])
    if code not in case.allowed:
        bad.append(f"exit {code} not in {sorted(case.allowed)}: {err.strip()[:200]}")
    if code == 2 and err.count("\n") != 1:
        bad.append(f"exit 2 with {err.count(chr(10))} stderr lines")
    if any(c in _CONTROL_CHARS for c in err):
        bad.append("raw control character on stderr")
    if case.fmt in ("text", "github") and any(c in _CONTROL_CHARS for c in out):
        bad.append("raw control character on stdout")
    if any(line.startswith("::error file=FORGED") for line in out.splitlines()):
        bad.append("forged annotation line")
    if case.fmt == "json" and code in (0, 1) and out.strip():
        try:
            json.loads(out)
        except ValueError:
            bad.append("invalid JSON output")
    if case.expect_in_out is not None and case.expect_in_out not in out:
        bad.append(f"{case.expect_in_out!r} not in the output")
    if case.expect_any and not any(x in out or x in err for x in case.expect_any) and (
            code != 2 or case.allowed == BAD):
        bad.append(f"none of {case.expect_any} in the output")
    if case.expect_any and code == 2 and not any(x in err for x in case.expect_any) and case.cls == "non-regular":
        bad.append(f"none of {case.expect_any} in the error")
    return bad
