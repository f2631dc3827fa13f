"""Flags, each declared once: a typed field of its concern's dataclass, with its help. Every command's parser and the
training commands' pre-check are built from these declarations (docs/guide/training.md, "Adding a flag").

    from dataclasses import dataclass
    from r1_gui.flags import Flags, flag

    @dataclass
    class RolloutFlags(Flags):
        max_staleness: int = flag(4, "Policy versions a sample may lag behind before it is dropped; 0: on-policy.")

        def problems(self) -> list[str]:
            late = [] if self.max_staleness >= 0 else [f"--max_staleness must be 0 or more, got {self.max_staleness}"]
            return [*super().problems(), *late]

- A training command lists the dataclass among its argument classes (`r1_gui.training.flags`): trl's parser makes
  each field a flag, the pre-check (`r1_gui.training.precheck`) types and checks its value before torch and trl are
  imported, and `--help` shows it.
- An argparse command (the evaluations, play, the demo) adds the same options with `add_flags(parser, RolloutFlags)`
  (as trl's parser would: type, choices, list values, `--no_X` for a flag that is on by default) and checks the
  parsed values with `checked_flags(args, RolloutFlags)`.
- Another dataclass that needs the flag with a default of its own declares `flag_of(RolloutFlags, "max_staleness",
  default=0)`: the help stays where the flag was declared.

`Flags.problems()` lists every bad value at once, each message naming its flag; `__post_init__` raises them as one
ValueError. tests/test_flags.py fails when two commands describe one flag differently. Light: imports nothing heavy.
"""

from __future__ import annotations

import argparse
import copy
import json
import types
import typing
from collections.abc import Iterable
from dataclasses import MISSING, Field, field, fields
from typing import Any

KEEP = object()  # flag_of: keep the declaration's value
TRUE_WORDS = ("yes", "true", "t", "y", "1")  # what trl's parser (transformers' string_to_bool) reads as a bool
FALSE_WORDS = ("no", "false", "f", "n", "0")


def flag(
    default: Any = MISSING, help: str = "", *, choices: Iterable | None = None, aliases: Iterable[str] = ()
) -> Field:
    """A dataclass field that is a flag: its default, its help (said once, here), its choices and other option
    strings (``aliases``, e.g. ``["--env"]``). A list or dict default is copied for each instance."""
    metadata: dict[str, Any] = {"help": help}
    if choices is not None:
        metadata["choices"] = list(choices)
    if aliases:
        metadata["aliases"] = list(aliases)
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: copy.deepcopy(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def declaration(owner: type, name: str) -> Field:
    """The field that declares flag ``name`` in the dataclass ``owner``."""
    try:
        return owner.__dataclass_fields__[name]
    except KeyError:
        raise KeyError(f"{owner.__name__} declares no flag {name!r}") from None


def flag_of(owner: type, name: str, *, default: Any = KEEP, aliases: Iterable[str] | object = KEEP) -> Field:
    """Flag ``name`` as ``owner`` declares it (its help and choices), for another dataclass, with that dataclass's own
    ``default`` or ``aliases`` where given."""
    source = declaration(owner, name)
    metadata = dict(source.metadata)
    if aliases is not KEEP:
        metadata.pop("aliases", None)
        if aliases:
            metadata["aliases"] = list(aliases)
    if default is KEEP:
        if source.default_factory is not MISSING:
            return field(default_factory=source.default_factory, metadata=metadata)
        default = source.default
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: copy.deepcopy(default), metadata=metadata)
    return field(default=default, metadata=metadata)


def default_of(owner: type, name: str) -> Any:
    """The default of flag ``name`` in ``owner`` (a fresh copy for a list or dict)."""
    source = declaration(owner, name)
    return source.default_factory() if source.default_factory is not MISSING else source.default


class FlagProblems(ValueError):
    """Bad flag values, each message naming its flag (``problems``), as one ValueError."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = list(problems)


class Flags:
    """Base of a dataclass of flags that checks its values: `problems` lists what is wrong (each message naming its
    flag; a subclass adds its own to ``super().problems()``), and `__post_init__` raises them as `FlagProblems`."""

    def problems(self) -> list[str]:
        return []

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise FlagProblems(problems)
        getattr(super(), "__post_init__", lambda: None)()  # a dataclass combined with this one (trl's) checks its own


# ------------------------------------------------------------------------------------------- types and values


def value_type(owner: type, name: str) -> tuple[type, bool]:
    """(the type of one value, whether the flag takes a list of them) of flag ``name`` of ``owner``, read from its
    annotation as trl's parser reads it (``X | None`` is X, ``list[X]`` is a list of X)."""
    hint = typing.get_type_hints(owner)[name]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = next(arg for arg in typing.get_args(hint) if arg is not type(None))
    if typing.get_origin(hint) is list:
        return typing.get_args(hint)[0], True
    return hint, False


