"""The synthetic twin of AITW: phone screens drawn with PIL (`screens`), scripted episodes of seven task families
(`episodes`), their Aguvis stage-2 records (`aguvis_records`), the files they are written to (`writer`) and the command
line (`cli`: `python dataset/make_synthetic.py --output_dir DIR --episodes N`); GUI-R1-format test sets
(`benchmark_sets`)."""

from r1_gui.synthetic.aguvis_records import make_records
from r1_gui.synthetic.writer import generate

__all__ = ["generate", "make_records"]
