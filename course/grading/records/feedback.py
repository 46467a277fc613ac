"""Per-learner feedback files: what a learner may see of their row, safe to hand back.

Each graded or ungraded row gets ``gradebook-feedback/<learner>.txt`` in the roster's edition:
the grade, each lab as the learner's own terminal shows it (failing tests, the disagreeing probe
cases with their input and replay command), problems and notes. It is built from the result as
learners see it (``engine.for_learners``); a run with instructor tests shows only the kit's
verdict text (``withheld.verdict_only``, as Gradescope's visible output does). Flags, copy
checks, limits and other learners never appear.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

from ...harness.editions import in_edition
from ...harness.gradeline import WIDTH, grade_lines
from ...harness.manifest import Manifest
from ...harness.report import render_lab, render_note
from ...locale import gettext as _
from ..intake.safefs import atomic_write, lstat_kind
from ..verdict.withheld import verdict_only
from .gradebook import Grade
from .outputs import Writing

STEM_BYTES = 120  # a file name's stem at most (a system takes 255 bytes), digest aside


def feedback_text(manifest: Manifest, row: Grade, instructor: bool = False) -> str:
    """One learner's feedback; ``instructor``: the run held instructor tests."""
    title = _("Chapter {chapter} · {learner}").format(
        chapter=manifest.chapter, learner=row.known_as
    )
    if not row.graded:  # no grade to give: only why
        reason = row.note or str(row.status)
        return "\n".join([title, "", _("Not graded: {reason}").format(reason=reason)]) + "\n"
    shown = row.shown
    if shown is not None and instructor:
        shown = verdict_only(shown)
    if shown is None:
        grade = _("Grade: {score}/{max_score}").format(score=row.score, max_score=row.max_score)
        return "\n".join([title, grade]) + "\n"
    lines = [title, *grade_lines(shown.required, whole=True, width=WIDTH), ""]
    titled = in_edition(manifest)  # the labs' titles in the roster's edition
    lines += [render_lab(replace(lab, lab=titled.lab(lab.lab.id))) for lab in shown.required]
    problems = shown.problems if instructor else row.problems
    lines += ["", *(_("problem: {problem}").format(problem=p) for p in problems)]
    lines += [line for note in row.notes for line in render_note(note, WIDTH)]
    return "\n".join(lines).rstrip() + "\n"


def file_name(learner: str, taken: set[str]) -> str:
    """A file name for ``learner``'s feedback: ``gus/practice-11`` is ``gus_practice-11.txt``;
    a name longer than ``STEM_BYTES`` is cut and given a digest of the whole (so any entry name,
    however long, has a file name the system takes); one already ``taken`` gets a number."""
    stem = re.sub(r"[^\w.#-]", "_", learner).lstrip(".") or "learner"
    if len(stem.encode("utf-8")) > STEM_BYTES:
        digest = hashlib.sha256(learner.encode("utf-8", "surrogateescape")).hexdigest()[:12]
        cut = stem.encode("utf-8")[:STEM_BYTES].decode("utf-8", "ignore")
        stem = f"{cut}-{digest}"
    name, number = f"{stem}.txt", 1
    while name.casefold() in taken:
        number += 1
        name = f"{stem}-{number}.txt"
    taken.add(name.casefold())
    return name


def write_feedback(
    folder: Path,
    manifest: Manifest,
    grades: Sequence[Grade],
    instructor: bool = False,
    writing: Writing | None = None,
) -> Path | None:
    """Every row's feedback in ``folder`` (made if missing), each file written on its own
    (``writing`` notes one that cannot be); None (nothing written) where the name is a link or
    a file, never followed or replaced."""
    writing = writing or Writing()
    if lstat_kind(folder) not in ("directory", "missing"):
        return None
    if not writing.write(str(folder), lambda: folder.mkdir(exist_ok=True)):
        return None
    taken: set[str] = set()
    for row in grades:
        name = file_name(row.learner, taken)  # every row's, so the names stay as they were
        if not row.graded and ("#" in row.learner or row.source == "symbolic link"):
            continue  # an older submission, a link: the graded row speaks for its learner
        if row.graded and row.shown is None:
            continue  # read back from gradebook.json (a regrade of another): its file stays
        path = folder / name
        text = feedback_text(manifest, row, instructor)
        writing.write(str(path), partial(atomic_write, path, text.encode()))
    return folder
