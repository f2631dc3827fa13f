"""Phone screens for the synthetic AITW twin (drawn by dataset/make_synthetic.py).

Every screen kind is a small dataclass. `elements(size)` returns the pixel boxes an agent can act on, computed
without drawing; `render(size)` paints the screenshot with PIL; `describe(size)` says in a sentence or two what is on it
(the l3 "Observation:"). Episodes are scripted from the boxes alone, so a JSON-only run gets exactly the records
an image run writes. All sizes scale with the screen: `unit` is the width over 540 pixels.

Fonts come from Pillow itself (`ImageFont.load_default(size=...)`, Pillow >= 10.1 with FreeType), so rendering
never depends on system fonts; older or FreeType-less Pillows fall back to the fixed-size bitmap font.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from PIL import Image, ImageDraw, ImageFont

Box = tuple[int, int, int, int]  # x1, y1, x2, y2 in pixels
Color = tuple[int, int, int]

APP_NAMES = (
    "Clock", "Calendar", "Camera", "Gmail", "Maps", "Chrome", "Photos", "Settings", "Messages", "Phone",
    "Contacts", "YouTube", "Spotify", "Calculator", "Weather", "Notes", "Files", "Drive", "Play Store", "Music",
    "News", "Translate", "Wallet", "Fitness", "Podcasts", "Recorder", "Keep", "Netflix", "Amazon", "Reddit",
    "Duolingo", "Uber",
)  # fmt: skip
SETTING_NAMES = (
    "Wi-Fi", "Bluetooth", "Airplane mode", "Mobile data", "Location", "Dark theme", "Do Not Disturb",
    "Auto-rotate", "Battery saver", "NFC", "Hotspot", "Night Light", "Data saver", "Live Caption",
    "Adaptive brightness", "Auto-sync", "Vibrate on tap", "Wi-Fi calling", "Nearby Share", "Always-on display",
    "Extra dim", "Screen lock sound", "Roaming", "Flashlight",
)  # fmt: skip
ITEM_NAMES = (
    "Morning run", "Groceries", "Team meeting", "Vacation photos", "Weekly report", "Dentist appointment",
    "Birthday party", "Book club", "Flight to Denver", "Recipe ideas", "Gym schedule", "Project plan",
    "Road trip", "Piano lesson", "Budget 2024", "Garden notes", "Movie night", "Study group", "Car service",
    "Packing list",
)  # fmt: skip
ICON_COLORS: tuple[Color, ...] = (
    (234, 67, 53), (52, 168, 83), (66, 133, 244), (251, 140, 0), (142, 36, 170), (0, 150, 136),
    (216, 27, 96), (94, 53, 177), (3, 155, 229), (124, 179, 66), (109, 76, 65), (84, 110, 122),
)  # fmt: skip
ACCENTS: tuple[Color, ...] = ((26, 115, 232), (0, 137, 123), (103, 58, 183), (211, 47, 47), (239, 108, 0))
WALLPAPERS: tuple[Color, ...] = ((32, 48, 82), (40, 70, 60), (70, 40, 80), (25, 25, 35), (80, 55, 40), (30, 80, 110))
KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
WHITE: Color = (255, 255, 255)


@dataclass(frozen=True)
class Theme:
    """Colours of one episode: light or dark surfaces, an accent, a home-screen wallpaper."""

    background: Color
    surface: Color
    text: Color
    muted: Color
    divider: Color
    accent: Color
    wallpaper: Color


def random_theme(rng) -> Theme:
    accent, wallpaper = rng.choice(ACCENTS), rng.choice(WALLPAPERS)
    if rng.random() < 0.3:  # dark mode
        return Theme((18, 18, 22), (36, 36, 42), (236, 236, 240), (160, 160, 170), (64, 64, 72), accent, wallpaper)
    return Theme((246, 246, 250), WHITE, (28, 28, 32), (105, 105, 115), (222, 222, 230), accent, wallpaper)


@dataclass(frozen=True)
class Size:
    """Screen size in pixels, with the fixed chrome every screen shares (status bar, navigation bar)."""

    width: int
    height: int

    @property
    def unit(self) -> float:
        return self.width / 540

    def y(self, fraction: float) -> int:
        return round(fraction * self.height)

    def x(self, fraction: float) -> int:
        return round(fraction * self.width)

    @property
    def status_bottom(self) -> int:
        return self.y(0.03)

    @property
    def nav_top(self) -> int:
        return self.height - self.y(0.055)

    @property
    def header_bottom(self) -> int:
        return self.status_bottom + self.y(0.07)

    def under_status(self, left: float, top: float, right: float, bottom: float) -> Box:
        """A box from fractions of the width across and of the height down from the status bar's bottom."""
        return self.x(left), self.status_bottom + self.y(top), self.x(right), self.status_bottom + self.y(bottom)


