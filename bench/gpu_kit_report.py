"""bench/gpu_kit.py's results: each part's log read into figures, and the report written as JSON and Markdown.

The profile parts read bench/gpu_step_profile.py's own lines: one `gpu_step_profile step {...}` per finished step
(phases, generated tokens, peak memory, allocator retries, compiled graphs, and when each phase first began), one
`gpu_step_profile side {...}` per finished side, and `[side +T s] phase` as each phase begins, the last of which
says where a side was when its part was cut.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import subprocess
from importlib import metadata
from pathlib import Path

PHASES = ("generation", "prefill", "reward_scoring", "log_prob", "backward")
PROFILE_PARTS = ("ab_8x8", "static_compile", "vision_attention")
SMOKE_LINE = re.compile(r"^(PASS|FAIL|SKIP) (\S+)\s+(?:(\d+)s)?\s*(.*)$")
PHASE_LINE = re.compile(r"^\[(\w+) \+([\d.]+) s\] (.*)$")
VERSIONS = ("torch", "transformers", "trl", "accelerate", "peft", "datasets", "deepspeed", "tokenizers")


def machine(cuda: bool) -> dict:
    """Where and with what the kit ran: date, device, package versions, commit (read without importing torch, so
    the kit's own process holds no GPU memory)."""
    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "versions": {},
    }
    for name in VERSIONS:
        try:
            info["versions"][name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            info["versions"][name] = None
    info["commit"] = _output(["git", "rev-parse", "--short", "HEAD"])
    query = "name,memory.total,driver_version"
    gpu = _output(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"]) if cuda else None
    info["device"] = gpu.splitlines()[0] if gpu else f"CPU ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})"
    return info


def gpu_present() -> bool:
    """Whether nvidia-smi lists a GPU (without importing torch)."""
    return _output(["nvidia-smi", "-L"]) is not None


def _output(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=Path(__file__).parent)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


# ---- reading the parts' logs ----------------------------------------------------------------------------------
def parse_part(name: str, text: str, files: dict) -> dict:
    if name == "smoke":
        return parse_smoke(text)
    if name in PROFILE_PARTS:
        return parse_profile(text)
    return parse_memory(files.get("out"))


def parse_smoke(text: str) -> dict:
    """The PASS/FAIL lines of the entry points that ran (and SKIP lines with a reason other than --only)."""
    entries = []
    for line in text.splitlines():
        match = SMOKE_LINE.match(line)
        if not match or match.group(4) == "not in --only":
            continue
        status, entry, seconds, note = match.groups()
        entries.append({"name": entry, "status": status, "seconds": int(seconds) if seconds else None, "note": note})
    count = {status: sum(entry["status"] == status for entry in entries) for status in ("PASS", "FAIL", "SKIP")}
    return {"entry_points": entries, "passed": count["PASS"], "failed": count["FAIL"], "skipped": count["SKIP"]}


def parse_profile(text: str) -> dict:
    """Per side: time to the first step, the first and the measured step, phases, tokens/s, memory; where a side
    was last (its last phase line); ours/plain ratios of the steps both sides reached."""
    steps: dict[str, list[dict]] = {}
    last_phase: dict[str, str] = {}
    device = None
    for line in text.splitlines():
        if line.startswith("gpu_step_profile step "):
            record = json.loads(line.removeprefix("gpu_step_profile step "))
            steps.setdefault(record["side"], []).append(record)
        elif line.startswith('{"benchmark": "gpu_step_profile"'):
            device = json.loads(line).get("device")
        elif match := PHASE_LINE.match(line):
            last_phase[match.group(1)] = f"+{match.group(2)} s {match.group(3)}"
    sides = {side: summarize_side(records, last_phase.get(side)) for side, records in steps.items()}
    for side, phase in last_phase.items():  # a side cut before its first step ended
        sides.setdefault(side, {"steps_done": 0, "last_phase": phase})
    result = {"device": device, "sides": sides}
    ours, plain = sides.get("ours", {}), sides.get("plain", {})
    for basis in ("measured", "first"):
        if ours.get(f"{basis}_step_s") and plain.get(f"{basis}_step_s"):
            result["ratio_ours_plain"] = {
                "basis": f"{basis} step",
                "step": round(ours[f"{basis}_step_s"] / plain[f"{basis}_step_s"], 3),
                **{
                    phase: round(ours[f"{basis}_phases"][phase] / plain[f"{basis}_phases"][phase], 3)
                    for phase in PHASES
                    if plain[f"{basis}_phases"].get(phase)
                },
            }
            break
    return result


def summarize_side(records: list[dict], last_phase: str | None) -> dict:
    first = records[0]
    measured = [record for record in records if not record.get("warmup")]
    side = {
        "steps_done": len(records),
        "time_to_first_step_s": first["marks"].get("step 1: begins"),
        "model_built_s": first["marks"].get("model built; building the trainer"),
        "first_step_s": first["total"],
        "first_phases": _phases(first),
        "measured_step_s": measured[-1]["total"] if measured else None,
        "measured_phases": _phases(measured[-1]) if measured else None,
        "last_phase": last_phase,
    }
    shown = measured[-1] if measured else first
    side["tokens_per_s"] = round(shown["tokens"] / shown["generation"], 1) if shown.get("generation") else None
    side["peak_gib"] = max((r["peak_gib"] for r in records if r.get("peak_gib") is not None), default=None)
    side["alloc_retries"] = records[-1].get("alloc_retries")
    side["compiled_graphs"] = records[-1].get("compiled_graphs")
    return side


def _phases(record: dict) -> dict:
    phases = {phase: record.get(phase, 0.0) for phase in PHASES}
    named = sum(value for phase, value in phases.items() if phase != "prefill")  # prefill is part of generation
    return {**phases, "other": round(max(0.0, record["total"] - named), 3)}


def parse_memory(path: str | None) -> dict:
    """memory_plan.py --measure's JSON: the point's peak, model states and activations (none on CPU)."""
    if not path or not Path(path).is_file():
        return {}
    measured = json.loads(Path(path).read_text())
    run = measured.get("runs", {}).get("qwen3vl4b_full", {})
    keys = ("peak_gib", "states_gib", "activation_gib", "per_device_train_batch_size", "num_generations")
    return {"device": measured.get("device"), **{key: run.get(key) for key in keys}}


# ---- writing the report ---------------------------------------------------------------------------------------
def write_report(out: Path, report: dict) -> None:
    """gpu_kit.json and gpu_kit.md, each replaced whole (a reader never sees half a file)."""
    for name, text in (("gpu_kit.json", json.dumps(report, indent=2) + "\n"), ("gpu_kit.md", markdown(report))):
        partial = out / f".{name}.partial"
        partial.write_text(text)
        partial.replace(out / name)


def markdown(report: dict) -> str:
    info = report["machine"]
    versions = ", ".join(f"{name} {version}" for name, version in info["versions"].items() if version)
    lines = [
        f"# GPU kit ({report['mode']}): {info['device']}",
        "",
        f"{info['date']}, commit {info['commit'] or 'unknown'}, Python {info['python']}, {versions}.",
        f"Command: `{report['command']}`; all parts within {report['total_limit_s']:.0f} s"
        + (f", {report['elapsed_s']:.0f} s used." if "elapsed_s" in report else "."),
        "",
        "| part | status | seconds (limit) | figures |",
        "|---|---|---|---|",
    ]
    for name, part in report["parts"].items():
        seconds = f"{part['seconds']:.0f}" if "seconds" in part else "-"
        lines.append(f"| {name}: {part['title']} | {part['status']} | {seconds} ({part['limit_s']:.0f}) | "
                     f"{headline(name, part.get('result') or {})} |")  # fmt: skip
    for name, part in report["parts"].items():
        lines += [
            "",
            f"## {name}",
            "",
            f"`{part['command']}`" + (f", beside {part['beside']}" if "beside" in part else ""),
        ]
        if part.get("note"):
            lines += ["", part["note"]]
        result = part.get("result") or {}
        if name == "smoke" and result.get("entry_points"):
            lines += ["", "| entry point | result | s |", "|---|---|---|"]
            lines += [f"| {e['name']} | {e['status']} {e['note']} | {e['seconds'] if e['seconds'] is not None else '-'} |"
                      for e in result["entry_points"]]  # fmt: skip
        elif name in PROFILE_PARTS and result.get("sides"):
            lines += ["", *profile_table(result)]
        elif result:
            lines += ["", "| figure | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in result.items())]
    return "\n".join(lines) + "\n"


def headline(name: str, result: dict) -> str:
    if not result:
        return ""
    if name == "smoke":
        return f"{result['passed']} passed, {result['failed']} failed"
    if name in PROFILE_PARTS:
        parts = []
        for side, figures in result.get("sides", {}).items():
            step = figures.get("measured_step_s") or figures.get("first_step_s")
            label = "s/step" if figures.get("measured_step_s") else "s first step"
            if step is None:
                parts.append(f"{side}: no step ({figures.get('last_phase')})")
                continue
            memory = f", {figures['peak_gib']:.1f} GiB" if figures.get("peak_gib") is not None else ""
            parts.append(f"{side} {step:.2f} {label}, {figures['tokens_per_s']:.0f} tokens/s{memory}")
        ratio = result.get("ratio_ours_plain")
        return "; ".join(parts) + (f"; ours/plain {ratio['step']} ({ratio['basis']})" if ratio else "")
    if result.get("peak_gib") is not None:
        return f"peak {result['peak_gib']:.1f} GiB (states {result['states_gib']:.1f}, activations {result['activation_gib']:.1f})"
    return f"the run worked on {result.get('device')} (a CPU gives no memory figure)"


def profile_table(result: dict) -> list[str]:
    sides = result["sides"]
    names = list(sides)

    def row(label, value):
        return f"| {label} | " + " | ".join(value(sides[side]) for side in names) + " |"

    def number(key, digits=2):
        return lambda side: "-" if side.get(key) is None else f"{side[key]:.{digits}f}"

    def phase(basis, key):
        return lambda side: "-" if not side.get(f"{basis}_phases") else f"{side[f'{basis}_phases'][key]:.3f}"

    lines = ["| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    lines += [row("steps done", lambda side: str(side.get("steps_done", 0))),
              row("model built at s", number("model_built_s", 1)),
              row("first step began at s", number("time_to_first_step_s", 1)),
              row("first step s", number("first_step_s")),
              row("measured step s", number("measured_step_s"))]  # fmt: skip
    basis = "measured" if all(side.get("measured_phases") for side in sides.values()) else "first"
    lines += [row(f"{basis} step: {key} s", phase(basis, key)) for key in (*PHASES, "other")]
    lines += [row("generated tokens/s", number("tokens_per_s", 0)),
              row("peak memory GiB", number("peak_gib")),
              row("allocator retries", lambda side: str(side.get("alloc_retries"))),
              row("compiled graphs", lambda side: str(side.get("compiled_graphs"))),
              row("last phase", lambda side: side.get("last_phase") or "-")]  # fmt: skip
    ratio = result.get("ratio_ours_plain")
    if ratio:
        lines += [
            "",
            "ours/plain (" + ratio["basis"] + "): " + ", ".join(f"{k} {v}" for k, v in ratio.items() if k != "basis"),
        ]
    return lines
