"""predictions.jsonl: the one record of an evaluation, appended as batches finish and read back on resume.

One JSON object a line:

    {"id": "...", "output": "<raw model text>", "prediction": {Action.to_dict()} | null,
     "ground_truth": {Action.to_dict()}, "scores": {"type_match": bool, ...}, "error": null | "why it failed"}

Lines are written whole and flushed (and fsynced) batch by batch, so a crash loses at most the batch in flight and,
at worst, leaves a partial last line, which the next read drops (and cuts from the file) before appending.

Also here: reading a predictions file of another system (``read_predictions_file``), JSON lines
``{"id": ..., "output": ...}``, with errors that name the line.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from r1_gui.evaluation.errors import EvaluationError

logger = logging.getLogger(__name__)

PREDICTIONS_FILE = "predictions.jsonl"


def _lines(path: Path) -> list[tuple[int, bytes]]:
    """(line number from 1, raw line without its newline) for every line, and the last one even without one."""
    data = path.read_bytes()
    return list(enumerate(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"), start=1))


def read_records(path: str | Path, *, repair: bool = True) -> list[dict]:
    """The records of a predictions.jsonl (empty when the file does not exist).

    A last line that is cut short (no newline, or not valid JSON) is dropped, and with ``repair`` also cut from the
    file, so appending goes on from a clean line. Any other bad line, or an id seen twice, raises EvaluationError
    naming the line: the file was edited or written by something else.
    """
    path = Path(path)
    if not path.is_file():
        return []
    data = path.read_bytes()
    lines = data.split(b"\n")
    complete, tail = lines[:-1], lines[-1]  # tail: bytes after the last newline ("" for a whole file)
    records, seen = [], {}
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        record = _parse_record(line, number, path, is_last=not tail and number == len(complete))
        if record is None:  # a cut-short last line that happens to end in a newline: drop it too
            tail, complete = line, complete[: number - 1]
            break
        if record["id"] in seen:
            raise EvaluationError(
                f"{path} line {number}: id {record['id']!r} was already recorded on line {seen[record['id']]}; "
                "remove the duplicate lines or start over in a new --output_dir"
            )
        seen[record["id"]] = number
        records.append(record)
    if tail.strip():
        logger.warning("%s: dropping a partial last line (%d bytes), left by an interrupted run", path, len(tail))
        if repair:
            kept = b"".join(line + b"\n" for line in complete)
            with open(path, "r+b") as handle:
                handle.truncate(len(kept))
    return records


def _parse_record(line: bytes, number: int, path: Path, is_last: bool) -> dict | None:
    try:
        record = json.loads(decode_line(line, path, number))
        if not isinstance(record, dict) or not isinstance(record.get("id"), str) or "scores" not in record:
            raise ValueError("not a predictions.jsonl record (needs an 'id' string and 'scores')")
        return record
    except ValueError as error:
        if is_last:
            return None
        raise EvaluationError(
            f"{path} line {number} is not a valid record ({error}); fix or remove it, or start over in a new "
            "--output_dir"
        ) from None


class RecordWriter:
    """Appends records to a predictions.jsonl, each batch flushed and fsynced before ``write`` returns."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "a", encoding="utf-8")

    def write(self, records: Iterable[dict]) -> None:
        text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
        self._handle.write(text)
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def write_records(path: str | Path, records: Iterable[dict]) -> None:
    """Replace ``path`` with ``records`` atomically (a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(path.name + ".tmp")
    with open(staging, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    os.replace(staging, path)


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def decode_line(raw: bytes, path: Path, number: int) -> str:
    """A line as UTF-8 text (a UTF-8 byte-order mark on line 1 is skipped). json.loads would read bytes in UTF-16 or
    UTF-32 when they start with such a mark, and then fail with an error about that encoding; say what is wrong."""
    if number == 1 and raw.startswith(UTF16_BOMS):
        raise EvaluationError(
            f"{path} line 1 starts with a UTF-16 byte-order mark: the file is not UTF-8 text; save it as UTF-8 "
            "(JSON lines are UTF-8)"
        )
    try:
        return raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as error:
        raise EvaluationError(
            f"{path} line {number} is not UTF-8 text (byte {raw[error.start : error.start + 1]!r} at column "
            f"{error.start + 1}); save the file as UTF-8"
        ) from None


def json_line(raw: bytes, path: Path, number: int) -> Any:
    """The JSON value of line ``number`` of ``path`` (``decode_line``); EvaluationError naming the line when it is
    not valid JSON."""
    try:
        return json.loads(decode_line(raw, path, number))
    except ValueError as error:
        raise EvaluationError(f"{path} line {number} is not valid JSON ({error})") from None


def read_predictions_file(path: str | Path, known_ids: Iterable[str]) -> dict[str, str]:
    """{id: output} from a JSON-lines predictions file ``{"id": ..., "output": "<raw model text>"}``.

    Blank lines are skipped; other keys are ignored, so an r1_gui predictions.jsonl can be scored again; an "output"
    of null means no prediction (a failed sample in r1_gui's own file). Raises EvaluationError naming the line for a
    line that is not UTF-8 text or not a JSON object, lacks a string "id" or an "output" key, has an "output" that is
    neither a string nor null, repeats an id, or names an id that the dataset split does not have.
    """
    path = Path(path)
    if not path.is_file():
        raise EvaluationError(f"--predictions {path} does not exist")
    known = set(known_ids)
    outputs: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, raw in _lines(path):
        if not raw.strip():
            continue
        entry = json_line(raw, path, number)
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise EvaluationError(f'{path} line {number}: expected an object with a string "id", got {raw[:120]!r}')
        identifier = entry["id"]
        if "output" not in entry:
            raise EvaluationError(
                f'{path} line {number} (id {identifier!r}) has no "output" key: give the raw model text, or null for '
                "no prediction"
            )
        output = entry["output"]
        if output is not None and not isinstance(output, str):
            raise EvaluationError(f'{path} line {number} (id {identifier!r}): "output" must be a string or null')
        if identifier in lines:
            raise EvaluationError(
                f"{path} line {number}: id {identifier!r} already appeared on line {lines[identifier]}"
            )
        if identifier not in known:
            raise EvaluationError(
                f"{path} line {number}: id {identifier!r} is not in the dataset split; predictions must use the "
                "dataset's id column"
            )
        lines[identifier] = number
        if output is not None:
            outputs[identifier] = output
    return outputs
