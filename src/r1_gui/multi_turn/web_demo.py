"""The web demo: `python -m r1_gui.demo --web [--multi_step] --output_dir runs/demo-web [--seed 0] [--fast]`.

The multi-turn demo's stages (`r1_gui.multi_turn.demo`) on real web pages, `r1_gui/Web-v0` (MiniWoB++ in headless
Chromium): a random 6.4 M-parameter Qwen3-VL built locally, its pixels normalised around the pages' white; sight
pretraining on synthetic button pages (`r1_gui.synthetic.pages`: where a button is, in x as in y, and which of a row the
instruction names by its number); an SFT warm start on every turn of the DOM expert's episodes of click tasks, played
through the agent loop; eval/test_phone.py's evaluation on held-out seeds; multi-turn GRPO from the warm start, rewarded
by the page's own success and the click's distance to the expert's; the same evaluation again. Both evaluations report,
beside `success_rate` overall and per task, `click_hit_rate`: the share of turns whose click landed in the element the
expert would have clicked (`info["target_box"]`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from r1_gui.multi_turn.demo import MultiTurnDemoConfig


@dataclass
class WebDemoConfig(MultiTurnDemoConfig):
    """Everything the web demo does; the fields are the multi-turn demo's, the values tuned for web pages."""

    # one reason per setting; what was measured to choose each: docs/records/web_demo.md

    title: str = "Web demo: SFT warm start on expert episodes, then multi-turn GRPO (MiniWoB++ in Chromium)"
    env_id: str = "r1_gui/Web-v0"
    # one click per episode: the reward says where the model clicked
    env_kwargs: dict = field(default_factory=lambda: {"max_steps": 1})
    env_step_timeout: float = 60.0
    # click tasks whose success is where the click lands, none solved by the warm starts
    tasks: tuple[str, ...] = ("click-test", "click-dialog", "click-dialog-2", "focus-text-2")
    # Qwen3-VL's tower has learned position embeddings: it learned where things are in less time
    arch: str = "qwen3_vl"
    # normalised around the pages' white, so their light gray buttons stand out
    pixel_norm: tuple[float, float] | None = (0.95, 0.05)
    # the page at 96 x 160 pixels (3 x 5 image tokens): cheaper sight and GRPO steps
    max_pixels: int = 20000
    history_images: int = 1
    max_turns: int = 1
    # sight first: SFT on expert episodes alone never taught where a button is in x
    sight_steps: int = 1000
    # both cores for the sight and SFT loops (run seeds one after the other)
    sight_sft_threads: int = 2
    sft_episodes: int = 400
    # a warm start whose answers all parse and that leaves GRPO room
    sft_steps: int = 40
    # the web's experts never wait, nor open apps
    sft_wait_share: float = 1.0
    sft_idle_wait_share: float = 0.0
    # 4 pages x 4 episodes a step at lr 5e-5 with a KL term: gains that hold over 90 steps
    grpo_steps: int = 90
    grpo_resets_per_step: int = 4
    num_generations: int = 4
    grpo_learning_rate: float = 5e-5
    grpo_beta: float = 0.04
    # evaluate the mean of the last 30 steps' weights: steadier than any one step's
    grpo_average_last_steps: int = 30
    # colder than the phone demo's 0.7: larger gains from the same warm starts
    temperature: float = 0.5
    # success plus the click's distance to the expert's element: a signal where a whole group fails
    reward_funcs: tuple[str, ...] = ("task_success", "episode_click_distance")
    reward_weights: tuple[float, ...] = (1.0, 1.0)
    eval_batch_size: int = 10

    @classmethod
    def fast(cls) -> WebDemoConfig:
        """A few steps of every stage: checks the pipeline and its artifacts (a test runs it), learns nothing."""
        # the web's one turn; two sight steps check that stage too
        return replace(
            super().fast(), sft_episodes=4, max_turns=cls.max_turns, sight_steps=2, grpo_average_last_steps=1
        )


@dataclass
class MultiStepWebDemoConfig(WebDemoConfig):
    """`--web --multi_step`: the web demo's stages on tasks whose success takes two actions in order, trained from
    one warm start with GRPO and with GiGPO (step-level credit), each evaluated on the same held-out episodes
    (docs/records/web_demo.md, "The multi-step web demo")."""

    title: str = "Multi-step web demo: SFT warm start, then multi-turn GRPO and GiGPO (MiniWoB++ in Chromium)"
    # two clicks in order, each found by sight (no words to read on the page): a click inside the circle, then
    # Submit; expand the section, then Submit where the section pushed it. Tasks with words to read (ONE/TWO, an
    # option's label) or text to type stayed near 0% at this size (docs/records/web_demo.md)
    tasks: tuple[str, ...] = ("circle-center", "click-collapsible")
    # the expert's two actions and one more to mend a miss: a failing episode ends soon
    env_kwargs: dict = field(default_factory=lambda: {"max_steps": 3})
    max_turns: int = 3
    # the screen before this action and the one before it: what the last click changed
    history_images: int = 2
    estimators: tuple[str, ...] = ("grpo", "gigpo")
    # a warm start that leaves GRPO room: the same 40 steps gave 35% to 81% held out at seeds 0-2, so SFT
    # stops once greedy success on its training episodes reaches 0.3 (most groups of 4 still mix successes and
    # failures: 1 - p^4 - (1 - p)^4 = 0.75), checked on 40 of them after every step, at most 80 steps; the checks
    # overshoot the share (0.275 -> 0.575 in one step), and at 0.4 a warm start of 58% left 12 points; checked every
    # 5 steps until one parsed a turn, seed 3's success jumped past the share (0.00 -> 0.65) and left 4 points;
    # checked every step, it still jumped within one step (0.00 -> 0.775): no interval stops inside such a jump
    sft_steps: int = 80
    sft_stop_success: float | None = 0.3
    sft_check_every: int = 1
    # at 5e-4 a check's success jumped from 0 to 0.675 in one step (seed 0), past the stop's share; at 2e-4 it rose
    # over several steps at seeds 0 and 2 (docs/records/web_demo.md)
    sft_learning_rate: float = 2e-4
    # two GRPO stages in the web demo's time: fewer steps each
    grpo_steps: int = 30
    grpo_average_last_steps: int = 10

    @classmethod
    def fast(cls) -> MultiStepWebDemoConfig:
        """The web demo's few steps, with a check of the SFT stop after each (two training episodes)."""
        return replace(super().fast(), sft_check_episodes=2)


def main_web(
    output_dir: str,
    seed: int,
    fast: bool,
    arch: str | None = None,
    multi_step: bool = False,
    rollout_mode: str = "sync",
) -> dict:
    """`python -m r1_gui.demo --web [--multi_step]`: a missing browser is one error line before anything runs; then
    the stages."""
    from r1_gui.cli_errors import UserError
    from r1_gui.envs.web.browser import BrowserError, find_binaries
    from r1_gui.multi_turn.demo import main_multi_turn

    try:
        find_binaries()
    except BrowserError as error:
        raise UserError(f"--web: {error}") from None
    kind = MultiStepWebDemoConfig if multi_step else WebDemoConfig
    return main_multi_turn(output_dir, seed, fast, arch, kind=kind, rollout_mode=rollout_mode)
