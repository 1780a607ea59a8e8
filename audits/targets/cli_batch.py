"""Run several ``ropelaw`` command lines in one Python process, for ``audits/run.py``.

Each command is exactly what a user types (``ropelaw audit hf llama --dtype bf16 --length 8192
--scenario all --format json``), run through ``ropelaw.cli.main`` with its stdout and stderr
captured. Batching only saves the interpreter start and the ``import torch, transformers`` that
every separate process would repeat (seconds each, more than the 128K audit itself).

    python audits/targets/cli_batch.py < commands.json   # a JSON list of argv lists (without "ropelaw")

Prints one JSON object per command: {"argv", "exit_code", "seconds", "stdout", "stderr"}.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time


def run_one(argv: list[str]) -> dict:
    from ropelaw.cli import main

    out, err = io.StringIO(), io.StringIO()
    t0 = time.time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse errors exit; keep going with the next command
            code = exc.code if isinstance(exc.code, int) else 2
        except Exception as exc:  # a crash is a finding about the auditor: record it, go on
            import traceback

            traceback.print_exc()
            code = -3
            print(f"ropelaw crashed: {type(exc).__name__}: {exc}", file=sys.stderr)
    return {"argv": ["ropelaw", *argv], "exit_code": code, "seconds": round(time.time() - t0, 2),
            "stdout": out.getvalue(), "stderr": err.getvalue()}


def main() -> int:
    commands = json.load(sys.stdin)
    for argv in commands:
        res = run_one(list(argv))
        sys.stdout.write(json.dumps(res) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
