"""Pytest plugin of a checkpoint run: writes each focused test's outcome to a results file.

It imports no lab code, and flushes each record at once, so the parent reads what finished
even if learner code later kills, hangs or floods the process.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import io
import os
import sys
import threading
import time
import traceback
from collections.abc import Generator
from dataclasses import replace
from pathlib import Path
from typing import IO, Any, NoReturn

import pytest

from ..locale import gettext as _
from .diffs import explain_equality
from .focused import PACKAGE_VARIABLE, REPORTER
from .frames import Frame, dump_file, learner_frames, traceback_triples
from .isolation import Isolation
from .records import OUTPUT_CHARS, OUTPUT_LINES, Event, write_record
from .stackdump import StackDumper
from .status import Status
from .verdicts import Verdict, verdict

CAPTURING_FIXTURES = frozenset({"capsys", "capsysbinary", "capfd", "capfdbinary"})
"""A test using one of these reads its own output: the reporter leaves its output alone."""
_REAL_EXIT = os._exit


def pytest_addoption(parser: pytest.Parser) -> None:
    add = parser.getgroup("course", "checkpoint harness").addoption
    add("--course-results", default=None, help="write outcomes (JSON lines) here")
    add("--course-lab", action="append", default=[], help="run only the tests of this lab")
    add("--course-memory-mb", type=int, default=0, help="address-space limit for this process")
    dump = "dump the stacks of a test still running after this many seconds (0: never)"
    add("--course-dump-after", type=float, default=0.0, help=dump)
    shared = "the run shares its caller's process: no memory limit or orphan watch, os._exit as is"
    add("--course-in-process", action="store_true", help=shared)


def pytest_configure(config: pytest.Config) -> None:
    results = config.getoption("course_results")
    if not results:
        return
    labs = list(config.getoption("course_lab"))
    own_run = not config.getoption("course_in_process")
    reporter = Reporter(results, labs, float(config.getoption("course_dump_after")), own_run)
    config.pluginmanager.register(reporter, REPORTER)
    isolation = Isolation.from_environment()
    if isolation is not None:
        config.pluginmanager.register(Isolated(isolation), "course-isolation")
    if own_run:  # a run of its own: limited, watched
        _limit_memory(int(config.getoption("course_memory_mb")))
        if sys.platform != "emscripten":  # a browser's worker has no threads; its parent ends it
            _exit_when_orphaned()
        _record_exits(reporter)


def _limit_memory(megabytes: int) -> None:
    with contextlib.suppress(ImportError, ValueError, OSError):  # a platform without limits
        import resource

        if megabytes > 0:
            limit = megabytes * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _exit_when_orphaned() -> None:
    """Stop this process if the checkpoint that started it is gone (killed from outside)."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                _REAL_EXIT(70)

    threading.Thread(target=watch, name="course-orphan-watch", daemon=True).start()


def _record_exits(reporter: Reporter) -> None:
    """Make ``os._exit`` write where it was called (in the learner's code) before it exits."""

    def recorded_exit(code: int) -> NoReturn:
        with contextlib.suppress(Exception):
            raw = [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_stack()[:-1]]
            frames = reporter.learner(raw)
            reporter.write(Event.EXIT, code=code, frames=[f.to_json() for f in frames])
        _REAL_EXIT(code)

    setattr(os, "_exit", recorded_exit)  # noqa: B010 - replaces the function for this process


def package_dir() -> Path | None:
    """The folder of the package under test, found without importing it."""
    name = os.environ.get(PACKAGE_VARIABLE, "")
    if not name:
        return None
    locations = getattr(sys.modules.get(name), "__path__", None)
    if locations is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        locations = spec.submodule_search_locations if spec is not None else None
    first = next(iter(locations or []), None)
    return Path(first).resolve() if first else None


@pytest.hookimpl(tryfirst=True)
def pytest_assertrepr_compare(
    config: pytest.Config, op: str, left: object, right: object
) -> list[str] | None:
    """A failed ``==`` in a checkpoint run shows both sides whole (see ``diffs.py``)."""
    if op != "==" or not config.getoption("course_results"):
        return None
    return explain_equality(left, right)


class PrintedOutput(io.StringIO):
    """One test's stdout and stderr: the first ``OUTPUT_CHARS`` characters, every line counted."""

    def __init__(self) -> None:
        super().__init__()
        self.kept = self.lines = 0
        self.last = ""

    def write(self, text: str) -> int:
        text = text if isinstance(text, str) else str(text)
        room = OUTPUT_CHARS - self.kept
        if room > 0:
            super().write(text[:room])
            self.kept += min(room, len(text))
        self.lines += text.count("\n")
        self.last = text[-1:] or self.last
        return len(text)

    def shown(self) -> tuple[list[str], int]:
        """The first ``OUTPUT_LINES`` lines, and how many more were printed."""
        total = self.lines + (1 if self.last not in ("", "\n") else 0)
        lines = self.getvalue().splitlines()[:OUTPUT_LINES]
        return lines, max(0, total - len(lines))


def own_line(item: pytest.Item, tb: Any) -> str:
    """``test_x.py:123: raw["summary"]["goal"]``: where an exception was raised when that is
    the test's own file (its innermost frame), so a learner sees which of the test's lines
    failed; ``""`` when it was raised anywhere else (the learner's code, a given module)."""
    innermost = traceback.extract_tb(tb)[-1:] if tb is not None else []
    if not innermost or Path(innermost[0].filename) != Path(str(item.path)):
        return ""
    where = innermost[0]
    text = " ".join((where.line or "").split())
    return f"{Path(where.filename).name}:{where.lineno}: {text}"


