"""Build the GRPO training data: Aguvis stage-2 AITW records (or GUI-R1 parquet) -> train/test parquet.

    python dataset/raw_load_data.py --input aitw-l1.json --image_dir /data/aguvis/aitw-v1/images \
        --output_dir data/aitw-2k --num_samples 2000 --test_size 0.1 --seed 42
    python dataset/raw_load_data.py --input data/synthetic/synthetic-l2.json --output_dir data/synthetic-2k \
        --num_samples 2000 --balance_actions --export llamafactory guir1
    python dataset/raw_load_data.py --input_format guir1 --input guir1/train.parquet --output_dir data/from-guir1

The code lives in r1_gui.builder (so the demo, benchmarks and tests import it); see its docstring for the columns,
the skip reasons and every option (`--help`).
"""

from r1_gui.builder import main

if __name__ == "__main__":
    main()
