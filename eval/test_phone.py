"""Episode evaluation command line (any environment that keeps r1_gui's contract); the code lives in
r1_gui.evaluation.episodes.cli and r1_gui.evaluation.episodes.run.

    python eval/test_phone.py --model_name_or_path runs/demo-mt/grpo --env_episodes 200 --output_dir results/phone \\
        [--env r1_gui/Phone-v0] [--env_tasks go_home open_app] [--max_turns 12]
"""

from r1_gui.evaluation.episodes.cli import main

if __name__ == "__main__":
    main()
