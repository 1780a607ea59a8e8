"""``ropelaw dims``: the per-pair table (frequency, period, periods seen, critical side)."""

from __future__ import annotations

import argparse

HELP = "per-pair table: frequency, period, periods seen in training, critical dimension side"
DESCRIPTION = """\
One row per rotation pair i (dims 2i, 2i+1): pretraining frequency b^(-2i/d) (the scheme's
with --pretrained-with-scheme), its period
2*pi/theta_i, the periods seen in training T_train/period, whether the pair lies inside the
critical dimension (Liu et al. 2023, Lemma 1), and its period at inference through the
scaling scheme.

example:
  ropelaw dims --d 128 --train 4096 --base 5e5
  ropelaw dims --d 128 --train 4096 --scheme yarn --factor 8 --format json
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ._common import add_format, add_spec_arguments, length

    add_spec_arguments(parser, base_required=False)
    parser.add_argument("--seq-len", type=length, default=None, metavar="L",
                        help="sequence length for length-dependent schemes (dynamic NTK, LongRoPE)")
    add_format(parser)


def run(args: argparse.Namespace) -> int:
    from ..theory import pair_table, trained_critical_dimension
    from ..numfmt import count, number
    from ._common import emit_json, spec_from_args

    spec = spec_from_args(args)
    rows = pair_table(spec, args.seq_len)
    if args.format == "json":
        emit_json([r.to_dict() for r in rows])
        return 0
    d_extra = trained_critical_dimension(spec)
    trained = f", {spec.scheme} from the first step" if spec.pretrained_with_scheme else ""
    print(f"Pairs of d={spec.d} (pretraining base {number(spec.pretrain_base)}{trained}, "
          f"training length {count(spec.train_len)}; "
          f"critical dimension {d_extra}; inference: {spec.scheme} at base {number(spec.base)})")
    head = (f"{'pair':>4}  {'dims':>7}  {'theta (train)':>13}  {'period':>13}  {'periods seen':>12}  {'side':<8}  "
            f"{'period (infer.)':>15}")
    print(head)
    for r in rows:
        side = "inside" if r.inside_critical_dimension else "outside"
        print(f"{r.pair:>4}  {f'{2 * r.pair}-{2 * r.pair + 1}':>7}  {number(r.frequency):>13}  {number(r.period):>13}  "
              f"{number(r.periods_seen):>12}  {side:<8}  {number(r.inference_period):>15}")
    return 0
