"""The numbers GUI-R1's own scripts print (guir1/eval/eval_omni.py, eval_screenspot.py), reproduced on the same
fields they read, so r1_gui's benchmark results can sit beside published tables. Pure functions, no I/O.

GUI-R1's scripts read one JSON line per test row: the ground-truth fields (``gt_action``, ``gt_bbox``,
``gt_input_text``, ``group``, ``ui_type``, ``image_size`` = original [width, height]) and the inference fields
(``pred_action``: the name in the answer or null, ``pred_coord``: the answer's point scaled to original pixels,
[0, 0] when none was found, ``pred_input_text``: the answer's text, "no input text" when none). For r1_gui's own
predictions ``prediction_fields`` writes the same three fields from the parsed action.

Their rules, which differ from r1_gui's whole-step metrics on purpose (see ``r1_gui.evaluation.peers.benchmarks``):

- type: ``gt_action == pred_action`` as strings, over every row.
- grounding (gt_action click, long_press, moveto, doubleclick, rightclick): a hit when
  ((gt_bbox[0] - x) / width)^2 + ((gt_bbox[1] - y) / height)^2 < 0.14^2, *strictly*, from the first two numbers of
  gt_bbox (a box's first corner, not its centre); the predicted type is not checked.
- text (gt_action open_app, type, scroll, select): ``guir1_text_f1(gt_input_text, pred_input_text) >= 0.5`` (token
  sets; two one-token texts of which one contains the other score 1); the predicted type is not checked.
- "ALL Step" = (grounding hits + text hits) / (grounding rows + text rows): any other step (press_back, complete,
  wait, ...) never counts, so a wrong type there never lowers it. "ALL GR" = grounding hits / grounding rows.
- Every total is summed over categories (``group``-``gt_action``, with -grounding / -text), and a category without
  one hit drops out of it (its counter never exists): all back steps wrong leave "ALL Type" as if there were none.
- ScreenSpot: a hit when gt_bbox[0] < x < gt_bbox[2] and gt_bbox[1] < y < gt_bbox[3] (edges excluded), per
  ``group`` + "-" + ``ui_type``; its script prints only categories with a hit (here they are 0.0) and no overall
  number (``guir1_accuracy`` here is its rule over every row).

Where GUI-R1's script divides by zero (no grounding row, say) the number here is None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from r1_gui.actions import Action
from r1_gui.actions.guir1 import NO_TEXT, guir1_name
from r1_gui.actions.guir1_rows import number_list
from r1_gui.evaluation.intervals import CI_SUFFIX, wilson
from r1_gui.scoring.guir1 import GUIR1_TEXT_F1, guir1_text, guir1_text_f1

GROUNDING_NAMES = ("click", "long_press", "moveto", "doubleclick", "rightclick")
TEXT_NAMES = ("open_app", "type", "scroll", "select")
DISTANCE = 0.14
NO_COORD = [0, 0]  # what GUI-R1's inference writes when the answer has no point


def prediction_fields(action: Action | None, image_size: Sequence[float]) -> dict[str, Any]:
    """``pred_action``, ``pred_coord``, ``pred_input_text`` as GUI-R1's inference would write them for ``action``
    (normalized coordinates) on a screenshot of original ``image_size`` (width, height). Example:
    ``Action("click", x=0.5, y=0.25)`` on (1000, 2000) -> {"pred_action": "click", "pred_coord": [500.0, 500.0],
    "pred_input_text": "no input text"}."""
    if action is None:
        return {"pred_action": None, "pred_coord": list(NO_COORD), "pred_input_text": NO_TEXT}
    coord = list(NO_COORD) if action.point is None else [action.x * image_size[0], action.y * image_size[1]]
    return {"pred_action": guir1_name(action), "pred_coord": coord, "pred_input_text": guir1_text(action) or NO_TEXT}


def navigation_hits(fields: dict) -> dict[str, bool | None]:
    """GUI-R1's per-row results for a navigation row: "type" (bool), "grounding" and "text" (bool, or None where
    the row is not that kind). ``fields``: the ground-truth and ``pred_*`` fields of one line."""
    gt_action, pred_action = fields.get("gt_action"), fields.get("pred_action")
    hits: dict[str, bool | None] = {"type": gt_action == pred_action, "grounding": None, "text": None}
    if gt_action in GROUNDING_NAMES:
        box, coord, size = (
            number_list(fields.get("gt_bbox")),
            number_list(fields.get("pred_coord")),
            fields["image_size"],
        )
        if len(box) < 2 or len(coord) < 2:
            hits["grounding"] = False
        else:
            dx, dy = (box[0] - coord[0]) / size[0], (box[1] - coord[1]) / size[1]
            hits["grounding"] = dx**2 + dy**2 < DISTANCE**2
    if gt_action in TEXT_NAMES:
        truth, predicted = fields.get("gt_input_text"), fields.get("pred_input_text")
        truth, predicted = truth if isinstance(truth, str) else "", predicted if isinstance(predicted, str) else ""
        hits["text"] = guir1_text_f1(truth, predicted) >= GUIR1_TEXT_F1
    return hits


def grounding_hit(fields: dict) -> bool:
    """GUI-R1's ScreenSpot hit: the predicted point strictly inside gt_bbox [x1, y1, x2, y2] (original pixels)."""
    box, coord = number_list(fields.get("gt_bbox")), number_list(fields.get("pred_coord"))
    if len(box) < 4 or len(coord) < 2:
        return False
    return box[0] < coord[0] < box[2] and box[1] < coord[1] < box[3]


def share(hits: int, count: int) -> float | None:
    """hits / count, or None where GUI-R1's script would divide by zero."""
    return hits / count if count else None


def navigation_numbers(lines: Sequence[dict]) -> dict[str, Any]:
    """GUI-R1's "ALL Type", "ALL GR", "ALL Step" (and the same sum over its text categories) over ``lines``:
    guir1_type_accuracy, guir1_grounding_accuracy, guir1_step_accuracy, guir1_text_accuracy.

    As its script sums them: per category (group-gt_action for type, plus -grounding and -text), and a category
    without a single hit is left out of every total, because its hit counter was never created. So a wrong
    press_back on every back step does not lower "ALL Type", and scrolls all in the wrong direction do not lower
    "ALL Step"."""
    categories: dict[tuple[str, str], list[bool]] = {}
    for fields in lines:
        name, hits = f"{fields.get('group')}-{fields.get('gt_action')}", navigation_hits(fields)
        for kind in ("type", "grounding", "text"):
            if hits[kind] is not None:
                categories.setdefault((kind, name), []).append(hits[kind])
    counted = {key: values for key, values in categories.items() if any(values)}

    numbers: dict[str, Any] = {}
    for name, kinds in (("guir1_type_accuracy", ("type",)), ("guir1_grounding_accuracy", ("grounding",)),
                        ("guir1_text_accuracy", ("text",)), ("guir1_step_accuracy", ("grounding", "text"))):  # fmt: skip
        chosen = [values for (kind, _), values in counted.items() if kind in kinds]
        hits, count = sum(sum(values) for values in chosen), sum(len(values) for values in chosen)
        numbers[name], numbers[name + CI_SUFFIX] = share(hits, count), wilson(hits, count)
    return numbers


def grounding_numbers(lines: Sequence[dict]) -> dict[str, Any]:
    """GUI-R1's ScreenSpot accuracy over ``lines`` (guir1_accuracy) and per "group-ui_type" as its log names them
    (guir1_per_category)."""
    by_category: dict[str, list[bool]] = {}
    for fields in lines:
        category = f"{fields.get('group')}-{fields.get('ui_type')}"
        by_category.setdefault(category, []).append(grounding_hit(fields))
    every = [hit for hits in by_category.values() for hit in hits]
    categories = sorted(by_category.items())
    return {
        "guir1_accuracy": share(sum(every), len(every)),
        "guir1_accuracy" + CI_SUFFIX: wilson(sum(every), len(every)),
        "guir1_per_category": {name: share(sum(hits), len(hits)) for name, hits in categories},
        "guir1_per_category" + CI_SUFFIX: {name: wilson(sum(hits), len(hits)) for name, hits in categories},
    }
