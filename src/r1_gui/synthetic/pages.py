"""Synthetic web pages for the web demo's sight pretraining (`r1_gui.multi_turn.demo.run_sight`).

A page the size of a MiniWoB++ task area (160 x 210 pixels): the instruction in a pale yellow band at the top, one
button below it, of a random size, place and gray (from near black to MiniWoB's near-white), with a dark outline
and a short label. The demo's random model learns where the button is in y within a few hundred steps of such pages
and in x far later, after 800 to more than 1,000 steps by seed; with some of the buttons dark, a little sooner
(docs/records/web_demo.md). Half of the sight stage's pages (`sight_page`) hold a row of two or three buttons instead,
and the instruction names one by its number from the left ("Click button #2."): what to click is read from the
instruction, not only seen. Without them every warm start clicked one of click-tab's three tabs whatever tab its instruction named.
"""

from __future__ import annotations

import random

from PIL import Image, ImageDraw

Box = tuple[int, int, int, int]  # x1, y1, x2, y2 in pixels, inclusive

PAGE_SIZE = (160, 210)  # MiniWoB++'s task area: width, height
INSTRUCTION_HEIGHT = 50  # the band that holds the instruction
INSTRUCTION = "Click the button."  # click-test's
ROW_INSTRUCTION = "Click button #{}."  # the row page's: its button counted from the left, as click-tab's "Tab #2"


def button_page(rng: random.Random, grays: tuple[int, int] = (40, 245)) -> tuple[Image.Image, Box]:
    """A page and its button's box. `grays`: the range the button's fill level is drawn from (0 black, 255 white)."""
    width, height = PAGE_SIZE
    page, draw = _blank_page(INSTRUCTION)
    w, h = rng.randint(16, 110), rng.randint(12, 70)
    x1, y1 = rng.randint(2, width - w - 3), rng.randint(INSTRUCTION_HEIGHT + 2, height - h - 3)
    gray, outline = rng.randint(*grays), rng.randint(0, 120)
    box = (x1, y1, x1 + w, y1 + h)
    _draw_button(draw, box, gray, outline, "Click")
    return page, box


def _blank_page(instruction: str) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    """A white page with `instruction` written in the pale yellow band at its top, and a pen on it."""
    page = Image.new("RGB", PAGE_SIZE, "white")
    draw = ImageDraw.Draw(page)
    draw.rectangle([0, 0, PAGE_SIZE[0] - 1, INSTRUCTION_HEIGHT - 1], fill=(255, 255, 150))
    draw.text((5, 10), instruction, fill="black")
    return page, draw


def _draw_button(draw: ImageDraw.ImageDraw, box: Box, gray: int, outline: int, label: str) -> None:
    """A button filling `box` at level `gray` with an `outline` border, and as much of `label` as its width holds."""
    x1, y1, x2, _ = box
    draw.rectangle(box, fill=(gray,) * 3, outline=(outline,) * 3)
    draw.text((x1 + 3, y1 + 2), label[: max(1, (x2 - x1) // 8)], fill="white" if gray < 128 else "black")


def button_row_page(rng: random.Random, grays: tuple[int, int] = (40, 245)) -> tuple[Image.Image, Box, str]:
    """A page with a row of 2 or 3 buttons (one height and gray; each at a random width and place in its share of the
    page's width, labelled "#1", "#2", ... from the left), the box of the one the instruction names and the
    instruction (`ROW_INSTRUCTION`)."""
    width, height = PAGE_SIZE
    count = rng.choice([2, 3])
    named = rng.randint(1, count)
    instruction = ROW_INSTRUCTION.format(named)
    page, draw = _blank_page(instruction)
    h = rng.randint(12, 40)
    y1 = rng.randint(INSTRUCTION_HEIGHT + 2, height - h - 3)
    share = (width - 4) // count
    gray, outline = rng.randint(*grays), rng.randint(0, 120)
    boxes = []
    for i in range(count):
        w = rng.randint(16, share - 4)
        x1 = 2 + i * share + rng.randint(0, share - w - 2)
        boxes.append((x1, y1, x1 + w, y1 + h))
        _draw_button(draw, boxes[-1], gray, outline, f"#{i + 1}")
    return page, boxes[named - 1], instruction


def sight_page(rng: random.Random) -> tuple[Image.Image, Box, str]:
    """The sight stage's page, its target's box and its instruction: `button_page` or `button_row_page`, one in two."""
    if rng.random() < 0.5:
        return (*button_page(rng), INSTRUCTION)
    return button_row_page(rng)
