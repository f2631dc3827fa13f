"""Pictures of an episode: each screen with the action taken on it drawn (`r1_gui.visualize`: the click point, the
swipe arrow) and a caption band (the action as Aguvis code, so typed text and app names show), written as an
animated GIF or a PNG strip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from r1_gui.actions import Action, format_action
from r1_gui.synthetic.screens import font
from r1_gui.visualize import draw_actions

CAPTION_LINES = 3
FRAME_MS = 900  # GIF frame duration


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
    per_line = max(8, int(picture.width / (size * 0.55)))
    for row in range(CAPTION_LINES):
        draw.text(
            (4, picture.height + 4 + row * size),
            text[row * per_line : (row + 1) * per_line],
            fill=(20, 20, 20),
            font=face,
        )
    return band


def save_episode(frames: list[Image.Image], path: str | Path) -> Path:
    """An animated GIF (a .gif path) or a PNG strip of the frames side by side (any other path)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".gif":
        frames[0].save(path, save_all=True, append_images=frames[1:], duration=FRAME_MS, loop=0)
        return path
    strip = Image.new(
        "RGB", (sum(f.width for f in frames) + 4 * (len(frames) - 1), max(f.height for f in frames)), "white"
    )
    x = 0
    for picture in frames:
        strip.paste(picture, (x, 0))
        x += picture.width + 4
    strip.save(path)
    return path
