"""Pytest plugin of a checkpoint run: writes each focused test's outcome to a results file.

Loaded in the child pytest process with ``-p course.harness.plugin``. Every record is one JSON
line, flushed at once, so the parent can read what finished even if learner code later kills,
hangs or floods the process. The plugin imports no lab code.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import IO, Any

import pytest

PENDING_ATTRIBUTE = "lab_id"
"""A ``NotImplementedError`` carrying this attribute is a lab stub: the test is pending."""

MESSAGE_LIMIT = 240


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("course", "checkpoint harness")
    group.addoption("--course-results", default=None, help="write outcomes (JSON lines) here")
    group.addoption(
        "--course-lab", action="append", default=[], help="run only the tests of this lab"
    )
    group.addoption(
        "--course-memory-mb", type=int, default=0, help="address-space limit for this process"
    )


def pytest_configure(config: pytest.Config) -> None:
    results = config.getoption("course_results")
    if not results:
        return
    _limit_memory(int(config.getoption("course_memory_mb")))
    _exit_when_orphaned()
    labs = list(config.getoption("course_lab"))
    config.pluginmanager.register(Reporter(results, labs), "course-reporter")


def _limit_memory(megabytes: int) -> None:
    if megabytes <= 0:
        return
    try:
        import resource

        limit = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):  # pragma: no cover - platform without limits
        pass


def _exit_when_orphaned() -> None:
    """Stop this process if the checkpoint that started it is gone (killed from outside)."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if os.getppid() != parent:
                os._exit(70)

    threading.Thread(target=watch, name="course-orphan-watch", daemon=True).start()


def lab_of(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("lab")
    if marker is None or not marker.args:
        return None
    return str(marker.args[0])


def first_lines(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """The first two non-empty lines of ``text`` on one line, trimmed to ``limit``."""
    lines = [line.strip() for line in text.splitlines() if line.strip()][:2]
    joined = " | ".join(lines)
    return joined if len(joined) <= limit else joined[: limit - 1] + "…"


def classify(when: str, error: BaseException) -> tuple[str, str]:
    """(status, message) for an exception raised during a test's ``when`` phase."""
    lab_id = getattr(error, PENDING_ATTRIBUTE, None)
    if isinstance(error, NotImplementedError) and isinstance(lab_id, str):
        return "pending", first_lines(str(error))
    if isinstance(error, SystemExit):
        return "error", f"the code under test called sys.exit({error.code!r})"
    if isinstance(error, AssertionError):
        detail = first_lines(str(error)) or "assertion failed"
    else:
        detail = first_lines(f"{type(error).__name__}: {error}")
    if when != "call":
        return "error", f"{when}: {detail}"
    return "failed", detail


class Reporter:
    """Writes ``collected``, ``start``, ``end`` and ``finish`` records for the parent."""

    def __init__(self, path: str, labs: list[str]) -> None:
        self.stream: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115 - whole run
        self.labs = labs
        self.outcome: dict[str, tuple[str, str]] = {}
        self.started: dict[str, float] = {}

    def write(self, record: dict[str, Any]) -> None:
        self.stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.stream.flush()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if not self.labs:
            return
        keep = [item for item in items if lab_of(item) in self.labs]
        dropped = [item for item in items if lab_of(item) not in self.labs]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = keep

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.write(
                {
                    "event": "collect_error",
                    "nodeid": report.nodeid,
                    "message": first_lines(str(report.longrepr), 600),
                }
            )

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        tests = [
            {"nodeid": item.nodeid, "name": item.name, "lab": lab_of(item)}
            for item in session.items
        ]
        self.write({"event": "collected", "tests": tests})

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.started[nodeid] = time.perf_counter()
        self.write({"event": "start", "nodeid": nodeid})

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_call(self, item: pytest.Item) -> None:
        self.write({"event": "call", "nodeid": item.nodeid})

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if item.nodeid in self.outcome:
            return report
        if call.excinfo is not None and not report.passed and not report.skipped:
            self.outcome[item.nodeid] = classify(call.when, call.excinfo.value)
        elif report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else "skipped"
            self.outcome[item.nodeid] = ("error", f"the test was skipped: {reason}")
        elif report.failed:
            self.outcome[item.nodeid] = ("failed", first_lines(str(report.longrepr)))
        return report

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        status, message = self.outcome.get(nodeid, ("passed", ""))
        duration = time.perf_counter() - self.started.get(nodeid, time.perf_counter())
        self.write(
            {
                "event": "end",
                "nodeid": nodeid,
                "status": status,
                "message": message,
                "duration": round(duration, 4),
            }
        )

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        kind = type(excinfo.value).__name__
        self.write({"event": "interrupted", "message": first_lines(f"{kind}: {excinfo.value}")})

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.write({"event": "finish", "exitstatus": int(exitstatus)})
        self.stream.close()
