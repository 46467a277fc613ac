"""Experiments beside the labs: the slice(-3) expected failure and the per-group budget report."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .budget_view import fmt
from .notebook import Implementation
from .views import View, attempt, message, preformatted, stack, table
from .walkthrough import BUDGET, build, fixed_costs

REFERENCE = Path(__file__).resolve().parents[1]
FOCUSED_TESTS = REFERENCE.parent / "tests" / "chapter11" / "test_11_context_compaction.py"
GROUP_SELECTION = "kept = [entry for group in groups[first:] for entry in group.entries]"
"""The reference's line that turns the first kept group into the kept entries."""
SLICED_SELECTION = "kept = [entry for group in groups for entry in group.entries][-3:]"
"""The same line, broken on purpose: the last three messages, whatever their groups."""
PATCHED_PACKAGE = "sliced_course"
TEST_TIMEOUT = 300.0


OPTIONAL = message(
    "optional exercise: write budget_report(groups, *, estimate_tokens, available) in your "
    "context module to see its report here",
    "note",
)


class ExperimentError(RuntimeError):
    """An experiment could not be set up."""


def sliced_source(source: str) -> str:
    """``context.py`` with the group selection replaced by a three-message slice."""
    if source.count(GROUP_SELECTION) != 1:
        raise ExperimentError("the group selection line was not found exactly once in context.py")
    return source.replace(GROUP_SELECTION, SLICED_SELECTION)


@contextmanager
def sliced_package() -> Iterator[Path]:
    """A temporary copy of the reference package with the sliced selection; yields its parent."""
    with tempfile.TemporaryDirectory(prefix="course-sliced-") as folder:
        package = Path(folder) / PATCHED_PACKAGE
        shutil.copytree(REFERENCE, package, ignore=shutil.ignore_patterns("__pycache__"))
        source = (REFERENCE / "context.py").read_text(encoding="utf-8")
        (package / "context.py").write_text(sliced_source(source), encoding="utf-8")
        yield Path(folder)


@contextmanager
def imported(folder: Path) -> Iterator[tuple[ModuleType, ModuleType]]:
    """The patched package's (session, context) modules, imported for the block."""
    sys.path.insert(0, str(folder))
    try:
        yield (
            importlib.import_module(f"{PATCHED_PACKAGE}.session"),
            importlib.import_module(f"{PATCHED_PACKAGE}.context"),
        )
    finally:
        sys.path.remove(str(folder))
        for name in [n for n in sys.modules if n.split(".")[0] == PATCHED_PACKAGE]:
            del sys.modules[name]
        importlib.invalidate_caches()


@dataclass(frozen=True)
class TestRun:
    """Focused test results: (name, status, first line of the message) per test."""

    results: tuple[tuple[str, str, str], ...]
    problem: str = ""

    @property
    def passed(self) -> int:
        return sum(1 for _, status, _ in self.results if status == "passed")


