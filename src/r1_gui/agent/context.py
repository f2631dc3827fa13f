"""What the model sees at each turn of an episode, and the token budget of an episode.

Turn t's context (chat messages, r1_gui's ChatML template, the mobile_use system prompt):

    system     the mobile_use tool and the answer form (r1_gui.prompts, style "mobile_use", 999 grid)
    user       [screenshot 0] Instruction: ...
    assistant  turn 0's text, verbatim
    user       [screenshot 1] <tool_response>step 1: ok</tool_response>         (or the tool's error message)
    ...
    user       [screenshot t] <tool_response>step t: ...</tool_response>

Only the last `history_images` screenshots are attached; older ones are dropped and their turns stay as text, so a
20-turn episode holds at most `history_images` screenshots' image tokens per context.
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image

from r1_gui.flags.episodes import DEFAULT_HISTORY_IMAGES, DEFAULT_MAX_TURNS  # noqa: F401  (multi_turn.trainer reads them here)
from r1_gui.prompts import mobile_use_task, system_prompt

OBSERVATION_TOKENS = 48  # the masked tool-response tokens laid between two turns of a GRPO row (at most)
ERROR_CHARS = 160  # a tool error message is cut to this many characters
GRID = "grid999"  # the mobile_use tool's coordinates


def tool_response(step: int, error: str | None) -> str:
    """What the mobile_use tool answers after step `step` (1-based), besides the new screenshot."""
    result = "ok" if not error else f"error: {error[:ERROR_CHARS]} (the screen did not change)"
    return f"<tool_response>step {step}: {result}</tool_response>"


@dataclass
class History:
    """An episode so far: the instruction, every screenshot seen (one more than the turns taken), the text of each
    turn and the tool's response to it."""

    instruction: str
    screenshots: list[Image.Image]
    texts: list[str]
    responses: list[str]


def window(turn: int, history_images: int) -> range:
    """The indices of the screenshots turn `turn` sees: the last `history_images` up to and including its own."""
    return range(max(0, turn + 1 - history_images), turn + 1)


def turn_messages(history: History, history_images: int, system: str | None = None) -> list[dict]:
    """The chat messages of the next turn (turn len(history.texts)); see the module docstring."""
    turn = len(history.texts)
    shown = window(turn, history_images)

    def user(index: int, text: str) -> dict:
        image = [{"type": "image", "image": history.screenshots[index]}] if index in shown else []
        return {"role": "user", "content": [*image, {"type": "text", "text": text}]}

    messages = [
        {"role": "system", "content": [{"type": "text", "text": system or system_prompt("mobile_use", GRID)}]},
        user(0, mobile_use_task(history.instruction)),
    ]
    for index, (text, response) in enumerate(zip(history.texts, history.responses, strict=True)):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": text}]})
        messages.append(user(index + 1, response))
    return messages


def observation_ids(tokenizer, step: int, error: str | None) -> list[int]:
    """The tool-response tokens laid between two turns of a GRPO row: the new screenshot (one placeholder) and the
    tool's answer, in ChatML, at most OBSERVATION_TOKENS long. They are masked out of the loss and never fed to the
    model as they are: each turn is scored in its own context (`r1_gui.multi_turn.trainer`)."""
    image = "<|vision_start|><|image_pad|><|vision_end|>"
    head = tokenizer.encode(f"\n<|im_start|>user\n{image}{tool_response(step, error)}", add_special_tokens=False)
    tail = tokenizer.encode("<|im_end|>\n<|im_start|>assistant\n", add_special_tokens=False)
    return head[: OBSERVATION_TOKENS - len(tail)] + tail


def episode_token_budget(max_turns: int, max_turn_tokens: int) -> int:
    """Completion tokens of the longest episode row: every turn's answer and the tool responses between them."""
    return max_turns * max_turn_tokens + (max_turns - 1) * OBSERVATION_TOKENS


def check_token_budget(max_turns: int, max_turn_tokens: int, max_completion_length: int) -> int:
    """The episode budget, or a ValueError naming settings that fit (checked before any weights are loaded)."""
    if max_turns < 1 or max_turn_tokens < 1:
        raise ValueError(f"--max_turns and --max_turn_tokens must be at least 1, got {max_turns}, {max_turn_tokens}")
    budget = episode_token_budget(max_turns, max_turn_tokens)
    if budget > max_completion_length:
        fitting_turns = (max_completion_length + OBSERVATION_TOKENS) // (max_turn_tokens + OBSERVATION_TOKENS)
        raise ValueError(
            f"--max_turns {max_turns} x (--max_turn_tokens {max_turn_tokens} + {OBSERVATION_TOKENS} tool-response "
            f"tokens) - {OBSERVATION_TOKENS} = {budget} tokens per episode, more than --max_completion_length "
            f"{max_completion_length}. Set --max_completion_length {budget}, or --max_turns {fitting_turns} or less."
        )
    return budget
