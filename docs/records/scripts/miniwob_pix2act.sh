#!/usr/bin/env bash
# The MiniWoB++ preset of docs/guide/browsergym.md: Pix2Act's task list through BrowserGym, the tiny model's episode
# evaluation (one episode per task) and the DOM expert's success on the tasks it knows (5 episodes each).
#   bash docs/records/scripts/miniwob_pix2act.sh OUT_DIR
set -euo pipefail
out="${1:-results/miniwob-pix2act}"
mkdir -p "$out"
python -m r1_gui.tiny --arch qwen2_vl --out "$out/tiny-qwen2vl"
python eval/test_phone.py --model_name_or_path "$out/tiny-qwen2vl" --output_dir "$out/tiny" --env browsergym/miniwob \
    --env_tasks pix2act --env_episodes 58 --max_turns 2 --max_new_tokens 32 --max_pixels 12544 --batch_size 4
tasks=$(python -c "
from r1_gui.envs.browsergym.presets import PIX2ACT_TASKS
from r1_gui.envs.web.expert import EXPERTS
print(' '.join(t for t in PIX2ACT_TASKS if t.removesuffix('-nodelay') in EXPERTS))")
for task in $tasks; do
    echo "== $task"
    python -m r1_gui.play --env "browsergym/miniwob.$task" --policy expert --env_episodes 5 --seed 100000 | grep '^success'
done | tee "$out/expert.log"