@lru_cache(maxsize=64)
def font(px: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=max(8, px))
    except (TypeError, ImportError, OSError):  # Pillow < 10.1 or no FreeType: fixed bitmap font
        return ImageFont.load_default()


# Labels recur on every screen (app names, settings, keys), so their measures and glyph masks are computed once
# per font and string. The masks are those ImageDraw.text draws (anchor "la", whole-pixel origin), so the pixels are
# the same as drawing each time; any font or Pillow without this path falls back to ImageDraw.text.
@lru_cache(maxsize=8192)
def _text_length(face, text: str) -> float:
    return face.getlength(text)


@lru_cache(maxsize=8192)
def _text_box(face, text: str) -> tuple[int, int, int, int]:
    return face.getbbox(text)


@lru_cache(maxsize=8192)
def _glyph_mask(face, text: str):
    return face.getmask2(text, "L", anchor="la", start=(0.0, 0.0), stroke_filled=True)


class Canvas:
    """An image plus drawing helpers that place text by its real bounding box (works for any PIL font)."""

    def __init__(self, size: Size, background: Color):
        self.size = size
        self.image = Image.new("RGB", (size.width, size.height), background)
        self.draw = ImageDraw.Draw(self.image)

    def px(self, base: float) -> int:
        return max(8, round(base * self.size.unit))

    def fitted_font(self, text: str, px: int, max_width: float):
        while px > 8 and _text_length(font(px), text) > max_width:
            px -= 1
        return font(px)

    def text(self, xy, text: str, px: int, fill: Color, align: str = "left", max_width: float | None = None):
        """Draw one line; xy is its left (or centre, or right) edge and vertical middle."""
        face = self.fitted_font(text, px, max_width) if max_width else font(px)
        left, top, right, bottom = _text_box(face, text)
        x, y = xy
        x -= {"left": 0, "center": (right - left) / 2, "right": right - left}[align]
        origin = (round(x - left), round(y - (top + bottom) / 2))
        if not self._draw_cached_text(origin, text, face, fill):
            self.draw.text(origin, text, font=face, fill=fill)

    def _draw_cached_text(self, origin: tuple[int, int], text: str, face, fill: Color) -> bool:
        """Draw `text` from its cached glyph mask, as ImageDraw.text would; False when this Pillow or font cannot."""
        if not isinstance(face, ImageFont.FreeTypeFont) or self.draw.fontmode != "L":
            return False
        try:
            mask, offset = _glyph_mask(face, text)
            ink = self.draw._getink(fill)[0]
            self.draw.draw.draw_bitmap((origin[0] + offset[0], origin[1] + offset[1]), mask, ink)
        except (AttributeError, TypeError):  # another Pillow's internals
            return False
        return True

    def box(self, box: Box, fill: Color | None, radius: float = 0, outline: Color | None = None, width: int = 1):
        self.draw.rounded_rectangle(box, radius=radius, fill=fill, outline=outline, width=width)

    def status_bar(self, clock: str, color: Color):
        size, mid = self.size, self.size.status_bottom / 2
        self.text((size.x(0.05), mid), clock, self.px(17), color)
        right, unit = size.x(0.95), size.unit
        self.box((right - round(34 * unit), mid - 7 * unit, right, mid + 7 * unit), None, 3 * unit, color, 2)
        self.box((right - round(30 * unit), mid - 4 * unit, right - round(10 * unit), mid + 4 * unit), color)
        for bar in range(4):  # signal strength
            x = right - round((70 - bar * 7) * unit)
            self.draw.rectangle((x, mid + (4 - 3 * bar) * unit, x + 4 * unit, mid + 7 * unit), fill=color)

    def nav_bar(self, background: Color, color: Color):
        size = self.size
        self.draw.rectangle((0, size.nav_top, size.width, size.height), fill=background)
        mid, r = (size.nav_top + size.height) / 2, 11 * size.unit
        back_x, home_x, recent_x = size.x(0.25), size.x(0.5), size.x(0.75)
        self.draw.polygon([(back_x + r, mid - r), (back_x + r, mid + r), (back_x - r, mid)], outline=color, width=2)
        self.draw.ellipse((home_x - r, mid - r, home_x + r, mid + r), outline=color, width=2)
        self.draw.rectangle((recent_x - r, mid - r, recent_x + r, mid + r), outline=color, width=2)

    def toggle(self, box: Box, on: bool, accent: Color, off_color: Color):
        x1, y1, x2, y2 = box
        self.box(box, accent if on else off_color, (y2 - y1) / 2)
        knob = (x2 - (y2 - y1) if on else x1, y1, x2 if on else x1 + (y2 - y1), y2)
        self.draw.ellipse(_inset(knob, 3 * self.size.unit), fill=WHITE)

    def header(self, title: str, theme: Theme, back_button: Box | None = None):
        size = self.size
        self.draw.rectangle((0, 0, size.width, size.header_bottom), fill=theme.accent)
        mid = (size.status_bottom + size.header_bottom) / 2
        left = size.x(0.05)
        if back_button:  # a left-pointing chevron
            cx, cy, r = (back_button[0] + back_button[2]) / 2, mid, 10 * size.unit
            self.draw.line([(cx + r / 2, cy - r), (cx - r / 2, cy), (cx + r / 2, cy + r)], fill=WHITE, width=3)
            left = back_button[2] + size.x(0.02)
        self.text((left, mid), title, self.px(24), WHITE, max_width=size.width * 0.85 - left)