def to_bool(text: str | bool) -> bool:
    """A bool flag's value, read as trl's parser reads it."""
    if isinstance(text, bool):
        return text
    if text.lower() in TRUE_WORDS:
        return True
    if text.lower() in FALSE_WORDS:
        return False
    raise argparse.ArgumentTypeError(f"expected true or false (or yes/no, 1/0), got {text!r}")


def typed(owner: type, name: str, value: Any) -> Any:
    """A value given for flag ``name`` (the command line's words, or a YAML recipe's value) as its declared type;
    ValueError naming the flag when it is not one. A recipe's values are kept as YAML typed them (so trl does)."""
    kind, many = value_type(owner, name)
    if many:
        words = value if isinstance(value, list) else [value]
        return [_one(kind, name, word) for word in words]
    return _one(kind, name, value[0] if isinstance(value, list) and len(value) == 1 else value)


def _one(kind: type, name: str, value: Any) -> Any:
    if not isinstance(value, str) or kind is str:
        return value
    try:
        return to_bool(value) if kind is bool else kind(value)
    except (ValueError, argparse.ArgumentTypeError):
        what = {int: "a whole number", float: "a number", bool: "true or false"}.get(kind, kind.__name__)
        raise ValueError(f"--{name} {value}: expected {what}") from None


def parse_json_object(text: str | dict | None, flag: str, what: str) -> dict:
    """A flag's JSON object ({} when not given; a dict, as a YAML recipe gives it, as it is); ValueError naming
    `flag` and saying `what` it holds otherwise."""
    if not text:
        return {}
    if isinstance(text, dict):
        return dict(text)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{flag} is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{flag} must be a JSON object {what}, got {text}")
    return value


def at_least(name: str, value: Any, lowest: float) -> list[str]:
    """[] when ``value`` is at least ``lowest``, else the problem naming --``name``."""
    return [] if value >= lowest else [f"--{name} must be at least {lowest}, got {value}"]


# ------------------------------------------------------------------------------------------- argparse commands


def help_with_default(text: str, default: Any) -> str:
    """A flag's help as an argparse command shows it: its declared text and, when it has one, its default (a switch
    that is off by default shows none)."""
    shown = default if not isinstance(default, list) else " ".join(map(str, default))
    suffix = "" if default is None or default is False or shown in ("", {}) else f" (default: {shown})"
    return (text + suffix).replace("%", "%%")


def add_flags(
    parser,
    owner: type,
    only: Iterable[str] | None = None,
    *,
    defaults: dict[str, Any] | None = None,
    aliases: dict[str, Iterable[str]] | None = None,
    required: Iterable[str] = (),
    choices: dict[str, Iterable] | None = None,
) -> None:
    """Add the flags ``owner`` declares (``only`` those named, in that order) to an argparse parser or group, as
    trl's parser makes them: the type of the annotation, a list for ``list[X]``, ``--X [true|false]`` and ``--no_X``
    (when on by default) for a bool, the declared choices and help. ``defaults``, ``aliases``, ``required`` and
    ``choices`` (names kept in a module above the declaration's) are this command's own."""
    defaults, aliases, choices = defaults or {}, aliases or {}, choices or {}
    declared = {f.name: f for f in fields(owner) if f.init}
    for name in only if only is not None else declared:
        source = declared[name]
        default = defaults[name] if name in defaults else default_of(owner, name)
        kind, many = value_type(owner, name)
        kwargs: dict[str, Any] = {"help": help_with_default(source.metadata.get("help", ""), default)}
        if name in required:
            kwargs["required"] = True
        else:
            kwargs["default"] = default
        if name in choices or "choices" in source.metadata:
            kwargs["choices"] = list(choices.get(name, source.metadata.get("choices", ())))
        if kind is bool:
            kwargs.update(type=to_bool, nargs="?", const=True, metavar="true|false")
        else:
            kwargs.update(type=kind, nargs="+" if many else None)
        names = aliases[name] if name in aliases else source.metadata.get("aliases", [])
        parser.add_argument(f"--{name}", *names, **kwargs)
        if kind is bool and default is True:
            parser.add_argument(f"--no_{name}", action="store_false", dest=name, help=f"turn --{name} off")


def checked_flags(args, *owners: type) -> list:
    """Each of ``owners`` built from the parsed ``args`` (the flags it declares that ``args`` holds; the rest keep
    their defaults), its values checked: every problem of every owner in one UserError."""
    from r1_gui.cli_errors import UserError

    built, problems = [], []
    for owner in owners:
        values = {f.name: getattr(args, f.name) for f in fields(owner) if f.init and hasattr(args, f.name)}
        try:
            built.append(owner(**values))
        except ValueError as error:
            problems += getattr(error, "problems", [str(error)])
    if problems:
        raise UserError("; ".join(problems))
    return built