def lab_of(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("lab")
    return str(marker.args[0]) if marker is not None and marker.args else None


class Isolated:
    """Each test runs its own lab's functions, the reference's for the others (``isolation``)."""

    def __init__(self, isolation: Isolation) -> None:
        self.isolation = isolation

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.isolation.activate(lab_of(item))


class Reporter:
    """Writes ``collected``, ``start``, ``call``, ``end``, ``exit`` and ``finish`` records."""

    def __init__(self, path: str, labs: list[str], dump_after: float, own_run: bool) -> None:
        self.stream: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115 - whole run
        self.labs, self.own_run = labs, own_run
        self.outcome: dict[str, Verdict] = {}
        self.shown: dict[str, list[str]] = {}
        self.printed: dict[str, PrintedOutput] = {}
        self.started: dict[str, float] = {}
        self.dumper: StackDumper | None = None
        if dump_after > 0:
            fd = os.open(dump_file(Path(path)), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            self.dumper = StackDumper(fd, dump_after)

    def write(self, event: Event, **fields: Any) -> None:
        write_record(self.stream, event, **fields)

    def learner(self, raw: list[tuple[str, int, str]]) -> list[Frame]:
        folder = package_dir()
        return learner_frames(raw, folder) if folder is not None else []

    def frames_of(self, error: BaseException, tb: Any) -> list[Frame]:
        """The learner frames an exception passed through (a syntax error: where it is)."""
        frames = self.learner(traceback_triples(tb))
        if isinstance(error, SyntaxError) and error.filename and error.lineno:
            frames += self.learner([(error.filename, error.lineno, "<module>")])
        return frames

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if not self.labs:
            return
        dropped = [item for item in items if lab_of(item) not in self.labs]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = [item for item in items if lab_of(item) in self.labs]

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            lines = [line.strip() for line in str(report.longrepr).splitlines() if line.strip()]
            message = " | ".join(lines[:2])[:600]
            self.write(Event.COLLECT_ERROR, nodeid=report.nodeid, message=message)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        tests = [{"nodeid": i.nodeid, "name": i.name, "lab": lab_of(i)} for i in session.items]
        self.write(Event.COLLECTED, tests=tests)
        if self.own_run:
            # what pytest, the tests and the reporter made up to now stays out of every later
            # collection: pytest's last ones go over the whole heap again, a tenth of a fresh
            # workspace's run. What the tests make is collected as before.
            gc.freeze()

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.started[nodeid] = time.perf_counter()
        if self.dumper is not None:
            self.dumper.arm()
        self.write(Event.START, nodeid=nodeid)

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, object]:
        """Say the test's own code begins; keep what it prints (``-s``) unless it captures it."""
        self.write(Event.CALL, nodeid=item.nodeid)
        if CAPTURING_FIXTURES & set(getattr(item, "fixturenames", ())):
            return (yield)
        printed = self.printed[item.nodeid] = PrintedOutput()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
            return (yield)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        self.shown[item.nodeid] = [str(value) for _, value in item.user_properties]
        if item.nodeid in self.outcome:
            return report
        if call.excinfo is not None and not report.passed and not report.skipped:
            error = call.excinfo.value
            frames = self.frames_of(error, call.excinfo.tb)
            if isinstance(error, pytest.fail.Exception):  # pytest.fail(): the test's own words
                error = AssertionError(str(error))
            found = verdict(call.when, error, frames)
            line = "" if isinstance(error, AssertionError) else own_line(item, call.excinfo.tb)
            if line:
                said = _("raised in the test's own code, at {line}").format(line=line)
                found = replace(found, message=f"{found.message}\n{said}")
            self.outcome[item.nodeid] = found
        elif report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else _("skipped")
            said = _("the test was skipped: {reason}").format(reason=reason)
            self.outcome[item.nodeid] = Verdict(Status.ERROR, said)
        elif report.failed:  # failed without an exception (a hook said so): the same renderer
            lines = [line for line in str(report.longrepr).splitlines() if line.strip()]
            failed = AssertionError(lines[-1] if lines else _("the test failed"))
            self.outcome[item.nodeid] = verdict(call.when, failed, [])
        return report

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        if self.dumper is not None:
            self.dumper.disarm()
        outcome = self.outcome.get(nodeid, Verdict(Status.PASSED, ""))
        duration = time.perf_counter() - self.started.get(nodeid, time.perf_counter())
        record: dict[str, Any] = {
            "nodeid": nodeid,
            "status": outcome.status,
            "message": outcome.message,
            "duration": round(duration, 4),
        }
        if outcome.frames:
            record["frames"] = [frame.to_json() for frame in outcome.frames]
        if outcome.fatal:
            record["fatal"] = True
        if self.shown.get(nodeid):
            record["shown"] = self.shown[nodeid]
        printed = self.printed.pop(nodeid, None)
        if printed is not None and outcome.status != Status.PASSED:
            lines, more = printed.shown()
            if lines:
                record["output"], record["output_more"] = lines, more
        self.write(Event.END, **record)

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        kind = type(excinfo.value).__name__
        text = " ".join(f"{kind}: {excinfo.value}".split())
        self.write(Event.INTERRUPTED, message=text[:240])

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.write(Event.FINISH, exitstatus=int(exitstatus))
        self.stream.close()
