#!/usr/bin/env bash
# GPU smoke run: the whole product through its real command lines on one GPU, in bf16, one PASS/FAIL line each.
#
#   bash local_scripts/gpu_smoke.sh                 # CUDA; without CUDA it says so and exits 0
#   bash local_scripts/gpu_smoke.sh --cpu           # the same sequence on CPU (fp32, gloo): tests this script
#   R1_GUI_SMOKE_DEVICE=cpu bash local_scripts/gpu_smoke.sh
#   bash local_scripts/gpu_smoke.sh --only tiny_model,synthetic_data,sft,grpo   # some entry points (SMOKE_ONLY too)
#
# Entry points, in order, each feeding the next: a tiny model (r1_gui.tiny), synthetic data (make_synthetic.py,
# raw_load_data.py), the stock processor on the folders r1_gui writes, SFT (sft.py), the batched vision windows
# against the per-window attention (--vision_attention, in the run's dtype), GRPO (grpo_gui.py) from the SFT
# output, GRPO under torchrun with DeepSpeed zero1_no_optimizer.json and zero2.json, GRPO with LoRA, evaluation
# (eval/test_aitw.py) of the GRPO output, the demo (python -m r1_gui.demo --fast), a tiny Qwen3-VL through GRPO in its
# own format (mobile_use on the 999 grid) and evaluation, the stock Qwen3VLProcessor on its folders, and one GRPO
# step of a Qwen2.5-VL-3B-shaped model with a real AdamW step (bench/gpu_step_profile.py). The CPU mode skips,
# saying why, the steps a CPU cannot do: the stock processors (no CPU torchvision) and the 3B step.
#
# --only NAME,NAME (or SMOKE_ONLY="NAME NAME") runs those entry points, in the order above, and prints a SKIP line for
# the others; an entry point's inputs must be among them (grpo trains from sft's output, eval_test_aitw evaluates
# grpo's, stock_processor loads sft's, the qwen3 steps follow qwen3_tiny_model) or it fails. GPU_KIT_SMOKE below is
# bench/gpu_kit.sh's subset: every command line once (the other lines repeat a command with another flag or
# architecture, or time what the kit measures on its own).
#
# Exits 1 if any entry point fails. Logs: $SMOKE_DIR/logs/<entry point>.log (SMOKE_DIR defaults to a temporary
# folder that is kept when something fails). PYTHON (default .venv/bin/python when present, else python3) and
# SMOKE_NPROC (torchrun processes, default 1) may be set.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ENTRY_POINTS=(tiny_model synthetic_data sft stock_processor vision_attention grpo grpo_torchrun_zero1
    grpo_torchrun_zero2 grpo_lora eval_test_aitw demo_fast qwen3_tiny_model qwen3_grpo qwen3_eval_test_aitw
    qwen3_stock_processor grpo_step_3b)
GPU_KIT_SMOKE="tiny_model,synthetic_data,sft,stock_processor,grpo,grpo_torchrun_zero2,eval_test_aitw,demo_fast"

DEVICE="${R1_GUI_SMOKE_DEVICE:-cuda}"
ONLY="${SMOKE_ONLY:-}"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --cpu) DEVICE=cpu; shift ;;
        --only) ONLY="${2:-}"; shift 2 || { echo "error: --only needs a comma-separated list of entry points" >&2; exit 2; } ;;
        --only=*) ONLY="${1#--only=}"; shift ;;
        --gpu_kit) ONLY="${GPU_KIT_SMOKE}"; shift ;;
        *) echo "error: unknown argument $1 (valid: --cpu, --only NAME,NAME, --gpu_kit)" >&2; exit 2 ;;
    esac
done
ONLY="${ONLY//,/ }"
for name in ${ONLY}; do
    if [[ " ${ENTRY_POINTS[*]} " != *" ${name} "* ]]; then
        echo "error: --only: no entry point ${name}; valid: ${ENTRY_POINTS[*]}" >&2
        exit 2
    fi
done
# selected NAME: whether NAME runs (every entry point without --only)
selected() { [[ -z "${ONLY}" || " ${ONLY} " == *" $1 "* ]]; }
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
export PYTHONPATH="${PWD}/src${PYTHONPATH:+:${PYTHONPATH}}"

if [[ "${DEVICE}" == cuda ]] && ! "${PYTHON}" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    echo "gpu_smoke: SKIP: no CUDA device here (torch.cuda.is_available() is False). Run it on a GPU machine, or"
    echo "gpu_smoke: run the same sequence on CPU with: bash local_scripts/gpu_smoke.sh --cpu"
    exit 0
fi

