"""Prompt styles: what the model is asked and what it is taught to answer, in each style and coordinate system."""

import pytest

from r1_gui.actions import Action, coordinate_tolerance, extract_action, format_action, same_arguments
from r1_gui.prompts import (
    AGUVIS_SYSTEM_PROMPT,
    MOBILE_USE_ROLE,
    attach_image,
    build_prompt,
    build_target,
    chat_template_kwargs,
    default_coordinates,
    default_prompt_style,
    mobile_use_tool,
    resolve_prompt_style,
    stop_token,
)
from r1_gui.rewards import REWARD_FUNCS

PROBLEM = (
    "Please generate the next move according to the ui screenshot, instruction and previous actions.\n\n"
    "Instruction: Open the Clock app\n\nPrevious actions:\nNone"
)


@pytest.mark.parametrize(
    "model_type, style, expected",
    [
        ("qwen2_vl", "aguvis", "normalized"),  # Aguvis-7B prints fractions
        ("qwen2_vl", "think_answer", "grid1000"),  # base Qwen2-VL grounds on 0-1000
        ("qwen2_vl", "mobile_use", "grid999"),  # the mobile_use tool's grid
        ("qwen2_5_vl", "think_answer", "pixels"),  # Qwen2.5-VL: pixels of the resized screenshot
        ("qwen2_5_vl", "aguvis", "pixels"),
        ("qwen3_vl", "mobile_use", "grid999"),  # Qwen3-VL's mobile agent: the 999x999 screen
        ("qwen3_vl", "think_answer", "grid999"),  # the architecture's grid, whatever the style
        ("qwen3_vl_moe", "aguvis", "grid999"),
        ("", "think_answer", "grid1000"),  # no model (a predictions file): from the style alone
    ],
)
def test_default_coordinates(model_type, style, expected):
    assert default_coordinates(model_type, style) == expected


@pytest.mark.parametrize(
    "asked, model_type, expected",
    [
        ("auto", "qwen3_vl", "mobile_use"),  # Qwen3-VL was trained for GUI work in the mobile_use format
        ("auto", "qwen3_vl_moe", "mobile_use"),
        ("auto", "qwen2_vl", "aguvis"),  # Aguvis-7B's own; the default before auto, unchanged
        ("auto", "qwen2_5_vl", "aguvis"),
        ("auto", None, "aguvis"),  # no model: as before
        ("think_answer", "qwen3_vl", "think_answer"),  # a named style is kept
    ],
)
def test_auto_prompt_style_follows_the_architecture(asked, model_type, expected):
    assert resolve_prompt_style(asked, model_type) == expected
    if asked == "auto":
        assert default_prompt_style(model_type) == expected


def test_an_unknown_prompt_style_is_refused_even_with_a_model():
    with pytest.raises(ValueError, match="valid styles: aguvis, think_answer, mobile_use"):
        resolve_prompt_style("qwen3", "qwen3_vl")