def _inset(box, margin: float) -> Box:
    return (round(box[0] + margin), round(box[1] + margin), round(box[2] - margin), round(box[3] - margin))


def center(box: Box) -> tuple[float, float]:
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


@dataclass
class Screen:
    """What every screen shares: the episode's colours and the status-bar clock."""

    theme: Theme
    clock: str

    def elements(self, size: Size) -> dict[str, Box]:
        return {}

    def describe(self, size: Size) -> str:
        raise NotImplementedError

    def paint(self, canvas: Canvas) -> None:
        raise NotImplementedError

    def render(self, size: Size) -> Image.Image:
        canvas = Canvas(size, self.theme.background)
        self.paint(canvas)
        canvas.status_bar(self.clock, WHITE)
        canvas.nav_bar(self.theme.surface, self.theme.muted)
        return canvas.image


@dataclass
class HomeScreen(Screen):
    """Launcher: date, a search bar, an app grid (rows x cols, row-major slots) and optionally an icon's menu."""

    rows: int
    cols: int
    slots: list[str | None]
    icon_colors: dict[str, Color]
    date: str
    menu_app: str | None = None
    menu_options: tuple[str, ...] = ()

    def _cells(self, size: Size) -> list[Box]:
        top, bottom = size.status_bottom + size.y(0.17), size.nav_top - size.y(0.03)
        left, cell_w, cell_h = size.x(0.04), size.width * 0.92 / self.cols, (bottom - top) / self.rows
        return [
            (
                round(left + c * cell_w),
                round(top + r * cell_h),
                round(left + (c + 1) * cell_w),
                round(top + (r + 1) * cell_h),
            )
            for r in range(self.rows)
            for c in range(self.cols)
        ]

    def _icon(self, cell: Box, size: Size) -> Box:
        side = min(0.6 * (cell[2] - cell[0]), 0.55 * (cell[3] - cell[1]))
        cx, top = (cell[0] + cell[2]) / 2, cell[1] + 0.12 * (cell[3] - cell[1])
        return (round(cx - side / 2), round(top), round(cx + side / 2), round(top + side))

    def _menu(self, icon: Box, size: Size) -> list[Box]:
        width, row_h, gap = size.x(0.46), size.y(0.045), size.y(0.035)
        height = row_h * len(self.menu_options)
        x = min(max(icon[0], size.x(0.04)), size.width - size.x(0.04) - width)
        y = icon[3] + gap if icon[3] + gap + height < size.nav_top - size.y(0.01) else icon[1] - size.y(0.01) - height
        return [(x, y + i * row_h, x + width, y + (i + 1) * row_h) for i in range(len(self.menu_options))]

    def elements(self, size: Size) -> dict[str, Box]:
        found = {"search_bar": size.under_status(0.06, 0.085, 0.94, 0.135)}
        for cell, app in zip(self._cells(size), self.slots, strict=True):
            if app:
                found[f"icon:{app}"] = self._icon(cell, size)
        if self.menu_app:
            for option, box in zip(self.menu_options, self._menu(found[f"icon:{self.menu_app}"], size), strict=True):
                found[f"menu:{option}"] = box
        return found

    def describe(self, size: Size) -> str:
        apps = [app for app in self.slots if app]
        text = f"The home screen has a search bar and a {self.rows}x{self.cols} app grid with: {', '.join(apps)}."
        if self.menu_app:
            text += f" A menu for {self.menu_app} is open with: {', '.join(self.menu_options)}."
        return text

    def paint(self, canvas: Canvas) -> None:
        size, theme = canvas.size, self.theme
        canvas.draw.rectangle((0, 0, size.width, size.nav_top), fill=theme.wallpaper)
        canvas.text((size.x(0.07), size.status_bottom + size.y(0.045)), self.date, canvas.px(30), WHITE)
        elements = self.elements(size)
        search = elements["search_bar"]
        canvas.box(search, WHITE, (search[3] - search[1]) / 2)
        glass_x, mid, r = search[0] + size.x(0.06), (search[1] + search[3]) / 2, max(2.0, 7 * size.unit)
        canvas.draw.ellipse((glass_x - r, mid - r - 2, glass_x + r, mid + r - 2), outline=(90, 90, 100), width=2)
        canvas.draw.line(
            (glass_x + 0.7 * r, mid + 0.7 * r - 2, glass_x + 1.5 * r, mid + 1.5 * r), fill=(90, 90, 100), width=3
        )
        canvas.text((glass_x + size.x(0.05), mid), "Search", canvas.px(20), (90, 90, 100))
        for cell, app in zip(self._cells(size), self.slots, strict=True):
            if app:
                self._paint_app(canvas, cell, elements[f"icon:{app}"], app)
        if self.menu_app:
            self._paint_menu(canvas, elements)

    def _paint_app(self, canvas: Canvas, cell: Box, icon: Box, app: str) -> None:
        side = icon[2] - icon[0]
        canvas.box(icon, self.icon_colors[app], side * 0.25)
        canvas.text(center(icon), app[0], round(side * 0.5), WHITE, align="center")
        label_y = icon[3] + min((cell[3] - icon[3]) * 0.4, 0.3 * side)
        canvas.text(((cell[0] + cell[2]) / 2, label_y), app, canvas.px(18), WHITE, "center", (cell[2] - cell[0]) * 0.98)

    def _paint_menu(self, canvas: Canvas, elements: dict[str, Box]) -> None:
        icon, unit = elements[f"icon:{self.menu_app}"], canvas.size.unit
        canvas.box(_inset(icon, -6 * unit), None, (icon[2] - icon[0]) * 0.3, WHITE, max(2, round(3 * unit)))
        boxes = [elements[f"menu:{option}"] for option in self.menu_options]
        outer = (boxes[0][0], boxes[0][1], boxes[-1][2], boxes[-1][3])
        canvas.box(_inset(outer, -3), self.theme.divider, 12 * canvas.size.unit)
        canvas.box(outer, self.theme.surface, 12 * canvas.size.unit)
        for option, box in zip(self.menu_options, boxes, strict=True):
            canvas.text((box[0] + canvas.size.x(0.05), center(box)[1]), option, canvas.px(20), self.theme.text)


