"""Gradescope: the autograder zip of a chapter, and the run inside it that writes results.json.

The zip holds ``setup.sh`` (installs bubblewrap and the bundled kit), ``run_autograder``
(``checkpoint CHAPTER --gradescope ROOT``) and any instructor tests. The run grades
``ROOT/submission`` through the roster's intake and grading into ``ROOT/results/results.json``: a
test per lab (its ``points`` when it passes whole) and per instructor test (shown per
``visibility``). What the instructor should look at goes to stdout, which learners do not see.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from ...harness.gradeline import WIDTH, grade_lines
from ...harness.manifest import Manifest
from ...harness.report import render_lab
from ...harness.roots import VARIABLE, chapter_files, chapters_root
from ...locale import gettext as _
from ...sandboxed.status import Status
from ..confinement.sandbox import python_directories
from ..intake.folder import GRADABLE, Submission, folder_entries, mark_older
from ..intake.loose import LabFiles
from ..intake.safefs import atomic_write
from ..records.gradebook import Grade, encodable, json_fields, ungraded_row
from ..roster import RosterOptions, grade_submissions, row_line
from ..verdict.assignment import file_name, new_seed, read_assignment, render
from ..verdict.engine import SandboxUnavailable
from ..verdict.withheld import verdict_only
from .visibility import Visibility

SUBMISSION = "submission"
SOURCE = "source"
RESULTS = "results"
KIT_FILES = ("pyproject.toml", "README.md", "scripts/setup")  # what scripts/setup needs
SKIPPED = ("__pycache__", ".pyc")


# --------------------------------------------------------------------------- results.json


def results(
    manifest: Manifest, row: Grade, visibility: Visibility, instructor: bool = False
) -> dict[str, Any]:
    """Gradescope's ``results.json`` for one graded row: a test per lab, worth its points when
    it passes whole (``LabGrade.score``), showing what learners see, the chapter's counts; a
    test per instructor test, shown per ``visibility``. ``instructor``: the run held instructor
    tests, so what learners see at once is the kit's verdict text only (``withheld.py``)."""
    shown = row.shown
    if shown is not None and instructor:
        shown = verdict_only(shown)
    tests = []
    for graded in row.labs:
        lab = manifest.lab(graded.id)
        result = shown.lab(lab.id) if shown is not None else None
        tests.append(
            {
                "name": _("Lab {lab} · {title}").format(lab=lab.id, title=lab.title),
                "score": graded.score,
                "max_score": graded.points,
                "status": Status.PASSED if graded.status == Status.PASSED else Status.FAILED,
                "output": render_lab(result) if result is not None else graded.reason,
                "visibility": "visible",
                "extra_data": {
                    "lab": lab.id,
                    "status": str(graded.status),
                    **json_fields(graded, "passed total agreed cases"),
                    **({"credit": dict(graded.credit)} if graded.credit is not None else {}),
                },
            }
        )
    tests += [
        {
            "name": _("Instructor test {name} (Lab {lab})").format(name=t["name"], lab=t["lab"]),
            "status": Status.PASSED if t["status"] == Status.PASSED else Status.FAILED,
            # learners see it when the instructor chose; at once, only its status
            "output": t["message"] if visibility != "visible" else str(t["status"]),
            "visibility": visibility,
        }
        for t in row.tests
        if t["instructor"]
    ]
    problems = shown.problems if shown is not None and instructor else row.problems
    said = [*problems, *row.notes]
    if shown is not None:
        said[:0] = grade_lines(shown.required, whole=True, width=WIDTH)
    extra: dict[str, Any] = {"chapter": manifest.chapter, "status": str(row.status)}
    extra |= {"score": row.score, "max_score": row.max_score}
    if row.scaffold is not None:
        extra["scaffold"] = {"began": row.scaffold[0], "kit": row.scaffold[1]}
    return {
        "score": sum(test.get("score", 0) for test in tests),
        "output": "\n".join(said),
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": extra,
    }


# --------------------------------------------------------------------------- the run


def submission_entry(manifest: Manifest, root: Path) -> Submission | str:
    """What ``root/submission`` holds to grade, by the roster's intake (a workspace, itself or
    in a folder of it; an archive; lab files without a workspace), or why there is none."""
    if not (root / SUBMISSION).is_dir():
        return _("{folder}: no submission folder").format(folder=root / SUBMISSION)
    if not any((root / SUBMISSION).iterdir()):
        return _("the submission is empty")
    entries = mark_older(folder_entries(root, SUBMISSION, lab_files=LabFiles.of(manifest)))
    gradable = [e for e in entries if e.kind in GRADABLE and not e.newer]
    if len(gradable) == 1:
        return gradable[0]
    if gradable:
        listed = ", ".join("/".join(e.parts) for e in gradable)
        said = _("the submission holds {count} workspaces ({listed}); hand in one")
        return said.format(count=len(gradable), listed=listed)
    return "; ".join(e.why for e in entries) or _("the submission is empty")


