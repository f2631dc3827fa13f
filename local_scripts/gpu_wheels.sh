#!/usr/bin/env bash
# Prepare a GPU lease: download the wheels a lent GPU machine lacks into .whl/ (ignored by git; about 23 MB), which
# the lease's one command carries (bench/README.md, "The GPU kit"). Run it on a machine with a package registry.
#
#   bash local_scripts/gpu_wheels.sh            # into .whl/
#   bash local_scripts/gpu_wheels.sh DIR        # elsewhere
#
# The lent machines (NVIDIA H100 / H200, no network) have Python 3.12, torch 2.11 (CUDA), transformers 5.17,
# accelerate, peft, numpy, pandas, pyarrow, pillow and torchvision, but not trl. These are the versions r1_gui is
# tested with (pyproject.toml's pins and what they need that the machine lacks): trl, transformers 5.23 and its
# tokenizers, datasets (+ dill, multiprocess), gymnasium (+ farama-notifications), deepspeed (+ pydantic,
# pydantic-core, annotated-types, typing-inspection, hjson). deepspeed publishes only a source archive: its wheel is
# built here (pure Python; its ops are compiled on first use, there). Every wheel is fetched without its own
# dependencies (--no-deps), for CPython 3.12 on x86-64 Linux, whatever this machine is.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

DEST="${1:-.whl}"
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
WHEELS=(
    trl==1.16.0 transformers==5.23.0 tokenizers==0.23.3
    datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19
    gymnasium==1.4.0 farama-notifications==0.0.6
    pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 hjson==3.1.0
)
DEEPSPEED=deepspeed==0.19.8
PLATFORMS=()
for tag in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
    PLATFORMS+=(--platform "${tag}")
done

mkdir -p "${DEST}"
"${PYTHON}" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${PLATFORMS[@]}" -d "${DEST}" "${WHEELS[@]}"
if ! compgen -G "${DEST}/deepspeed-${DEEPSPEED#*==}-*.whl" >/dev/null; then
    "${PYTHON}" -m pip wheel -q --no-deps -w "${DEST}" "${DEEPSPEED}"
fi
# one version of each package: pip refuses an install that holds two
stale=$(ls "${DEST}"/*.whl | xargs -n1 basename | cut -d- -f1 | sort | uniq -d)
if [[ -n "${stale}" ]]; then
    echo "error: ${DEST} holds two versions of: ${stale}; remove the older wheels" >&2
    exit 2
fi
count=$(ls "${DEST}"/*.whl | wc -l)
echo "gpu_wheels: ${count} wheels, $(du -sh "${DEST}" | cut -f1) in ${DEST}:"
ls "${DEST}"/*.whl | xargs -n1 basename | sed 's/^/  /'