@dataclass
class ListScreen(Screen):
    """An app's main page: a coloured header with the app name and a list of item rows."""

    app: str
    items: list[str]
    item_colors: list[Color]  # avatar colour per item

    def elements(self, size: Size) -> dict[str, Box]:
        top, row_h = size.header_bottom + size.y(0.015), size.y(0.08)
        return {
            f"row:{item}": (0, top + i * row_h, size.width, top + (i + 1) * row_h) for i, item in enumerate(self.items)
        }

    def describe(self, size: Size) -> str:
        return f"The {self.app} app is open and lists {len(self.items)} items: {', '.join(self.items)}."

    def paint(self, canvas: Canvas) -> None:
        size, theme = canvas.size, self.theme
        canvas.header(self.app, theme)
        for item, color, row in zip(self.items, self.item_colors, self.elements(size).values(), strict=True):
            mid, r = center(row)[1], 20 * size.unit
            avatar_x = size.x(0.09)
            canvas.draw.ellipse((avatar_x - r, mid - r, avatar_x + r, mid + r), fill=color)
            canvas.text((size.x(0.18), mid - 10 * size.unit), item, canvas.px(21), theme.text)
            canvas.draw.rectangle(
                (size.x(0.18), mid + 10 * size.unit, size.x(0.6), mid + 16 * size.unit), fill=theme.divider
            )
            canvas.draw.line((size.x(0.18), row[3], size.width, row[3]), fill=theme.divider)


