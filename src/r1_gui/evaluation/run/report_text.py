"""The text both evaluations' reports share: report.md's protocol section, settings list and metric table, table
cells and numbers with their 95% intervals, and the card in one console line (step evaluation's `steps.report` and
episode evaluation's `episodes.run` write their own sections around these)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from r1_gui.evaluation.intervals import CI_SUFFIX, interval_text

OUTPUT_CHARS = 200  # a model output or a setting's value, cut to this many characters in a report


def one_line(text: Any, limit: int | None = None) -> str:
    """One printable line (newlines as ⏎, other control characters as spaces), cut to ``limit`` characters."""
    text = "" if text is None else str(text)
    if limit is not None and len(text) > limit:
        text = text[:limit] + "…"
    return "".join("⏎" if char == "\n" else char if char.isprintable() else " " for char in text)


def cell(text: Any, limit: int | None = None) -> str:
    """Text safe inside a markdown table cell: one line, markdown and HTML characters escaped (a model output
    may hold "<tool_call>" or pipes)."""
    text = one_line(text, limit).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def number_text(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def with_interval(numbers: dict, key: str) -> str:
    """``numbers[key]`` and, when ``numbers`` has one, its 95% interval: "0.5000 [0.2366, 0.7634]"."""
    value = "-" if numbers.get(key) is None else number_text(numbers[key])
    return value + (f" {interval_text(numbers[key + CI_SUFFIX])}" if key + CI_SUFFIX in numbers else "")


def settings_lines(settings: dict) -> str:
    """The run's settings as a markdown list, each value one escaped line (the top of every report.md)."""
    return "\n".join(f"- {key}: {cell(value, OUTPUT_CHARS)}" for key, value in settings.items())


def _card_value(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{key}: {_card_value(item)}" for key, item in value.items())
    if isinstance(value, list):
        return ", ".join(_card_value(item) for item in value) or "none"
    return str(value)


def protocol_section(card: dict) -> str:
    """The protocol card (``evaluation.protocol``) as a markdown list: the top of every report.md."""
    lines = ["## Protocol", "", "What these numbers were measured under (metrics.json, key `protocol`).", ""]
    for key, value in card.items():
        if key == "warnings":
            continue
        lines.append(f"- {key}: {cell(_card_value(value))}")
    lines += [f"- **warning**: {cell(warning)}" for warning in card.get("warnings", [])]
    return "\n".join(lines)


def card_line(card: dict) -> str:
    """The card in one line, for the console: what a reader checks before comparing two numbers."""
    image, split, decode = card["image"], card["split"], card.get("decoding")
    prompt = card["prompt"]
    parts = [
        f"protocol: {card['evaluation']}" + (f" (preset {card['preset']})" if card.get("preset") else ""),
        f"prompt {prompt['style']}" + (f" {prompt['sha256'][:12]}" if prompt.get("sha256") else ""),
        f"coordinates {card['coordinates']}",
        f"pixels {image['min_pixels']}..{image['max_pixels']} (min from {image['min_pixels_from']}, max from "
        f"{image['max_pixels_from']})",
        f"{split.get('rows', split.get('episodes'))} {'rows' if 'rows' in split else 'episodes'} "
        f"{str(split.get('sha256'))[:12]}",
    ]
    if decode:
        parts.append(
            ("greedy" if decode["greedy"] else f"temperature {decode['temperature']}")
            + f", {decode['max_new_tokens']} new tokens"
        )
    return "; ".join(parts)


def metrics_table(metrics: dict, keys: Sequence[str]) -> str:
    """| metric | value | 95% interval | for the overall numbers ``keys``."""
    lines = ["| metric | value | 95% interval |", "|---|---|---|"]
    for key in keys:
        interval = interval_text(metrics[key + CI_SUFFIX]) if key + CI_SUFFIX in metrics else ""
        value = "-" if metrics[key] is None else number_text(metrics[key])
        lines.append(f"| {key} | {value} | {interval} |")
    return "\n".join(lines)
