"""A demo with some of its settings changed, as the records' tries ran it (docs/records/multi_turn_demo.md and
web_demo.md cite it; it was /work/explore/phone_demo.py, not in the repository, on the machines they were
measured on):

    python docs/records/scripts/demo_with.py runs/idle-s0 --seed 0 --set '{"sft_idle_wait_share": 0.5}'
    python docs/records/scripts/demo_with.py runs/ms-s0 --seed 0 --kind web_ms --set '{"sft_check_every": 1}'

--set replaces fields of the demo's settings (--kind phone: `MultiTurnDemoConfig`, `python -m r1_gui.demo
--multi_turn`; web: `WebDemoConfig`, `--web`; web_ms: `MultiStepWebDemoConfig`, `--web --multi_step`), then the demo
runs every stage into OUTPUT_DIR and prints its report. A record's figures are those of the commit it names: the same
settings on other code may give others.
"""

import argparse
from dataclasses import fields, replace
from pathlib import Path

from r1_gui.cli_errors import UserError, cli_main, command_parser, user_errors
from r1_gui.flags import parse_json_object


def demo_kinds() -> dict:
    from r1_gui.multi_turn.demo import MultiTurnDemoConfig
    from r1_gui.multi_turn.web_demo import MultiStepWebDemoConfig, WebDemoConfig

    return {"phone": MultiTurnDemoConfig, "web": WebDemoConfig, "web_ms": MultiStepWebDemoConfig}


def settings(kind: str, changes: str):
    """The demo's default settings of ``kind`` with the fields of the JSON object ``changes`` replaced (a list for a
    tuple field); a field the settings lack is a UserError naming the valid ones."""
    config_class = demo_kinds()[kind]
    with user_errors():
        given = parse_json_object(changes, "--set", "of settings, e.g. '{\"sft_steps\": 800}'")
    names = {field.name for field in fields(config_class)}
    unknown = sorted(set(given) - names)
    if unknown:
        raise UserError(
            f"--set: {config_class.__name__} has no setting(s) {unknown}; valid: {', '.join(sorted(names))}"
        )
    config = config_class()
    tuples = {name for name in given if isinstance(getattr(config, name), tuple)}
    return replace(config, **{name: tuple(value) if name in tuples else value for name, value in given.items()})


@cli_main
def main(argv: list[str] | None = None) -> dict:
    parser: argparse.ArgumentParser = command_parser(__doc__, prog="python docs/records/scripts/demo_with.py")
    parser.add_argument("output_dir", help="a new folder for the demo's stages and report")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kind", choices=("phone", "web", "web_ms"), default="phone", help="which demo (phone)")
    parser.add_argument("--set", default="{}", help="settings to change, as a JSON object")
    args = parser.parse_args(argv)
    config = settings(args.kind, args.set)
    from r1_gui.multi_turn.demo import run_multi_turn_demo

    report = run_multi_turn_demo(args.output_dir, args.seed, config)
    print((Path(args.output_dir) / "report.md").read_text())
    return report


if __name__ == "__main__":
    main()