@dataclass
class DetailScreen(Screen):
    """A page with a back chevron in its header, a title, text lines and optional buttons."""

    header_title: str
    title: str
    lines: list[str]
    buttons: tuple[str, ...] = ()

    def elements(self, size: Size) -> dict[str, Box]:
        found = {
            "back_button": (
                size.x(0.02),
                size.status_bottom + size.y(0.01),
                size.x(0.12),
                size.header_bottom - size.y(0.01),
            )
        }
        top, width, gap = size.header_bottom + size.y(0.12 + 0.045 * len(self.lines)), size.x(0.4), size.x(0.04)
        for i, button in enumerate(self.buttons):
            x = size.x(0.08) + i * (width + gap)
            found[f"button:{button}"] = (x, top, x + width, top + size.y(0.05))
        return found

    def describe(self, size: Size) -> str:
        buttons = f" with buttons {', '.join(self.buttons)}" if self.buttons else ""
        return f"A {self.header_title} page titled '{self.title}' is open{buttons}; a back arrow is at the top left."

    def paint(self, canvas: Canvas) -> None:
        size, theme = canvas.size, self.theme
        elements = self.elements(size)
        canvas.header(self.header_title, theme, elements["back_button"])
        y = size.header_bottom + size.y(0.05)
        canvas.text((size.x(0.08), y), self.title, canvas.px(30), theme.text, max_width=size.width * 0.84)
        for i, line in enumerate(self.lines):
            canvas.text(
                (size.x(0.08), y + size.y(0.07 + 0.045 * i)),
                line,
                canvas.px(20),
                theme.muted,
                max_width=size.width * 0.84,
            )
        for button in self.buttons:
            box = elements[f"button:{button}"]
            canvas.box(box, theme.accent, (box[3] - box[1]) / 2)
            canvas.text(center(box), button, canvas.px(20), WHITE, "center", (box[2] - box[0]) * 0.9)


@dataclass
class LoadingScreen(Screen):
    """A splash page while something loads: title, spinner, 'Loading...'."""

    title: str
    spinner_start: int = 0

    def describe(self, size: Size) -> str:
        return f"A loading page for {self.title} shows a spinner and the text 'Loading...'."

    def paint(self, canvas: Canvas) -> None:
        size, theme = canvas.size, self.theme
        canvas.draw.rectangle((0, 0, size.width, size.status_bottom), fill=theme.accent)
        cx, cy, r = size.width / 2, size.height * 0.45, 40 * size.unit
        canvas.text((cx, cy - r - size.y(0.06)), self.title, canvas.px(30), theme.text, "center", size.width * 0.9)
        canvas.draw.arc(
            (cx - r, cy - r, cx + r, cy + r),
            self.spinner_start,
            self.spinner_start + 270,
            theme.accent,
            round(8 * size.unit),
        )
        canvas.text((cx, cy + r + size.y(0.04)), "Loading...", canvas.px(22), theme.muted, "center")


