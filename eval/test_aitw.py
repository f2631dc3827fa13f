"""AITW evaluation command line; the code lives in r1_gui.evaluation (see r1_gui/evaluation/steps/cli.py for every flag).

    python eval/test_aitw.py --model_name_or_path runs/ckpt --dataset data/aitw-2k --split test --batch_size 16 \\
        --output_dir results/ckpt [--max_samples N] [--max_new_tokens 256] [--prompt_style aguvis] [--backend vllm]
    python eval/test_aitw.py --dataset data/aitw-2k --split test --predictions preds.jsonl --output_dir results/other
    python eval/test_aitw.py --benchmark screenspot --dataset screenspot_test.parquet --model_name_or_path runs/ckpt \\
        --output_dir results/screenspot
"""

from r1_gui.evaluation.steps.cli import main

if __name__ == "__main__":
    main()
