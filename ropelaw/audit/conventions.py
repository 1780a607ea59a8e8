"""Which calling convention a rotary module or callable has: its parameters' roles and the calls to try.

Discovery, not a fixed list. The callable's parameters get roles by name
(:data:`LENGTH_NAMES`, :data:`DIM_NAMES`, :data:`BASE_NAMES`, :data:`POSITION_NAMES`,
:data:`OFFSET_NAMES`, the query and key names; a required parameter with another name is the
query, then the key). :func:`plans_for` lists the calls worth trying, in order, each with every query
layout of :data:`LAYOUTS` and, unless known, common head dims:
- inputs: a length (``f(seq_len, n_elem)``, ``forward(max_seq_len)``, ``forward(x, seq_len)``),
  position ids (``forward(x, position_ids)``, ``forward_native(positions, query, key)``,
  ``forward(query, key, positions)``), or only tensors (``f(q)``, ``f(q, k)``).
:class:`ropelaw.audit.probe.Probe` tries them and keeps the first whose output is an encoding.
:data:`CONVENTION_EXAMPLES` names one real framework per convention.
"""

from __future__ import annotations

import inspect
from typing import Any
from collections.abc import Callable, Sequence


def parameters_of(fn: Callable) -> list[inspect.Parameter]:
    """``fn``'s parameters without ``self`` ([] when it has no inspectable signature)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [p for p in sig.parameters.values() if p.name != "self"]


# Parameter names and the role the probe gives them. A name not listed is left at its default;
# a required one is the query (first) or the key (second) when the callable rotates tensors.
LENGTH_NAMES = ("seq_len", "max_seq_len", "seqlen", "seq_length", "end", "length", "max_len", "max_length",
                "max_position_embeddings", "max_positions", "n_positions", "num_positions", "max_seqlen",
                "maxseqlen", "max_seq_length", "max_sequence_length", "sequence_length", "seqlength", "n_ctx",
                "context_length", "ctx_len", "block_size", "num_pos", "n_pos", "max_pos")
DIM_NAMES = ("dim", "n_elem", "head_dim", "rotary_dim", "head_size", "rotary_ndims", "dims", "kv_channels",
             "dim_head", "d_head", "head_dims", "rotary_dims", "rope_dim", "rot_dim", "dim_model", "qk_rope_head_dim",
             "encoding_dim", "d_rotary", "n_rot")
# the RoPE base: filled from --base (a required one without --base is refused, naming the flag)
BASE_NAMES = ("base", "theta", "rope_theta", "rotary_base", "rope_base", "rotary_emb_base", "base_freq",
              "max_wavelength", "max_timescale", "rope_freq_base", "freq_base")
POSITION_NAMES = ("position_ids", "positions", "pos_ids", "pos", "position", "input_pos")
OFFSET_NAMES = ("past_key_values_length", "offset", "seqlen_offset", "seqlen_offsets", "start_pos", "past_length")
Q_NAMES = ("x", "q", "query", "xq", "qkv", "hidden_states", "input", "inputs", "tensor", "query_states")
K_NAMES = ("k", "key", "xk", "keys", "kv", "key_states")

# Tensor layouts of a query, with the shape for n positions, h heads, head dim d, and the axes
# holding positions and heads (None: the layout has no head axis of its own).
LAYOUTS: dict[str, tuple[Callable[[int, int, int], tuple[int, ...]], int, int | None]] = {
    "(batch, heads, seq, dim)": (lambda n, h, d: (1, h, n, d), 2, 1),  # transformers, Llama
    "(batch, seq, heads, dim)": (lambda n, h, d: (1, n, h, d), 1, 2),  # torchtitan, nanotron, flash-attn
    "(seq, batch, heads, dim)": (lambda n, h, d: (n, 1, h, d), 0, 2),  # Megatron's sbhd
    "(tokens, heads, dim)": (lambda n, h, d: (n, h, d), 0, 1),  # vLLM: flat tokens
    "(batch*heads, seq, dim)": (lambda n, h, d: (h, n, d), 1, 0),  # Falcon in transformers <= 4.34
}
SHORT_LAYOUT = {"(batch, heads, seq, dim)": "bhsd", "(batch, seq, heads, dim)": "bshd",
                 "(seq, batch, heads, dim)": "sbhd", "(tokens, heads, dim)": "thd", "(batch*heads, seq, dim)": "(bh)sd"}
HEAD_DIM_CANDIDATES = (128, 64, 256, 96, 80, 32, 16, 8)
PROBE_N = 5  # positions in a detection call: odd, so no other axis of a probe tensor has this size
PROBE_HEADS = 2  # two heads: a layout read with seq and heads swapped shows as identical rows

# One real framework per convention (shown by `audit module --help` and README).
CONVENTION_EXAMPLES = (
    ("a length -> angles", "Megatron-core 0.19.2 RotaryEmbedding.forward(max_seq_len) -> (seq, 1, 1, dim)"),
    ("a length -> (cos, sin)", "litgpt 0.5.13 build_rope_cache(seq_len, n_elem) -> (cos, sin)"),
    ("a length -> complex", "torchtitan precompute_freqs_cis(dim, end, theta) -> complex64 (end, dim/2)"),
    ("x + a length -> (cos, sin)", "transformers <= 4.37 LlamaRotaryEmbedding.forward(x, seq_len)"),
    ("x + position ids -> (cos, sin)", "transformers >= 4.38 LlamaRotaryEmbedding.forward(x, position_ids)"),
    ("x + position ids -> rotated x", "nanotron 0.4 RotaryEmbedding.forward(x, position_ids) on (b, s, h, d)"),
    ("positions + q + k -> (q, k)", "vLLM 0.33.0 RotaryEmbedding.forward_native(positions, query, key), flat tokens"),
    ("q + k (+ positions) -> (q, k)", "torchtitan 0.3.0 ComplexRoPE.forward(query, key, positions) on (b, s, h, d)"),
    ("q (+ k) -> rotated", "flash-attn 2.8.3 RotaryEmbedding (pure-torch path, XPos scale_base) on (b, s, h, d)"),
)


def convention_of(fn: Callable) -> str:
    """hf-legacy | hf-current | rotate-callable, from the names of ``fn``'s parameters.

    ``(q, key, ...)``: rotate-callable (Falcon in transformers <= 4.34); ``position_ids`` second
    or third (or ``positions`` second): hf-current; ``seq_len`` anywhere: hf-legacy; otherwise a
    rotating callable (confirmed by probing). A guess from names only: :class:`Probe` decides.
    """
    names = [p.name for p in parameters_of(fn)]
    if len(names) >= 2 and names[1] in ("key", "k", "keys"):
        return "rotate-callable"
    if "position_ids" in names[1:3] or (len(names) >= 2 and names[1] in ("positions", "pos_ids")):
        return "hf-current"
    if "seq_len" in names:
        return "hf-legacy"
    return "rotate-callable"


def parameter_roles(fn: Callable) -> tuple[list[tuple[inspect.Parameter, str | None]], bool]:
    """Each parameter with its role (q, k, length, dim, positions, offset, or None); opaque?

    Opaque: the signature is unknown or only ``*args, **kwargs`` (then q, k are positional).
    """
    params = [p for p in parameters_of(fn) if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    out: list[tuple[inspect.Parameter, str | None]] = []
    unknown_required = 0
    import functools

    bound = set(fn.keywords or {}) if isinstance(fn, functools.partial) else set()
    for p in params:
        name = p.name.lower()
        if p.name in bound:  # functools.partial(build, n_elem=64): the factory chose it, the probe keeps it
            out.append((p, None))
            continue
        role = ("length" if name in LENGTH_NAMES else "dim" if name in DIM_NAMES
                else "base" if name in BASE_NAMES
                else "positions" if name in POSITION_NAMES else "offset" if name in OFFSET_NAMES
                else "q" if name in Q_NAMES else "k" if name in K_NAMES else None)
        if role is None and p.default is inspect.Parameter.empty:
            role = ("q", "k")[unknown_required] if unknown_required < 2 else "unsupplied"
            unknown_required += 1
        out.append((p, role))
    return out, not params


ROLE_WORDS = {"length": "a length", "dim": "the head dim", "base": "the RoPE base", "positions": "position ids",
               "offset": "an offset", "q": "the query", "k": "the key", "unsupplied": "unknown, required"}


class Plan:
    """One way of calling the callable: which roles are supplied, in which tensor layout."""

    def __init__(self, kind: str, roles: list[tuple[inspect.Parameter, str | None]], layout: str | None,
                 head_dim: int | None, opaque: bool = False, with_k: bool = False, base: float | None = None):
        self.kind = kind  # length | positions | tensor
        self.roles = roles
        self.base = base  # --base, for a parameter that takes the RoPE base
        self.layout = layout
        self.head_dim = head_dim
        self.opaque = opaque
        self.with_k = with_k or any(r == "k" for _, r in roles)
        self.uses_q = opaque or any(r == "q" for _, r in roles)

    def args(self, n: int, q, positions) -> tuple[list[Any], dict[str, Any]]:
        """Arguments for n positions: q the query tensor (or None), positions int64 (or None)."""
        if self.opaque:
            return ([q, q.clone()] if self.with_k else [q]), {}
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for p, role in self.roles:
            if role == "q":
                v = q
            elif role == "k":
                v = q.clone()
            elif role == "length" and (self.kind == "length" or p.default is inspect.Parameter.empty):
                v = n
            elif role == "dim" and (p.default is inspect.Parameter.empty or self.kind == "length"):
                v = self.head_dim
            elif role == "positions" and (self.kind == "positions" or p.default is inspect.Parameter.empty):
                v = positions
            elif role == "offset":
                v = 0
            elif role == "base" and self.base is not None:
                v = self.base
            else:
                if p.default is inspect.Parameter.empty:
                    raise TypeError(f"cannot supply the required parameter {p.name!r}")
                continue
            if p.kind == p.POSITIONAL_ONLY:
                args.append(v)
            else:
                kwargs[p.name] = v
        return args, kwargs

    def query_layout(self) -> tuple[Callable[[int, int, int], tuple[int, ...]], int, int | None]:
        """:data:`LAYOUTS`' entry of the query this plan passes: (shape for n, h, d; positions axis; heads axis)."""
        if self.layout is None:
            raise TypeError(f"the call {self.describe('f')} passes no query: it has no query layout")
        return LAYOUTS[self.layout]

    def describe(self, name: str) -> str:
        """``forward(x, seq_len=L)``: the call with what each argument holds."""
        if self.opaque:
            return f"{name}(q, k)" if self.with_k else f"{name}(q)"
        parts = []
        for p, role in self.roles:
            if role in ("q", "k"):
                parts.append(p.name)
            elif role == "length" and (self.kind == "length" or p.default is inspect.Parameter.empty):
                parts.append(f"{p.name}=L")
            elif role == "dim" and (p.default is inspect.Parameter.empty or self.kind == "length"):
                parts.append(f"{p.name}={self.head_dim}")
            elif role == "positions" and (self.kind == "positions" or p.default is inspect.Parameter.empty):
                parts.append(f"{p.name}=arange(L)")
            elif role == "offset":
                parts.append(f"{p.name}=0")
            elif role == "base" and self.base is not None:
                from ..numfmt import number

                parts.append(f"{p.name}={number(self.base)} (--base)")
        return f"{name}({', '.join(parts)})"


def plans_for(fn: Callable, head_dims: Sequence[int], base: float | None = None) -> list[Plan]:
    """Every plan worth trying for ``fn``, most specific first."""
    roles, opaque = parameter_roles(fn)
    if opaque:
        return [Plan("tensor", [], layout, hd, opaque=True, with_k=wk)
                for wk in (False, True) for layout in LAYOUTS for hd in head_dims]
    have = {r for _, r in roles}
    if "unsupplied" in have:
        return []
    needs_dim = any(r == "dim" for _, r in roles)
    has_q = "q" in have
    plans: list[Plan] = []
    kinds = [k for k, ok in (("length", "length" in have), ("positions", "positions" in have),
                             ("tensor", has_q)) if ok]
    order = list(LAYOUTS)
    if roles and roles[0][1] == "positions":  # positions first (vLLM): flat tokens first
        order.remove("(tokens, heads, dim)")
        order.insert(0, "(tokens, heads, dim)")
    for kind in kinds:
        uses_q = has_q
        layouts = order if uses_q else [None]
        dims = list(head_dims) if (uses_q or needs_dim) else [None]
        for layout in layouts:
            for hd in dims:
                plans.append(Plan(kind, roles, layout, hd, base=base))
    return plans