@dataclass
class SearchScreen(Screen):
    """A search page: the query field (empty, focused or filled) and, when focused, the on-screen keyboard."""

    engine: str
    query: str = ""
    focused: bool = False

    def keyboard_top(self, size: Size) -> int:
        return size.nav_top - size.y(0.3)

    def _keys(self, size: Size) -> dict[str, Box]:
        top, row_h, margin = self.keyboard_top(size) + size.y(0.01), size.y(0.07), size.x(0.01)
        key_w = size.width / 10
        keys = {}
        for r, letters in enumerate(KEYBOARD_ROWS):
            left = (size.width - key_w * len(letters)) / 2
            for i, letter in enumerate(letters):
                keys[letter] = _inset(
                    (left + i * key_w, top + r * row_h, left + (i + 1) * key_w, top + (r + 1) * row_h), margin
                )
        bottom = top + 3 * row_h
        keys["space"] = _inset((key_w * 2, bottom, key_w * 7.5, bottom + row_h), margin)
        keys["enter"] = _inset((key_w * 8, bottom, size.width - margin, bottom + row_h), margin)
        return keys

    def elements(self, size: Size) -> dict[str, Box]:
        found = {"search_field": size.under_status(0.05, 0.02, 0.95, 0.075)}
        if self.focused:
            found["enter_key"] = self._keys(size)["enter"]
        return found

    def describe(self, size: Size) -> str:
        field_text = f"contains '{self.query}'" if self.query else "is empty"
        keyboard = " and the keyboard is open" if self.focused else ""
        return f"The {self.engine} search page is shown; the search field {field_text}{keyboard}."

    def paint(self, canvas: Canvas) -> None:
        size, theme = canvas.size, self.theme
        canvas.draw.rectangle((0, 0, size.width, size.status_bottom), fill=theme.accent)
        box = self.elements(size)["search_field"]
        canvas.box(box, theme.surface, (box[3] - box[1]) / 2, theme.accent if self.focused else theme.divider, 3)
        text, mid = self.query or "Search or type web address", center(box)[1]
        canvas.text((box[0] + size.x(0.05), mid), text, canvas.px(21), theme.text if self.query else theme.muted)
        if self.focused:  # text cursor after the query
            cursor_x = box[0] + size.x(0.05) + font(canvas.px(21)).getlength(self.query) + 3
            canvas.draw.line(
                (cursor_x, mid - 12 * size.unit, cursor_x, mid + 12 * size.unit), fill=theme.accent, width=2
            )
            self._paint_keyboard(canvas)
        else:
            canvas.text((size.width / 2, size.height * 0.3), self.engine, canvas.px(44), theme.accent, "center")

    def _paint_keyboard(self, canvas: Canvas) -> None:
        size, theme = canvas.size, self.theme
        canvas.draw.rectangle((0, self.keyboard_top(size), size.width, size.nav_top), fill=theme.divider)
        for name, key in self._keys(size).items():
            canvas.box(key, theme.accent if name == "enter" else theme.surface, 6 * size.unit)
            label = {"space": "space", "enter": "Enter"}.get(name, name)
            canvas.text(center(key), label, canvas.px(20), WHITE if name == "enter" else theme.text, "center")


