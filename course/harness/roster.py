"""Grading a class: every workspace under a directory, each in its own time-limited process."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from .manifest import Manifest
from .runner import CappedOutput
from .workspace import MARKER, WorkspaceError

SEARCH_DEPTH = 3
"""How deep under a learner's directory a workspace is looked for."""


@dataclass(frozen=True)
class RosterOptions:
    """How to grade: which labs, and the time limits."""

    lab_ids: tuple[str, ...] = ()
    test_seconds: float = 10.0
    workspace_seconds: float | None = None
    """Limit for one whole workspace; default: every test at its limit, plus a minute."""
    jobs: int = 2


@dataclass(frozen=True)
class Candidate:
    """A learner's directory and the workspace found in it (None: nothing to grade)."""

    learner: str
    workspace: Path | None


@dataclass(frozen=True)
class LabGrade:
    id: str
    passed: int
    total: int
    status: str


@dataclass(frozen=True)
class Grade:
    """One learner's row of the gradebook."""

    learner: str
    workspace: str
    status: str
    passed: int
    total: int
    labs: tuple[LabGrade, ...]
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "learner": self.learner,
            "workspace": self.workspace,
            "status": self.status,
            "passed": self.passed,
            "total": self.total,
            "labs": [vars(lab) for lab in self.labs],
            "note": self.note,
        }


def discover(roster: Path) -> list[Candidate]:
    """Each non-hidden directory of ``roster`` is a learner; find their workspaces in it."""
    roster = roster.resolve()
    if not roster.is_dir():
        raise WorkspaceError(f"{roster}: not a directory of learners' workspaces")
    if (roster / MARKER).is_file():
        raise WorkspaceError(f"{roster} is itself a workspace; check it with --practice")
    found = []
    for child in sorted(p for p in roster.iterdir() if p.is_dir() and not p.name.startswith(".")):
        workspaces = _workspaces_in(child, SEARCH_DEPTH)
        if not workspaces:
            found.append(Candidate(child.name, None))
        found += [Candidate(w.relative_to(roster).as_posix(), w) for w in workspaces]
    return found


def _workspaces_in(folder: Path, depth: int) -> list[Path]:
    if (folder / MARKER).is_file():
        return [folder]
    if depth == 0:
        return []
    found: list[Path] = []
    with contextlib.suppress(OSError):
        for child in sorted(folder.iterdir()):
            if child.is_dir() and not child.is_symlink() and not child.name.startswith("."):
                found += _workspaces_in(child, depth - 1)
    return found


def _lab_grades(manifest: Manifest, lab_ids: Sequence[str], status: str) -> tuple[LabGrade, ...]:
    """Every selected lab at 0 passed with ``status`` (for a workspace that was not graded)."""
    labs = [manifest.lab(i) for i in lab_ids] or list(manifest.required_labs)
    return tuple(LabGrade(lab.id, 0, lab.tests, status) for lab in labs)


def _failed_grade(
    manifest: Manifest, candidate: Candidate, options: RosterOptions, status: str, note: str
) -> Grade:
    labs = _lab_grades(manifest, options.lab_ids, status)
    return Grade(
        learner=candidate.learner,
        workspace=str(candidate.workspace or ""),
        status=status,
        passed=0,
        total=sum(lab.total for lab in labs),
        labs=labs,
        note=note,
    )


