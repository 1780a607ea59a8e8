"""`ropelaw bound` stays light: no torch, matplotlib, scipy, sympy -- and no numpy -- imported.

Checked in a fresh interpreter (a subprocess), so modules other tests imported do not count.
The timing goal (cold start <= 4x `python -c pass`) lives in benchmarks/bench_startup.py.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = {"torch", "matplotlib", "scipy", "sympy", "numpy"}

SCRIPT = (
    "import json, sys, ropelaw.cli\n"
    "code = ropelaw.cli.main({argv!r})\n"
    "heavy = sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r})\n"
    "sys.stderr.write(json.dumps({{'code': code, 'heavy': heavy, 'mpmath': 'mpmath' in sys.modules}}) + '\\n')\n"
)


def imported_by(argv):
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(argv=argv, heavy=HEAVY)],
                          capture_output=True, text=True, timeout=120)
    return json.loads(proc.stderr.strip().splitlines()[-1]), proc.stdout


def test_bound_imports_nothing_heavy():
    info, out = imported_by(["bound", "--d", "128", "--train", "4096", "--pretrain-base", "1e4", "--base", "1e6"])
    assert info["code"] == 0 and "129,027" in out
    assert info["heavy"] == []
    assert info["mpmath"] is False  # no integer boundary was near: mpmath stays unloaded


def test_bound_json_and_tuned_import_nothing_heavy():
    info, _ = imported_by(["bound", "--d", "128", "--train", "4096", "--tune", "16384", "--base", "500",
                           "--format", "json"])
    assert info["code"] == 0 and info["heavy"] == []


def test_bound_with_a_scheme_imports_nothing_heavy():
    info, _ = imported_by(["bound", "--d", "128", "--train", "4096", "--base", "1e4", "--scheme", "yarn",
                           "--factor", "8"])
    assert info["code"] == 0
    assert not set(info["heavy"]) & {"torch", "matplotlib", "scipy", "sympy"}


def test_package_import_is_light():
    """`import ropelaw` loads none of numpy, torch, matplotlib, scipy, sympy, mpmath (all lazy)."""
    script = ("import sys, json, ropelaw\n"
              "names = {'numpy', 'torch', 'matplotlib', 'scipy', 'sympy', 'mpmath', 'transformers'}\n"
              "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in names)))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_public_names_resolve_lazily_without_torch():
    """Touching a light public name (theory) still keeps torch and matplotlib out."""
    script = ("import sys, json, ropelaw\n"
              "ropelaw.critical_dimension(128, 4096)\n"
              "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {'torch', 'matplotlib'})))\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []
