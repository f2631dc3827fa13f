"""Prompt styles: how a dataset row becomes the model's prompt, and how an action becomes its target answer.

One module for training (GRPO and SFT) and evaluation, so a checkpoint is always asked the way it was trained.

- `aguvis`: Aguvis's agent system prompt; the model plans on the `all` channel ("Thought: ...\\nAction: ...") and then
  writes pyautogui/mobile code on the `os` channel, ending the turn with `<|diff_marker|>`. Decoded with special tokens
  skipped, a completion reads "Thought: ...\\nAction: ...\\nassistantos\\npyautogui.click(x=0.5, y=0.3)".
- `think_answer`: DeepSeek-R1 style, `<think>...</think><answer>pyautogui.click(...)</answer>`.
- `mobile_use`: the Qwen mobile agent's layout (Qwen3-VL's GUI format): the `mobile_use` tool declared in a
  `<tools>` block whose description gives the screen's resolution in the model's coordinates, then the response
  format, "Thought: ..." / "Action: ..." lines and one `<tool_call>` JSON.

The defaults follow the architecture (`default_prompt_style`, `default_coordinates`; `--prompt_style auto` and
`--coordinates auto`): Aguvis prints fractions of the screen (0-1) in the aguvis style, Qwen2-VL a 0-1000 grid,
Qwen2.5-VL absolute pixels of the resized screenshot, Qwen3-VL the mobile_use tool on its 0-999 grid.
"""

from __future__ import annotations

import json
import re
from typing import Any

from r1_gui.actions import Action, format_action
from r1_gui.actions.mobile_use import scroll_as_swipe
from r1_gui.model_types import QWEN3_VL_TYPES

PROMPT_STYLES = ("aguvis", "think_answer", "mobile_use")
PROMPT_STYLE_CHOICES = ("auto", *PROMPT_STYLES)  # the flag's values: auto is the architecture's own style

# What each architecture's checkpoints were trained to read and write for GUI work: (prompt style, coordinates);
# coordinates None: from the prompt style (see default_coordinates). Keys: r1_gui.model_types.MODEL_TYPES.
ARCHITECTURE_CONVENTIONS = {
    "qwen2_vl": ("aguvis", None),  # Aguvis-7B (a Qwen2-VL) in its own style; base Qwen2-VL grounds on 0-1000
    "qwen2_5_vl": ("aguvis", "pixels"),  # Qwen2.5-VL grounds in pixels of the resized screenshot
    # Qwen3-VL (dense and MoE): its mobile agent's format, the mobile_use tool on a 0-999 grid
    **dict.fromkeys(QWEN3_VL_TYPES, ("mobile_use", "grid999")),
}

# The human turn of Aguvis stage 2 without its "<image>\n" placeholder (docs/notes.md, "Aguvis stage-2 data"): the
# `problem` column the builder writes and every step prompt reads.
PROBLEM_TEMPLATE = (
    "Please generate the next move according to the ui screenshot, instruction and previous actions."
    "\n\nInstruction: {instruction}\n\nPrevious actions:\n{history}"
)


_STEP_PREFIX = re.compile(r"(?m)^Step \d+:[ \t]*")


def history_text(history: list[str]) -> str:
    """The previous actions as the problem lists them ("Step 1: ...", one a line), or "None" on the first step."""
    return "\n".join(f"Step {number}: {step}" for number, step in enumerate(history, 1)) or "None"


def parse_history(text: str) -> list[str]:
    """Previous actions as a list, `history_text` read back: "Step 1: a\\nStep 2: b" -> ["a", "b"]; "None" or
    blank -> []; without any "Step N:" prefix, each non-blank line is one step."""
    text = text.strip()
    if not text or text == "None":
        return []
    parts = _STEP_PREFIX.split(text)
    if len(parts) == 1:
        return [line.strip() for line in text.splitlines() if line.strip()]
    steps = [part.strip() for part in parts[1:]]
    return [parts[0].strip(), *steps] if parts[0].strip() else steps


def history_steps(value: Any) -> list[str]:
    """The steps of a GUI-R1 ``history``: a list of steps, or a string of "Step N: ..." lines."""
    if isinstance(value, (list, tuple)):
        return [str(step).strip() for step in value if str(step).strip()]
    return parse_history(value) if isinstance(value, str) else []


# Aguvis-7B was trained with this system prompt (xlang-ai/aguvis constants.agent_system_message); changing a word
# changes what the checkpoint sees, so it is kept as the model expects it.
_AGUVIS_FUNCTIONS = [
    {
        "name": "mobile.swipe",
        "description": "Swipe on the screen",
        "parameters": {
            "type": "object",
            "properties": {
                "from_coord": {
                    "type": "array",
                    "items": {"type": "number"},
                    "description": "The starting coordinates of the swipe",
                },
                "to_coord": {
                    "type": "array",
                    "items": {"type": "number"},
                    "description": "The ending coordinates of the swipe",
                },
            },
            "required": ["from_coord", "to_coord"],
        },
    },
    {"name": "mobile.home", "description": "Press the home button"},
    {"name": "mobile.back", "description": "Press the back button"},
    {
        "name": "mobile.wait",
        "description": "wait for the change to happen",
        "parameters": {
            "type": "object",
            "properties": {"seconds": {"type": "number", "description": "The seconds to wait"}},
            "required": ["seconds"],
        },
    },
    {
        "name": "mobile.long_press",
        "description": "Long press on the screen",
        "parameters": {
            "type": "object",
            "properties": {
                "x": {"type": "number", "description": "The x coordinate of the long press"},
                "y": {"type": "number", "description": "The y coordinate of the long press"},
            },
            "required": ["x", "y"],
        },
    },
    {
        "name": "mobile.open_app",
        "description": "Open an app on the device",
        "parameters": {
            "type": "object",
            "properties": {"app_name": {"type": "string", "description": "The name of the app to open"}},
            "required": ["app_name"],
        },
    },
]
AGUVIS_SYSTEM_PROMPT = (
    "You are a GUI agent. You are given a task and a screenshot of the screen. You need to perform a series of "
    "pyautogui actions to complete the task.\n\nYou have access to the following functions:\n"
    + "".join(f"- {json.dumps(function)}\n" for function in _AGUVIS_FUNCTIONS)
)

_ACTION_LIST = (
    "pyautogui.click(x=, y=), mobile.long_press(x=, y=), mobile.swipe(from_coord=[x, y], to_coord=[x, y]), "
    "pyautogui.scroll(page=) (negative scrolls down), pyautogui.write(message=''), pyautogui.press(keys=['enter']), "
    "mobile.home(), mobile.back(), mobile.open_app(app_name=''), mobile.wait(seconds=), "
    "mobile.terminate(status='success' or 'failure'), answer('')"
)

# The mobile_use style's system message is this text followed by `tools_block([mobile_use_tool(...)])`: the layout
# Qwen3-VL's own chat template gives a system message with the mobile_use tool (tests/test_prompts.py renders both).
MOBILE_USE_ROLE = (
    "You are a GUI agent operating a mobile phone: at each step you see the screen and take one action.\n\n"
    "# Response format\n\nAnswer in three parts, in this order and with nothing else:\n"
    "Thought: <why this is the next step, one sentence>\nAction: <the step in a few words>\n"
    "<tool_call>...</tool_call> holding one mobile_use call.\n"
    "When the task is done, or cannot be done, call the terminate action."
)
_MOBILE_USE_ACTIONS = ["click", "long_press", "swipe", "type", "answer", "system_button", "open", "wait", "terminate"]


def mobile_use_tool(coordinates: str = "grid999", screen_size: tuple[int, int] | None = None) -> dict:
    """The mobile_use tool's declaration; its description gives the screen's resolution in ``coordinates``, where
    the Qwen mobile agent's declaration carries it (Qwen3-VL: 999x999)."""
    return {
        "type": "function",
        "function": {
            "name": "mobile_use",
            "description": _mobile_use_description(coordinates, screen_size),
            "parameters": {
                "type": "object",
                "properties": {
                    "action": {"type": "string", "enum": list(_MOBILE_USE_ACTIONS)},
                    "coordinate": {"type": "array", "description": "(x, y) of the point to touch or swipe from"},
                    "coordinate2": {"type": "array", "description": "(x, y) to swipe to"},
                    "text": {"type": "string", "description": "text to type, the answer, or the app to open"},
                    "button": {"type": "string", "enum": ["Back", "Home", "Enter"]},
                    "time": {"type": "number", "description": "seconds to wait"},
                    "status": {"type": "string", "enum": ["success", "failure"]},
                },
                "required": ["action"],
            },
        },
    }


