"""Run focused tests in a child pytest process under hard time and output limits.

The child reports through a results file (``plugin.py``), never its stdout. A test that
overruns, or a child that dies in one, costs that test a ``timeout`` (with the frames the child
dumped just before) or an ``error``, and a fresh child runs the tests still to go; when the
package cannot even be imported, every test still to go is "not run" with that one cause.
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..locale import ENVIRONMENT, current_edition
from ..locale import gettext as _
from ..sandboxed.frames import Frame, dump_file, dumped_frames, frames_from_json, render_frames
from ..sandboxed.records import OUTPUT_LINES, Event
from ..sandboxed.status import Status
from ..sandboxed.untrusted import safe_name
from ..sandboxed.verdicts import NOT_RUN
from .catalog import Catalog
from .records import RecordReader
from .results import TestOutcome
from .supervisor import (
    POLL_SECONDS,
    Limits,
    Wrap,
    after_a_hang,
    kill_group,
    pause,
    remove_written,
    start_child,
)
from .webworker import in_a_browser

__all__ = ["Limits", "RunLog", "RunTarget", "run_focused_tests"]

DUMP_MARGIN = 0.5  # seconds before a test's limit the child dumps its stacks (or a quarter)
DUMP_WAIT = 1.0  # how long a timed-out child's dump may still take to appear
COLOUR_VARIABLES = ("FORCE_COLOR", "PY_COLORS", "CLICOLOR_FORCE")
DUMP_BYTES = 256 * 1024  # read of a stack dump at most: learner code can add to it
DUMP_FRAMES = 400  # frames of a dump looked at (a real one has a few dozen per thread)
MAX_STRAYS = 50  # reports of tests not collected, or repeated, kept for the flags
MAX_COLLECT_ERRORS = 20
MB = 1024 * 1024


@dataclass(frozen=True)
class RunTarget:
    """Which focused tests to run, from where, against which package."""

    root: Path  # pytest's rootdir
    test_files: tuple[str, ...]  # relative to ``root``
    package: str  # ``COURSE_LAB_PACKAGE``: the package under test
    python_path: tuple[Path, ...] = ()  # put in front of ``sys.path`` (where ``package`` lives)
    wrap: Wrap | None = None  # how each child is started, when not directly
    catalog: Catalog | None = None  # the kit's tests: what else is collected is never run
    uncounted: tuple[str, ...] = ()  # test files run after, counted in no lab (the review)
    environment: tuple[tuple[str, str], ...] = ()  # more for each child (an isolated run's)


@dataclass
class RunLog:
    """What the run saw besides test outcomes (for diagnostics)."""

    output_tail: str = ""
    collect_errors: list[str] = field(default_factory=list)
    setup_hung: str = ""  # why: a test's setup (which imports the code under test) overran
    fatal: str = ""  # why: the package exited or failed at import
    dropped: int = 0  # records left out (``records.RecordReader``)
    cut: int = 0  # items of records' lists and objects left out (``records.MAX_ITEMS``)
    forged: list[str] = field(default_factory=list)  # records no test run writes (flags)
    written: int = 0  # bytes the run's children left on the grader's disk (``written_bytes``)

    def impossible(self, said: str) -> None:
        if said not in self.forged:
            self.forged.append(said)

    @property
    def bounds(self) -> str:
        """What the caps on the test process's records left out, said plainly ('' if nothing)."""
        if not (self.dropped or self.cut):
            return ""
        return _(
            "the test process's records went past their caps: {dropped} record(s) dropped, "
            "{cut} item(s) of lists and objects cut"
        ).format(dropped=self.dropped, cut=self.cut)


