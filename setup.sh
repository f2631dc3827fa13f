#!/usr/bin/env bash
# One idempotent setup command for r1_gui: creates .venv, installs torch first, then the package with its dev tools,
# the envs extra (openenv-core, BrowserGym, playwright: r1-gui-env-serve, --env_backend openenv, --env browsergym/...),
# and the GPU extra (vLLM, qwen-vl-utils, flash-attn) only where an NVIDIA GPU answers. Debian's chromium and
# chromium-driver (for r1_gui/Web-v0, MiniWoB++ in a real browser) are installed with apt when run as root.
#
#   bash setup.sh                  # CPU or GPU, detected with nvidia-smi
#   R1_GUI_GPU=1 bash setup.sh     # force the GPU extra (e.g. building an image on a machine without a GPU)
#   R1_GUI_GPU=0 bash setup.sh     # skip it on a GPU machine
#   PYTHON=python3.11 bash setup.sh
#
# torch==2.13.0 goes in first, pinned exactly: an unpinned torch (asked for directly or by another package) pulls the
# newest multi-GB CUDA build. On a CPU machine pip finds the CPU build; on a GPU machine the CUDA one.
# A second run with nothing changed does nothing (a stamp in .venv records what was installed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

PYTHON="${PYTHON:-python3}"
VENV="${VENV:-.venv}"
TORCH_VERSION="2.13.0"

say() { printf '[setup] %s\n' "$*"; }

if [[ "${R1_GUI_GPU:-auto}" == "auto" ]]; then
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then gpu=1; else gpu=0; fi
    how="detected with nvidia-smi"
else
    case "${R1_GUI_GPU}" in
        1 | true | yes) gpu=1 ;;
        0 | false | no) gpu=0 ;;
        *) say "R1_GUI_GPU must be 1, 0 or auto, got '${R1_GUI_GPU}'"; exit 2 ;;
    esac
    how="set by R1_GUI_GPU=${R1_GUI_GPU}"
fi
say "GPU extra: $([[ $gpu == 1 ]] && echo yes || echo no) (${how})"

# r1_gui/Web-v0 drives a headless Chromium through chromedriver; selenium is handed this chromedriver, so nothing is
# downloaded at run time. Debian's packages install both; without root or apt, say the one command and go on.
browser_command="apt-get update && apt-get install -y chromium chromium-driver"
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    say "browser for r1_gui/Web-v0: $(chromedriver --version 2>/dev/null | cut -d' ' -f1-2) found"
elif [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "installing Debian's chromium and chromium-driver for r1_gui/Web-v0 (root with apt: ${browser_command})"
    if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; then
        say "browser installed: $(chromedriver --version 2>/dev/null | cut -d' ' -f1-2)"
    else
        say "apt-get could not install chromium and chromium-driver: r1_gui/Web-v0 will not start (the rest works)"
    fi
else
    say "r1_gui/Web-v0 needs Chromium and chromedriver (not found). Install them with: sudo apt-get update && sudo apt-get install -y chromium chromium-driver"
fi

if [[ ! -x "${VENV}/bin/python" ]]; then
    version=$("${PYTHON}" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    "${PYTHON}" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
        say "r1_gui needs Python >= 3.10; ${PYTHON} is ${version}. Set PYTHON=python3.11 (for example)."
        exit 2
    }
    say "creating ${VENV} with ${PYTHON} (Python ${version})"
    "${PYTHON}" -m venv "${VENV}"
else
    say "reusing ${VENV}"
fi
pip=("${VENV}/bin/python" -m pip --disable-pip-version-check)

stamp_file="${VENV}/.r1_gui-setup"
stamp="$(cat pyproject.toml setup.sh | sha256sum | cut -c1-16) gpu=${gpu}"
if [[ -f "${stamp_file}" && "$(cat "${stamp_file}")" == "${stamp}" ]] && "${VENV}/bin/python" -c 'import r1_gui' 2>/dev/null; then
    say "already set up (pyproject.toml and setup.sh unchanged since the last run): nothing to do"
    exit 0
fi

start=${SECONDS}
say "installing torch==${TORCH_VERSION} first"
"${pip[@]}" install --quiet "torch==${TORCH_VERSION}"
say "installing r1_gui (editable) with the dev and envs extras: trl, transformers, deepspeed, pytest, openenv-core, browsergym, ..."
"${pip[@]}" install --quiet -e ".[dev,envs]"
if [[ $gpu == 1 ]]; then
    say "installing the gpu extra: vllm, qwen-vl-utils"
    "${pip[@]}" install --quiet -e ".[dev,envs]" vllm==0.31.0 qwen-vl-utils==0.0.14
    say "building flash-attn against the installed torch (needs the CUDA toolkit; several minutes)"
    "${pip[@]}" install --quiet --no-build-isolation flash-attn \
        || say "flash-attn did not build: training falls back to PyTorch SDPA attention (slower, same results)"
fi
echo "${stamp}" > "${stamp_file}"

"${VENV}/bin/python" - <<'PY'
import importlib.metadata as md
import torch
names = ["torch", "trl", "transformers", "accelerate", "datasets", "peft", "deepspeed", "wandb", "ray", "openenv-core",
         "browsergym-core", "playwright"]
print("[setup] installed: " + ", ".join(f"{n} {md.version(n)}" for n in names))
print(f"[setup] torch device: {'cuda x%d' % torch.cuda.device_count() if torch.cuda.is_available() else 'cpu'}")
PY
# trl's own flags, read from its parser once per installed trl and transformers (a few seconds): the training commands
# check a command line against them before importing trl (r1_gui.training.command_lines; a command that finds none
# writes it itself, once)
"${VENV}/bin/python" -m r1_gui.training.command_lines | sed 's/^/[setup] /'
say "done in $((SECONDS - start)) s; venv size $(du -sh "${VENV}" | cut -f1). Activate with: source ${VENV}/bin/activate"
