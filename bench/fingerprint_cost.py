"""What keying an evaluation's resume on content costs: the model and dataset fingerprints of r1_gui.evaluation.

    python bench/fingerprint_cost.py [--megabytes 400] [--episodes 300]

Model: a folder with a random ``model.safetensors`` of --megabytes MB and a config.json, fingerprinted three times:
first (every byte hashed), again with the recorded hashes (size and mtime unchanged: nothing read), and after a
touch (new mtime: hashed again). Dataset: the rows of a builder output with embedded screenshots (--episodes
synthetic episodes, 224x448). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from r1_gui.builder import build
from r1_gui.evaluation.run.fingerprint import dataset_fingerprint, model_fingerprint
from r1_gui.evaluation.steps.samples import as_rows
from r1_gui.gui_datasets import load_gui_dataset
from r1_gui.synthetic import generate


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return result, round(time.perf_counter() - start, 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=400)
    parser.add_argument("--episodes", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "model"
        model.mkdir()
        (model / "config.json").write_text('{"model_type": "qwen2_vl"}')
        with open(model / "model.safetensors", "wb") as handle:
            for _ in range(args.megabytes):
                handle.write(os.urandom(1 << 20))
        first, first_s = timed(model_fingerprint, model)
        _, cached_s = timed(model_fingerprint, model, first["files"])
        os.utime(model / "model.safetensors")
        again, touched_s = timed(model_fingerprint, model, first["files"])
        assert again["sha256"] == first["sha256"]

        generate(Path(tmp) / "raw", args.episodes, seed=0, width=224, height=448, progress=False)
        raw = Path(tmp) / "raw"
        build([raw / "synthetic-l1.json"], raw / "images", Path(tmp) / "data", embed_images=True, progress=False)
        rows = as_rows(load_gui_dataset(Path(tmp) / "data", split="train"))
        _, dataset_s = timed(dataset_fingerprint, rows)
        image_bytes = sum(len(image["bytes"]) for image in rows["image"])
    print(json.dumps({
        "model_megabytes": args.megabytes, "model_first_s": first_s, "model_unchanged_s": cached_s,
        "model_touched_s": touched_s, "model_mb_per_s": round(args.megabytes / first_s),
        "dataset_rows": len(rows), "dataset_image_megabytes": round(image_bytes / 1e6, 1), "dataset_s": dataset_s,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
