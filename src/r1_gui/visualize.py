"""Pictures: the screenshot with the ground truth (green) and the prediction (red) drawn on it (the trainer's
completions table, the evaluation report's gallery), and a GRPO run's reward and success curves (the demos, and the
command `r1-gui-plot RUN`, `python -m r1_gui.visualize RUN`, for any run).

    picture = draw_actions(screenshot, ground_truth, prediction, bbox=[0.1, 0.2, 0.3, 0.25])
    card = with_caption(picture, ["Open the Clock app", "pyautogui.click(x=0.2, y=0.22)"])
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from r1_gui.actions import Action
from r1_gui.cli_errors import UserError, cli_main, command_parser, installed

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


def reward_curve(grpo_dir: Path, path: Path) -> list[dict]:
    """Plot every reward's mean per GRPO step, the episodes' success rate (an --env run) and the parse rate
    (single-step completions, or episode turns) from a GRPO output folder's trainer_state.json; returns the logged
    rows. Few steps are drawn with markers, so a one-step run still shows its point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    history = json.loads((Path(grpo_dir) / "trainer_state.json").read_text())["log_history"]
    rows = [entry for entry in history if "reward" in entry]
    names = sorted({key.split("/")[1] for entry in rows for key in entry if key.endswith("/mean")})
    figure, axis = plt.subplots(figsize=(7, 4))
    steps = [entry["step"] for entry in rows]
    window = max(1, min(10, len(rows) // 5))
    series = {f"{name} reward": [entry.get(f"rewards/{name}/mean") for entry in rows] for name in names}
    if any("episodes/success_rate" in entry for entry in rows):
        series["success rate"] = [entry.get("episodes/success_rate") for entry in rows]
    parse_key = next((k for k in ("completions/parse_rate", "episodes/turn_parse_rate") if rows and k in rows[0]), None)
    if parse_key:
        series["parse rate"] = [entry.get(parse_key) for entry in rows]
    marker = "o" if len(rows) < 20 else None
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, (label, values) in enumerate(series.items()):
        color = colors[index % len(colors)]
        axis.plot(steps, values, color=color, alpha=0.3, linewidth=0.8, marker=marker)
        axis.plot(
            steps, moving_average(values, window), color=color, label=f"{label} ({window}-step mean)", marker=marker
        )
    axis.set_xlabel("GRPO step")
    axis.set_ylabel("reward / rate")
    axis.set_ylim(-0.02, 1.02)
    axis.set_title("GRPO: mean reward of the sampled completions per step")
    axis.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return rows


def moving_average(values: list[float | None], window: int) -> list[float | None]:
    """The mean of the last ``window`` values at each step (fewer at the start); None where a step logged none."""
    averaged = []
    for index, value in enumerate(values):
        recent = [v for v in values[max(0, index - window + 1) : index + 1] if v is not None]
        averaged.append(sum(recent) / len(recent) if value is not None and recent else None)
    return averaged


def run_state(run: Path) -> Path:
    """The folder whose trainer_state.json holds ``run``'s log: the run's own (written when it ends), else its newest
    checkpoint-N's (a run still training, or one stopped before its end). A UserError says what is missing."""
    if (run / "trainer_state.json").is_file():
        return run
    saved = sorted(run.glob("checkpoint-*/trainer_state.json"), key=lambda p: int(p.parent.name.rsplit("-", 1)[-1]))
    if saved:
        return saved[-1].parent
    raise UserError(
        f"{run} holds no trainer_state.json, nor a checkpoint-N folder with one: give the --output_dir of a GRPO run "
        "(it writes the file when it ends, and in each checkpoint it saves)"
    )


@cli_main
def main(argv: list[str] | None = None) -> list[dict]:
    """`r1-gui-plot RUN [--out PNG]`: a GRPO run's reward and success curves, from its logs."""
    parser = command_parser(
        "Draw a GRPO run's curves from its log (trainer_state.json): each reward's mean per step, the episodes'\n"
        "success rate (--env runs) and the parse rate, each with its moving mean.\n\n"
        "    r1-gui-plot runs/tiny-cpu-grpo                  # writes runs/tiny-cpu-grpo/reward_curve.png",
        prog="r1-gui-plot",
    )
    parser.add_argument("run", type=Path, help="the run's --output_dir (or one of its checkpoint-N folders)")
    parser.add_argument("--out", type=Path, default=None, help="the picture to write (default: RUN/reward_curve.png)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    folder = run_state(args.run)
    out = args.out or args.run / "reward_curve.png"
    rows = [
        entry for entry in json.loads((folder / "trainer_state.json").read_text())["log_history"] if "reward" in entry
    ]
    if not rows:
        raise UserError(
            f"{folder / 'trainer_state.json'} logs no step with a reward: a GRPO run logs one every --logging_steps "
            "steps (trl's default 10; the tiny recipes log every step); an SFT run logs its loss only"
        )
    rows = reward_curve(folder, out)
    print(f"wrote {out}: {len(rows)} logged steps of {folder}")
    return rows


cli = installed(main)  # the installed command (pyproject.toml's [project.scripts]): main, returning nothing


if __name__ == "__main__":
    main()
