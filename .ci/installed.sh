#!/usr/bin/env bash
# What users install (issue 30), called by .ci/run from the checkout's root with ROPELAW_CORPUS set.
#  1. sdist, then the wheel built from that sdist (python -m build, as a release is made); twine check.
#  2. The wheel with [test] in a fresh venv; the tests of the CLI, lint, audit and plan run against the
#     installed package: from a copy of tests/ (and the docs they read) in a temporary directory, with
#     --import-mode=importlib, so no checkout is on sys.path; the step fails unless ropelaw.__file__ is
#     under that venv's site-packages.
#  3. Every file of the shared corpus linted by the installed `ropelaw`, each as a named file (one process,
#     the CLI's main per file): exit 0 or 1, never 2 or 3 (a file that is not a config, a YAML list of RL
#     environments or an empty YAML, is skipped with a note).
#  4. The shipped pre-commit hook as users get it: `pre-commit try-repo` on a clean `git clone` of this
#     checkout (pre-commit installs it with `pip install .`), in a scratch git repository holding real corpus
#     configs of every dialect; it must fail only with the findings asserted below.
set -euo pipefail
root="$PWD"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/build" && "$work/build/bin/pip" install -q build twine
"$work/build/bin/python" -m build -q --outdir "$work/dist" . >/dev/null
"$work/build/bin/twine" check --strict "$work"/dist/*
python3 -m venv "$work/venv"
wheel=("$work"/dist/*.whl)
"$work/venv/bin/pip" install -q "${wheel[0]}[test]"
mkdir -p "$work/proj"
cp -r tests docs README.md .pre-commit-hooks.yaml pyproject.toml "$work/proj/"  # pyproject: pytest's settings only
mkdir -p "$work/proj/audits" && cp -r audits/reports "$work/proj/audits/"  # test_plan reads the audit reports
cd "$work/proj"
"$work/venv/bin/python" - <<'PY'
import ropelaw, sys, sysconfig
where = sysconfig.get_paths()["purelib"]
assert ropelaw.__file__.startswith(where), f"ropelaw imported from {ropelaw.__file__}, not {where}"
assert not any(p and "ropelaw/ropelaw" in p for p in sys.path), sys.path
print(f"installed ropelaw {ropelaw.__version__} at {ropelaw.__file__}")
PY
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider --import-mode=importlib --rootdir "$work/proj" \
  tests/test_cli_bound.py tests/test_cli_errors.py tests/test_cli_exact_audit_code.py tests/test_cli_help.py \
  tests/test_cli_schemes.py tests/test_cli_flags.py tests/test_exit_codes.py tests/test_lint_files.py \
  tests/test_lint_frameworks.py tests/test_lint_reading.py tests/test_audit_static.py tests/test_plan.py \
  tests/test_bad_input_mutations.py \
  --deselect tests/test_lint_files.py::test_pre_commit_try_repo_installs_the_hook_from_this_checkout  # needs a git checkout: below
"$work/venv/bin/python" - "$ROPELAW_CORPUS" <<'PY'
import contextlib, io, os, sys
from ropelaw.cli import main
from ropelaw.lint.parse import CONFIG_SUFFIXES
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(sys.argv[1]) for f in fs
               if f.lower().endswith(CONFIG_SUFFIXES + (".sh",)))
bad, codes = [], {}
for f in files:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["lint", f])
    codes[rc] = codes.get(rc, 0) + 1
    if rc not in (0, 1):
        bad.append(f"exit {rc}: {f}: {err.getvalue().strip()[:200]}")
print(f"installed ropelaw lint over {len(files)} corpus files, exit codes {dict(sorted(codes.items()))}")
assert not bad, "\n".join(bad)
PY
git clone -q "$root" "$work/clone"
mkdir "$work/scratch" && cd "$work/scratch" && git init -q
# one real config per dialect (hf and olmo_core as the config.json the hook's `files:` pattern takes)
while read -r src dest; do mkdir -p "$(dirname "$dest")" && cp "$ROPELAW_CORPUS/$src" "$dest"; done <<'LIST'
hf/metacarbon__attentionReasoning-llm__Llama-2-7b-chat-hf__config.json llama-2-7b-chat/config.json
hf/EchoCog__gpt-oss-20b__config.json gpt-oss-20b/config.json
frameworks/olmo_core/olmoe3-1p2b-midtrain-cx8.json olmo-core/config.json
frameworks/axolotl/llama-2-fft_optimized.yml axolotl.yml
frameworks/levanter/gemma_2b.yaml levanter.yaml
frameworks/litgpt/debug.yaml litgpt.yaml
frameworks/llamafactory/qwen2_5_full_sft.yaml llamafactory.yaml
frameworks/llmfoundry/dbrx-73b.yaml llmfoundry.yaml
frameworks/maxtext/base.yml maxtext.yml
frameworks/nanotron/config_2.8b_llama.yaml nanotron.yaml
frameworks/nemo/megatron_falcon_config.yaml nemo.yaml
frameworks/neox/llama2-7B.yml neox.yml
frameworks/olmo/OLMo-1B.yaml olmo.yaml
frameworks/torchtitan/llama3_70b.toml torchtitan.toml
heldout-r2/frameworks/torchtune-llama3_1-8B_full.yaml torchtune.yaml
heldout-r2/frameworks/megatron-functional-gpt3_15b_8t-model_config.yaml megatron.yaml
frameworks-examples/Megatron-LM/examples/rl/environment_configs/gsm8k.yaml rl/gsm8k.yaml
frameworks-examples/NeMo/examples/nlp/language_modeling/conf/tp_overlap/ub_cfg_a100_h6144_tp4_mbs4_seqlen2048.yaml tp_overlap.yaml
LIST
cp "$root/.pre-commit-hooks.yaml" .  # not configs (a YAML list, comments only): skipped, the hook still passes
git add -A
# The hook must report exactly what the installed `ropelaw lint` reports on the same files (each file's
# reading is asserted by the corpus tests): no file unread (RE101/RE102), none failed (RE104), no exit 2 or 3.
"$work/venv/bin/ropelaw" lint --verbose $(git ls-files) > "$work/direct.out" 2>&1 && direct_rc=0 || direct_rc=$?
hook_rc=0
"$work/venv/bin/python" -m pre_commit try-repo "$work/clone" ropelaw-lint --all-files --verbose \
  > "$work/hook.out" 2>&1 || hook_rc=$?
"$work/venv/bin/python" - "$work/direct.out" "$work/hook.out" "$direct_rc" "$hook_rc" <<'PY'
import re, sys
direct, hook = (open(p).read() for p in sys.argv[1:3])
direct_rc, hook_rc = int(sys.argv[3]), int(sys.argv[4])
finding = re.compile(r"^\S+:\d+:\d+: [A-Z]{2}\d{3} ", re.M)
lines = lambda text: sorted(m.group(0) + text[m.end():].split("\n", 1)[0] for m in finding.finditer(text))
assert direct_rc in (0, 1), (direct_rc, direct)
assert not re.search(r" RE10[1-4] |internal error|ropelaw: error", direct + hook), hook
assert lines(hook) == lines(direct) and lines(direct), (hook, direct)
assert hook_rc == (1 if lines(direct) else 0), (hook_rc, hook)
print(f"pre-commit try-repo on a clean clone: {len(lines(hook))} findings, the same as ropelaw lint's, in "
      f"{len(re.findall(r': ok ', direct))} clean configs and the rest; hook exit {hook_rc}")
PY