def run_lab_tests(package: str, lab: str, *, pythonpath: Path | None = None) -> TestRun:
    """Run one lab's focused tests against ``package`` in a fresh pytest process."""
    if not FOCUSED_TESTS.is_file():
        return TestRun((), "the focused tests are not installed next to the package")
    with tempfile.TemporaryDirectory(prefix="course-tests-") as folder:
        report = Path(folder) / "junit.xml"
        env = dict(os.environ, COURSE_LAB_PACKAGE=package, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
        if pythonpath is not None:
            env["PYTHONPATH"] = os.pathsep.join(
                [str(pythonpath)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
            )
        command = [
            sys.executable,
            "-m",
            "pytest",
            str(FOCUSED_TESTS),
            "-q",
            "-o",
            "addopts=",
            "-p",
            "no:cacheprovider",
            "-k",
            f"lab_{lab.replace('.', '_')}",
            f"--junitxml={report}",
        ]
        try:
            subprocess.run(
                command,
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=TEST_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return TestRun((), f"the tests did not finish within {TEST_TIMEOUT:g} seconds")
        if not report.is_file():
            return TestRun((), "pytest wrote no report")
        return TestRun(tuple(_junit_results(report.read_text(encoding="utf-8"))))


def _junit_results(text: str) -> Iterator[tuple[str, str, str]]:
    for case in ElementTree.fromstring(text).iter("testcase"):
        status, note = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                status = "failed" if child.tag == "failure" else "error"
                note = stable_note(child.get("message") or "")
            elif child.tag == "skipped":
                status = "skipped"
        yield case.get("name", "?"), status, note[:160]


def stable_note(text: str) -> str:
    """The first line of a failure message, without pytest's rendering of the operands.

    A test's own message is kept; ``assert x == y`` introspection is cut, since its layout
    depends on the pytest version and would make stored notebook outputs drift.
    """
    lines = text.strip().splitlines()
    first = lines[0].strip() if lines else ""
    cut = first.find("assert ")
    if cut >= 0:
        first = (first[:cut].rstrip(" :") + ": " if first[:cut].strip() else "") + "assert failed"
    return first


def _tests_view(title: str, run: TestRun) -> View:
    if run.problem:
        return message(f"{title}: {run.problem}", "note")
    rows = [(name, status, note) for name, status, note in run.results]
    heading = f"{title}: {run.passed}/{len(run.results)} passed"
    return table(["test", "status", "message"], rows, title=heading)


def slice_experiment_view(impl: Implementation, *, run_tests: bool = True) -> View:
    """Break the reference's group selection with ``slice(-3)`` and watch Lab 11.3 fail."""
    views: list[View] = []
    with sliced_package() as folder:
        with imported(folder) as (session, context):
            path = [session.parse_session_entry(v) for v in impl.fixtures.chapter_path_json()]
            result = context.build_context(
                path, max_tokens=19, estimate_tokens=impl.estimator(), **BUDGET
            )
        kept = [str(i) for i in result.kept_entry_ids]
        lost = [str(e.id) for e in path[4:] if e.id not in kept]
        views.append(
            preformatted(
                "patched selection at max_tokens 19 (10 for messages):\n"
                f"kept:  {', '.join(kept)}\n"
                f"roles: {', '.join(m['role'] for m in result.messages)}\n"
                f"lost from the newest group: {', '.join(lost)}"
            )
        )
        if run_tests:
            views.append(
                _tests_view(
                    "Lab 11.3 against the patched copy",
                    run_lab_tests(PATCHED_PACKAGE, "11.3", pythonpath=folder),
                )
            )
    if run_tests:
        views.append(_tests_view("Lab 11.3 against the reference", run_lab_tests("course", "11.3")))
    return stack(views)


# --------------------------------------------------------------------------- budget report


def budget_report_view(impl: Implementation, available: float, *, path: Any = None) -> View:
    """The optional ``budget_report``: each group's ids, cost and fate under ``available``."""
    report_fn = getattr(impl.context, "budget_report", None)
    if report_fn is None:
        return OPTIONAL
    chosen: Any = path if path is not None else attempt(impl.chapter_path).value
    done = attempt(
        lambda: (
            report_fn(
                impl.context.group_interactions(chosen),
                estimate_tokens=impl.estimator(),
                available=available,
            ),
            build(impl, chosen, available + fixed_costs(impl)),
        )
    )
    if not done.ok:
        return done.view()
    report, result = done.get()
    rows = [(", ".join(item.entry_ids), fmt(item.tokens), item.status) for item in report]
    kept = [i for item in report if item.status != "trimmed" for i in item.entry_ids]
    agrees = kept == list(result.kept_entry_ids)
    return stack(
        [
            table(["group", "tokens", "status"], rows, title=f"available {fmt(available)}"),
            message(
                "agrees with build_context's selection"
                if agrees
                else "disagrees with build_context's selection",
                "ok" if agrees else "error",
            ),
        ]
    )


def budget_report_cases_view(impl: Implementation) -> View:
    """The report on the chapter's cases: three groups at 22 and at 10, one plain group."""
    if getattr(impl.context, "budget_report", None) is None:
        return OPTIONAL
    single = attempt(lambda: impl.chapter_path()[:2])
    if not single.ok:
        return single.view()
    return stack(
        [
            budget_report_view(impl, 22),
            budget_report_view(impl, 10),
            budget_report_view(impl, 7, path=single.get()),
            budget_report_view(impl, 3, path=single.get()),
        ]
    )
