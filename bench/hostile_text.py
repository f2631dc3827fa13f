"""Hostile completions through every reward and metric: time against size, and the peers' own regexes beside.

    python bench/hostile_text.py [--sizes 100000 1000000]

For each hostile shape (tests/helpers/hostile_text.py) at each size, the slowest scorer's CPU seconds (every
single-step reward, the format readers, the evaluation's per-sample scores) and the ratio between the two sizes:
linear time gives about the size ratio (10). Then the peers' backtracking patterns, run with Python's ``re`` as
the peers run them, against r1_gui's matchers on the same text, at small sizes (the peers' grow with the square or
the cube: each is timed at sizes doubling from where it takes a few milliseconds). Prints tables, then one JSON
line.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from helpers.hostile_text import HOSTILE_SHAPES, cpu_seconds, scorers  # noqa: E402

from r1_gui.actions.peer_patterns import first_call, guir1_point, r1v_format_fullmatch, tag_content  # noqa: E402

# (name, the peer's pattern as its code runs it, r1_gui's matcher, hostile text of n characters, sizes)
PEER_PATTERNS = [
    ("R1-V call", lambda t: re.search(r"(.+?)\((.+?)\)", t), first_call, lambda n: "(" * n, (256, 512, 1024)),
    (
        "R1-V format",
        lambda t: re.fullmatch(r"content:\s*(.*?)\s*Thought:\s*(.*?)\s*Action:\s*(.*?)\s*assistantos\s*(.*)", t, re.S),
        r1v_format_fullmatch,
        lambda n: "content:" + "Thought:Action:" * (n // 15),
        (1024, 2048, 4096),
    ),
    (
        "<answer> tag",
        lambda t: re.search(r"<answer>(.*?)</answer>", t, re.S),
        lambda t: tag_content(t, "<answer>", "</answer>", dotall=True),
        lambda n: "<answer>" * (n // 8),
        (16384, 32768, 65536),
    ),
    (
        "GUI-R1 point",
        lambda t: re.search(r"\{.*\[(\d+),\s*(\d+)]\s*.*\}", t),
        guir1_point,
        lambda n: "{" * n,
        (16384, 32768, 65536),
    ),
]


def scorer_table(sizes: list[int]) -> dict[str, dict]:
    every = scorers()
    rows = {}
    for shape, make in HOSTILE_SHAPES.items():
        times = []
        for size in sizes:
            text = make(size)
            slowest = max(((cpu_seconds(scorer, text), name) for name, scorer in every.items()))
            times.append(slowest)
        ratio = times[-1][0] / max(times[0][0], 1e-4)
        rows[shape] = {"seconds": [round(t, 4) for t, _ in times], "slowest": times[-1][1], "ratio": round(ratio, 1)}
        print(f"{shape:20s} " + "  ".join(f"{t:8.4f}" for t, _ in times) + f"  x{ratio:5.1f}  {times[-1][1]}")
    return rows


def peer_table() -> dict[str, dict]:
    rows = {}
    for name, peer, ours, make, sizes in PEER_PATTERNS:
        peer_times = [cpu_seconds(peer, make(size)) for size in sizes]
        our_times = [cpu_seconds(ours, make(size)) for size in sizes]
        rows[name] = {
            "sizes": sizes,
            "peer": [round(t, 4) for t in peer_times],
            "r1_gui": [round(t, 6) for t in our_times],
        }
        print(
            f"{name:14s} at {sizes}: peer "
            + " ".join(f"{t:8.4f}" for t in peer_times)
            + "   r1_gui "
            + " ".join(f"{t:9.6f}" for t in our_times)
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[100_000, 1_000_000])
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # the deprecated reward alias warns once
    print(f"slowest scorer, CPU seconds at {args.sizes} characters, and their ratio")
    scored = scorer_table(args.sizes)
    print("\nthe peers' patterns with re vs r1_gui's matchers, CPU seconds")
    peers = peer_table()
    worst = max(row["seconds"][-1] for row in scored.values())
    print(json.dumps({"sizes": args.sizes, "worst_seconds": worst, "scorers": scored, "peer_patterns": peers}))


if __name__ == "__main__":
    main()