@pytest.mark.parametrize(
    "coordinates, screen_size, resolution",
    [
        ("grid999", None, "The screen's resolution is 999x999"),  # Qwen3-VL's mobile agent
        ("pixels", (448, 1036), "The screen's resolution is 448x1036"),  # Qwen2.5-VL: the resized screenshot
        ("normalized", None, "Coordinates are fractions of the screen width"),  # no resolution to state
    ],
)
def test_mobile_use_system_message_is_qwen3_vls_own_rendering_of_the_tool(
    tiny_qwen3_vl, coordinates, screen_size, resolution
):
    """The mobile_use system message is what Qwen3-VL's own chat template writes for a system message and the
    mobile_use tool (passed as `tools`): the layout its mobile agent was trained on."""
    from importlib import resources

    from r1_gui.processing import load_processor

    processor = load_processor(tiny_qwen3_vl)
    stock = resources.files("trl").joinpath("chat_templates/qwen3_vl.jinja").read_text()
    tool = mobile_use_tool(coordinates, screen_size)
    assert resolution in tool["function"]["description"]
    user = {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": PROBLEM}]}
    ours = build_prompt(PROBLEM, "mobile_use", coordinates, screen_size)
    ours = processor.apply_chat_template(attach_image(ours), tokenize=False, add_generation_prompt=True)
    theirs = processor.apply_chat_template(
        [{"role": "system", "content": MOBILE_USE_ROLE}, user],
        tools=[tool],
        tokenize=False,
        add_generation_prompt=True,
        chat_template=stock,
    )
    assert ours == theirs


def test_aguvis_prompt_is_aguvis_system_then_the_human_turn():
    prompt = build_prompt(PROBLEM, "aguvis")
    assert prompt == [{"role": "system", "content": AGUVIS_SYSTEM_PROMPT}, {"role": "user", "content": PROBLEM}]
    assert AGUVIS_SYSTEM_PROMPT.startswith("You are a GUI agent.")
    assert '"name": "mobile.swipe"' in AGUVIS_SYSTEM_PROMPT


def test_image_goes_before_the_user_text_as_in_training():
    messages = attach_image(build_prompt(PROBLEM, "think_answer"))
    assert messages[1]["content"] == [{"type": "image"}, {"type": "text", "text": PROBLEM}]
    assert isinstance(messages[0]["content"], str)


def test_pixel_prompts_state_the_screen_size():
    system = build_prompt(PROBLEM, "think_answer", "pixels", (448, 1036))[0]["content"]
    assert "448x1036 pixels" in system


def test_unknown_style_is_refused_with_the_valid_ones():
    with pytest.raises(ValueError, match="aguvis, think_answer, mobile_use"):
        build_prompt(PROBLEM, "r1")


def test_aguvis_generation_opens_the_plan_channel_and_stops_at_the_diff_marker():
    assert chat_template_kwargs("aguvis") == {"generation_recipient": "all"}
    assert stop_token("aguvis") == "<|diff_marker|>"
    assert chat_template_kwargs("think_answer") == {}
    assert stop_token("mobile_use") == "<|im_end|>"


CLICK = Action("click", x=0.25, y=0.5)


@pytest.mark.parametrize(
    "style, coordinates, screen_size, action",
    [
        ("aguvis", "normalized", None, CLICK),
        ("think_answer", "pixels", (448, 1036), CLICK),  # 112, 518 in pixels
        ("think_answer", "grid1000", None, Action("type", text="pizza")),
        ("mobile_use", "grid999", None, CLICK),
        ("mobile_use", "grid999", None, Action("back")),
    ],
)
def test_targets_extract_back_to_their_action_and_earn_full_format_reward(style, coordinates, screen_size, action):
    """An SFT target is exactly what the GRPO rewards accept: format 1, accuracy 1."""
    target = build_target(action, "Thought: the icon is there.\nAction: click it.", style, coordinates, screen_size)
    if style == "aguvis":  # decoded with special tokens skipped, the two channels read like this
        text = f"{target[0]['content']}\nassistantos\n{target[1]['content']}"
    else:
        text = target[0]["content"]
    # grids quantize (0.5 on the 999 grid is 500/999): equal within half a grid unit
    tolerance = coordinate_tolerance(coordinates, screen_size)
    assert same_arguments(
        extract_action(text, coordinates=coordinates, image_size=screen_size), action, tolerance=tolerance
    )
    kwargs = {"coordinates": coordinates, "screen_size": [screen_size], "prompt_style": style}
    solution = [f"<answer>{format_action(action)}</answer>"]
    assert REWARD_FUNCS["format"]([text], solution=solution, **kwargs) == [1.0]
    assert REWARD_FUNCS["accuracy"]([text], solution=solution, **kwargs) == [1.0]


def test_aguvis_target_uses_the_two_channels():
    target = build_target(CLICK, "Action: Click on Clock.", "aguvis")
    assert [(m["recipient"], m["end_turn"]) for m in target] == [("all", False), ("os", True)]
    assert target[1]["content"] == "pyautogui.click(x=0.25, y=0.5)"


def test_an_empty_plan_gets_a_minimal_action_line():
    target = build_target(Action("home"), "", "think_answer")
    assert target[0]["content"] == "<think>\nAction: home.\n</think>\n<answer>mobile.home()</answer>"


class _Tokenizer:
    """The three things stop_token_ids reads of a tokenizer."""

    def __init__(self, vocab: dict[str, int], eos_token_id: int | None, unk_token_id: int | None = None):
        self.vocab, self.eos_token_id, self.unk_token_id = vocab, eos_token_id, unk_token_id

    def convert_tokens_to_ids(self, token: str) -> int | None:
        return self.vocab.get(token, self.unk_token_id)


QWEN_VOCAB = {"<|im_end|>": 7, "<|diff_marker|>": 9, "<|endoftext|>": 3}


@pytest.mark.parametrize(
    "style, eos, expected",
    [
        ("aguvis", 3, [9]),  # aguvis stops at <|diff_marker|> only: its eos closes the plan before the action
        ("think_answer", 3, [7, 3]),  # <|im_end|>, then the tokenizer's eos
        ("mobile_use", 7, [7]),  # eos is <|im_end|> itself: listed once
        ("mobile_use", None, [7]),  # a tokenizer without eos adds nothing
    ],
)
def test_stop_token_ids_one_list_for_training_evaluation_and_multi_turn(style, eos, expected):
    from r1_gui.prompts import stop_token_ids

    assert stop_token_ids(_Tokenizer(QWEN_VOCAB, eos), style) == expected


def test_stop_token_ids_names_the_missing_token():
    from r1_gui.prompts import stop_token_ids

    with pytest.raises(ValueError, match=r"no <\|diff_marker\|> token, which the aguvis prompt style needs"):
        stop_token_ids(_Tokenizer({"<|im_end|>": 7}, 7, unk_token_id=0), "aguvis")