def withhold(top: Path, keep: Sequence[Path]) -> None:
    """Take group's and others' access away from ``top`` and everything in it, but for the
    Python directories ``keep`` (the kit's ``.venv``) and the folders on their way, which others
    may still enter (never list): learner code run as another user reads none of it."""
    try:
        mode = top.lstat().st_mode
    except OSError:
        return
    if stat.S_ISLNK(mode) or any(top == path or top.is_relative_to(path) for path in keep):
        return
    on_the_way = stat.S_ISDIR(mode) and any(path.is_relative_to(top) for path in keep)
    with contextlib.suppress(OSError):
        os.chmod(top, (mode & 0o7700) | (0o011 if on_the_way else 0))
    if on_the_way:
        for child in top.iterdir():
            withhold(child, keep)


def guard(root: Path) -> None:
    """Run as root, what the autograder holds (the kit, the instructor tests, the submission,
    the results) made the grader's alone, should learner code run outside a sandbox."""
    if os.geteuid() != 0:
        return
    keep = [path.resolve() for path in python_directories()]
    for name in (SOURCE, SUBMISSION, RESULTS):
        withhold(root / name, keep)


def run_autograder(
    manifest: Manifest,
    kit: Path,
    root: Path,
    options: RosterOptions,
    visibility: Visibility,
    out: TextIO,
) -> Path | None:
    """Grade ``root/submission``, write ``root/results/results.json`` and say on ``out`` what
    the run enforced; returns the results file. Never raises for what the submission holds;
    where learner code cannot be confined at all it writes no results (Gradescope then shows an
    autograder failure, never a grade) and returns ``None``."""
    root = root.resolve()
    labs = options.labs(manifest)
    path = root / RESULTS / "results.json"
    guard(root)
    said: list[str] = []
    options, kept = assignment_of(manifest, root, options)
    if not kept:
        said.append(_("  no assignment file: this run drew its own audit seed (rebuild the zip)"))
    entry = submission_entry(manifest, root)
    if isinstance(entry, str):
        row = ungraded_row(SUBMISSION, str(root / SUBMISSION), labs, Status.ERROR, entry)
    else:
        try:
            graded = grade_submissions(manifest, kit, root, [entry], options, out, hide=(root,))
        except SandboxUnavailable as error:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            failed = _(
                "The autograder cannot confine learner code here, so it graded nothing: "
                "{error}\nNo results.json is written: Gradescope shows the autograder failed "
                "(not a zero). Run the autograder where bubblewrap starts, or as root with "
                "setpriv (util-linux) installed."
            )
            print(failed.format(error=error), file=out)
            return None
        row = graded.grades[0]
        sandbox = graded.run["sandbox"]
        if not sandbox["sandboxed"]:
            said.append(
                _(
                    "  isolation: bubblewrap cannot start in this container; the fallback "
                    "ran learner code as an unprivileged user (see the limits)"
                )
            )
        said += [_("  limits: {limit}").format(limit=line) for line in graded.enforced]
        probes = graded.run["probes"]
        audit = probes["audit"] or {"seed": None, "cases": 0}
        drawn = _("  probes: seed {seed}, {cases} cases; audit seed {audit}, {more} cases")
        said.append(drawn.format_map(probes | {"audit": audit["seed"], "more": audit["cases"]}))
    path.parent.mkdir(parents=True, exist_ok=True)
    instructor = options.grading.hidden is not None
    shown = encodable(results(manifest, row, visibility, instructor))
    text = json.dumps(shown, indent=2, ensure_ascii=False)
    atomic_write(path, (text + "\n").encode("utf-8"))
    done = _("Graded the submission of chapter {chapter} for Gradescope: {path}")
    flags = [_("  flag: {flag}").format(flag=flag) for flag in row.flags]
    theirs = _("  instructor test {name} (Lab {lab}): {status}: {message}")
    lines = [done.format(chapter=manifest.chapter, path=path), *said, row_line(row), *flags]
    lines += [
        theirs.format_map(t) for t in row.tests if t["instructor"] and t["status"] != Status.PASSED
    ]
    print(*lines, sep="\n", file=out)
    return path


