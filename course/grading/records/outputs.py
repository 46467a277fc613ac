"""The files a roster run writes beside its gradebook: where each goes, each written on its own.

The gradebook's CSV and JSON, the summary page, the feedback folder and the LMS exports share one
stem (``gradebook``, else ``gradebook-2``…): the first whose every name is free for what it is
(no folder where a file goes, nothing but a folder where the feedback folder goes), so an entry
named like one of them never stops the run. Each output is written on its own: one that cannot
be written names itself and why, and the others are written all the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path

from ...locale import gettext as _
from ...sandboxed.marker import WorkspaceError
from ..intake.safefs import lstat_kind

FEEDBACK_SUFFIX = "-feedback"


class OutputsFailed(WorkspaceError):
    """Some output of a roster run could not be written (each named on the terminal)."""


@dataclass(frozen=True)
class Outputs:
    """Where one roster run's files go."""

    csv: Path
    json: Path
    summary: Path
    anonymous: Path  # the summary page without names, to project in class
    feedback: Path
    canvas: Path
    moodle: Path

    @classmethod
    def named(cls, directory: Path, stem: str) -> Outputs:
        return cls(
            directory / f"{stem}.csv",
            directory / f"{stem}.json",
            directory / f"{stem}-summary.html",
            directory / f"{stem}-summary-anonymous.html",
            directory / f"{stem}{FEEDBACK_SUFFIX}",
            directory / f"{stem}-canvas.csv",
            directory / f"{stem}-moodle.csv",
        )

    @property
    def files(self) -> tuple[Path, ...]:
        return (self.csv, self.json, self.summary, self.anonymous, self.canvas, self.moodle)

    def free(self) -> bool:
        """No folder holds a file's name, and the feedback folder's is a folder or free."""
        if any(lstat_kind(path) == "directory" for path in self.files):
            return False
        return lstat_kind(self.feedback) in ("directory", "missing")


def output_paths(directory: Path) -> Outputs:
    """Where the run's files go in ``directory``: ``gradebook.csv`` and the rest, else the first
    ``gradebook-N`` stem whose names are all free (``Outputs.free``)."""
    for number in count(1):
        outputs = Outputs.named(directory, "gradebook" if number == 1 else f"gradebook-{number}")
        if outputs.free():
            return outputs
    raise AssertionError("unreachable")  # count() never ends


@dataclass
class Writing:
    """Outputs written one at a time: what each became, and what could not be written."""

    said: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def write(self, what: str, action: Callable[[], object]) -> bool:
        """Run ``action``, which writes ``what``; an ``OSError`` (or an encoding error) is
        noted with ``what`` and the reason, and the run goes on. Whether it was written."""
        try:
            action()
        except (OSError, UnicodeError) as error:
            reason = getattr(error, "strerror", None) or error
            said = _("could not write {what}: {reason}")
            self.failed.append(said.format(what=what, reason=reason))
            return False
        return True

    def closing(self) -> OutputsFailed | None:
        """What to raise once everything else is written, when something was not."""
        if not self.failed:
            return None
        said = _("{count} output(s) could not be written: {failed}")
        return OutputsFailed(said.format(count=len(self.failed), failed="; ".join(self.failed)))
