#!/usr/bin/env bash
# The embedded default: synthetic phone screens, a small local Qwen2-VL (4.7 M parameters), SFT warm start, GRPO,
# held-out evaluation, all on CPU with nothing downloaded (python -m r1_gui.demo; see README "The demos").
#
#   bash local_scripts/demo.sh                          # writes runs/demo/{report.json,report.md,reward_curve.png}
#   bash local_scripts/demo.sh --seed 1 --output_dir runs/demo-seed1
#   bash local_scripts/demo.sh --fast                   # a few steps of every stage: checks the pipeline only
#
# PYTHON (default .venv/bin/python when present, else python3) picks the interpreter. Run `bash setup.sh` first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
"${PYTHON}" -c 'import r1_gui' 2>/dev/null || {
    echo "demo.sh: ${PYTHON} cannot import r1_gui; run 'bash setup.sh' first (or set PYTHON)" >&2
    exit 2
}
args=("$@")
if [[ " $* " != *" --output_dir "* && " $* " != *" --output_dir="* ]]; then
    args=(--output_dir runs/demo "${args[@]}")
fi
exec "${PYTHON}" -m r1_gui.demo "${args[@]}"
