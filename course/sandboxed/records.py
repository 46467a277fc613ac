"""The records the graded child writes, one JSON object a line: their writer and the schema
the grader's reader (``harness/records.py``) checks, so the two cannot drift apart."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import IO, Any


class Event(StrEnum):
    """What a record says happened (and the fields it carries)."""

    COLLECTED = "collected"  # tests: [{nodeid, name, lab}]
    COLLECT_ERROR = "collect_error"
    START = "start"  # a test (nodeid) or a probe case (id) begins
    CALL = "call"  # a test's own code begins: its setup (importing the code under test) is done
    END = "end"  # status, message, duration (and frames, shown, fatal, output, output_more)
    EXIT = "exit"  # the code under test called os._exit: code, frames
    INTERRUPTED = "interrupted"
    FINISH = "finish"
    STARTED = "started"  # the probe driver runs
    IMPORT_ERROR = "import_error"
    IMPORTED = "imported"  # the probe driver imported the package's lab modules
    ANSWER = "answer"  # a probe case's answer: id and value, or raised and message
    DONE = "done"  # the probe driver answered every case


OUTPUT_LINES = 6  # first lines of a failing test's printed output kept; the rest counted
OUTPUT_CHARS = 4000  # characters of a test's printed output kept while it runs


SHAPES: dict[str, tuple[tuple[str, ...], ...]] = {
    Event.COLLECTED: (("tests",),),
    Event.START: (("nodeid", "id"),),
    Event.END: (("nodeid",),),
    Event.ANSWER: (("id",),),
}
"""The fields each event needs: every group, by one of its fields at least."""
TYPES: dict[str, type | tuple[type, ...]] = {
    "event": str,
    "tests": list,
    "nodeid": str,
    "id": str,
    "name": str,
    "duration": (int, float),
}
"""The type a field has whenever it is present (in a record, or in one of ``tests``)."""


def well_formed(record: dict[str, Any]) -> bool:
    """Whether ``record`` has the fields its event needs, each of its type (``SHAPES``)."""
    if not _typed(record):  # first: an event that is not a string cannot be looked up
        return False
    for group in SHAPES.get(record.get("event", ""), ()):
        if not any(name in record for name in group):
            return False
    tests = record.get("tests", [])
    return all(isinstance(t, dict) and _typed(t) and "nodeid" in t and "name" in t for t in tests)


def _typed(table: dict[str, Any]) -> bool:
    return all(isinstance(table[name], kind) for name, kind in TYPES.items() if name in table)


def write_record(stream: IO[str], event: Event, **fields: Any) -> None:
    """Append one record and flush it, so the reader sees it even if the process dies next."""
    record = {"event": str(event), **fields}
    stream.write(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
    stream.flush()
