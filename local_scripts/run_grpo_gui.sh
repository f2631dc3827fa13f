#!/usr/bin/env bash
# Launch GRPO training with torchrun, on one node or several.
#
#   bash local_scripts/run_grpo_gui.sh                                   # the Aguvis-7B AITW-2k recipe, 8 GPUs
#   MODEL_PATH=/ckpt/Aguvis-7B-720P DATA_DIR=data/aitw-2k OUTPUT_DIR=runs/a bash local_scripts/run_grpo_gui.sh
#   RECIPE=local_scripts/qwen25vl3b_aitw2k_grpo.yaml bash local_scripts/run_grpo_gui.sh --learning_rate 2e-6
#   # two nodes: run on each with its own NODE_RANK
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 MASTER_PORT=29500 bash local_scripts/run_grpo_gui.sh
#
# Variables (all optional): RECIPE, MODEL_PATH, DATA_DIR, OUTPUT_DIR, NPROC_PER_NODE (default: the number of GPUs),
# NNODES (1), NODE_RANK (0), MASTER_ADDR (127.0.0.1), MASTER_PORT (29500), PYTHON (.venv/bin/python if present).
# Arguments after the script name go to grpo_gui.py and override the recipe. The settings are checked in one process
# first (python -m r1_gui.settings_check), so a mistake is one line before torchrun starts.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

RECIPE="${RECIPE:-local_scripts/aguvis7b_aitw2k_grpo.yaml}"
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
if [[ -z "${NPROC_PER_NODE:-}" ]]; then
    NPROC_PER_NODE=$("${PYTHON}" -c 'import torch; print(max(1, torch.cuda.device_count()))')
fi
NNODES="${NNODES:-1}"
NODE_RANK="${NODE_RANK:-0}"
MASTER_ADDR="${MASTER_ADDR:-127.0.0.1}"
MASTER_PORT="${MASTER_PORT:-29500}"

args=(--config "${RECIPE}")
[[ -n "${MODEL_PATH:-}" ]] && args+=(--model_name_or_path "${MODEL_PATH}")
[[ -n "${DATA_DIR:-}" ]] && args+=(--dataset_name "${DATA_DIR}")
[[ -n "${OUTPUT_DIR:-}" ]] && args+=(--output_dir "${OUTPUT_DIR}")

echo "[run_grpo_gui] ${NNODES} node(s) x ${NPROC_PER_NODE} process(es), node rank ${NODE_RANK}, rendezvous ${MASTER_ADDR}:${MASTER_PORT}"
echo "[run_grpo_gui] recipe ${RECIPE} ${args[*]:2} $*"
# The settings, checked in one process before torchrun starts its workers: a mistake is one `error:` line and exit
# code 2 here, where under torchrun it is each worker's line and ~30 lines of torch's ChildFailedError.
PYTHONPATH="src${PYTHONPATH:+:${PYTHONPATH}}" "${PYTHON}" -m r1_gui.settings_check grpo "${args[@]}" "$@"
exec "${PYTHON}" -m torch.distributed.run \
    --nproc_per_node "${NPROC_PER_NODE}" \
    --nnodes "${NNODES}" \
    --node_rank "${NODE_RANK}" \
    --master_addr "${MASTER_ADDR}" \
    --master_port "${MASTER_PORT}" \
    src/r1_gui/grpo_gui.py "${args[@]}" "$@"
