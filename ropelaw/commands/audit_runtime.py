"""``ropelaw audit module|hf|checkpoint``: arguments and runners (called by ``commands/audit.py``).

Light at import: torch, numpy and transformers are imported inside the runners.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import UsageError
from ..report import FORMATS
from ..numfmt import number as _number
from ._common import add_format, base, emit_json, length, number, param

_SCENARIO_CHOICES = ("cast", "default", "autocast-cuda", "autocast-cpu", "autocast", "all")


def _add_runtime_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dtype", default="bf16", metavar="DTYPE",
                   help="low-precision dtype of the scenarios: bf16 (default), fp16, fp32")
    p.add_argument("--length", type=length, default=8192, metavar="L",
                   help="positions 0 .. L-1 to measure (default 8192; accepts 32k, 1M)")
    p.add_argument("--scenario", choices=_SCENARIO_CHOICES, default="all",
                   help="cast: built in float32 then .to(dtype) (DeepSpeed, FSDP, model.bfloat16()); "
                        "default: built and run under torch.set_default_dtype(dtype) (Lightning/Fabric "
                        "'bf16-true'); autocast-cuda: called under CUDA's autocast op lists (torch 2.13.0 "
                        "autocast_mode.h) emulated on CPU ('bf16-mixed' on a GPU); autocast-cpu: "
                        "torch.autocast('cpu', dtype); autocast: both autocast scenarios; all (default)")
    p.add_argument("--base", type=base, default=None, metavar="B",
                   help="nominal RoPE base (default: fitted to a float32 build of the module; 500k = 500,000)")
    add_format(p, FORMATS)


# One real framework per calling convention (ropelaw.audit.conventions.CONVENTION_EXAMPLES; a
# test keeps the two in step). Kept here as text: building the parser imports no numpy or torch.
MODULE_DESCRIPTION = """\
Run a rotary module in bf16/fp16 scenarios and measure how many positions keep their encoding.

