"""Published MiniWoB++ task lists, as `--env_tasks` presets of `--env browsergym/miniwob`.

`pix2act`: the 59 tasks of Pix2Act's MiniWoB++ evaluation (Shaw et al., "From Pixels to UI Actions: Learning to Follow
Instructions via Graphical User Interfaces", NeurIPS 2023, arXiv 2306.00245), as its public code lists them
(google-deepmind/pix2act, pix2act/tasks/miniwob/eval/tasks.txt); the paper reports per-task success beside CC-Net's
(Humphreys et al., 2022). docs/guide/browsergym.md puts r1_gui's figures on these tasks beside the published ones.
"""

PIX2ACT_TASKS = (
    "bisect-angle", "choose-date-nodelay", "circle-center", "click-button", "click-button-sequence",
    "click-checkboxes", "click-checkboxes-large", "click-checkboxes-soft", "click-checkboxes-transfer",
    "click-collapsible-2-nodelay", "click-collapsible-nodelay", "click-color", "click-dialog", "click-dialog-2",
    "click-link", "click-option", "click-pie-nodelay", "click-shades", "click-shape", "click-tab", "click-tab-2",
    "click-tab-2-easy", "click-tab-2-hard", "click-tab-2-medium", "click-test", "click-test-2", "click-test-transfer",
    "click-widget", "count-shape", "count-sides", "drag-box", "drag-item", "drag-items", "drag-items-grid",
    "drag-shapes", "drag-sort-numbers", "email-inbox-delete", "email-inbox-important", "enter-date", "enter-text-2",
    "enter-time", "find-midpoint", "grid-coordinate", "identify-shape", "navigate-tree", "number-checkboxes",
    "resize-textarea", "right-angle", "simple-algebra", "simple-arithmetic", "text-transform", "tic-tac-toe",
    "unicode-test", "use-autocomplete-nodelay", "use-colorwheel", "use-colorwheel-2", "use-slider", "use-slider-2",
    "visual-addition",
)  # fmt: skip
MINIWOB_PRESETS = {"pix2act": PIX2ACT_TASKS}
