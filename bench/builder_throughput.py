"""Builder throughput: dataset/raw_load_data.py's build() on a synthetic 19k-record Aguvis file (AITW l1's size).

    python bench/builder_throughput.py [--records 19000] [--repeats 3]

Images are 8x8 placeholder files: the builder only checks that they exist (os.stat), as it does by default on real
data, so what is measured is reading the JSON, parsing and checking every record, sampling, splitting and writing
parquet. Prints a table, then one JSON line: {"records": ..., "records_per_s": <median>, ...}. Target: >= 5000/s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from r1_gui.builder import build
from r1_gui.synthetic import generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=19000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        raw = Path(tmp) / "raw"
        generate(raw, None, seed=0, records=args.records, images="stub", progress=False)
        seconds = []
        for repeat in range(args.repeats):
            start = time.perf_counter()
            report = build([raw / "synthetic-l1.json"], raw / "images", Path(tmp) / f"out{repeat}", progress=False)
            seconds.append(time.perf_counter() - start)
    kept = report["kept"]
    median = statistics.median(seconds)
    print(f"{'run':>5} {'seconds':>9} {'records/s':>10}")
    for repeat, value in enumerate(seconds):
        print(f"{repeat:>5} {value:>9.3f} {args.records / value:>10.0f}")
    print(f"kept {kept} of {args.records} records; train {report['train']}, test {report['test']}")
    result = {
        "benchmark": "builder_throughput",
        "records": args.records,
        "kept": kept,
        "seconds_median": round(median, 3),
        "records_per_s": round(args.records / median),
        "target_records_per_s": 5000,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