def _mobile_use_description(coordinates: str, screen_size: tuple[int, int] | None) -> str:
    """The tool's description: the screen's resolution on the model's grid (or in pixels of the screenshot it sees),
    or for fractions the coordinates sentence."""
    resolution = {"grid999": "999x999", "grid1000": "1000x1000"}.get(coordinates)
    if coordinates == "pixels" and screen_size:
        resolution = f"{screen_size[0]}x{screen_size[1]}"
    head = "Use a touchscreen to interact with a mobile device."
    if resolution is None:
        return f"{head} {describe_coordinates(coordinates, screen_size)}"
    return f"{head} The screen's resolution is {resolution}: x counts from the left edge, y from the top edge."


def default_prompt_style(model_type: str | None) -> str:
    """The prompt style a checkpoint was trained for GUI work in (``--prompt_style auto``): Qwen3-VL's mobile_use
    format; aguvis for the others (Aguvis-7B's own, and r1_gui's default before `auto`)."""
    return ARCHITECTURE_CONVENTIONS.get(model_type or "", ("aguvis", None))[0]


def resolve_prompt_style(prompt_style: str, model_type: str | None) -> str:
    """``prompt_style``, or for "auto" the architecture's (``default_prompt_style``); ValueError for an unknown one."""
    if prompt_style == "auto":
        return default_prompt_style(model_type)
    check_style(prompt_style)
    return prompt_style


def default_coordinates(model_type: str, prompt_style: str) -> str:
    """The coordinate convention a checkpoint prints, from its architecture and prompt style.

    Qwen2.5-VL grounds in absolute pixels of the resized screenshot; Qwen3-VL on a 0-999 grid (its mobile agent's
    screen resolution); Aguvis (a Qwen2-VL model, prompted in the aguvis style) in fractions 0-1; base Qwen2-VL on
    a 0-1000 grid. Override with --coordinates for other checkpoints.
    """
    coordinates = ARCHITECTURE_CONVENTIONS.get(model_type or "", (None, None))[1]
    if coordinates is not None:
        return coordinates
    if prompt_style == "aguvis":
        return "normalized"
    if prompt_style == "mobile_use":
        return "grid999"
    return "grid1000"


def describe_coordinates(coordinates: str, screen_size: tuple[int, int] | None = None) -> str:
    """One sentence telling the model which coordinate convention to answer in."""
    if coordinates == "normalized":
        return "Coordinates are fractions of the screen width (x) and height (y), between 0 and 1."
    if coordinates in ("grid1000", "grid999"):
        top = 1000 if coordinates == "grid1000" else 999
        return f"Coordinates are on a {top}x{top} grid over the screenshot: x from 0 (left) to {top} (right)."
    size = f" The screenshot is {screen_size[0]}x{screen_size[1]} pixels." if screen_size else ""
    return "Coordinates are absolute pixels of the screenshot, x from the left, y from the top." + size


def system_prompt(style: str, coordinates: str = "normalized", screen_size: tuple[int, int] | None = None) -> str:
    """The system message of a prompt style."""
    check_style(style)
    if style == "aguvis":
        return AGUVIS_SYSTEM_PROMPT
    if style == "think_answer":
        return (
            "You are a GUI agent operating a mobile phone. Given the screenshot, the instruction and the previous "
            "actions, decide the next action. First reason about it inside <think> </think>, then give exactly one "
            f"action inside <answer> </answer>. Available actions: {_ACTION_LIST}. "
            + describe_coordinates(coordinates, screen_size)
        )
    return f"{MOBILE_USE_ROLE}\n\n{tools_block([mobile_use_tool(coordinates, screen_size)])}"


def tools_block(tools: list[dict]) -> str:
    """The "# Tools" section Qwen's chat templates (Qwen2.5 and Qwen3-VL's alike) append to the system message when
    given ``tools``: the declarations one JSON per line inside <tools>, then how to write a call."""
    declarations = "".join(f"\n{json.dumps(tool)}" for tool in tools)
    return (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        f"You are provided with function signatures within <tools></tools> XML tags:\n<tools>{declarations}\n"
        "</tools>\n\nFor each function call, return a json object with function name and arguments within "
        '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": '
        "<args-json-object>}\n</tool_call>"
    )


def mobile_use_task(instruction: str, history: str | None = None) -> str:
    """The user text of a mobile_use step: "Instruction: ..." (what the multi-turn context's first turn says), then,
    for a step recorded with earlier steps and no conversation to show them, "Previous actions:" and ``history``."""
    text = f"Instruction: {instruction}"
    return f"{text}\n\nPrevious actions:\n{history}" if history else text


