"""``ropelaw base``: the base a target context needs (Liu et al. 2023; Men et al. 2024)."""

from __future__ import annotations

import argparse

HELP = "the base a target context needs: scaling law (Liu et al.) and lower bound (Men et al.)"
DESCRIPTION = """\
Two answers for a target context length L:
  scaling_law_base  smallest beta with 2*pi*beta^(d_extra/d) >= L, tuned at the training
                    length (Liu et al. 2023, arXiv 2310.05209, Theorem 3 inverted)
  men_lower_bound   smallest base on the 2-significant-figure grid whose frequencies keep
                    B_{m,theta} = sum_i cos(m*theta_i) >= 0 for every m <= L
                    (Men et al. 2024, arXiv 2405.14591)

The pretraining base sets the critical dimension: --base (the model's rope_theta), or
--pretrain-base when the model runs at another base than it was pre-trained with.

example:
  ropelaw base --d 128 --train 4096 --base 1e4 --target 128k
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ._common import BASE_HELP, LENGTH_HELP, PRETRAIN_HELP, add_format, base, length, number

    parser.add_argument("--d", required=True, type=number, metavar="D", help="rotary dimension (even)")
    parser.add_argument("--train", required=True, type=length, metavar="T",
                        help=f"pre-training length T_train ({LENGTH_HELP})")
    parser.add_argument("--target", required=True, type=length, metavar="L",
                        help=f"target context length ({LENGTH_HELP}; Men et al.'s table writes "
                             "128k for 128,000: give --target 128000 to compare with it)")
    parser.add_argument("--base", type=base, default=None, metavar="B",
                        help=f"the base the model runs with (rope_theta), its pretraining base unless --pretrain-base "
                             f"({BASE_HELP})")
    parser.add_argument("--pretrain-base", type=base, default=None, metavar="B", help=PRETRAIN_HELP)
    add_format(parser)


def published_entry(d: int, target: int) -> tuple[str, float, int] | None:
    """Men et al.'s Table 1 entry a target stands for: ``(label, printed base, k)``, or None.

    The table (d = 128 only) labels lengths "1k" .. "1M"; a target equal to ``n * 1,000`` or
    ``n * 1,024`` tokens for a label ``n``k is that entry, and ``k`` says which reading matched.
    The printed values come from ``basebound.PUBLISHED_LOWER_BOUNDS``.
    """
    from ..basebound import PUBLISHED_LOWER_BOUNDS

    if d != 128:
        return None
    for n, value in PUBLISHED_LOWER_BOUNDS.items():
        label = "1M" if n == 1024 else f"{n}k"
        for k in (1000, 1024):
            if target == n * k:
                return label, value, k
    return None


def run(args: argparse.Namespace) -> int:
    from ..spec import RopeSpec
    from ..theory import base_for_context, critical_dimension, extrapolation_bound
    from ..numfmt import count, exponent, number
    from ..limits import men_too_costly
    from ._common import check_d_limit, emit_json, pretrain_base_of, suffix_note

    check_d_limit(args.d)
    pretrain = pretrain_base_of(args.base, args.pretrain_base)
    # validate every input the same way as everywhere else (one-line ValueError -> exit 2)
    spec = RopeSpec(d=args.d, train_len=args.train, base=pretrain, pretrain_base=pretrain)
    d, t, b, target = spec.d, spec.train_len, spec.pretrain_base, args.target
    d_extra = critical_dimension(d, t, b)
    scaling = base_for_context(d, t, target, b)
    reached = extrapolation_bound(spec.with_(base=scaling)).extrapolation_bound  # tuned at T_train
    men_skipped = men_too_costly(d, target)
    if men_skipped is None:
        from ..basebound import base_lower_bound  # numpy: only here, not in `ropelaw bound`

        try:
            men = base_lower_bound(d, target)
        except ValueError as exc:  # inputs are valid here: no base on the search range works (tiny d)
            men, men_skipped = None, f"{exc} (Men et al.'s bound does not exist in range)"
    else:
        men = None
    out = {
        "d": d, "train_len": t, "pretrain_base": b, "target": target,
        "critical_dimension": d_extra, "scaling_law_base": scaling, "scaling_law_bound": reached,
        "within_training_length": target <= t,
        "men_lower_bound": men,
        "men_not_computed": men_skipped,
        "men_convention": "smallest base on the 2-significant-figure grid with B_{m,theta} >= 0 for every integer "
                          "m <= target",
        "men_published": None,
    }
    entry = published_entry(d, target)
    if entry is not None:
        out["men_published"] = {"table": "Men et al. 2024, arXiv 2405.14591, Table 1 (d = 128)",
                                "entry": entry[0], "lower_bound": entry[1], "target_reads_k_as": entry[2]}
    if args.format == "json":
        emit_json(out)
        return 0
    print(f"Base for a target context (d={d}, training length {count(t)}, pretraining base {number(b)})")
    print()
    note = suffix_note(args.target)
    print(f"  {'target context':<24}{count(target) + ' tokens':<12}" + (f"  --target {note}" if note else ""))
    print(f"  {'critical dimension':<24}{d_extra} of {d}   (Liu et al. Lemma 1, at the pretraining base)")
    if target <= t:
        print(f"  {'scaling-law base':<24}{number(scaling):<12}  already within the training length: no change needed")
    else:
        print(f"  {'scaling-law base':<24}{number(scaling):<12}  smallest beta with 2*pi*beta^({d_extra}/{d}) >= "
              f"{count(target)}; tuned at {count(t)} it reaches {count(round(reached))}")
    if men is None:
        print(f"  {'Men et al. lower bound':<24}{'-':<12}  not computed: {men_skipped}")
        return 0
    men_text = exponent(men, 2)  # the grid has 2 significant figures
    print(f"  {'Men et al. lower bound':<24}{men_text:<12}  smallest 2-significant-figure base with "
          f"sum_i cos(m*theta_i) >= 0 for all m <= {count(target)}")
    if entry is not None:
        label, value, k = entry
        if k == 1000:
            why = f"published for \"{label}\" (d = 128), read as {count(target)} tokens like this target"
        else:
            why = (f"published for \"{label}\" (d = 128); this target reads k as 1,024, the table's grid "
                   f"as 1,000: --target {target // 1024 * 1000} to compare")
        print(f"  {'Men et al. Table 1':<24}{exponent(value, 2):<12}  {why}")
    return 0
