"""The synthetic twin of AITW: phone screens drawn with PIL (`screens`) and scripted episodes in the Aguvis
stage-2 schema (`episodes`). Command line: `python dataset/make_synthetic.py --output_dir DIR --episodes N`."""

from r1_gui.synthetic.episodes import generate, make_records

__all__ = ["generate", "make_records"]
