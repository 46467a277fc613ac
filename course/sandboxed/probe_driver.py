"""The sandbox side of the differential probes: answer each case with one package, as JSON.

Run as ``python -m course.sandboxed.probe_driver`` inside the graded copy; nothing here decides
a grade: the grader compares the answers with the reference's own, outside the sandbox.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import IO

from .frames import learner_frames, traceback_triples
from .isolation import Isolation
from .probecases import AGAIN, ONCE, Answer, Case, Evaluate, answer, raised, to_data
from .records import Event, write_record


def load_module(path: Path, name: str) -> ModuleType:
    """Import a Python file that is not on ``sys.path`` (a chapter's probe module)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def answer_with_frames(
    evaluate: Evaluate, package: str, case: Case
) -> tuple[Answer, list[dict[str, object]]]:
    """One case's answer and, when the code under test raised, the package's frames it passed
    through (``checkpoint 11 --replay`` shows them)."""
    try:
        return {"value": to_data(evaluate(package, case))}, []
    except BaseException as error:  # learner code may raise anything
        module = sys.modules.get(package)
        where = getattr(module, "__file__", None)
        if not isinstance(where, str):
            return raised(error), []
        found = learner_frames(traceback_triples(error.__traceback__), Path(where).parent)
        return raised(error), [frame.to_json() for frame in found]


def run(
    evaluate: Evaluate,
    package: str,
    modules: Sequence[str],
    cases: Sequence[Case],
    stream: IO[str],
    frames: bool = False,
    again: bool = False,
) -> None:
    """Import the package's modules, then answer every case, one record at a time (with the
    package's frames of an exception, when ``frames``); with ``again``, every case not marked
    ``ONCE`` a second time, in reverse order, its records marked ``AGAIN``."""
    write_record(stream, Event.STARTED)
    for module in modules:
        try:
            importlib.import_module(f"{package}.{module}")
        except BaseException as error:  # reported through the answers
            write_record(stream, Event.IMPORT_ERROR, module=module, **raised(error))
    isolation = Isolation.from_environment()
    write_record(stream, Event.IMPORTED)
    gc.freeze()  # a process of its own: what it imported stays out of the cases' collections
    asked = [(case, False) for case in cases]
    if again:
        asked += [(case, True) for case in reversed(cases) if not case.get(ONCE)]
    for case, second in asked:
        marks = {AGAIN: True} if second else {}
        write_record(stream, Event.START, id=case["id"], **marks)
        if isolation is not None:
            try:
                isolation.activate(str(case["lab"]))
            except Exception as error:  # the lab's own module does not import
                write_record(stream, Event.ANSWER, id=case["id"], **raised(error), **marks)
                continue
        if not frames:
            got = answer(evaluate, package, case)
            write_record(stream, Event.ANSWER, id=case["id"], **got, **marks)
            continue
        got, passed = answer_with_frames(evaluate, package, case)
        write_record(stream, Event.ANSWER, id=case["id"], **got, frames=passed, **marks)
    write_record(stream, Event.DONE)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="probe_driver", description=__doc__)
    p.add_argument("--chapter-probes", required=True, help="the chapter's probe module (file)")
    p.add_argument("--package", required=True, help="the package to evaluate")
    p.add_argument("--cases", required=True, help="the cases, a JSON list (-: standard input)")
    p.add_argument("--results", required=True, help="append answers here (JSON lines)")
    p.add_argument("--import", dest="modules", action="append", default=[], metavar="MODULE")
    p.add_argument("--lab", dest="labs", action="append", default=[], help="only these labs")
    p.add_argument("--frames", action="store_true", help="the package's frames of an exception")
    p.add_argument("--again", action="store_true", help="ask the cases again, in reverse order")
    args = p.parse_args(argv)
    if args.cases == "-":  # given on a pipe only this process holds, read before any import
        cases = json.loads(sys.stdin.buffer.read())
        sys.stdin.close()
    else:
        cases = json.loads(Path(args.cases).read_text(encoding="utf-8"))
    chosen = [case for case in cases if not args.labs or case["lab"] in args.labs]
    probes = load_module(Path(args.chapter_probes), "course_chapter_probes")
    with open(args.results, "a", encoding="utf-8") as stream:
        run(probes.evaluate, args.package, args.modules, chosen, stream, args.frames, args.again)
    return 0


if __name__ == "__main__":
    sys.exit(main())