def child_command(
    target: RunTarget, labs: Sequence[str], results: Path, nodeids: Sequence[str], limits: Limits
) -> list[str]:
    """The pytest command line of one child."""
    command = [sys.executable, "-m", "pytest", "-p", "course.sandboxed.plugin"]
    command += ["-p", "no:cacheprovider", "-q", "-s", "-o", "addopts="]
    command += ["--course-results", str(results), "--course-memory-mb", str(limits.memory_mb)]
    command += ["--course-dump-after", f"{dump_after(limits):g}", "--color=no"]
    command += ["-o", "verbosity_assertions=2"]  # assertion diffs whole, never "use -vv"
    # The reporter builds each verdict from the exception itself; pytest's own long tracebacks
    # parse every source file of every frame again, most of a fresh workspace's grading time.
    command += ["--tb=line"]
    for lab in labs:
        command += ["--course-lab", lab]
    return command + list(nodeids or target.test_files)


def dump_after(limits: Limits) -> float:
    """When the child dumps a running test's stacks: shortly before the parent kills it; 0
    (never) in a browser's worker, which has no thread to dump them with."""
    if in_a_browser():
        return 0.0
    return max(limits.test_seconds - DUMP_MARGIN, limits.test_seconds * 0.75)


def child_environment(target: RunTarget) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in COLOUR_VARIABLES}
    env["NO_COLOR"] = "1"  # the child's output is a pipe, whatever the caller's terminal
    env["COURSE_LAB_PACKAGE"] = target.package
    env[ENVIRONMENT] = current_edition()  # messages raised in the child speak the door's edition
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # installed plugins cost seconds per child
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(target.environment)
    paths = [str(p) for p in target.python_path] + [str(target.root)]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


Record = Callable[[TestOutcome], None]
Collected = list[tuple[str, str, str | None]]  # (nodeid, name, lab), in collection order
Attempt = Callable[
    [RunTarget, Sequence[str], Path, Sequence[str], Limits, RunLog, Record], Collected | None
]
"""One run of the tests still to go, reporting to ``record``; returns what it collected (None:
nothing). ``_run_child`` starts a child pytest; ``inprocess.run_here`` runs pytest in this one."""


