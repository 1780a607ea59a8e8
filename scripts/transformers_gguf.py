"""Write ropelaw/data/transformers_gguf.json: the GGUF-to-config table of transformers==5.19.0 (sglang==0.5.23's pin),
which SGLang uses to build the config of a GGUF that has no config.json beside it.

    pip download --no-deps -d .dl/tf519 transformers==5.19.0
    python scripts/transformers_gguf.py .dl/tf519/transformers-5.19.0-py3-none-any.whl

Read with ``ast.literal_eval`` from the wheel's ``transformers/integrations/ggml.py`` (nothing is imported):
``GGUF_CONFIG_MAPPING`` (GGUF key suffix -> config key, None: read and dropped) and
``GGUF_CONFIG_DEFAULTS_MAPPING``. tests/differential/test_diff_serving_gguf.py checks the file against the wheel.
"""

from __future__ import annotations

import ast
import sys
import zipfile

MEMBER = "transformers/integrations/ggml.py"


def tables(source: str) -> dict:
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in ("GGUF_CONFIG_MAPPING", "GGUF_CONFIG_DEFAULTS_MAPPING"):
            out[node.targets[0].id] = ast.literal_eval(node.value)
    return out


def main(wheel: str) -> None:
    with zipfile.ZipFile(wheel) as z:
        got = tables(z.read(MEMBER).decode("utf-8"))
    from ropelaw import data

    doc = {"generated_by": "scripts/transformers_gguf.py",
           "source": f"transformers==5.19.0 {MEMBER} (sglang==0.5.23 Requires-Dist transformers==5.19.0)",
           "config": got["GGUF_CONFIG_MAPPING"], "defaults": got["GGUF_CONFIG_DEFAULTS_MAPPING"]}
    print(f"{data.write('transformers_gguf', doc)}: {len(doc['config'])} prefixes")


if __name__ == "__main__":
    main(sys.argv[1])
