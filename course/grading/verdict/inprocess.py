"""Grading in this very process, where neither a child process nor a Web Worker can start.

A browser whose kernel cannot wait for a worker (no JavaScript Promise Integration) grades here,
with the same graded copy, reporter plugin records and verdict model as a child run. Each test
and case gets a ``sys.settrace`` deadline (``sandboxed/deadline.py``): past it, it is a
``timeout`` and the rest of its lab is not run, as after a killed child. Nothing here is
sandboxed. The package is imported afresh from the graded copy, the kernel's own modules of
that name set aside meanwhile: the kernel's state plays no part in the verdict, and the run
leaves none in the kernel.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from ...harness.records import RecordReader
from ...harness.runner import (
    Limits,
    Record,
    RunLog,
    RunTarget,
    Watch,
    child_command,
    note_nothing_collected,
    setup_hung,
)
from ...harness.supervisor import after_a_hang
from ...locale import ENVIRONMENT, current_edition, set_edition
from ...sandboxed.deadline import Deadline, deadline
from ...sandboxed.focused import PACKAGE_VARIABLE
from ...sandboxed.plugin import lab_of
from ...sandboxed.probe_driver import load_module
from ...sandboxed.probecases import ONCE, Answer, answer
from .probes import Answers, ProbeSet, ProbeTarget


def _forget(package: str, roots: Sequence[Path], names: set[str]) -> None:
    """Drop ``package``'s modules, those called ``names`` and those loaded from ``roots``."""
    places = tuple(str(root) for root in roots)
    for name, module in list(sys.modules.items()):
        where = str(getattr(module, "__file__", "") or "")
        top = name.split(".")[0]
        if top == package or top in names or (places and where.startswith(places)):
            del sys.modules[name]


@contextlib.contextmanager
def importing_from(root: Path, python_path: Sequence[Path], package: str) -> Iterator[None]:
    """For the block, ``import package`` reads the copy at ``root`` afresh; after it the
    kernel's modules are back (its cells' objects keep their classes), and so is what the
    copy's ``conftest.py`` changed (the import path, an import hook, the edition)."""
    roots = [root, *python_path]
    saved_path, saved_finders, edition = list(sys.path), list(sys.meta_path), current_edition()
    # pytest imports the copy's tests and conftests by basename: a kernel's module of one of
    # these names would stand in for the copy's file
    stems = {path.stem for path in root.rglob("*.py")}
    names = {name for name in stems if name.startswith("test_") or name == "conftest"}
    kernels = {n: m for n, m in sys.modules.items() if n.split(".")[0] in names | {package}}
    _forget(package, roots, names)
    sys.path[:0] = [str(path) for path in roots]
    variables = {PACKAGE_VARIABLE: package, ENVIRONMENT: current_edition()}
    variables |= {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "NO_COLOR": "1"}
    try:
        with mock.patch.dict(os.environ, variables), contextlib.chdir(root):
            yield
    finally:
        sys.path[:], sys.meta_path[:] = saved_path, saved_finders
        set_edition(edition)
        _forget(package, roots, names)
        sys.modules.update(kernels)


class TimeLimits:
    """The pytest plugin giving each test (setup, call and teardown) its time limit.

    After a test overran, its lab's later tests do not run and later tests get the shorter
    limit of ``after_a_hang``; after a setup overran (an import hangs), no later test runs."""

    def __init__(self, limits: Limits) -> None:
        self.seconds = limits.test_seconds
        self.shorter = after_a_hang(limits).test_seconds
        self.ends = 0.0
        self.hung_labs: set[str | None] = set()
        self.setup_hung = ""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> bool | None:
        if self.setup_hung or lab_of(item) in self.hung_labs:
            return True  # not run: the runner says why
        self.ends = time.monotonic() + self.seconds
        return None

    def _limited(self, item: pytest.Item, when: str) -> Any:
        limit = Deadline(self.ends, self.seconds)
        try:
            with limit:
                return (yield)
        finally:
            if limit.overran:
                self.hung_labs.add(lab_of(item))
                self.seconds = self.shorter
                if when == "setup":
                    self.setup_hung = item.name

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Any:
        return (yield from self._limited(item, "setup"))

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        return (yield from self._limited(item, "call"))

    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Any:
        return (yield from self._limited(item, "teardown"))


def run_here(
    target: RunTarget,
    labs: Sequence[str],
    results: Path,
    nodeids: Sequence[str],
    limits: Limits,
    log: RunLog,
    record: Record,
) -> list[tuple[str, str, str | None]] | None:
    """An ``Attempt`` of ``runner.run_focused_tests`` in this process: pytest with the kit's
    reporter, the same command line as a child's (its memory limit and stack dump left out)."""
    arguments = child_command(target, labs, results, nodeids, limits)[3:]
    arguments += ["--course-in-process", "--course-dump-after", "0", "--course-memory-mb", "0"]
    limiter = TimeLimits(limits)
    printed = io.StringIO()
    with (
        importing_from(target.root, target.python_path, target.package),
        contextlib.redirect_stdout(printed),
        contextlib.redirect_stderr(printed),
    ):
        pytest.main(arguments, plugins=[limiter])
    log.output_tail = printed.getvalue()[-limits.output_bytes :]
    records = RecordReader(results, limits.deadline)
    watch = Watch(log, record)
    for item in records.new():
        watch.feed(item)
    log.dropped += records.dropped
    log.cut += records.cut
    if limiter.setup_hung:
        log.setup_hung = setup_hung(limiter.setup_hung, limits)
    if watch.collected is None:
        note_nothing_collected(log)
    return watch.collected


def answer_here(probes: ProbeSet, target: ProbeTarget, limits: Limits) -> dict[str, Answer]:
    """Every case's answer, asked here as ``probe_driver`` asks it, each under its time limit."""
    gathered = Answers(probes, again=True)
    seconds = limits.test_seconds
    with importing_from(target.root, target.python_path, target.package):
        chapter = load_module(target.root / probes.module, "course_chapter_probes")
        with deadline(seconds) as limit:
            for module in target.modules:
                with contextlib.suppress(Exception):  # reported through the answers
                    __import__(f"{target.package}.{module}")
        if limit.overran:
            gathered.import_hung(probes.labs(), seconds)
            return gathered.answers
        for case in probes.cases:
            case_id, lab = str(case["id"]), str(case["lab"])
            if case_id in gathered.answers:
                continue  # given up with its lab
            with deadline(seconds) as limit:
                got = answer(chapter.evaluate, target.package, case)
            if limit.overran:
                gathered.case_hung(case_id, lab, seconds)
                seconds = after_a_hang(limits).test_seconds
            else:  # as the driver's record carries it: JSON
                gathered.answers[case_id] = json.loads(json.dumps(got, ensure_ascii=False))
        for case in reversed(probes.cases):  # asked again, as the driver asks them
            case_id = str(case["id"])
            first = gathered.answers.get(case_id)
            if case.get(ONCE) or first is None or "missing" in first:
                continue
            with deadline(seconds) as limit:
                got = answer(chapter.evaluate, target.package, case)
            if limit.overran:
                gathered.hung_again(case_id, seconds)
                break
            gathered.answered_again(case_id, json.loads(json.dumps(got, ensure_ascii=False)))
    sys.modules.pop("course_chapter_probes", None)
    return gathered.merged()