W="${SMOKE_DIR:-$(mktemp -d -t r1_gui_smoke.XXXXXX)}"
mkdir -p "${W}/logs"
NPROC="${SMOKE_NPROC:-1}"
if [[ "${DEVICE}" == cuda ]]; then
    TRAIN=(--use_cpu false --bf16 true --activation_checkpointing true)
    EVAL=(--device cuda --dtype bfloat16)
else
    TRAIN=(--use_cpu true --bf16 false --activation_checkpointing false)
    EVAL=(--device cpu --dtype float32)
fi
# the process group's backend under torchrun: nccl on GPUs, gloo on CPU (a single process has no process group)
if [[ "${DEVICE}" == cuda ]]; then DDP=(--ddp_backend nccl); else DDP=(--ddp_backend gloo); fi
COMMON=(--dataset_name "${W}/data" --report_to none --save_strategy no --logging_steps 1)
GRPO=(--config local_scripts/tiny_cpu_grpo.yaml "${COMMON[@]}" "${TRAIN[@]}" --max_steps 2)
TORCHRUN=("${PYTHON}" -m torch.distributed.run --nproc_per_node "${NPROC}" --master_port 29541)
echo "gpu_smoke: device ${DEVICE}, work folder ${W}"

failed=0
# run NAME COMMAND...: one PASS/FAIL line with the seconds it took; the log's last lines on failure
run() {
    local name="$1" start=${SECONDS}
    shift
    if ! selected "${name}"; then
        printf 'SKIP %-22s       %s\n' "${name}" "not in --only"
        return
    fi
    if "$@" >"${W}/logs/${name}.log" 2>&1; then
        printf 'PASS %-22s %4ds\n' "${name}" $((SECONDS - start))
    else
        printf 'FAIL %-22s %4ds  (log: %s)\n' "${name}" $((SECONDS - start)) "${W}/logs/${name}.log"
        tail -n 5 "${W}/logs/${name}.log" | sed 's/^/     | /'
        failed=1
    fi
}
skip() {
    if selected "$1"; then
        printf 'SKIP %-22s       %s\n' "$1" "$2"
    else
        printf 'SKIP %-22s       %s\n' "$1" "not in --only"
    fi
}

run tiny_model "${PYTHON}" -m r1_gui.tiny --arch qwen2_5_vl --out "${W}/models/tiny"
run synthetic_data bash -c "'${PYTHON}' dataset/make_synthetic.py --output_dir '${W}/raw' --episodes 20 --seed 0 &&
    '${PYTHON}' dataset/raw_load_data.py --input '${W}/raw/synthetic-l1.json' --image_dir '${W}/raw/images' \
        --output_dir '${W}/data' --test_size 0.2"
run sft "${PYTHON}" src/r1_gui/sft.py --config local_scripts/tiny_cpu_sft.yaml --model_name_or_path "${W}/models/tiny" \
    "${COMMON[@]}" "${TRAIN[@]}" --max_steps 2 --save_strategy steps --save_steps 2 --output_dir "${W}/sft"
# STOCK_PROCESSOR EXPECTED FOLDER...: AutoProcessor (torchvision's) loads each folder as the stock EXPECTED class,
# with a video processor (the issue-20 failure: the stock processor could not load the folders r1_gui writes)
STOCK_PROCESSOR="
import sys
from transformers import AutoProcessor
from r1_gui.processing import GUIVLProcessor
for folder in sys.argv[2:]:
    processor = AutoProcessor.from_pretrained(folder)
    assert not isinstance(processor, GUIVLProcessor) and processor.video_processor is not None, folder
    assert type(processor).__name__ == sys.argv[1], (folder, type(processor).__name__)
    print(folder, type(processor).__name__, type(processor.video_processor).__name__)
"
if [[ "${DEVICE}" == cuda ]]; then
    run stock_processor "${PYTHON}" -c "${STOCK_PROCESSOR}" Qwen2_5_VLProcessor "${W}/models/tiny" "${W}/sft" \
        "${W}/sft/checkpoint-2"
else
    skip stock_processor "no CPU torchvision: the stock processor cannot load here (tests/test_processing.py checks the files)"
