"""Pictures of an episode: each screen with the action taken on it drawn (`r1_gui.visualize`: the click point, the
swipe arrow) and a caption band (the action as Aguvis code, so typed text and app names show), written as an
animated GIF or a PNG strip."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from r1_gui.actions import Action, format_action
from r1_gui.synthetic.screens import font
from r1_gui.visualize import draw_actions

CAPTION_LINES = 3
FRAME_MS = 900  # GIF frame duration
CHAR_WIDTH = 0.55  # a character's width in units of the font size (the synthetic screens' font)


def caption(action: Action | None, error: str | None = None) -> str:
    if action is None:
        return f"(no action: {error})" if error else "(start)"
    return format_action(action, "aguvis").replace("pyautogui.", "").replace("mobile.", "")


def frame(screenshot: np.ndarray, action: Action | None, text: str, width: int | None = None) -> Image.Image:
    """One screen with `action` drawn on it and `text` in a band below, scaled to `width` pixels."""
    picture = draw_actions(Image.fromarray(screenshot), None, action)
    if width and picture.width != width:
        picture = picture.resize((width, round(picture.height * width / picture.width)))
    size = max(10, picture.width // 22)
    band = Image.new("RGB", (picture.width, picture.height + size * (CAPTION_LINES + 1)), "white")
    band.paste(picture, (0, 0))
    draw, face = ImageDraw.Draw(band), font(size)
    for row, line in enumerate(wrapped(text, max(8, int((picture.width - 8) / (size * CHAR_WIDTH))), CAPTION_LINES)):
        draw.text((4, picture.height + 4 + row * size), line, fill=(20, 20, 20), font=face)
    return band


def wrapped(text: str, width: int, lines: int) -> list[str]:
    """``text`` wrapped at word boundaries into at most ``lines`` lines of ``width`` characters; what does not fit
    ends the last line with "…" (a word longer than a line is split)."""
    rows = textwrap.wrap(" ".join(str(text).split()), width, break_long_words=True, break_on_hyphens=False)
    if len(rows) > lines:
        rest = " ".join(rows[lines - 1 :])
        last = textwrap.shorten(rest, width, placeholder=" …")
        if not last.strip(" …"):  # the next word alone is too long: keep its start
            last = rest[: width - 1] + "…"
        rows = rows[: lines - 1] + [last]
    return rows


def save_episode(frames: list[Image.Image], path: str | Path, title: str | None = None) -> Path:
    """An animated GIF (a .gif path) or a PNG strip of the frames side by side (any other path), with ``title``
    (e.g. the instruction) in a band above the strip."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".gif":
        frames[0].save(path, save_all=True, append_images=frames[1:], duration=FRAME_MS, loop=0)
        return path
    width = sum(f.width for f in frames) + 4 * (len(frames) - 1)
    size = max(10, frames[0].width // 22)
    title_lines = wrapped(title, max(8, int((width - 8) / (size * CHAR_WIDTH))), 2) if title else []
    top = (len(title_lines) * size + 8) if title_lines else 0
    strip = Image.new("RGB", (width, max(f.height for f in frames) + top), "white")
    draw, face = ImageDraw.Draw(strip), font(size)
    for row, line in enumerate(title_lines):
        draw.text((4, 4 + row * size), line, fill=(20, 20, 20), font=face)
    x = 0
    for picture in frames:
        strip.paste(picture, (x, top))
        x += picture.width + 4
    strip.save(path)
    return path