def assignment_of(
    manifest: Manifest, root: Path, options: RosterOptions
) -> tuple[RosterOptions, bool]:
    """``options`` with the zip's assignment seed (``--assignment``, else the file the zip
    carries in ``ROOT/source``), unless ``--audit-seed`` gives one; and whether one was found
    (a zip made before assignment files carries none: each run then draws its own)."""
    path = options.assignment or root / "source" / file_name(manifest.chapter)
    if options.assignment is None and not path.is_file():
        return options, options.audit_seed is not None
    found = read_assignment(path, manifest.chapter)
    seed = options.audit_seed if options.audit_seed is not None else found.audit_seed
    return replace(options, audit_seed=seed, assignment=path), True


# --------------------------------------------------------------------------- the zip

SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image: the kit (bundled in
# kit/) with what grading needs and nothing else (no notebooks), bubblewrap and setpriv are
# installed by the kit's own `scripts/setup --grading`, into kit/.venv.
# COURSE_KIT_BIN=/path/to/bin uses a kit already installed there instead (a test, an own image).
set -euo pipefail
here="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
if [ -n "${{COURSE_KIT_BIN:-}}" ]; then
  echo "setup.sh: using the kit installed in $COURSE_KIT_BIN"
else
  if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11 python3.11-venv
    export PYTHON=python3.11
  fi
  bash "$here/kit/scripts/setup" --grading
  COURSE_KIT_BIN="$here/kit/.venv/bin"
fi
{chapters}"$COURSE_KIT_BIN/checkpoint" {chapter} --help >/dev/null
echo "setup.sh: chapter {chapter}'s autograder is ready"
"""

RUN = """#!/usr/bin/env bash
# Gradescope runs this for each submission, in /autograder (AUTOGRADER_ROOT points elsewhere):
# it grades ROOT/submission and writes ROOT/results/results.json.
set -euo pipefail
root="${{AUTOGRADER_ROOT:-/autograder}}"
bin="${{COURSE_KIT_BIN:-$root/source/kit/.venv/bin}}"
{chapters}exec "$bin/checkpoint" {arguments}
"""


def kit_files(manifest: Manifest, kit: Path) -> dict[str, bytes]:
    """What the autograder bundles of the kit: its package, the curriculum's files and what
    ``scripts/setup`` installs it with; a chapter found through ``COURSE_CHAPTERS``, wherever
    it is, travels as its folder (``harness/roots.py``)."""
    named = [path for f in manifest.files for path in (f.starter, f.reference)]
    named += [manifest.probes] if manifest.probes else []
    paths = {*KIT_FILES, *(path for path in named if not Path(path).is_absolute())}
    for path in (kit / "course").rglob("*"):
        if path.is_file() and not any(part.endswith(SKIPPED) for part in path.parts):
            paths.add(path.relative_to(kit).as_posix())
    files = {f"kit/{p}": (kit / p).read_bytes() for p in sorted(paths)}
    return files | {
        f"kit/{name}": path.read_bytes() for name, path in chapter_files(manifest).items()
    }


def autograder_files(
    manifest: Manifest,
    kit: Path,
    arguments: Sequence[str],
    instructor: Mapping[str, bytes] | None = None,
    audit_seed: int | None = None,
) -> dict[str, bytes]:
    """Every file of the zip; ``arguments``: what ``run_autograder`` passes to ``checkpoint``
    after the chapter and ``--gradescope`` (``instructor``: tests, passed as ``--hidden``). The
    zip carries the assignment file, its audit seed ``audit_seed`` or a new secret one: every
    submission to the assignment is graded with the same cases."""
    name = file_name(manifest.chapter)
    words = [manifest.chapter, '--gradescope "$root"', *arguments]
    words.append(f'--assignment "$root/source/{name}"')
    if instructor:
        words.append('--hidden "$root/source/instructor"')
    seed = audit_seed if audit_seed is not None else new_seed(manifest.probe_seed)
    root = chapters_root(manifest)  # a chapter not built in: the run names its folder
    setup = f'export {VARIABLE}="$here/kit/{root}"\n' if root else ""
    run = f'export {VARIABLE}="$root/source/kit/{root}"\n' if root else ""
    files = {
        "setup.sh": SETUP.format(chapter=manifest.chapter, chapters=setup).encode(),
        "run_autograder": RUN.format(arguments=" ".join(words), chapters=run).encode(),
        name: render(manifest.chapter, seed).encode(),  # made with the zip, kept in it
    }
    files |= {f"instructor/{name}": data for name, data in (instructor or {}).items()}
    return files | kit_files(manifest, kit)


def write_zip(path: Path, files: Mapping[str, bytes]) -> None:
    """The files at the zip's top (as Gradescope wants them), the scripts executable."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            mode = 0o755 if name in ("setup.sh", "run_autograder", "kit/scripts/setup") else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            archive.writestr(info, data, zipfile.ZIP_DEFLATED)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, buffer.getvalue())
