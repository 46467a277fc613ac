"""What per-lab credit costs a class: ``python3 bench/credit.py [--learners N] [--jobs J]``.

Lays out a roster of N workspaces (default 30), each with every lab written and one curated
mistake made in it (``tests/harness/mutants.py``: those only a later lab's tests catch first,
then those each lab's own tests catch), the last two with every lab function borrowing the
reference (from memory, from disk; one in two workspaces at most). So every workspace has a lab
that fails with the learner's own code: the class per-lab credit works hardest on. It grades the
roster as ``checkpoint 11 --roster`` does, in this process, and prints the roster's wall time,
each workspace's time and grade, and how many graded copies (runs) each workspace took.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``course`` and the test helpers importable
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "harness"))

import hostile  # noqa: E402
import mutants  # noqa: E402
from harness_support import replace_in, roster_workspace  # noqa: E402
from solutions import solve_lab  # noqa: E402

from course.grading import roster as roster_module  # noqa: E402
from course.grading.confinement.sandbox import sandbox_status  # noqa: E402
from course.grading.roster import RosterOptions, grade_roster  # noqa: E402
from course.grading.verdict import engine  # noqa: E402
from course.grading.verdict.engine import GradingOptions  # noqa: E402
from course.harness.kit import kit_root  # noqa: E402
from course.harness.manifest import Manifest, load_manifest  # noqa: E402


def lay_out(manifest: Manifest, roster: Path, learners: int) -> None:
    """``learners`` workspaces: a curated mistake each, then (one in two, at most two) the
    borrowing attacks."""
    chosen = [*getattr(mutants, "CAUGHT_LATER", ()), *mutants.MUTANTS]
    attacks = (("memory", hostile.BORROW_FROM_MEMORY), ("disk", hostile.BORROW_FROM_DISK))
    attacks = attacks[: min(len(attacks), learners // 2)]
    solved = roster_workspace(manifest, roster, "solved")
    for lab in manifest.labs:
        solve_lab(manifest, kit_root(), solved, lab.id)
    for n in range(learners - len(attacks)):
        mutant = chosen[n % len(chosen)]
        folder = roster / f"m{n:02d}-{mutant.name}"[:40]
        shutil.copytree(solved, folder, symlinks=True)
        replace_in(folder / "pi_course" / mutant.module, mutant.old, mutant.new)
    shutil.rmtree(solved)
    functions = [f for lab in manifest.labs for f in lab.solution]
    for how, borrow in attacks:
        folder = roster_workspace(manifest, roster, f"borrow-{how}")
        hostile.borrow_the_reference(folder, functions, borrow)


@contextlib.contextmanager
def counting_runs(counts: Counter[str]) -> Iterator[None]:
    """Count the graded copies each workspace's grading makes (per thread: the roster's jobs)."""
    graded_run = engine.graded_run
    grade_entry = roster_module.grade_entry
    current = threading.local()

    @contextlib.contextmanager
    def counted(*given: Any, **named: Any) -> Iterator[Any]:
        counts[getattr(current, "learner", "?")] += 1
        with graded_run(*given, **named) as run:
            yield run

    def entry(*given: Any, **named: Any) -> Any:
        current.learner = given[3].learner
        return grade_entry(*given, **named)

    engine.graded_run = counted  # type: ignore[assignment]
    roster_module.grade_entry = entry
    try:
        yield
    finally:
        engine.graded_run = graded_run  # type: ignore[assignment]
        roster_module.grade_entry = grade_entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per test")
    args = parser.parse_args()
    manifest, kit = load_manifest("11"), kit_root()
    timings: dict[str, float] = {}
    runs: Counter[str] = Counter()
    grade_entry = roster_module.grade_entry

    def timed(*given: Any, **named: Any) -> Any:
        started = time.monotonic()
        row = grade_entry(*given, **named)
        timings[row.learner] = time.monotonic() - started
        return row

    roster_module.grade_entry = timed
    with tempfile.TemporaryDirectory(prefix="bench-credit-") as base:
        roster, books = Path(base) / "roster", Path(base) / "gradebook"
        roster.mkdir()
        lay_out(manifest, roster, args.learners)
        bwrap, reason = sandbox_status(kit, (manifest.reference,))
        if bwrap is None:  # a bench measures the grading as it runs here
            print(f"(not sandboxed here, measured with --unsandboxed: {reason})")
        grading = GradingOptions(sandbox="required" if bwrap else "off")
        options = RosterOptions(test_seconds=args.timeout, jobs=args.jobs, grading=grading)
        started = time.monotonic()
        with counting_runs(runs):
            grades = grade_roster(
                manifest, kit, roster, books, options, io.StringIO(), io.StringIO()
            )
        wall = time.monotonic() - started
    print(f"{len(grades)} rows, {args.jobs} at a time, {args.timeout:g} s per test")
    print(f"{'learner':<42} {'score':>5} {'passed':>6} {'runs':>4} {'seconds':>8}")
    for grade in grades:
        seconds = timings.get(grade.learner, float("nan"))
        print(
            f"{grade.learner:<42} {grade.score:>5} {grade.passed:>3}/{grade.total:<2} "
            f"{runs[grade.learner]:>4} {seconds:8.1f}"
        )
    values = sorted(timings.values())
    print(
        f"wall time of the roster: {wall:.1f} s; per workspace median "
        f"{values[len(values) // 2]:.1f} s, slowest {values[-1]:.1f} s; "
        f"{sum(runs.values())} runs, {max(runs.values())} at most for one workspace"
    )


if __name__ == "__main__":
    main()
