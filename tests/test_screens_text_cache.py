"""r1_gui.synthetic.screens draws text from cached glyph masks: the pixels must equal ImageDraw.text's."""

import pytest
from PIL import ImageFont

from r1_gui.synthetic import screens

CASES = [
    # (comment, text, font px, fill, align, max_width)
    ("an app label, centred and fitted to its cell", "Play Store", 18, (255, 255, 255), "center", 60),
    ("a setting name on a light theme", "Always-on display", 22, (28, 28, 32), "left", None),
    ("muted text with descenders", "Updated 34 minutes ago", 20, (105, 105, 115), "left", None),
    ("a right-aligned figure", "10:43", 17, (236, 236, 240), "right", None),
    ("a query with quotes", "how to tie a 'tie'", 21, (26, 115, 232), "left", 120),
]  # fmt: skip


@pytest.mark.parametrize(("comment", "text", "px", "fill", "align", "max_width"), CASES, ids=[c[0] for c in CASES])
def test_cached_text_matches_imagedraw(comment, text, px, fill, align, max_width):
    size = screens.Size(224, 448)
    cached, plain = screens.Canvas(size, (40, 70, 60)), screens.Canvas(size, (40, 70, 60))
    cached.text((112.4, 200.6), text, px, fill, align, max_width)
    face = plain.fitted_font(text, px, max_width) if max_width else screens.font(px)
    assert isinstance(face, ImageFont.FreeTypeFont)  # else the cache is not in use and the test says nothing
    left, top, right, bottom = face.getbbox(text)
    x = 112.4 - {"left": 0, "center": (right - left) / 2, "right": right - left}[align]
    plain.draw.text((round(x - left), round(200.6 - (top + bottom) / 2)), text, font=face, fill=fill)
    assert cached.image.tobytes() == plain.image.tobytes()
    assert cached.image.tobytes() != screens.Canvas(size, (40, 70, 60)).image.tobytes()  # the text was drawn
