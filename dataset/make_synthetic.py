"""Write synthetic AITW-like episodes (Aguvis stage-2 schema + target boxes) with rendered phone screenshots.

    python dataset/make_synthetic.py --output_dir data/synthetic-raw --episodes 200 --seed 0

The code lives in r1_gui.synthetic (screens.py draws the screens, episodes.py scripts the tasks, aguvis_records.py and
writer.py write the files), so tests, the demo and the benchmarks import it from the package; see cli.py for
every option.
"""

from r1_gui.synthetic.cli import main, parse_args

if __name__ == "__main__":
    main(parse_args())
