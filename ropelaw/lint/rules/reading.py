"""RV030-RV031: what lint could not read is a finding, never a pass or a skip (``ropelaw lint``).

RV030: RoPE-looking keys no reader used (``ropelaw/lint/unread.py``): at the first such key of a
config that was otherwise read, or for the whole file when no dialect could read it. RV031: a
fine-tuning config names its model elsewhere and that model's config was not given.
"""

from __future__ import annotations

from ...findings import Finding, define_rule
from ..model import LoadedConfig, UnreadConfig

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
    "the config fine-tunes a model named elsewhere whose settings ropelaw was not given",
    what="A fine-tuning config that names its model elsewhere (axolotl `base_model`, LLaMA-Factory "
         "`model_name_or_path`, llm-foundry `pretrained_model_name_or_path`, litgpt `checkpoint_dir`) holds no "
         "rotary dims or base of its own. They are read, in order, from a local directory of that name with a "
         "config.json (litgpt: model_config.yaml), from `--model-config PATH`, from the Hugging Face cache, or "
         "from ropelaw's presets of published models; when none has the model, this finding names it.",
    why="Without the model's head dim, base and trained length there is nothing to check, and a skipped file "
        "reads as 'All checks passed'.",
    example="model_name_or_path: my-org/private-7b\nrope_scaling: yarn\ncutoff_len: 65536",
    fix="Pass the model's config.json: `ropelaw lint train.yaml --model-config path/to/config.json` (or the "
        "directory holding it), or point the config at a local copy of the model.",
)


def check(cfg: LoadedConfig) -> list[Finding]:
    """RV030 for the keys of ``cfg`` no reader used, at the first of them."""
    from ..unread import list_keys

    if not cfg.unread:
        return []
    first = cfg.unread[0]
    keys = [v.key for v in cfg.unread]
    why = [f"{v.key} {v.raw!r}: {v.note}" for v in cfg.unread if v.note and v.note != "base"]
    return [Finding.of(UNREAD, f"unread RoPE settings: {list_keys(keys)} ({cfg.arch or 'this config'} is read "
                               f"without them; the numbers below ignore them)" + ("; " + "; ".join(why) if why else ""),
                       path=cfg.path, line=first.line, column=first.column, keys=keys)]


def file_finding(path: str, exc: UnreadConfig) -> Finding:
    """RV030 / RV031 for a file lint could not read (the exception's message, without the path)."""
    rule = MODEL_NEEDED if exc.code == "RV031" else UNREAD
    msg = str(exc)
    text = msg[len(path) + 2:] if msg.startswith(path + ": ") else msg
    return Finding.of(rule, text, path=path, line=exc.line, column=exc.column)