fi
# --vision_attention auto batches the vision tower's windows on CUDA (tests compare it on CPU in float32 only):
# the same image features as transformers' per-window attention, here in the smoke run's dtype
run vision_attention "${PYTHON}" -c "
import sys, glob, torch
from PIL import Image
from transformers import AutoModelForImageTextToText
from r1_gui.processing import load_processor
from r1_gui.seam.models import image_encoder
from r1_gui.vision_attention import use_batched_window_attention
folder, device, image_dir = sys.argv[1:]
dtype = torch.bfloat16 if device == 'cuda' else torch.float32
model = AutoModelForImageTextToText.from_pretrained(folder, dtype=dtype, attn_implementation='sdpa').to(device)
images = [Image.open(path).convert('RGB') for path in sorted(glob.glob(image_dir + '/*.jpg'))[:8]]
inputs = load_processor(folder).image_processor(images=images, return_tensors='pt').to(device)
def features():
    with torch.no_grad():
        out = image_encoder(model).get_image_features(inputs['pixel_values'].to(dtype), inputs['image_grid_thw'])
    return torch.cat(out.pooler_output).float()
expected = features()
assert use_batched_window_attention(model)
got = features()
error = ((got - expected).abs().max() / expected.abs().max()).item()
print(f'{len(images)} screenshots, largest difference {error:.2e} of the largest feature ({dtype})')
assert error < (2e-2 if dtype == torch.bfloat16 else 1e-5), error
" "${W}/models/tiny" "${DEVICE}" "${W}/raw/images"
run grpo "${PYTHON}" src/r1_gui/grpo_gui.py "${GRPO[@]}" --model_name_or_path "${W}/sft" --output_dir "${W}/grpo"
run grpo_torchrun_zero1 "${TORCHRUN[@]}" src/r1_gui/grpo_gui.py "${GRPO[@]}" --model_name_or_path "${W}/models/tiny" \
    "${DDP[@]}" --deepspeed local_scripts/zero1_no_optimizer.json --output_dir "${W}/grpo_zero1"
run grpo_torchrun_zero2 "${TORCHRUN[@]}" src/r1_gui/grpo_gui.py "${GRPO[@]}" --model_name_or_path "${W}/models/tiny" \
    "${DDP[@]}" --deepspeed local_scripts/zero2.json --output_dir "${W}/grpo_zero2"
# target modules named explicitly; without them r1_gui.training.lora.LORA_TARGET_MODULES apply (tests/test_lora.py runs those)
run grpo_lora "${PYTHON}" src/r1_gui/grpo_gui.py "${GRPO[@]}" --model_name_or_path "${W}/models/tiny" \
    --use_peft true --lora_r 8 --lora_target_modules q_proj v_proj --output_dir "${W}/grpo_lora"
run eval_test_aitw "${PYTHON}" eval/test_aitw.py --model_name_or_path "${W}/grpo" --dataset "${W}/data" --split test \
    --max_samples 8 --max_new_tokens 32 "${EVAL[@]}" --output_dir "${W}/eval"
run demo_fast "${PYTHON}" -m r1_gui.demo --fast --output_dir "${W}/demo"
# Qwen3-VL: its own prompts and grid (--prompt_style/--coordinates auto), its deepstack features through the
# dedupe'd generation and loss pass, its tower's per-image attention batched on CUDA (--vision_attention auto)
run qwen3_tiny_model "${PYTHON}" -m r1_gui.tiny --arch qwen3_vl --out "${W}/models/tiny_qwen3"
run qwen3_grpo "${PYTHON}" src/r1_gui/grpo_gui.py "${GRPO[@]}" --model_name_or_path "${W}/models/tiny_qwen3" \
    --prompt_style auto --coordinates auto --output_dir "${W}/qwen3_grpo"
run qwen3_eval_test_aitw "${PYTHON}" eval/test_aitw.py --model_name_or_path "${W}/qwen3_grpo" --dataset "${W}/data" \
    --split test --max_samples 8 --max_new_tokens 32 "${EVAL[@]}" --output_dir "${W}/qwen3_eval"
if [[ "${DEVICE}" == cuda ]]; then
    run qwen3_stock_processor "${PYTHON}" -c "${STOCK_PROCESSOR}" Qwen3VLProcessor "${W}/models/tiny_qwen3" \
        "${W}/qwen3_grpo"
else
    skip qwen3_stock_processor "no CPU torchvision (tests/test_processing.py checks the Qwen3-VL files)"
fi
if [[ "${DEVICE}" == cuda ]]; then
    run grpo_step_3b "${PYTHON}" bench/gpu_step_profile.py --shape 3b --trainer ours --rounds 1 --warmup 0 --steps 1
else
    skip grpo_step_3b "a 3B model's GRPO step needs a GPU"
fi

if [[ ${failed} -ne 0 ]]; then
    echo "gpu_smoke: FAILED (logs in ${W}/logs)"
    exit 1
fi
echo "gpu_smoke: all ${ONLY:+selected }entry points passed on ${DEVICE}"
[[ -z "${SMOKE_DIR:-}" ]] && rm -rf "${W}"
exit 0
