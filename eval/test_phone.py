"""Phone (and replay) episode evaluation command line; the code lives in r1_gui.multi_turn.evaluate.

    python eval/test_phone.py --model_name_or_path runs/phone-grpo --episodes 200 --output_dir results/phone \
        [--tasks go_home open_app] [--max_turns 12]
"""

from r1_gui.multi_turn.evaluate import main

if __name__ == "__main__":
    main()