def check_style(style: str) -> None:
    """A ValueError naming the valid styles unless ``style`` is one (``auto`` is resolved before this)."""
    if style not in PROMPT_STYLES:
        raise ValueError(f"unknown prompt style {style!r}; valid styles: {', '.join(PROMPT_STYLES)}")


def build_prompt(
    problem: str,
    style: str,
    coordinates: str = "normalized",
    screen_size: tuple[int, int] | None = None,
    system: str | None = None,
) -> list[dict]:
    """Conversational prompt for a row: system message + the user's text (the screenshot goes before that text).

    system replaces the style's system prompt (--system_prompt); pass the same text to training and evaluation.
    The user content stays a plain string so the dataset column has one type; TRL's prepare_multimodal_messages
    (training) and `attach_image` (evaluation) put the image placeholder first, where Aguvis puts `<image>`.
    """
    return [
        {"role": "system", "content": system if system is not None else system_prompt(style, coordinates, screen_size)},
        {"role": "user", "content": problem},
    ]


def attach_image(prompt: list[dict]) -> list[dict]:
    """The prompt with an image placeholder before the first user text, as TRL builds it for training."""
    messages = []
    placed = False
    for message in prompt:
        if message["role"] == "user" and isinstance(message["content"], str) and not placed:
            message = {**message, "content": [{"type": "image"}, {"type": "text", "text": message["content"]}]}
            placed = True
        messages.append(message)
    return messages


def chat_template_kwargs(style: str) -> dict:
    """Extra chat template variables: the aguvis style opens the planning channel after the prompt."""
    check_style(style)
    return {"generation_recipient": "all"} if style == "aguvis" else {}


def stop_token(style: str) -> str:
    """The token that ends a completion. Aguvis ends its os-channel turn with <|diff_marker|>; the planning turn
    before it ends with <|im_end|>, so stopping there would cut the action off."""
    check_style(style)
    return "<|diff_marker|>" if style == "aguvis" else "<|im_end|>"


def stop_token_ids(tokenizer, style: str) -> list[int]:
    """The token ids that end a completion in ``style``, for training, evaluation and multi-turn play alike: the
    style's ``stop_token``, plus the tokenizer's eos except for aguvis (its eos, <|im_end|>, closes the plan before
    the action). ValueError when the tokenizer lacks the stop token."""
    token = stop_token(style)
    token_id = tokenizer.convert_tokens_to_ids(token)
    if token_id is None or token_id == tokenizer.unk_token_id:
        raise ValueError(f"the tokenizer has no {token} token, which the {style} prompt style needs")
    stop_ids = [token_id]
    if style != "aguvis" and tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in stop_ids:
        stop_ids.append(tokenizer.eos_token_id)
    return stop_ids


def build_target(
    action: Action,
    thought: str | None,
    style: str,
    coordinates: str = "normalized",
    screen_size: tuple[int, int] | None = None,
) -> list[dict]:
    """The assistant turn(s) a model trained in `style` should produce for `action` (the SFT target).

    thought is the dataset's planning turn ("Thought: ...\\nAction: ..." or "Action: ..."); empty or None gives
    a bare "Action: <type>" plan.
    """
    check_style(style)
    plan = (thought or "").strip() or f"Action: {action.type.replace('_', ' ')}."
    if style == "mobile_use":  # mobile_use has no scroll: it is taught as the swipe that moves the content so
        call = format_action(scroll_as_swipe(action), "mobile_use", coordinates=coordinates, image_size=screen_size)
        return [{"role": "assistant", "content": f"{_as_thought_action(plan)}\n{call}"}]
    code = format_action(action, "aguvis", coordinates=coordinates, image_size=screen_size)
    if style == "aguvis":
        return [
            {"role": "assistant", "recipient": "all", "end_turn": False, "content": plan},
            {"role": "assistant", "recipient": "os", "end_turn": True, "content": code},
        ]
    return [{"role": "assistant", "content": f"<think>\n{plan}\n</think>\n<answer>{code}</answer>"}]


def _as_thought_action(plan: str) -> str:
    """mobile_use answers always start with a Thought line; an l1 plan ("Action: ...") gets a short one."""
    return plan if plan.startswith("Thought:") else f"Thought: the next step.\n{plan}"
