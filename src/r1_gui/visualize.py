"""Pictures of predictions: the screenshot with the ground truth (green) and the prediction (red) drawn on it.

Used by the trainer's completions table and by the evaluation report's gallery.

    picture = draw_actions(screenshot, ground_truth, prediction, bbox=[0.1, 0.2, 0.3, 0.25])
    card = with_caption(picture, ["Open the Clock app", "pyautogui.click(x=0.2, y=0.22)"])
"""

from __future__ import annotations

import textwrap

from PIL import Image, ImageDraw, ImageFont

from r1_gui.actions import Action

GROUND_TRUTH = (0, 170, 70)
PREDICTION = (220, 30, 30)


def _font(size: int):
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def _marker(draw: ImageDraw.ImageDraw, x: float, y: float, radius: float, color, cross: bool) -> None:
    if cross:
        draw.line([(x - radius, y - radius), (x + radius, y + radius)], fill=color, width=max(2, int(radius / 3)))
        draw.line([(x - radius, y + radius), (x + radius, y - radius)], fill=color, width=max(2, int(radius / 3)))
    else:
        draw.ellipse([x - radius, y - radius, x + radius, y + radius], outline=color, width=max(2, int(radius / 3)))


def _draw_action(draw: ImageDraw.ImageDraw, action: Action, size: tuple[int, int], color, cross: bool) -> None:
    width, height = size
    radius = max(6, min(width, height) // 40)
    if action.x is None or action.y is None:
        return
    x, y = action.x * width, action.y * height
    _marker(draw, x, y, radius, color, cross)
    if action.x2 is not None and action.y2 is not None:  # swipe / drag: an arrow to the end point
        x2, y2 = action.x2 * width, action.y2 * height
        draw.line([(x, y), (x2, y2)], fill=color, width=max(2, radius // 3))
        _marker(draw, x2, y2, radius // 2, color, cross=False)


def draw_actions(
    screenshot: Image.Image,
    ground_truth: Action | None,
    prediction: Action | None,
    bbox: list[float] | None = None,
) -> Image.Image:
    """A copy of the screenshot with the target box, the ground-truth point (green circle) and the predicted point
    (red cross) drawn; actions without a point (type, back, ...) draw nothing."""
    picture = screenshot.convert("RGB").copy()
    draw = ImageDraw.Draw(picture)
    width, height = picture.size
    if bbox is not None and len(bbox) == 4:
        x1, y1, x2, y2 = bbox
        draw.rectangle([x1 * width, y1 * height, x2 * width, y2 * height], outline=GROUND_TRUTH, width=3)
    if ground_truth is not None:
        _draw_action(draw, ground_truth, picture.size, GROUND_TRUTH, cross=False)
    if prediction is not None:
        _draw_action(draw, prediction, picture.size, PREDICTION, cross=True)
    return picture


def with_caption(picture: Image.Image, lines: list[str], panel_width: int = 420, max_height: int = 900) -> Image.Image:
    """The picture scaled to at most max_height, with a white text panel on its right holding `lines`."""
    if picture.height > max_height:
        scale = max_height / picture.height
        picture = picture.resize((max(1, int(picture.width * scale)), max_height))
    font = _font(14)
    wrapped = []
    for line in lines:
        wrapped.extend(textwrap.wrap(str(line), width=panel_width // 8) or [""])
        wrapped.append("")
    card = Image.new("RGB", (picture.width + panel_width, max(picture.height, 18 * len(wrapped) + 20)), "white")
    card.paste(picture, (0, 0))
    draw = ImageDraw.Draw(card)
    for row, text in enumerate(wrapped):
        draw.text((picture.width + 10, 10 + 18 * row), text, fill=(20, 20, 20), font=font)
    return card
