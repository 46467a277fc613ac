"""The sandbox side of the differential probes: answer each case with one package, as JSON.

Run as ``python -m course.grading.probe_driver`` inside the graded copy. It loads the chapter's
probe module from a file, imports the package's lab modules, evaluates every case and appends
one JSON line per answer to the results file. Nothing here decides a grade: the grader reads
the answers as data and compares them with the reference's own, outside the sandbox. The
canonical form of answers (``to_data``) and of exceptions (``raised``) is shared with the
grader, which applies it to the reference's answers too.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.util
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import IO, Any

from ..harness.records import Event, write_record

PENDING_ATTRIBUTE = "lab_id"
"""A ``NotImplementedError`` carrying this string attribute is a lab stub (as in the reporter)."""

MAX_DEPTH = 40
MAX_NODES = 200_000
MESSAGE_LIMIT = 300

Answer = dict[str, Any]
"""``{"value": data}`` or ``{"raised": category, "message": text}``."""


class TooLarge(Exception):
    """An answer is nested too deep or holds too many values to compare (never a refusal)."""


def to_data(value: object) -> Any:
    """``value`` as plain JSON data: the form in which answers are compared.

    Integral floats become ints (``7.0`` equals ``7``), NaN and infinities become strings,
    tuples become lists, dataclass instances their fields, anything else its type's name.
    """
    budget = [MAX_NODES]

    def convert(item: object, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_DEPTH:
            raise TooLarge(f"an answer larger than {MAX_NODES} values or {MAX_DEPTH} levels")
        if item is None or isinstance(item, bool):
            return item
        if isinstance(item, int):
            return int(item)
        if isinstance(item, float):
            return _number(float(item))
        if isinstance(item, str):
            return str.__str__(item)
        if isinstance(item, Mapping):
            return {str(key): convert(inner, depth + 1) for key, inner in item.items()}
        if isinstance(item, list | tuple):
            return [convert(inner, depth + 1) for inner in item]
        if dataclasses.is_dataclass(item) and not isinstance(item, type):
            fields = dataclasses.fields(item)
            return {f.name: convert(getattr(item, f.name), depth + 1) for f in fields}
        return {"object": type(item).__name__}

    return convert(value, 0)


def _number(value: float) -> int | float | str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def first_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    joined = lines[0] if lines else ""
    return joined if len(joined) <= limit else joined[: limit - 1] + "…"


def raised(error: BaseException) -> Answer:
    """An exception as an answer: ``pending`` for a lab stub, ``ValueError`` for any refusal
    (the chapter's errors all derive from it), else the exception's type name."""
    if isinstance(error, NotImplementedError) and isinstance(
        getattr(error, PENDING_ATTRIBUTE, None), str
    ):
        category = "pending"
    elif isinstance(error, ValueError):
        category = "ValueError"
    else:
        category = type(error).__name__
    return {"raised": category, "message": first_line(f"{type(error).__name__}: {error}")}


Evaluate = Callable[[str, Mapping[str, Any]], Any]


def answer(evaluate: Evaluate, package: str, case: Mapping[str, Any]) -> Answer:
    """One case's answer; whatever the code under test raises becomes part of the answer."""
    try:
        return {"value": to_data(evaluate(package, case))}
    except BaseException as error:  # learner code may raise anything
        return raised(error)


def load_module(path: Path, name: str) -> ModuleType:
    """Import a Python file that is not on ``sys.path`` (a chapter's probe module)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run(
    evaluate: Evaluate,
    package: str,
    modules: Sequence[str],
    cases: Sequence[Mapping[str, Any]],
    stream: IO[str],
) -> None:
    """Import the package's modules, then answer every case, one record at a time."""
    write_record(stream, Event.STARTED)
    for module in modules:
        try:
            importlib.import_module(f"{package}.{module}")
        except BaseException as error:  # reported through the answers
            write_record(stream, Event.IMPORT_ERROR, module=module, **raised(error))
    write_record(stream, Event.IMPORTED)
    for case in cases:
        write_record(stream, Event.START, id=case["id"])
        write_record(stream, Event.ANSWER, id=case["id"], **answer(evaluate, package, case))
    write_record(stream, Event.DONE)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="probe_driver", description=__doc__)
    p.add_argument("--chapter-probes", required=True, help="the chapter's probe module (file)")
    p.add_argument("--package", required=True, help="the package to evaluate")
    p.add_argument("--cases", required=True, help="the cases, a JSON list")
    p.add_argument("--results", required=True, help="append answers here (JSON lines)")
    p.add_argument("--import", dest="modules", action="append", default=[], metavar="MODULE")
    p.add_argument("--lab", dest="labs", action="append", default=[], help="only these labs")
    args = p.parse_args(argv)
    cases = json.loads(Path(args.cases).read_text(encoding="utf-8"))
    chosen = [case for case in cases if not args.labs or case["lab"] in args.labs]
    probes = load_module(Path(args.chapter_probes), "course_chapter_probes")
    with open(args.results, "a", encoding="utf-8") as stream:
        run(probes.evaluate, args.package, args.modules, chosen, stream)
    return 0


if __name__ == "__main__":
    sys.exit(main())