@dataclass
class ResultsScreen(Screen):
    """Search results: the query field at the top and result blocks (site, title, snippet)."""

    query: str
    results: list[tuple[str, str]]  # (site, title)

    def elements(self, size: Size) -> dict[str, Box]:
        top, block_h = size.status_bottom + size.y(0.1), size.y(0.12)
        return {
            f"result:{site}": (size.x(0.04), top + i * block_h, size.x(0.96), top + (i + 1) * block_h - size.y(0.015))
            for i, (site, _) in enumerate(self.results)
        }

    def describe(self, size: Size) -> str:
        sites = ", ".join(site for site, _ in self.results)
        return f"Search results for '{self.query}' are listed, from {sites}."

    def paint(self, canvas: Canvas) -> None:
        size, theme = canvas.size, self.theme
        canvas.draw.rectangle((0, 0, size.width, size.status_bottom), fill=theme.accent)
        field_box = SearchScreen(self.theme, self.clock, "", self.query).elements(size)["search_field"]
        canvas.box(field_box, theme.surface, (field_box[3] - field_box[1]) / 2, theme.divider, 3)
        canvas.text((field_box[0] + size.x(0.05), center(field_box)[1]), self.query, canvas.px(21), theme.text)
        for (site, title), box in zip(self.results, self.elements(size).values(), strict=True):
            canvas.box(box, theme.surface, 10 * size.unit)
            x, height = box[0] + size.x(0.04), box[3] - box[1]
            canvas.text((x, box[1] + height * 0.22), site, canvas.px(17), theme.muted)
            canvas.text((x, box[1] + height * 0.5), title, canvas.px(22), theme.accent, max_width=(box[2] - x) * 0.95)
            canvas.draw.rectangle(
                (x, box[1] + height * 0.75, box[2] - size.x(0.1), box[1] + height * 0.8), fill=theme.divider
            )


@dataclass
class SettingsScreen(Screen):
    """A settings list of switches, scrolled down by `scroll_px`; only fully visible rows are actionable."""

    title: str
    rows: list[tuple[str, bool]]  # (setting, on)
    scroll_px: int = 0

    @staticmethod
    def row_height(size: Size) -> int:
        return size.y(0.075)

    @staticmethod
    def viewport(size: Size) -> tuple[int, int]:
        return size.header_bottom, size.nav_top

    def max_scroll(self, size: Size) -> int:
        top, bottom = self.viewport(size)
        return max(0, len(self.rows) * self.row_height(size) - (bottom - top))

    def _row_boxes(self, size: Size) -> list[Box]:
        top, row_h = self.viewport(size)[0] - self.scroll_px, self.row_height(size)
        return [(0, top + i * row_h, size.width, top + (i + 1) * row_h) for i in range(len(self.rows))]

    def _switch(self, row: Box, size: Size) -> Box:
        mid, half_h = center(row)[1], size.y(0.015)
        return (size.x(0.8), round(mid - half_h), size.x(0.92), round(mid + half_h))

    def elements(self, size: Size) -> dict[str, Box]:
        top, bottom = self.viewport(size)
        return {
            f"switch:{name}": self._switch(row, size)
            for (name, _), row in zip(self.rows, self._row_boxes(size), strict=True)
            if row[1] >= top and row[3] <= bottom
        }

    def visible_settings(self, size: Size) -> list[str]:
        return [key.split(":", 1)[1] for key in self.elements(size)]

    def describe(self, size: Size) -> str:
        visible = set(self.visible_settings(size))
        shown = ", ".join(f"{name} ({'on' if on else 'off'})" for name, on in self.rows if name in visible)
        return f"The {self.title} page shows these switches: {shown}."

    def paint(self, canvas: Canvas) -> None:
        size, theme = canvas.size, self.theme
        top, bottom = self.viewport(size)
        for (name, on), row in zip(self.rows, self._row_boxes(size), strict=True):
            if row[3] < top or row[1] > bottom:
                continue
            mid = center(row)[1]
            canvas.text(
                (size.x(0.06), mid - 11 * size.unit), name, canvas.px(22), theme.text, max_width=size.width * 0.7
            )
            canvas.text((size.x(0.06), mid + 14 * size.unit), "On" if on else "Off", canvas.px(16), theme.muted)
            canvas.toggle(self._switch(row, size), on, theme.accent, theme.divider)
            canvas.draw.line((size.x(0.06), row[3], size.width, row[3]), fill=theme.divider)
        canvas.header(self.title, theme)  # drawn last: covers rows scrolled under it


def grid_position(index: int, cols: int) -> str:
    return f"row {index // cols + 1}, column {index % cols + 1}"
