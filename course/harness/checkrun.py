"""One checkpoint run: which code it checks, its labs run and printed lab by lab, the result."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .grading import GradingOptions, check_graded
from .kit import chapter_fingerprints, short
from .manifest import Lab, Manifest
from .report import render_lab
from .results import CheckpointResult, TestOutcome, attribute, summarize
from .runner import Limits, RunTarget, run_focused_tests
from .style import PLAIN, Style
from .workspace import (
    Workspace,
    WorkspaceError,
    find_workspace,
    focused_test_problems,
    read_workspace,
)


@dataclass(frozen=True)
class Where:
    """The code a checkpoint checks: the reference in the kit, or a practice workspace."""

    target: RunTarget
    label: str
    """How the run describes it (``workspace /home/me/practice-11``)."""
    problems: tuple[str, ...] = ()
    """Problems found before running (edited focused tests, say)."""
    workspace: Workspace | None = None

    @property
    def package_dir(self) -> Path:
        return self.target.root / self.target.package.replace(".", "/")


def locate(manifest: Manifest, kit: Path, practice: str | None) -> Where:
    """What to check: ``practice``, else the workspace around the current folder, else the kit.

    A ``WorkspaceError`` says why a directory is not a usable workspace of this chapter.
    """
    root = Path(practice).resolve() if practice else find_workspace(Path.cwd())
    if root is None:
        target = RunTarget(kit, manifest.test_files, manifest.reference)
        return Where(target, f"the reference ({manifest.reference}) in {kit}")
    workspace = read_workspace(root)
    if workspace.chapter != manifest.chapter:
        raise WorkspaceError(
            f"{root} is a chapter {workspace.chapter} workspace, not chapter {manifest.chapter}"
        )
    target = RunTarget(root, manifest.test_files, workspace.package, (root,))
    began = short(workspace.parent_fingerprint)
    now = short(chapter_fingerprints(manifest, kit).parent)
    since = "" if began == now else f" (begun from scaffold {began}; the kit's is now {now})"
    problems = tuple(focused_test_problems(manifest, kit, workspace))
    return Where(target, f"workspace {root}{since}", problems, workspace)


@dataclass
class LabPrinter:
    """Prints each lab's line as soon as its tests (and every earlier lab's) are done."""

    manifest: Manifest
    labs: Sequence[Lab]
    out: TextIO
    style: Style = PLAIN
    expected: dict[str, int] = field(default_factory=dict)
    done: dict[str, list[TestOutcome]] = field(default_factory=dict)
    printed: int = 0
    collected: bool = False

    def on_collected(self, tests: list[tuple[str, str, str | None]]) -> None:
        self.collected = True
        for _, _, lab in tests:
            if lab is not None:
                self.expected[lab] = self.expected.get(lab, 0) + 1
        self.flush()

    def on_result(self, outcome: TestOutcome) -> None:
        if outcome.lab is not None:
            self.done.setdefault(outcome.lab, []).append(outcome)
        self.flush()

    def _finished(self, lab: Lab) -> list[TestOutcome] | None:
        """The lab's outcomes once every collected test of it has ended, else None."""
        done = self.done.get(lab.id, [])
        if not self.collected or len(done) < self.expected.get(lab.id, 0):
            return None
        return done

    def flush(self, final: Sequence[TestOutcome] | None = None) -> None:
        """Print the next labs in order while they are finished (all of them with ``final``)."""
        while self.printed < len(self.labs):
            lab = self.labs[self.printed]
            if final is not None:
                mine: list[TestOutcome] | None = [t for t in final if t.lab == lab.id]
            else:
                mine = self._finished(lab)
            if mine is None:
                return
            result = summarize(self.manifest, [lab], mine, target="").labs[0]
            print(render_lab(result, style=self.style), file=self.out, flush=True)
            self.printed += 1


def run_labs(
    manifest: Manifest,
    where: Where,
    lab_ids: Sequence[str],
    limits: Limits,
    out: TextIO,
    style: Style = PLAIN,
) -> CheckpointResult:
    """Run the labs (every lab when ``lab_ids`` is empty), printing each lab's line."""
    labs = [manifest.lab(lab_id) for lab_id in lab_ids] or list(manifest.labs)
    printer = LabPrinter(manifest, labs, out, style)
    outcomes, log = run_focused_tests(
        where.target,
        labs=[lab.id for lab in labs] if lab_ids else [],
        limits=limits,
        on_collected=printer.on_collected,
        on_result=lambda outcome: printer.on_result(attribute(manifest, outcome)),
    )
    outcomes = [attribute(manifest, outcome) for outcome in outcomes]
    printer.flush(final=outcomes)
    problems = list(where.problems)
    if not outcomes and log.collect_errors:
        problems += log.collect_errors
    return summarize(manifest, labs, outcomes, target=where.label, problems=problems)


def check_where(
    manifest: Manifest,
    kit: Path,
    where: Where,
    lab_ids: Sequence[str],
    limits: Limits,
    out: TextIO,
    style: Style = PLAIN,
    grading: GradingOptions | None = None,
) -> CheckpointResult:
    """Check ``where``: a workspace (or instructor tests) is graded, the reference runs in place.

    Grading assembles a pristine copy of the kit's tests with the learner's files, runs it
    confined, and lets the probes decide; see ``grading.py``.
    """
    grading = grading or GradingOptions()
    if where.workspace is None and grading.hidden is None:
        print(f"Checking {where.label}", file=out, flush=True)
        return run_labs(manifest, where, lab_ids, limits, out, style)
    labs = [manifest.lab(lab_id) for lab_id in lab_ids] or list(manifest.labs)
    printer = LabPrinter(manifest, labs, out, style)
    root = where.workspace.root if where.workspace is not None else None
    return check_graded(manifest, kit, root, labs, bool(lab_ids), limits, grading, out, printer)


def run_checkpoint(
    manifest: Manifest,
    kit: Path,
    *,
    practice: str | None,
    lab_ids: Sequence[str],
    limits: Limits,
    out: TextIO,
    style: Style = PLAIN,
    grading: GradingOptions | None = None,
) -> CheckpointResult:
    """Find the code to check, then check it and print the labs as they finish."""
    where = locate(manifest, kit, practice)
    return check_where(manifest, kit, where, lab_ids, limits, out, style, grading)
