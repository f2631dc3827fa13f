#!/usr/bin/env bash
# bench/gpu_kit.sh OUT_DIR [--cpu | --dry_run] [--only PART ...] [--limit PART=SECONDS ...]: the GPU measurements
# still open, in one command that fits a lease (bench/gpu_kit.py says what runs; bench/README.md "The GPU kit" how
# to run it on a lent machine and read its results).
#
# On a machine without trl (the lent GPU machines: torch and transformers only, no network) it first installs the
# wheels that local_scripts/gpu_wheels.sh put in .whl/ (carried with the call) into a folder of their own, put first
# on PYTHONPATH; the image's torch stays.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
if ! "${PYTHON}" -c 'import trl' >/dev/null 2>&1; then
    if ! compgen -G ".whl/*.whl" >/dev/null; then
        echo "error: trl is not importable by ${PYTHON} and .whl/ holds no wheels: run bash local_scripts/gpu_wheels.sh" \
            "on a machine with a package registry, and carry .whl" >&2
        exit 2
    fi
    SITE="${GPU_KIT_SITE:-/tmp/r1_gui_gpu_kit_site}"
    start=${SECONDS}
    "${PYTHON}" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "${SITE}" .whl/*.whl
    export PYTHONPATH="${SITE}${PYTHONPATH:+:${PYTHONPATH}}"
    echo "gpu_kit: installed $(ls .whl/*.whl | wc -l) wheels from .whl into ${SITE} in $((SECONDS - start)) s"
fi
export PYTHONPATH="${PWD}/src${PYTHONPATH:+:${PYTHONPATH}}"
exec "${PYTHON}" bench/gpu_kit.py "$@"
