"""Per-learner feedback files: what a learner may see of their row, safe to hand back.

Each graded or ungraded row gets ``gradebook-feedback/<learner>.txt`` in the roster's edition:
the grade, each lab as the learner's own terminal shows it (failing tests, the disagreeing probe
cases with their input and replay command), problems and notes. It is built from the result as
learners see it (``engine.for_learners``); a run with instructor tests shows only the kit's
verdict text (``withheld.verdict_only``, as Gradescope's visible output does). Flags, copy
checks, limits and other learners never appear.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..harness.editions import in_edition
from ..harness.manifest import Manifest
from ..harness.report import render_lab
from ..locale import gettext as _
from ..sandboxed.status import Status
from .gradebook import Grade
from .safefs import atomic_write
from .withheld import verdict_only

FOLDER_SUFFIX = "-feedback"  # beside gradebook.csv: gradebook-feedback/


def feedback_text(manifest: Manifest, row: Grade, instructor: bool = False) -> str:
    """One learner's feedback; ``instructor``: the run held instructor tests."""
    title = _("Chapter {chapter} · {learner}").format(chapter=manifest.chapter, learner=row.learner)
    grade = _("Grade: {score}/{max_score}").format(score=row.score, max_score=row.max_score)
    lines = [title, grade, ""]
    shown = row.shown
    if shown is not None and instructor:
        shown = verdict_only(shown)
    if shown is None:
        reason = row.note or str(row.status)
        lines.append(_("Not graded: {reason}").format(reason=reason))
    else:
        lines += [_("Evidence: {evidence}").format(evidence=shown.evidence), ""]
        titled = in_edition(manifest)  # the labs' titles in the roster's edition
        lines += [render_lab(replace(lab, lab=titled.lab(lab.lab.id))) for lab in shown.required]
        problems = shown.problems if instructor else row.problems
        lines += ["", *(_("problem: {problem}").format(problem=p) for p in problems)]
        lines += [_("note: {note}").format(note=note) for note in row.notes]
    return "\n".join(lines).rstrip() + "\n"


def file_name(learner: str, taken: set[str]) -> str:
    """A file name for ``learner``'s feedback: ``gus/practice-11`` is ``gus_practice-11.txt``;
    one already ``taken`` gets a number."""
    stem = re.sub(r"[^\w.#-]", "_", learner).lstrip(".") or "learner"
    name, number = f"{stem}.txt", 1
    while name.casefold() in taken:
        number += 1
        name = f"{stem}-{number}.txt"
    taken.add(name.casefold())
    return name


def write_feedback(
    csv_path: Path, manifest: Manifest, grades: Sequence[Grade], instructor: bool = False
) -> Path | None:
    """Every row's feedback in the folder beside the gradebook's CSV; None (nothing written)
    where that name is a link or a file, never followed or replaced."""
    folder = csv_path.with_name(csv_path.stem + FOLDER_SUFFIX)
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        return None
    folder.mkdir(exist_ok=True)
    taken: set[str] = set()
    for row in grades:
        if row.status == Status.SKIPPED and not row.student:
            continue  # an older submission, a link: the graded row speaks for its learner
        text = feedback_text(manifest, row, instructor)
        atomic_write(folder / file_name(row.learner, taken), text.encode("utf-8"))
    return folder
