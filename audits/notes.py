"""What reading each target's code showed: verdicts that the measurements alone cannot give.

``verdict_for`` judges one static finding (REAL / REAL (cast only) / FALSE POSITIVE ...); the
report prints it with the runtime evidence of the same class next to it, so a note that the
measurements contradict is visible. ``target_notes`` adds per-version paragraphs, and
``target_verdict`` writes a target's summary line from its numbers. Facts, not code, are
recorded here.
"""

from __future__ import annotations

import re
from typing import Any

FROM_PRETRAINED = ("`from_pretrained(..., torch_dtype=torch.bfloat16)` and `from_config(..., torch_dtype=...)` "
                   "keep inv_freq in float32 (checked with 4.31.0, 4.38.2, 4.57.1 and 5.23.0: the buffer is "
                   "created with an explicit `.float()`), while `model.to(torch.bfloat16)`, `.half()`, "
                   "`.bfloat16()` and the trainers that call them (DeepSpeed, the seed's case) cast it")


def _v(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


# (package, code, scope regex, path regex, min version, max version, "VERDICT: why"); first match wins.
RULES: list[tuple[str, str, str, str, str, str, str]] = [
    # ---------------------------------------------------------------- transformers
    ("transformers", "RP101", r"DynamicNTKScalingRotaryEmbedding\._set_cos_sin_cache$", "", "", "",
     "FALSE POSITIVE: from forward this only runs when the sequence is longer than max_position_embeddings, "
     "and then the lines just above re-register inv_freq from a fresh float32 tensor, so the positions are "
     "built in float32; at __init__ no cast has happened yet"),
    ("transformers", "RP101", r"RotaryEmbedding\.__init__$", "", "", "",
     "FALSE POSITIVE: in __init__ the buffer has just been created in float32 (explicit `.float()`), no cast "
     "can have happened yet, so the cache built here is exact (from 4.38 on it is also a backward-"
     "compatibility cache that the attention no longer reads)"),
    ("transformers", "RP101", r"(RotaryEmbedding\._set_cos_sin_cache|RotaryEmbedding\.forward|RotaryEmbedding\.cos_sin)$",
     "", "", "",
     "REAL (cast only): runs from forward whenever the sequence outgrows the cached length "
     "(max_position_embeddings at first), after `model.to(bf16)` has turned inv_freq into bf16: positions "
     "`arange(..., dtype=self.inv_freq.dtype)` and the angle product are then bf16, the seed 004 bug. "
     "Contexts within max_position_embeddings use the float32 cache built at __init__ and stay exact"),
    ("transformers", "RP122", r"", "", "", "",
     "REAL (cast only): this call rebuilds the cos/sin cache from the cast inv_freq when the sequence "
     "outgrows max_position_embeddings (the RP101 finding in the method it calls is the line that rounds)"),
    ("transformers", "RP121",
     r"(_dynamic_frequency_update|_longrope_frequency_update|DynamicNTKScalingRotaryEmbedding\.(forward|_set_cos_sin_cache))$",
     "", "", "",
     "FALSE POSITIVE (duplicate): this re-registers inv_freq during forward (dynamic / long-rope scaling) "
     "from a freshly computed float32 tensor or the float32 original, i.e. after any cast; it restores "
     "float32 frequencies rather than rounding them (the cast rounding is the __init__ finding)"),
    ("transformers", "RP121", r"^GemmaRotaryEmbedding\.__init__$", "", "4.38.0", "4.40.99",
     "FALSE POSITIVE: here the buffer is registered as None and inv_freq is computed in float32 at the first "
     "forward, i.e. after a cast made when the model is loaded, so the cast never rounds it (the runtime drift "
     "is at float32 level); only a cast made after the first forward would. From 4.45 Gemma uses the shared "
     "init and the cast does round it"),
    ("transformers", "RP121", r"RotaryEmbedding\.__init__$", "", "", "",
     "REAL (cast only): inv_freq is a float buffer, so a cast rounds every frequency (bf16: up to 2^-8 "
     "relative, 3.65e-3 measured for base 10000), and the phase error grows with the position. "
     + FROM_PRETRAINED),
    ("transformers", "RP131", r"build_alibi_tensor", "falcon", "", "",
     "REAL (ALiBi Falcon configs only): the slopes are converted to bfloat16 explicitly before they multiply "
     "the token distances, in every precision, so the bias is bf16 whatever the model dtype; for a power-of-"
     "two head count the slopes are powers of two and the bias is exact only where the distance is: 896 of "
     "8,192 distances (`ropelaw exact --dtype bf16 --length 8192`). Reached when `config.alibi` is true (the "
     "falcon-rw models); the rotary Falcon models never call it. Not measured at runtime (the runtime audit "
     "measures rotary modules)"),
    # ---------------------------------------------------------------- rotary-embedding-torch
    ("rotary-embedding-torch", "RP102", r"get_seq_pos", "", "", "",
     "REAL: `rotate_queries_or_keys(q)` passes q's dtype here, so with bf16/fp16 queries (any mixed-precision "
     "run: under autocast the q/k projections return bf16 too) positions are `arange(n, dtype=bf16)`; the "
     "`freqs` parameter is also rounded by a cast and the product is taken in its dtype"),
    # ---------------------------------------------------------------- x-transformers
    ("x-transformers", "RP121", r"^RotaryEmbedding\.__init__$", "", "", "",
     "REAL (cast only): a persistent float inv_freq buffer (rounded by a cast and saved so in the state "
     "dict, see the checkpoint audit); worse, forward converts the int64 positions with "
     "`t.type_as(self.inv_freq)`, so after a cast positions and angles are bf16 (the runtime collapse)"),
    ("x-transformers", "RP121", r"^PolarEmbedding\.__init__$", "", "", "",
     "REAL (cast only), by reading: the same pattern as RotaryEmbedding (persistent float inv_freq, "
     "positions converted with `t.type_as(self.inv_freq)` in forward); not run at runtime"),
    ("x-transformers", "RP121", r"^ScaledSinusoidalEmbedding\.__init__$", "", "", "",
     "REAL (cast only), by reading: absolute sinusoidal embedding (`scaled_sinu_pos_emb=True`), not rotary; "
     "forward takes `einsum('i, j -> i j', pos, self.inv_freq)` with int64 positions, which type promotion "
     "turns into bf16 once the buffer is cast (position 4,097 becomes 4,096); not run at runtime"),
    # ---------------------------------------------------------------- timm
    ("timm", "RP121", r"RotaryEmbeddingMRope\.", "", "1.0.0", "",
     "FALSE POSITIVE: the class overrides `_apply` so that after any `.to(dtype)` / `.half()` / "
     "`.bfloat16()` it re-registers inv_freq in float32 (`_freq_buffer_dtype` never returns a dtype under "
     "32 bits), and builds positions in float32; the finding at `_apply` is that very repair"),
]


def verdict_for(package: str, version: str, finding: dict[str, Any]) -> tuple[str, str] | None:
    scope = finding.get("scope") or ""
    path = finding.get("path") or ""
    for pkg, code, scope_re, path_re, lo, hi, verdict_why in RULES:
        if pkg != package or (code != "*" and code != finding["code"]):
            continue
        if not re.search(scope_re, scope) or not re.search(path_re, path):
            continue
        if (lo and _v(version) < _v(lo)) or (hi and _v(version) > _v(hi)):
            continue
        verdict, _, why = verdict_why.partition(": ")
        return verdict, why
    return None


def runtime_covers(package: str, finding: dict[str, Any]) -> bool:
    """Whether the module factory of a non-transformers target runs the finding's code path."""
    scope = finding.get("scope") or ""
    return scope.startswith("RotaryEmbedding.") or scope in ("apply_rotary_emb", "apply_rotary_pos_emb")


# --------------------------------------------------------------------------- per-version paragraphs

_TRANSFORMERS = [
    ("4.28.0", "4.36.99",
     "**Reading the code.** `LlamaRotaryEmbedding` (and the GPT-NeoX, Mistral, Falcon, Persimmon, Phi "
     "copies) keeps inv_freq as a float buffer and, when a sequence is longer than the cache (built at "
     "__init__ for max_position_embeddings positions), rebuilds cos/sin in forward from "
     "`torch.arange(seq_len, dtype=self.inv_freq.dtype)`: after `model.to(torch.bfloat16)` the positions and "
     "the angle product are bf16. This is the bug of seed 004, reachable in this version, exactly as the cast "
     "scenario measures it (`default` and `autocast` stay exact: there inv_freq is still float32). "
     "An architecture whose default max_position_embeddings covers the audited length keeps the float32 "
     "cache from __init__ and measures clean up to it (MistralConfig and MixtralConfig default to 131,072, "
     "so `mistral` and `mixtral` are also audited with `--config max_position_embeddings=32768`, the value "
     "their released checkpoints ship, which collides beyond 32,768; Qwen2's default 32,768 collides at "
     "128K)."),
    ("4.38.0", "4.40.99",
     "**Reading the code.** Llama, Gemma (and the classes copied from Llama in 4.38, e.g. OLMo, Cohere) were "
     "fixed in 4.38 (transformers PR 29285: positions and the product in float32 with autocast disabled, "
     "cos/sin cast last). Mistral, Mixtral, Qwen2, GPT-NeoX, Falcon, Persimmon, Phi and StableLM still carry "
     "the pre-4.38 class in this version: cache rebuilt in forward from `arange(dtype=self.inv_freq.dtype)`, "
     "so they collide under a cast once the sequence outgrows max_position_embeddings. inv_freq stays a "
     "float buffer everywhere, which a cast rounds."),
    ("4.41.0", "4.99.99",
     "**Reading the code.** Every architecture audited at runtime computes positions and the angle product "
     "in float32 with autocast disabled and casts only cos/sin: the seed 004 collision is gone, except in "
     "Mixtral, which still has the pre-4.38 class in 4.45.2 (fixed by 4.48.3). What remains is "
     "inv_freq registered as a float buffer: a cast (`model.to(bf16)`) rounds the frequencies themselves "
     "(drift 3.65e-3 in bf16, phase error growing with the position), while `from_pretrained(torch_dtype=...)` "
     "keeps them float32. Falcon's ALiBi helper still builds its bias in bf16 explicitly."),
    ("5.0.0", "5.99.99",
     "**Reading the code.** As in 4.4x-4.57: positions and products in float32, only cos/sin cast. inv_freq "
     "is now declared with `self.inv_freq = nn.Buffer(..., persistent=False)` instead of `register_buffer`, "
     "still a float buffer that `model.to(bf16)` rounds (the runtime drift shows it). {nn_buffer}"),
]

_OTHER = {
    ("rotary-embedding-torch", ""):
        "**Reading the code.** `rotate_queries_or_keys(t)` calls `get_seq_pos(seq_len, dtype=t.dtype)`, i.e. "
        "`torch.arange(n, dtype=q.dtype)`: with bf16 queries the positions are bf16 before anything else "
        "happens, in every precision scenario, and `forward` multiplies them by `freqs` (an nn.Parameter, "
        "rounded by a cast) in that dtype. The decorator `autocast('cuda', enabled=False)` does not help: the "
        "dtype comes from the input, not from autocast. The same code is in 0.5.3, 0.8.9 and 0.9.1. The "
        "positions are rounded the same way under cast, default dtype and autocast (the input query has the "
        "scenario dtype in all three).",
    ("x-transformers", ""):
        "**Reading the code.** `RotaryEmbedding.forward` computes "
        "`einsum(t.type_as(self.inv_freq), self.inv_freq)` under `disable_autocast`: autocast cannot reach it, "
        "and with a float32 model it is exact, but inv_freq is a persistent float buffer, so after "
        "`model.to(bf16)` the int64 positions become bf16 and the angles are bf16 products: the cast scenario "
        "collapses (worse than rounded positions alone) and fp16 overflows from 65,520 on.",
    ("timm", "0.9.16"):
        "**Reading the code.** `RotaryEmbedding` / `RotaryEmbeddingCat` keep their frequency bands as a float "
        "buffer named `bands` (when no feat_shape is given) and build grid positions in float32; "
        "`model.half()` / `.to(bf16)` rounds the bands, so every frequency drifts by up to 2^-8 (bf16), the "
        "RP121 situation. Positions themselves are float32, so no collisions.",
    ("timm", "1.0.31"):
        "**Reading the code.** Fixed deliberately: `_freq_buffer_dtype` keeps every frequency and grid buffer "
        "at >= float32, and `_apply` re-registers the bands / inv_freq in float32 after any `.to()`/`.half()`; "
        "angles are computed in float32 and cast once at the end.",
}


def _flagged(findings: list[dict[str, Any]], codes: tuple[str, ...], scope_re: str) -> bool:
    return any(f["code"] in codes and re.search(scope_re, f.get("scope") or "") for f in findings)


def target_notes(package: str, version: str, findings: list[dict[str, Any]]) -> str:
    """Per-version paragraphs; statements about the scanner are checked against its actual findings."""
    if package == "transformers":
        rp121 = _flagged(findings, ("RP121",), r"RotaryEmbedding")
        fill = {"nn_buffer": "The static scan flags it (RP121)." if rp121 else
                "The static scan does not see it: no RP121 in this version (a false negative of the scanner: "
                "`nn.Buffer` assigned as an attribute is not recognised as a buffer)."}
        return "\n\n".join(text.format(**fill) for lo, hi, text in _TRANSFORMERS if _v(lo) <= _v(version) <= _v(hi))
    text = _OTHER.get((package, version)) or _OTHER.get((package, ""), "")
    if package == "x-transformers":
        hit = _flagged(findings, ("RP101", "RP102", "RP103", "RP104", "RP111"), r"^RotaryEmbedding\.forward$")
        text += (" The static scan flags that conversion too." if hit else
                 " The static scan flagged only the buffer (RP121), not the `type_as` conversion that does the "
                 "damage (a false negative).")
    if package == "timm" and version == "0.9.16":
        text += (" The static scan reports nothing: the buffer is not called `inv_freq` / `freq` (a false "
                 "negative)." if not findings else " The static scan flags it.")
    if package == "timm" and version == "1.0.31" and findings:
        text += (f" The {len(findings)} RP121 finding(s) in `RotaryEmbeddingMRope` are false positives: the "
                 "scanner does not recognise the `_apply` repair.")
    return text


# --------------------------------------------------------------------------- verdict line


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%" if x < 1 else "100%"


def target_verdict(doc, rt, st_counts, verdicts, ck_counts) -> dict[str, str]:
    """Summary verdict of a target from its measurements (short for the table, long for the report)."""
    collide: dict[str, set[str]] = {}
    overflow: set[str] = set()
    drift: set[str] = set()
    for (m, dtype, n, scen), row in rt.rows.items():
        if row["exact_fraction"] < 1.0:
            collide.setdefault(m, set()).add(scen)
        if row["nonfinite"]:
            overflow.add(m)
        if scen == "cast" and row["frequency_drift"] > 1e-5:
            drift.add(m)
    if doc["package"] != "transformers":  # one audited module: name it plainly
        collide = {"the module": set().union(*collide.values())} if collide else {}
        overflow = {"the module"} if overflow else set()
        drift = {"the module"} if drift else set()
    real_static = sum(n for v, n in verdicts.items() if v.startswith("REAL"))
    false_static = sum(n for v, n in verdicts.items() if v.startswith("FALSE"))
    parts_short, parts_long = [], []
    if collide:
        scen = sorted({s for ss in collide.values() for s in ss})
        worst = min((row["exact_fraction"], m if doc["package"] == "transformers" else s)
                    for (m, d, n, s), row in rt.rows.items() if d == "bf16" and n == min(k[2] for k in rt.rows))
        what = "configurations" if doc["package"] == "transformers" else "module"
        parts_short.append(f"**BUG: positions collide** ({'/'.join(scen)}; {len(collide)} of {len(rt.meta)} "
                           f"audited {what})" if what != "module" else
                           f"**BUG: positions collide** ({'/'.join(scen)})")
        parts_long.append(
            f"- **Seed 004 bug reachable**: positions collide in {', '.join(sorted(collide))} "
            f"(scenarios: {', '.join(scen)}); worst bf16 exact fraction at the shortest length "
            f"{_pct(worst[0])} ({worst[1]}).")
    if overflow:
        parts_short.append("fp16 inf")
        parts_long.append(f"- **fp16 overflow**: non-finite encodings in {', '.join(sorted(overflow))} "
                          "(positions from 65,520 on).")
    if drift:
        parts_short.append("cast rounds the frequencies")
        parts_long.append(f"- **Frequencies rounded by a cast** (RP303) in {', '.join(sorted(drift))}: "
                          "`model.to(bf16)` rounds the stored frequencies (inv_freq buffer or parameter); positions may still be "
                          "exact.")
    if rt.meta and not collide and not overflow:
        parts_long.append("- Positions exact in every audited architecture, scenario, dtype and length.")
    if st_counts.get("RP131") and doc["package"] == "transformers":
        parts_short.append("ALiBi in bf16 (falcon)")
        parts_long.append("- Falcon's ALiBi bias is built in bf16 explicitly (`.bfloat16()` on the slopes) (static RP131, real for alibi "
                          "configs; not measured at runtime).")
    if ck_counts:
        parts_short.append("inv_freq saved in bf16/fp16")
        parts_long.append("- Checkpoints written by this version after a cast carry inv_freq in bf16/fp16 "
                          f"({', '.join(f'{c} x{n}' for c, n in sorted(ck_counts.items()))}).")
    if not rt.meta:
        extra = {("timm", "0.9.16"): "frequency bands rounded by a cast (by reading; scanner misses it)",
                 ("timm", "1.0.31"): "clean by reading (2 scanner false positives)"}.get(
            (doc["package"], doc["version"]), "static scan only")
        parts_short.append(extra)
        parts_long.append(f"- Static scan only: {extra}.")
    if not parts_short:
        parts_short.append("clean")
    total = sum(verdicts.values())
    if total:
        parts_long.append(f"- Static findings: {total} ({real_static} real, {false_static} false positives, "
                          f"{total - real_static - false_static} other; see the table below).")
    return {"short": "; ".join(parts_short), "long": "\n".join(parts_long)}


README_NOTES = """## What the table says

- **transformers before 4.38** (and Mistral, Qwen2, GPT-NeoX, Falcon, Persimmon, Phi, StableLM until
  4.40; Mixtral until 4.45): the seed 004 bug is live. After `model.to(torch.bfloat16)` the rotary class
  rebuilds its cos/sin cache from `arange(seq_len, dtype=self.inv_freq.dtype)` for any sequence longer
  than max_position_embeddings. Llama in bf16: 3.76% of 8,192 positions keep their own encoding, 0.24% of
  131,072 (the angle product is rounded too, so it is worse than the 10.9% of rounded positions alone);
  fp16 gives non-finite encodings for every position from 65,520 on. `from_pretrained(torch_dtype=...)`
  does not trigger it (inv_freq stays float32); casting the model does (DeepSpeed, `.half()`,
  `.bfloat16()`). Architectures whose default max_position_embeddings covers the length measure clean
  up to it (Qwen2 up to 32K; Mistral's and Mixtral's default 131,072, hence the extra runs with the
  32,768 their released checkpoints ship).
- **transformers 4.38+ (Llama, Gemma) and 4.45+ (every architecture audited)**: positions and angles in
  float32 with autocast disabled; every position exact in every scenario. inv_freq is still a float
  buffer that a cast rounds: frequencies drift by 3.65e-3 (bf16), a phase error of 160 rad at position
  131,071 for Llama; relative positions stay distinct, but not at the frequencies the model was trained
  with.
- **rotary-embedding-torch (0.5.3, 0.8.9, 0.9.1)**: positions are created in the query's dtype, so they
  collide in bf16/fp16 in every scenario, autocast included: exactly the seed's 896 of 8,192 (10.94%)
  under default dtype and autocast, 4.36% after a cast (which also rounds the `freqs` parameter).
- **x-transformers 2.31.10**: exact in float32 and under autocast; after a cast, positions and angles
  become bf16 (4.36% exact at 8K, 0.28% at 128K) and fp16 overflows from 65,520.
- **timm**: 0.9.16 lets a cast round its frequency bands; 1.0.31 repairs its buffers after every cast.

Where the auditor got a finding wrong, the report says so (findings marked FALSE POSITIVE, false negatives
named in the "Reading the code" paragraphs).
"""