def run_focused_tests(
    target: RunTarget,
    *,
    labs: Sequence[str] = (),
    limits: Limits | None = None,
    attempt: Attempt | None = None,
) -> tuple[list[TestOutcome], RunLog]:
    """Run the focused tests (of ``labs``, else all): one outcome per collected test, in order,
    then the child's reports of tests not collected or made twice (``results.admit`` flags them).
    ``attempt``: how the tests run (a child process each time unless told)."""
    attempt = attempt or _run_child
    limits = limits or Limits()
    log = RunLog()
    order: Collected = []
    outcomes: dict[str, TestOutcome] = {}
    repeated: list[TestOutcome] = []
    strays = 0

    def record(outcome: TestOutcome) -> None:
        nonlocal strays
        if outcome.nodeid in outcomes or not _wanted(target, outcome.nodeid):
            strays += 1  # ``results.admit`` flags these; only a few are kept to say so
            if outcome.nodeid in outcomes and len(repeated) < MAX_STRAYS:
                repeated.append(outcome)  # the first report counts
            elif outcome.nodeid not in outcomes and strays <= MAX_STRAYS:
                outcomes[outcome.nodeid] = outcome
            return
        outcomes[outcome.nodeid] = outcome

    shorter = after_a_hang(limits)

    def progress() -> int:
        """Collected tests with an outcome: reports of other tests are no progress."""
        return sum(nodeid in outcomes for nodeid, _, _ in order)

    with tempfile.TemporaryDirectory(prefix="checkpoint-") as scratch:
        for number in itertools.count(1):
            remaining = [nodeid for nodeid, _, _ in order if nodeid not in outcomes]
            if order and not remaining:
                break
            results = Path(scratch) / f"results-{number}.jsonl"
            results.touch()
            before = progress()
            try:
                collected = attempt(target, labs, results, remaining, limits, log, record)
            finally:  # read: what the child wrote leaves the grader's disk before the next one
                log.written += remove_written(results)
            if log.written > limits.written_bytes:  # the learner's disk cap, for the whole run
                said = _(
                    "the test processes wrote {size} MB of records and stack dumps, past the "
                    "run's {limit} MB"
                )
                written = said.format(size=log.written // MB, limit=limits.written_bytes // MB)
                log.fatal = NOT_RUN + written
                break
            if any(o.status == Status.TIMEOUT for o in outcomes.values()):
                limits = shorter
            if not order and collected is not None:
                order = [t for t in collected if _wanted(target, t[0])]
            if not (log.setup_hung or log.fatal):  # those stop every test still to go
                _stop_hung_labs(order, outcomes, record, target.catalog)
            if collected is None or progress() == before or log.setup_hung or log.fatal:
                break  # no progress, or every later test would end the same way
        status = Status.TIMEOUT if log.setup_hung else Status.ERROR
        reason = log.setup_hung or log.fatal or _leftover_reason(log)
        for nodeid, name, lab in order:
            if nodeid not in outcomes:
                record(TestOutcome(nodeid, name, lab, status, reason))
    listed = {nodeid for nodeid, _, _ in order}
    unlisted = [outcome for nodeid, outcome in outcomes.items() if nodeid not in listed]
    return [outcomes[nodeid] for nodeid, _, _ in order] + unlisted + repeated, log


def _wanted(target: RunTarget, nodeid: str) -> bool:
    """Whether a collected test is one to run: catalogued, or in an uncounted file."""
    if target.catalog is None or target.catalog.find(nodeid) is not None:
        return True
    return nodeid.partition("::")[0] in target.uncounted


def _stop_hung_labs(
    order: Collected, outcomes: dict[str, TestOutcome], record: Record, catalog: Catalog | None
) -> None:
    """A lab whose test ran past its limit runs no further test (its tests still to go are not
    run, naming the test that hung): one hang costs one timeout."""

    def lab_of(nodeid: str, said: str | None) -> str | None:
        test = catalog.find(nodeid) if catalog is not None else None
        return test.lab if test is not None else said

    hung: dict[str, str] = {}
    for nodeid, name, lab in order:
        outcome, owner = outcomes.get(nodeid), lab_of(nodeid, lab)
        timed_out = outcome is not None and outcome.status == Status.TIMEOUT and not outcome.not_run
        if owner is not None and timed_out:
            hung.setdefault(owner, name)
    for nodeid, name, lab in order:
        owner = lab_of(nodeid, lab)
        if nodeid not in outcomes and owner in hung:
            said = _("{test}, an earlier test of Lab {lab}, ran past its limit")
            why = NOT_RUN + said.format(test=hung[owner], lab=owner)
            record(TestOutcome(nodeid, name, lab, Status.TIMEOUT, why))


def _last_line(text: str) -> str:
    """The last line of ``text`` that is not blank, stripped ('' if none)."""
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")


def _leftover_reason(log: RunLog) -> str:
    if log.collect_errors:
        return log.collect_errors[0]
    if tail := _last_line(log.output_tail):
        said = _("the test process stopped before this test ran: {output}")
        return said.format(output=tail[:200])
    return _("the test process stopped before this test ran")


class Watch:
    """What one child has reported so far, fed record by record."""

    def __init__(self, log: RunLog, record: Record) -> None:
        self.log = log
        self.record = record
        self.collected: Collected | None = None
        self.names: dict[str, tuple[str, str | None]] = {}
        self.current: str | None = None
        self.calling = False  # whether the current test got past setup into its own code
        self.interrupted = ""
        self.exit_frames: tuple[Frame, ...] = ()  # where the code called ``os._exit``, if it did
        self.since = time.monotonic()  # when the last record arrived (or the child started)
        self.test_since = self.since  # when the current test started
        self.started: set[str] = set()  # the tests whose start was recorded
        self.finished = False  # whether the session's end was recorded

    def identify(self, nodeid: str) -> tuple[str, str | None]:
        return self.names.get(nodeid, (nodeid.rpartition("::")[2], None))

    def feed(self, item: dict[str, Any]) -> None:
        self.since = time.monotonic()
        event = item.get("event")
        if self.log.fatal:
            return  # the package cannot be imported: later records say the same
        if self.finished:  # the reporter writes nothing after the session's end
            self.log.impossible(_("a test report written after the test run ended"))
            return
        if event == Event.FINISH:
            self.finished = True
        elif event == Event.END and str(item["nodeid"]) not in self.started:
            said = _("a report of {nodeid} ending, which never started")
            self.log.impossible(said.format(nodeid=repr(str(item["nodeid"]))))
        if event == Event.COLLECTED:
            self.collected = [
                (str(t["nodeid"]), str(t["name"]), t.get("lab")) for t in item["tests"]
            ]
            self.names.update({n: (name, lab) for n, name, lab in self.collected})
        elif event == Event.COLLECT_ERROR and len(self.log.collect_errors) < MAX_COLLECT_ERRORS:
            nodeid, message = item.get("nodeid"), item.get("message", "")
            if nodeid:
                said = _("could not collect {nodeid}: {message}")
            else:
                said = _("could not collect the tests: {message}")
            self.log.collect_errors.append(said.format(nodeid=nodeid, message=message))
        elif event == Event.START:
            self.current, self.calling = str(item["nodeid"]), False
            self.started.add(self.current)
            self.test_since = self.since
        elif event == Event.CALL:
            self.calling = True
        elif event == Event.END:
            self._end(item)
        elif event == Event.EXIT:
            self.exit_frames = frames_from_json(item.get("frames"))
        elif event == Event.INTERRUPTED:
            self.interrupted = str(item.get("message", _("interrupted")))

    def _end(self, item: dict[str, Any]) -> None:
        nodeid = str(item["nodeid"])
        name, lab = self.identify(nodeid)
        message = str(item.get("message", ""))
        status, duration = Status.read(item.get("status")), float(item.get("duration", 0.0))
        frames, shown = frames_from_json(item.get("frames")), item.get("shown")
        shown = tuple(str(s) for s in shown) if isinstance(shown, list) else ()
        output, more = _printed(item.get("output"), item.get("output_more"))
        outcome = TestOutcome(nodeid, name, lab, status, message, duration, frames, shown)
        self.record(replace(outcome, output=output, output_more=more))
        self.current = None
        if item.get("fatal"):
            self.log.fatal = message

    def close_current(
        self, status: Status, message: str, duration: float = 0.0, frames: tuple[Frame, ...] = ()
    ) -> None:
        if self.current is not None:
            name, lab = self.identify(self.current)
            self.record(TestOutcome(self.current, name, lab, status, message, duration, frames))
            self.current = None


def _printed(lines: object, more: object) -> tuple[tuple[str, ...], int]:
    """A test's printed lines (at most ``OUTPUT_LINES``), and how many more there were."""
    items = [str(line) for line in lines] if isinstance(lines, list) else []
    left = more if isinstance(more, int) and not isinstance(more, bool) and more > 0 else 0
    left += max(0, len(items) - OUTPUT_LINES)
    return tuple(items[:OUTPUT_LINES]), left


def _with_frames(message: str, heading: str, frames: tuple[Frame, ...]) -> str:
    if not frames:
        return message
    return "\n".join([message, heading, *render_frames(frames)])


def _read_dump(path: Path, target: RunTarget) -> tuple[Frame, ...]:
    """The learner frames the child dumped before its limit (waiting briefly if still writing)."""
    package_dir = (target.root / target.package.replace(".", "/")).resolve()
    deadline = time.monotonic() + DUMP_WAIT
    text = ""
    while time.monotonic() < deadline:
        try:
            with open(path, "rb") as handle:
                latest = handle.read(DUMP_BYTES).decode("utf-8", "replace")
        except FileNotFoundError:
            latest = ""
        if latest and latest == text:
            break  # written, and no longer growing
        text = latest
        time.sleep(POLL_SECONDS)
    lines = text.splitlines()[:DUMP_FRAMES]
    frames = dumped_frames("\n".join(lines), package_dir, package_dir.parent)
    return tuple(
        Frame(safe_name(f.path), f.line, safe_name(f.function), safe_name(f.text)) for f in frames
    )


def _run_child(
    target: RunTarget,
    labs: Sequence[str],
    results: Path,
    nodeids: Sequence[str],
    limits: Limits,
    log: RunLog,
    record: Record,
) -> Collected | None:
    """One child process; returns the collection it reported (None if it never collected)."""
    command, env = child_command(target, labs, results, nodeids, limits), child_environment(target)
    process, output = start_child(command, env, target.root, target.wrap, results, limits)
    records = RecordReader(results, limits.deadline)
    watch = Watch(log, record)
    try:
        while True:
            exited = process.poll() is not None
            for item in records.new():
                watch.feed(item)
            if exited or log.fatal:
                break
            now = time.monotonic()
            quiet, running = now - watch.since, now - watch.test_since
            if watch.current is not None and running > limits.test_seconds:
                _time_out(watch, target, results, limits, log, running)
                break
            if watch.collected is None and quiet > limits.startup_seconds:
                said = _("pytest did not collect the focused tests within {seconds}s")
                log.collect_errors.append(said.format(seconds=f"{limits.startup_seconds:g}"))
                break
            between_tests = watch.current is None and watch.collected is not None
            if between_tests and quiet > limits.test_seconds:
                break  # stuck between tests or after the last one
            pause(process)
    finally:
        kill_group(process)  # also ends anything learner code left running in the group
        log.output_tail = output.text()
        log.dropped += records.dropped
        log.cut += records.cut
    if watch.collected is None:
        note_nothing_collected(log, _("exit code {code}").format(code=process.returncode))
    _close_exited(watch, process.returncode, log)
    return watch.collected


def note_nothing_collected(log: RunLog, fallback: str = "") -> None:
    """Why a run collected nothing, unless said: pytest's last line (else ``fallback``)."""
    if not log.collect_errors:
        said = _("pytest stopped before collecting the focused tests: {output}")
        log.collect_errors.append(said.format(output=_last_line(log.output_tail)[:300] or fallback))


def _time_out(
    watch: Watch, target: RunTarget, results: Path, limits: Limits, log: RunLog, running: float
) -> None:
    """Close the test that overran, with the learner's frames from the child's dump."""
    assert watch.current is not None
    frames = _read_dump(dump_file(results), target) if dump_after(limits) > 0 else ()
    if not watch.calling:
        log.setup_hung = setup_hung(watch.identify(watch.current)[0], limits)
    message = _(
        "still running after {seconds}s; the test process was killed "
        "(an endless loop or a blocking call?)"
    ).format(seconds=f"{limits.test_seconds:g}")
    said = _with_frames(message, _("running at the time:"), frames)
    watch.close_current(Status.TIMEOUT, said, round(running, 4), frames)


def setup_hung(test: str, limits: Limits) -> str:
    """Why no test runs after ``test``'s setup overran: the package's import hangs."""
    return NOT_RUN + _(
        "setting up {test} (which imports the code under test) did not finish within {seconds}s"
    ).format(test=test, seconds=f"{limits.test_seconds:g}")


def _close_exited(watch: Watch, returncode: int | None, log: RunLog) -> None:
    """The test the child died in: at import, every later test is not run for the same cause."""
    if watch.current is None:
        return
    frames = watch.exit_frames
    code = str(returncode) if returncode is not None else _("unknown")
    if frames:
        cause = f"os._exit({code}) ({frames[-1].place})"
    elif isinstance(returncode, int) and returncode < 0:
        cause = _("killed by signal {signal}").format(signal=-returncode)
    else:
        cause = _("exit code {code}").format(code=code)
    called = _("called from:")
    if not watch.calling and not watch.interrupted:
        fatal = _("the package exited at import: {error}").format(error=cause)
        log.fatal = _with_frames(NOT_RUN + fatal, called, frames)
        watch.close_current(Status.ERROR, log.fatal, frames=frames)
        return
    if frames:
        exited = _("the test process exited with code {code} during this test: {cause}")
    else:
        exited = _(
            "the test process exited with code {code} during this test "
            "(does the code call os._exit, or was it killed?)"
        )
    message = watch.interrupted or exited.format(code=code, cause=cause)
    watch.close_current(Status.ERROR, _with_frames(message, called, frames), frames=frames)