This IMPORTS AND RUNS the named code (TARGET's module, its factory and the module it returns) in
this process, with your privileges, exactly as `python -c "import ..."` would: audit only code
you trust. The static `ropelaw audit code` never runs anything.

The run is bounded by --timeout (default 600 s); a sys.exit() or KeyboardInterrupt from the code
is reported in one line (exit 2), its warnings and anything it prints on stdout are summed up in
notes, never mixed into the output.

TARGET names a zero-argument factory returning the rotary module or callable. How to call it
is found by probing a float32 build (inputs, query layout, output), not from a fixed list:

  convention                        real example
  a length -> angles                Megatron-core 0.19.2 RotaryEmbedding.forward(max_seq_len) -> (seq, 1, 1, dim)
  a length -> (cos, sin)            litgpt 0.5.13 build_rope_cache(seq_len, n_elem) -> (cos, sin)
  a length -> complex               torchtitan precompute_freqs_cis(dim, end, theta) -> complex64 (end, dim/2)
  x + a length -> (cos, sin)        transformers <= 4.37 LlamaRotaryEmbedding.forward(x, seq_len)
  x + position ids -> (cos, sin)    transformers >= 4.38 LlamaRotaryEmbedding.forward(x, position_ids)
  x + position ids -> rotated x     nanotron 0.4 RotaryEmbedding.forward(x, position_ids) on (b, s, h, d)
  positions + q + k -> (q, k)       vLLM 0.33.0 RotaryEmbedding.forward_native(positions, query, key), flat tokens
  q + k (+ positions) -> (q, k)     torchtitan 0.3.0 ComplexRoPE.forward(query, key, positions) on (b, s, h, d)
  q (+ k) -> rotated                flash-attn 2.8.3 RotaryEmbedding (pure-torch path, XPos scale_base) on (b, s, h, d)

Query layouts tried: (batch, heads, seq, dim), (batch, seq, heads, dim), (seq, batch, heads, dim),
(tokens, heads, dim), (batch*heads, seq, dim). Outputs read: (cos, sin), angles, complex
frequencies, cat(cos, sin), a stacked table (torch.stack([cos, sin], -1): (L, d/2, 2), gpt-fast,
lit-llama, torchtune), a rotated query, a (q, k) pair; every pair is measured and the rotary dims
come from the layout. A parameter named like the base (base, theta, rope_theta, ...) is given
--base; a required one without --base is refused, naming the flag (mistral-inference's
precompute_freqs_cis(dim, end, theta)). A table with fewer rows than --length exits 2.

  ropelaw audit module tests/fixtures/runtime/frameworks.py:torchtitan_complex_rope --length 4096
"""


def add_module_arguments(p: argparse.ArgumentParser) -> None:
    from ..audit.guard import DEFAULT_TIMEOUT

    p.add_argument("target", metavar="TARGET",
                   help="path/to/file.py:NAME or package.module:NAME, NAME a zero-argument factory "
                        "returning the rotary module or callable (imported and run: see above)")
    _add_runtime_common(p)
    p.add_argument("--timeout", type=number, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help=f"stop the audited code after this many seconds (default {DEFAULT_TIMEOUT:g}; 0: no limit)")
    p.add_argument("--head-dim", type=int, default=None, metavar="N",
                   help="head dimension: of the query a rotating callable is given, or the dim argument of a "
                        "cache builder (litgpt's n_elem); default: the object's attributes, else probed")


def add_hf_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("model_type", metavar="MODEL_TYPE", help="transformers model type: llama, mistral, gpt_neox, ...")
    _add_runtime_common(p)
    p.add_argument("--config", type=param, action="append", default=[], metavar="KEY=VALUE",
                   help="config override (repeatable), e.g. --config rope_theta=1e6")
    p.add_argument("--version-check", action="store_true",
                   help="only build the rotary embedding: print the transformers version, class, "
                        "constructor and calling convention, and exit")


def add_checkpoint_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a .safetensors file or a torch file (loaded weights_only)")
    add_format(p, FORMATS)


def _scenarios(choice: str) -> list[str]:
    from ..audit.scenarios import SCENARIOS, expand_scenarios

    return list(SCENARIOS) if choice == "all" else expand_scenarios([choice])


def _progress(args: argparse.Namespace) -> bool:
    return args.format == "text" and sys.stderr.isatty()


def _fmt_pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def _fmt_base(audit) -> str:
    if audit.base is None:
        return "frequencies not base^(-2i/d) (scaled or custom): nominal = the float32 build's own"
    b = audit.base
    from ..numfmt import number

    shown = number(b)
    rounded = getattr(audit, "frequencies_rounded_to", None)
    if rounded:
        return f"base {shown} ({audit.base_source}; its own frequencies rounded to {rounded}: RP308)"
    return f"base {shown} ({audit.base_source})"


def module_table(audit) -> list[str]:
    """The per-scenario table shown by ``audit module`` / ``audit hf`` (a scenario that raised: one line)."""
    head = (f"{'scenario':<13} {'exact':>8} {'distinct':>9} {'nonfinite':>9} {'drift':>9} {'max phase err':>15} "
            f"{'magnitude':>9}  path")
    lines = [head]
    for s in audit.scenarios:
        if s.error is not None:
            lines.append(f"{s.scenario:<13} raised {s.error}")
            continue
        lines.append(f"{s.scenario:<13} {_fmt_pct(s.exact_fraction):>8} {_fmt_pct(s.distinct_fraction):>9} "
                     f"{s.nonfinite:>9,} {s.frequency_drift:>9.1e} {s.max_phase_error:>11.3g} rad "
                     f"{_fmt_pct(s.magnitude_error):>9}  {s.path}")
    from ..audit.policy import SCENARIO_SHORT

    shown = [s.scenario for s in audit.scenarios if s.scenario in SCENARIO_SHORT]
    if shown:
        lines.append("(" + "; ".join(f"{n}: {SCENARIO_SHORT[n]}" for n in shown) + ")")
    return lines


def _emit(audit, fmt: str, header: list[str], noun: str) -> int:
    from ..report import clean, exit_code, render

    if fmt == "json":
        emit_json(audit.to_dict())
    elif fmt == "text":
        print("\n".join(clean(line) for line in header))  # tensor names and notes come from files
        print()
        print(render(audit.findings, "text", checked=1, noun=noun))
    else:
        from ..jsonout import write_document

        write_document(render(audit.findings, fmt) + "\n")  # whole or not at all
    return exit_code(audit.findings)


def run_module(args: argparse.Namespace) -> int:
    from ..audit.runtime import audit_module

    if args.head_dim is not None and args.head_dim < 2:
        raise UsageError(f"--head-dim must be >= 2, got {args.head_dim}")
    from ..audit.guard import run_guarded
    from ..errors import require

    require("torch", "torch", "audit module")  # ropelaw's own import: not counted in --timeout
    if not args.timeout >= 0:
        raise UsageError(f"--timeout must be >= 0 seconds, got {args.timeout:g}")
    audit, guard = run_guarded(
        lambda: audit_module(args.target, args.dtype, args.length, _scenarios(args.scenario), base=args.base,
                             head_dim=args.head_dim, progress=_progress(args)),
        what=args.target, timeout=args.timeout or None)
    audit.notes.extend(guard.notes())
    header = [f"Runtime audit of {audit.target}",
              f"  convention {audit.convention}, {audit.layout}, rotary dims {audit.rotary_dim}, {_fmt_base(audit)}",
              f"  called as {audit.call}", *_scaled(audit),
              f"  dtype {audit.dtype}, positions 0..{audit.length - 1:,}", *_notes(audit), "", *module_table(audit)]
    return _emit(audit, args.format, header, "module")


def _scaled(audit) -> list[str]:
    if not audit.scaled:
        return []
    return ["  scaled encoding: |(cos, sin)| != 1 in float32 (XPos, attention factor, mscale); "
            "magnitudes compared with the float32 build's"]


def _notes(audit) -> list[str]:
    return [f"  note: {n}" for n in audit.notes]


def run_hf(args: argparse.Namespace) -> int:
    from ..errors import require

    require("transformers", "hf", "`audit hf`", also=("torch",))  # one hint naming the final extra
    from ..audit.runtime import Probe, audit_hf, hf_rotary_factory

    overrides = dict(args.config or [])
    if args.version_check:
        import torch

        factory, info = hf_rotary_factory(args.model_type, overrides)
        try:
            obj = factory()
        except Exception as exc:
            raise UsageError(f"{info['class']}({info['constructor']}) raised {type(exc).__name__}: {exc}") from None
        probe = Probe.detect(obj, torch.float32, 4, info["head_dim"])
        info.update(convention=probe.convention, layout=probe.layout, probed_rotary_dim=probe.rotary_dim,
                    call=probe.call_form)
        if args.format == "json":
            emit_json(info)
        else:
            print(f"transformers {info['transformers_version']}: {args.model_type} -> {info['class']}"
                  f"({info['constructor']}) in {info['module_file']}:{info['line']}")
            print(f"  convention {probe.convention}, {probe.layout}, rotary dims {probe.rotary_dim}, "
                  f"called as {probe.call_form} "
                  f"(config: head_dim {info['head_dim']}, base {_number(info['base'])}, "
                  f"max_position_embeddings {info['max_position_embeddings']:,})")
        return 0
    audit = audit_hf(args.model_type, args.dtype, args.length, _scenarios(args.scenario), base=args.base,
                     overrides=overrides, progress=_progress(args))
    mpe_value = audit.max_position_embeddings
    mpe = "" if mpe_value is None else f", max_position_embeddings {mpe_value:,}"
    header = [f"Runtime audit of {audit.target} (model type {args.model_type}, no weights)",
              f"  convention {audit.convention}, {audit.layout}, rotary dims {audit.rotary_dim}, {_fmt_base(audit)}",
              f"  called as {audit.call}", *_scaled(audit),
              f"  dtype {audit.dtype}, positions 0..{audit.length - 1:,}{mpe}", *_notes(audit), "",
              *module_table(audit)]
    return _emit(audit, args.format, header, "module")


def run_checkpoint(args: argparse.Namespace) -> int:
    from ..audit.checkpoint import audit_checkpoint

    audit = audit_checkpoint(args.file)
    header = [f"Checkpoint audit of {audit.path} ({audit.file_format}, {audit.tensor_count:,} tensors, "
              f"{len(audit.rotary):,} rotary/ALiBi)"]
    for t in audit.rotary:
        header.append("  " + t.line())
    if not audit.rotary:
        header.append("  no rotary or ALiBi tensors found (inv_freq, geometric freqs/bands/theta, cos/sin caches, "
                      "freqs_cis, stacked rope_cache/cache, slopes, alibi)")
    header.extend(f"  note: {n}" for n in audit.notes)
    return _emit(audit, args.format, header, "checkpoint")