def grade_from_json(candidate: Candidate, data: dict[str, Any]) -> Grade:
    """A gradebook row from one ``checkpoint --json`` result."""
    labs = tuple(
        LabGrade(str(lab["id"]), int(lab["passed"]), int(lab["total"]), str(lab["status"]))
        for lab in data["labs"]
    )
    problems = [str(p) for p in data.get("problems", [])]
    worst = next(
        (
            s
            for s in ("error", "timeout", "failed", "pending")
            if any(lab.status == s for lab in labs)
        ),
        "error" if problems else "passed",
    )
    return Grade(
        learner=candidate.learner,
        workspace=str(candidate.workspace),
        status=worst,
        passed=int(data["passed"]),
        total=int(data["total"]),
        labs=labs,
        note="; ".join(problems),
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM first (the grader then kills its own test process), SIGKILL if it lingers."""
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def grade_one(manifest: Manifest, candidate: Candidate, options: RosterOptions) -> Grade:
    """Grade one workspace in a fresh ``checkpoint`` process under a wall-clock limit."""
    if candidate.workspace is None:
        return _failed_grade(
            manifest, candidate, options, "error", f"no practice workspace found ({MARKER})"
        )
    tests = sum(lab.total for lab in _lab_grades(manifest, options.lab_ids, "error"))
    limit = options.workspace_seconds or tests * options.test_seconds + 60
    with tempfile.TemporaryDirectory(prefix="roster-") as scratch:
        result = Path(scratch) / "result.json"
        command = [
            sys.executable,
            "-m",
            "course.harness.checkpoint",
            manifest.chapter,
            "--practice",
            str(candidate.workspace),
            "--json",
            str(result),
            "--no-card",
            "--timeout",
            str(options.test_seconds),
        ]
        for lab_id in options.lab_ids or [lab.id for lab in manifest.required_labs]:
            command += ["--lab", lab_id]
        process = subprocess.Popen(
            command,
            cwd=scratch,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        assert process.stdout is not None
        output = CappedOutput(process.stdout, 16 * 1024)
        try:
            process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            _stop(process)
            return _failed_grade(
                manifest, candidate, options, "timeout", f"grading took longer than {limit:g}s"
            )
        finally:
            if process.poll() is None:
                _stop(process)
        try:
            data = json.loads(result.read_text(encoding="utf-8"))
            return grade_from_json(candidate, data)
        except (OSError, ValueError, KeyError, TypeError):
            lines = [line for line in output.text().splitlines() if line.strip()]
            why = lines[-1].strip() if lines else f"exit code {process.returncode}"
            return _failed_grade(manifest, candidate, options, "error", why[:300])


def gradebook_csv(manifest: Manifest, grades: Sequence[Grade]) -> str:
    lab_ids = (
        [lab.id for lab in grades[0].labs] if grades else [lab.id for lab in manifest.required_labs]
    )
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(
        ["learner", "status", "passed", "total"]
        + [f"lab {i}" for i in lab_ids]
        + [f"status {i}" for i in lab_ids]
        + ["note", "workspace"]
    )
    for grade in grades:
        writer.writerow(
            [grade.learner, grade.status, grade.passed, grade.total]
            + [f"{lab.passed}/{lab.total}" for lab in grade.labs]
            + [lab.status for lab in grade.labs]
            + [grade.note, grade.workspace]
        )
    return buffer.getvalue()


def write_gradebook(
    manifest: Manifest, grades: Sequence[Grade], directory: Path
) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    csv_path = directory / "gradebook.csv"
    json_path = directory / "gradebook.json"
    csv_path.write_text(gradebook_csv(manifest, grades), encoding="utf-8")
    payload = {"chapter": manifest.chapter, "learners": [g.to_json() for g in grades]}
    json_path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return csv_path, json_path


class Progress:
    """A progress bar on a terminal; one line per graded workspace otherwise."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = total
        self.stream = stream
        self.done = 0
        self.lock = threading.Lock()
        self.bar = stream.isatty()

    def step(self, grade: Grade) -> None:
        with self.lock:
            self.done += 1
            filled = round(20 * self.done / max(self.total, 1))
            bar = "#" * filled + "-" * (20 - filled)
            line = f"[{bar}] {self.done}/{self.total} {grade.learner}: {grade.passed}/{grade.total}"
            if self.bar:
                end = "\n" if self.done == self.total else ""
                self.stream.write(f"\r\033[K{line} {grade.status}{end}")
            else:
                self.stream.write(f"{line} {grade.status}\n")
            self.stream.flush()


def grade_roster(
    manifest: Manifest,
    roster: Path,
    gradebook: Path,
    options: RosterOptions,
    progress_stream: TextIO,
    out: TextIO,
) -> list[Grade]:
    """Grade every workspace under ``roster`` and write the gradebook into ``gradebook``."""
    candidates = discover(roster)
    progress = Progress(len(candidates), progress_stream)
    grades: list[Grade] = []
    with ThreadPoolExecutor(max_workers=options.jobs) as pool:
        futures = [pool.submit(grade_one, manifest, c, options) for c in candidates]
        for future in as_completed(futures):
            grade = future.result()
            grades.append(grade)
            progress.step(grade)
    grades.sort(key=lambda g: g.learner)
    csv_path, json_path = write_gradebook(manifest, grades, gradebook)
    print(
        f"Graded {len(grades)} workspace(s) of chapter {manifest.chapter}: {csv_path}, {json_path}",
        file=out,
    )
    for grade in grades:
        counts = " ".join(f"{lab.passed}/{lab.total}" for lab in grade.labs)
        note = f"  {grade.note}" if grade.note else ""
        print(
            f"  {grade.learner:<24} {grade.status:<8} {grade.passed}/{grade.total}  {counts}{note}",
            file=out,
        )
    return grades
