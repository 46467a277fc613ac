"""What a notebook runs: the learner's package (or the reference standing in for it), and checks.

``open_chapter("11")`` makes ``import pi_course`` mean the learner's package inside a practice
workspace and the kit's reference everywhere else, so the same cells serve both. It also
installs one exception handler: a lab that is not written yet shows as a one-line pending note.
``check("11.3")`` runs a lab's focused tests in a fresh process against the saved files.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any

from ..harness.manifest import Manifest, load_manifest
from ..harness.workspace import Workspace, find_workspace, read_workspace
from .checkreport import CheckReport, failed_report, parse_report
from .views import View, message

CHECK_TIMEOUT = 600.0
"""Seconds a lab check may run before it is reported as timed out."""
COLOUR_VARIABLES = ("FORCE_COLOR", "PY_COLORS", "CLICOLOR_FORCE")
"""Set by notebook kernels; a check's output is captured text, so they are dropped."""


@dataclass(frozen=True)
class OpenedChapter:
    """Which package ``import <package>`` gives this kernel, and from where."""

    manifest: Manifest
    package: ModuleType
    workspace: Workspace | None

    @property
    def label(self) -> str:
        name = self.manifest.package
        if self.workspace is None:
            return f"{name} is the kit's reference implementation here (no practice workspace)"
        return f"{name} is your practice workspace's package"

    def _repr_html_(self) -> str:
        return message(self.label, "note").html

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(message(self.label, "note").text)


def _module_names(manifest: Manifest) -> list[str]:
    """The package's modules, as the workspace layout lists them."""
    prefix = f"{manifest.package}/"
    names = []
    for file in manifest.files:
        if file.path.startswith(prefix) and file.path.endswith(".py"):
            stem = file.path[len(prefix) : -3]
            if stem != "__init__":
                names.append(stem)
    return names


def _alias_reference(manifest: Manifest) -> ModuleType:
    """Register the reference under the learner's package name (kit notebooks only)."""
    reference = importlib.import_module(manifest.reference)
    sys.modules[manifest.package] = reference
    for name in _module_names(manifest):
        module = importlib.import_module(f"{manifest.reference}.{name}")
        sys.modules[f"{manifest.package}.{name}"] = module
    return reference


def _import_workspace(manifest: Manifest, workspace: Workspace) -> ModuleType:
    """Import the learner's package from the workspace, whatever was imported before."""
    root = str(workspace.root)
    if root not in sys.path:
        sys.path.insert(0, root)
    stale = [n for n in sys.modules if n.split(".")[0] == manifest.package]
    for name in stale:
        if not str(getattr(sys.modules[name], "__file__", "") or "").startswith(root):
            del sys.modules[name]
    return importlib.import_module(manifest.package)


def open_chapter(chapter: str, start: str | os.PathLike[str] | None = None) -> OpenedChapter:
    """Make ``import <package>`` work in this kernel and show pending labs as one-line notes."""
    manifest = load_manifest(chapter)
    root = find_workspace(Path(start) if start is not None else Path.cwd())
    workspace = read_workspace(root) if root is not None else None
    if workspace is None:
        package = _alias_reference(manifest)
    else:
        package = _import_workspace(manifest, workspace)
    _install_pending_handler()
    return OpenedChapter(manifest, package, workspace)


# --------------------------------------------------------------------------- pending labs


def pending_note(error: BaseException) -> View | None:
    """The one-line note for a lab stub's exception; None for any other error."""
    if not isinstance(error, NotImplementedError) or not hasattr(error, "lab_id"):
        return None
    return message(f"pending · {error}", "pending")


def _pending_handler(
    shell: Any,
    etype: type[BaseException],
    value: BaseException,
    tb: TracebackType | None,
    tb_offset: int | None = None,
) -> list[str]:
    note = pending_note(value)
    if note is None:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return []
    from IPython.display import display

    display(note)  # type: ignore[no-untyped-call]
    return []


def _install_pending_handler() -> None:
    try:
        from IPython.core.getipython import get_ipython
    except ImportError:  # pragma: no cover - outside IPython there is nothing to install
        return
    shell = get_ipython()  # type: ignore[no-untyped-call]
    if shell is not None:
        shell.set_custom_exc((NotImplementedError,), _pending_handler)


# --------------------------------------------------------------------------- lab checks

Runner = Callable[[list[str], Path, dict[str, str], float], "subprocess.CompletedProcess[str]"]


def _run(
    command: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def check_command(lab: str, report_file: Path, workspace: Workspace | None) -> list[str]:
    """The checkpoint command line for one lab (``11.3``) or a whole chapter (``11``)."""
    chapter = lab.split(".")[0]
    command = [sys.executable, "-m", "course.harness.checkpoint", chapter, "--no-card"]
    if lab != chapter:
        command += ["--lab", lab]
    command += ["--json", str(report_file)]
    if workspace is not None:
        command += ["--practice", str(workspace.root)]
    return command


def check_environment() -> dict[str, str]:
    """The kernel's environment without its colour switches: the report is plain text."""
    env = {k: v for k, v in os.environ.items() if k not in COLOUR_VARIABLES}
    env["NO_COLOR"] = "1"
    return env


def check(
    lab: str,
    *,
    start: str | os.PathLike[str] | None = None,
    timeout: float = CHECK_TIMEOUT,
    runner: Runner = _run,
) -> CheckReport:
    """Run a lab's focused tests (``"11.3"``; ``"11"`` for all) in a fresh process, and report.

    The kernel's own state plays no part: unsaved edits and stale imports are not seen.
    """
    root = find_workspace(Path(start) if start is not None else Path.cwd())
    workspace = read_workspace(root) if root is not None else None
    cwd = workspace.root if workspace is not None else _reference_root()
    shown_lab = None if "." not in lab else lab
    with tempfile.TemporaryDirectory(prefix="course-check-") as folder:
        report_file = Path(folder) / "report.json"
        command = check_command(lab, report_file, workspace)
        try:
            completed = runner(command, cwd, check_environment(), timeout)
        except subprocess.TimeoutExpired:
            return failed_report(shown_lab, f"the check did not finish within {timeout:g} seconds")
        except OSError as error:
            return failed_report(shown_lab, f"the check could not start: {error.strerror or error}")
        if not report_file.is_file():
            return failed_report(shown_lab, _no_report(completed))
        try:
            data = json.loads(report_file.read_text(encoding="utf-8"))
            report = parse_report(data, lab=shown_lab)
        except ValueError as error:
            return failed_report(shown_lab, f"the check wrote an unreadable report: {error}")
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
