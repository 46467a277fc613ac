"""Notebook wiring: which implementation a notebook runs, and checking a lab from a notebook."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .checkreport import CheckReport, failed_report, parse_report
from .views import View, message

WORKSPACE_MARKER = ".course-workspace.toml"
REFERENCE_PACKAGE = "course"
DEFAULT_CHAPTER = "11"
CHECK_TIMEOUT = 600.0
"""Seconds a lab check may run before it is reported as timed out."""


@dataclass(frozen=True)
class Workspace:
    """A practice workspace: its root folder and what its marker file says."""

    root: Path
    chapter: str
    package: str


def find_workspace(start: str | os.PathLike[str] | None = None) -> Workspace | None:
    """The workspace whose marker is in ``start`` (default: the cwd) or one of its parents."""
    here = Path(start if start is not None else Path.cwd()).resolve()
    for folder in (here, *here.parents):
        marker = folder / WORKSPACE_MARKER
        if marker.is_file():
            with marker.open("rb") as handle:
                data = tomllib.load(handle)
            return Workspace(
                root=folder,
                chapter=str(data.get("chapter", DEFAULT_CHAPTER)),
                package=str(data.get("package", "pi_course")),
            )
    return None


@dataclass(frozen=True)
class Implementation:
    """The session, context and fixtures modules a notebook works with."""

    package: str
    session: ModuleType
    context: ModuleType
    fixtures: ModuleType
    workspace: Path | None = None

    @property
    def label(self) -> str:
        """Which code runs, without machine paths."""
        if self.workspace is None:
            return f"the reference implementation (package {self.package})"
        return f"your practice workspace (package {self.package})"

    def parse(self, values: Sequence[object]) -> list[Any]:
        """Session entries parsed by this implementation's strict parser."""
        return [self.session.parse_session_entry(value) for value in values]

    def chapter_path(self) -> list[Any]:
        """The nine entries u1 … a3."""
        return self.parse(self.fixtures.chapter_path_json())

    def estimator(self) -> Callable[[dict[str, Any]], float]:
        """The chapter's test estimator."""
        estimate: Callable[[dict[str, Any]], float] = self.fixtures.chapter_estimator
        return estimate

    def view(self) -> View:
        return message(f"Running {self.label}.", "note")

    def _repr_html_(self) -> str:
        return self.view().html

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.view().text)


def implementation(start: str | os.PathLike[str] | None = None) -> Implementation:
    """The learner's package inside a practice workspace, the reference ``course`` elsewhere.

    Inside a workspace its root goes first on ``sys.path`` so that the learner's package is
    the one imported. After editing the package, restart the kernel to load the new code.
    """
    workspace = find_workspace(start)
    if workspace is None:
        package, root = REFERENCE_PACKAGE, None
    else:
        package, root = workspace.package, workspace.root
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
    return Implementation(
        package=package,
        session=importlib.import_module(f"{package}.session"),
        context=importlib.import_module(f"{package}.context"),
        fixtures=importlib.import_module(f"{package}.fixtures"),
        workspace=root,
    )


# --------------------------------------------------------------------------- lab checks

Runner = Callable[[list[str], Path, float], "subprocess.CompletedProcess[str]"]


def _run(command: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def check_command(lab: str | None, report_file: Path, workspace: Workspace | None) -> list[str]:
    """The checkpoint command line for one lab (or the whole chapter)."""
    if lab is not None:
        chapter = lab.split(".")[0]
    else:
        chapter = workspace.chapter if workspace is not None else DEFAULT_CHAPTER
    command = [sys.executable, "-m", "course.harness.checkpoint", chapter]
    if lab is not None:
        command += ["--lab", lab]
    command += ["--json", str(report_file)]
    if workspace is not None:
        command += ["--practice", str(workspace.root)]
    return command


def check(
    lab: str | None = None,
    *,
    start: str | os.PathLike[str] | None = None,
    timeout: float = CHECK_TIMEOUT,
    runner: Runner = _run,
) -> CheckReport:
    """Run a lab's focused tests in a fresh process against the saved code, and report.

    The kernel's own state plays no part: unsaved edits and stale imports are not seen.
    ``lab`` is e.g. ``"11.2"``; without it the whole chapter is checked.
    """
    workspace = find_workspace(start)
    cwd = workspace.root if workspace is not None else _reference_root()
    with tempfile.TemporaryDirectory(prefix="course-check-") as folder:
        report_file = Path(folder) / "report.json"
        command = check_command(lab, report_file, workspace)
        try:
            completed = runner(command, cwd, timeout)
        except subprocess.TimeoutExpired:
            return failed_report(lab, f"the check did not finish within {timeout:g} seconds")
        except OSError as error:
            return failed_report(lab, f"the check could not start: {error.strerror or error}")
        if not report_file.is_file():
            return failed_report(lab, _no_report(completed))
        try:
            data = json.loads(report_file.read_text(encoding="utf-8"))
            report = parse_report(data, lab=lab)
        except ValueError as error:
            return failed_report(lab, f"the check wrote an unreadable report: {error}")
    if workspace is not None:
        report = report.without_text(str(workspace.root), "<workspace>")
    return report


def _reference_root() -> Path:
    """The folder holding the reference package (the repository in a development install)."""
    return Path(__file__).resolve().parents[2]


def _no_report(completed: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in (completed.stderr or "").splitlines() if line.strip()]
    tail = lines[-1].strip() if lines else f"exit status {completed.returncode}"
    return f"the check wrote no report ({tail})"
