"""RV030-RV032: what lint could not read is a finding, never a pass or a skip (``ropelaw lint``).

RV030: RoPE-looking keys no reader used (``ropelaw/lint/unread.py``): at the first such key of a
config that was otherwise read, or for the whole file when no dialect could read it. RV031: a
fine-tuning config names its model elsewhere and that model's config was not found
(``ropelaw/lint/resolve.py``). RV032: it was not found, and ropelaw's table stood in for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...findings import Finding, define_rule
from ..model import LoadedConfig, UnreadConfig

if TYPE_CHECKING:
    from ..check import Linting

UNREAD = define_rule(
    "RV030", "unread-rope-settings", "error",
    "the file sets RoPE values that no dialect of ropelaw reads",
    what="Lists the keys of a config that look like RoPE settings (a `rope` / `rotary` / `yarn` word in the name, "
         "or any key inside such a block) and that the dialect reading the file neither used nor judged, or, when "
         "no dialect could read the file at all, every such key. A base the reader would have fallen back to "
         "(RoPE's default 10,000) is not assumed next to an unread base key: that layer is not analysed.",
    why="A setting the linter does not read is a setting it did not check: MaxText's `rope_max_timescale: 150_000` "
        "read as 'no base key' gave base 10,000 and a confident 'ok' for a model that runs 150,000 with YaRN. "
        "Kernel switches (`*_fusion`) and vision / audio encoder rotaries are not reported.",
    example="base_emb_dim: 2880\nhead_dim: 64\nrope_max_timescale: 150_000   # a framework ropelaw does not read",
    fix="Lint the file the framework actually loads (a MaxText model file with its base.yml, a full training "
        "config), give the missing values with --base / --head-dim / --train, or report the framework's key so a "
        "dialect can read it (`ropelaw/lint/dialects/`).",
)
MODEL_NEEDED = define_rule(
    "RV031", "model-config-needed", "error",
    "the config trains a model named elsewhere whose config.json is not on this machine",
    what="A training config that names its model elsewhere (axolotl `base_model`, LLaMA-Factory "
         "`model_name_or_path` or v1 `model:`, llm-foundry `pretrained_model_name_or_path`, litgpt `checkpoint_dir`, "
         "...) holds no rotary dims or base of its own: the model's config.json does. It is read, in order, from "
         "`--model-config PATH`, from a local directory of that name, or from the Hugging Face cache (`$HF_HUB_CACHE`, "
         "`$HF_HOME/hub`, `~/.cache/huggingface/hub`: the snapshot `refs/main`, or the revision the config names, "
         "points at, as huggingface_hub resolves it); never from the network. When none has it (nor ropelaw's table, "
         "RV032), this finding names the model and the command that would fetch its config.json.",
    why="Without the model's head dim, base and trained length there is nothing to check, and a skipped file "
        "reads as 'All checks passed'.",
    example="model_name_or_path: my-org/private-7b\nrope_scaling: yarn\ncutoff_len: 65536",
    fix="Fetch the model's config.json into the Hugging Face cache (`hf download my-org/private-7b config.json`; "
        "older huggingface_hub: `huggingface-cli download ...`) and lint again, or pass it: `ropelaw lint train.yaml "
        "--model-config path/to/config.json` (or the directory holding it).",
)
MODEL_FROM_TABLE = define_rule(
    "RV032", "model-config-from-table", "warning",
    "the model's values come from ropelaw's table of published models, not from its own config.json",
    what="The config names a Hub model whose config.json is not on this machine, and ropelaw's table of published "
         "models (`ropelaw/data/presets_axolotl.json`: each Hub repository's RoPE as litgpt's named configs encode "
         "it) has a row for it: the findings are computed from that row, and this finding says so.",
    why="The frameworks load the model's own config.json through transformers, not litgpt's table. The two differ "
        "where litgpt does not implement what the Hub config asks for: axolotl's `examples/phi/lora-3.5.yaml` names "
        "microsoft/Phi-3.5-mini-instruct, whose config.json runs LongRoPE (original 4,096, max 131,072) where the "
        "table had plain RoPE at 4,096; Qwen2.5 Instruct rows said 131,072 where the Hub's config says 32,768.",
    example="base_model: meta-llama/Llama-3.2-1B\nsequence_len: 8192",
    fix="Fetch the model's config.json (`hf download meta-llama/Llama-3.2-1B config.json`) and lint again, or pass "
        "it with `--model-config PATH`.",
)


def check(lt: Linting) -> list[Finding]:
    """RV030 for the keys of ``cfg`` no reader used, at the first of them; RV032 when its model's values
    are ropelaw's table's."""
    cfg = lt.cfg
    from ..unread import all_keys, list_keys

    out = table_finding(cfg)
    if not cfg.unread:
        return out
    first = cfg.unread[0]
    keys = [v.key for v in cfg.unread]
    from ..sources import fit

    # why each key is not read (a framework's own refusal, with its version): beside the message when it runs long
    why = [f"{v.key} {v.raw!r}: {v.note}" for v in cfg.unread if v.note and v.note != "base"]
    message, notes = fit(f"unread RoPE settings: {list_keys(keys)} ({cfg.arch or 'this config'} is read without "
                         f"them; the numbers below ignore them)", "; " + "; ".join(why) if why else "")
    return out + [Finding.of(UNREAD, message, path=cfg.path, line=first.line, column=first.column,
                             notes=notes + all_keys(keys), keys=keys)]


def file_finding(path: str, exc: UnreadConfig) -> Finding:
    """RV030 / RV031 for a file lint could not read (the exception's message, without the path)."""
    rule = MODEL_NEEDED if exc.code == "RV031" else UNREAD
    msg = str(exc)
    text = msg[len(path) + 2:] if msg.startswith(path + ": ") else msg
    return Finding.of(rule, text, path=path, line=exc.line, column=exc.column, fix=getattr(exc, "fix", None),
                      notes=getattr(exc, "notes", ()))


def table_finding(cfg: LoadedConfig) -> list[Finding]:
    """RV032 at the key naming the model, when its values are the table's (``resolve.find``)."""
    from ..model_config import HOW, fetch_command

    m = cfg.model
    if m is None or m.source != "table":
        return []
    # the table row's own provenance is the finding's source (issue 36: the provenance once, beside the message)
    return [Finding.of(MODEL_FROM_TABLE, f"{m.key} {m.name!r}: its config.json is not on this machine; the model's "
                                         "values are ropelaw's table, not the config.json the framework loads",
                       path=cfg.path, line=m.at[0], column=m.at[1], sources=[f"ropelaw's table: {m.table_source}"],
                       fix=f"run `{fetch_command(m.name)}` and lint again, or {HOW}", model=m.name)]
