"""The web demo: `python -m r1_gui.demo --web --output_dir runs/demo-web [--seed 0] [--fast]`.

The multi-turn demo's stages (`r1_gui.multi_turn.demo`) on real web pages, `r1_gui/Web-v0` (MiniWoB++ in headless
Chromium): a random 6.4 M-parameter Qwen3-VL built locally, its pixels normalised around the pages' white; an SFT
warm start on every turn of the DOM expert's episodes of click tasks, played through the agent loop;
eval/test_phone.py's evaluation on held-out seeds; multi-turn GRPO from the warm start, rewarded by the page's own
success and the click's distance to the expert's; the same evaluation again. Both evaluations report, beside
`success_rate` overall and per task, `click_hit_rate`: the share of turns whose click landed in the element the
expert would have clicked (`info["target_box"]`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from r1_gui.multi_turn.demo import MultiTurnDemoConfig


@dataclass
class WebDemoConfig(MultiTurnDemoConfig):
    """Everything the web demo does; the fields are the multi-turn demo's, the values tuned for web pages."""

    title: str = "Web demo: SFT warm start on expert episodes, then multi-turn GRPO (MiniWoB++ in Chromium)"
    env_id: str = "r1_gui/Web-v0"
    # one action per episode: each of these tasks is one click on the right element, so the reward says where the
    # model clicked, not how it recovered from a wrong click
    env_kwargs: dict = field(default_factory=lambda: {"max_steps": 1})
    env_step_timeout: float = 60.0
    tasks: tuple[str, ...] = ("click-test", "click-dialog", "click-dialog-2", "click-tab")
    # The model must see where a target is. MiniWoB's buttons and dialogs are light gray (#efefef) on white: 6% of the
    # pixel range, 0.13 after the checkpoints' normalisation (Qwen3-VL's mean and std 0.5), which a random model's
    # patch embedding does not tell from white. With the Qwen-VL normalisation, the warm start clicked ONE point per
    # task whatever the page (click-test, click-dialog: 1 distinct click in 25 held-out episodes; Qwen2-VL and
    # Qwen3-VL, 300 to 900 SFT steps, also at 2x scale). Normalised around white (mean 0.95, std 0.05) the gray is
    # 1.3 from white, and the warm start's clicks vary with the page (seed 0, 300 steps: 10 and 14 distinct clicks;
    # success 55% -> 74%), in y though not in x (README, "The web demo"). Qwen3-VL: its vision tower adds learned
    # absolute position embeddings (Qwen2-VL's has rotary ones only), and at 300 steps it had learned click-tab (100%;
    # Qwen2-VL 28%) in a third less time (216 s against 321 s).
    arch: str = "qwen3_vl"
    pixel_norm: tuple[float, float] | None = (0.95, 0.05)
    max_pixels: int = 50176
    history_images: int = 1
    max_turns: int = 1
    sft_episodes: int = 400
    # 300 steps: the answer parses (after 100, half of the turns do not) and the clicks are still often wrong
    sft_steps: int = 300
    grpo_steps: int = 80
    # the page's success, and the distance to the element the expert clicks: a signal in groups that all fail
    reward_funcs: tuple[str, ...] = ("task_success", "episode_click_distance")
    reward_weights: tuple[float, ...] = (1.0, 0.5)
    eval_batch_size: int = 10

    @classmethod
    def fast(cls) -> WebDemoConfig:
        """A few steps of every stage: checks the pipeline and its artifacts (a test runs it), learns nothing."""
        # the web's one turn; two sight steps check that stage too
        return replace(super().fast(), sft_episodes=4, max_turns=cls.max_turns, sight_steps=2)


def main_web(output_dir: str, seed: int, fast: bool, arch: str | None = None) -> dict:
    """`python -m r1_gui.demo --web`: a missing browser is one error line before anything runs; then the stages."""
    from r1_gui.cli_errors import UserError
    from r1_gui.envs.browser import BrowserError, find_binaries
    from r1_gui.multi_turn.demo import main_multi_turn

    try:
        find_binaries()
    except BrowserError as error:
        raise UserError(f"--web: {error}") from None
    return main_multi_turn(output_dir, seed, fast, arch, kind=WebDemoConfig)
