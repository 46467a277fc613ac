"""What grading a class costs: ``python3 bench/roster.py [--learners N] [--jobs J] [--small]``.

Lays out a roster of N workspaces (default 30): a third honest (complete, partial, wrong),
a third fresh, and a third hostile (the attacks of ``tests/harness/hostile.py``: forged
reports and records, escapes and lone surrogates, megabytes of records, a stack-dump bomb,
daemons, forks, a killer, planted ``conftest.py`` files…), and beside them every attack on the
grader's own reading (``tests/harness/intake_attacks.py``: a version-4 git index whose paths
grow, a 20 MB member name, 12,000 archives in one folder, a zip 1,100 folders deep, a marker
nested 3,000 deep, a 240 KiB tuple, malformed records, a FIFO). ``--small`` (3 learners, 300
archives, 2-second tests) is what the test suite runs. It grades the roster the way
``checkpoint 11 --roster`` does, in this process, and prints each workspace's wall time next
to its deadline, the grader's own peak memory (its resident set: the sandboxed children are
not the grader) and the gradebook's size. The goals: every workspace within its deadline, the
grader under 500 MB.
"""

from __future__ import annotations

import argparse
import io
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``course`` and the test helpers importable
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "harness"))

import hostile  # noqa: E402
import intake_attacks  # noqa: E402
from harness_support import replace_in, roster_workspace  # noqa: E402

from course.grading import roster as roster_module  # noqa: E402
from course.grading.intake.folder import survey  # noqa: E402
from course.grading.roster import RosterOptions, grade_roster  # noqa: E402
from course.harness.kit import kit_root  # noqa: E402
from course.harness.manifest import Manifest, load_manifest  # noqa: E402

GOAL_MB = 500


def wrong(workspace: Path) -> None:
    replace_in(
        workspace / "pi_course" / "compaction.py",
        '            "parentId": path[-1].id,\n',
        '            "parentId": first_kept_entry_id,\n',
    )


def hostile_changes(roster: Path, markers: Path) -> list[tuple[str, Callable[[Path], None]]]:
    """Every attack of the hostile suites, as (name, change to a fresh workspace): those on
    what crosses the boundary first, then the sandbox's."""
    changes: list[tuple[str, Callable[[Path], None]]] = []
    for name, code in (
        ("h-spoof", hostile.SPOOF_RECORDS),
        ("h-flood", hostile.FLOOD_RECORDS),
        ("h-dump", hostile.DUMP_BOMB),
    ):
        changes.append((name, lambda w, code=code: hostile.append(w, hostile.MODULE, code)))
    changes.append(("h-planted", lambda w: hostile.plant_everywhere(w, markers / "ran")))
    changes += [(a.learner, a.apply) for a in hostile.attacks([roster / "gradebook.csv"])]
    return changes


def lay_out(
    manifest: Manifest, roster: Path, markers: Path, learners: int, small: bool = False
) -> None:
    attacks = hostile_changes(roster, markers)
    for n in range(learners):
        kind = n % 3
        if kind == 0:
            solved = (5, 2, 4)[(n // 3) % 3]
            folder = roster_workspace(manifest, roster, f"honest-{n:02d}", solved)
            if solved == 4:
                wrong(folder)
        elif kind == 1:
            roster_workspace(manifest, roster, f"fresh-{n:02d}")
        else:
            name, change = attacks[(n // 3) % len(attacks)]
            change(roster_workspace(manifest, roster, f"{name}-{n:02d}"))
    intake_attacks.lay_out_attacks(manifest, roster, small=small)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per test")
    parser.add_argument("--small", action="store_true", help="3 learners, smaller attacks, 2 s")
    args = parser.parse_args()
    if args.small:
        args.learners, args.timeout = 3, 2.0
    manifest, kit = load_manifest("11"), kit_root()
    timings: dict[str, float] = {}
    grade_entry = roster_module.grade_entry

    def timed(*given: Any, **named: Any) -> Any:
        started = time.monotonic()
        row = grade_entry(*given, **named)
        spent = time.monotonic() - started
        timings[row.learner] = max(timings.get(row.learner, 0.0), spent)
        return row

    roster_module.grade_entry = timed
    with tempfile.TemporaryDirectory(prefix="bench-roster-") as base:
        roster, markers, books = Path(base) / "roster", Path(base) / "markers", Path(base) / "gb"
        roster.mkdir()
        markers.mkdir()
        lay_out(manifest, roster, markers, args.learners, args.small)
        surveyed = time.monotonic()
        entries = len(survey(roster).submissions)
        surveyed = time.monotonic() - surveyed
        options = RosterOptions(test_seconds=args.timeout, jobs=args.jobs)
        labs = list(manifest.required_labs)
        deadline = options.deadline(labs)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        started = time.monotonic()
        grades = grade_roster(manifest, kit, roster, books, options, io.StringIO(), io.StringIO())
        wall = time.monotonic() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        sizes = {path.name: path.stat().st_size for path in books.iterdir()}
        leaked = sorted(path.name for path in markers.iterdir())
    print(f"{len(grades)} rows, {args.jobs} at a time, {args.timeout:g} s per test")
    print(f"survey of the roster: {entries} rows in {surveyed:.2f} s")
    print(f"{'learner':<22} {'status':<8} {'passed':>6} {'seconds':>8}  (deadline {deadline:g} s)")
    for grade in grades:
        seconds = timings.get(grade.learner, float("nan"))
        over = "  OVER THE DEADLINE" if seconds > deadline else ""
        print(
            f"{grade.learner:<22} {grade.status:<8} {grade.passed:>3}/{grade.total:<2} "
            f"{seconds:8.1f}{over}"
        )
    values = sorted(timings.values())
    print(
        f"wall time of the roster: {wall:.1f} s; per workspace median "
        f"{values[len(values) // 2]:.1f} s, slowest {values[-1]:.1f} s"
    )
    print(
        f"grader's peak resident memory: {peak:.0f} MB "
        f"(at start {before:.0f} MB; goal < {GOAL_MB} MB)"
    )
    print(
        "gradebook: "
        + ", ".join(f"{name} {size / 1024:.0f} KiB" for name, size in sorted(sizes.items()))
    )
    print(f"files planted in workspaces that ran: {leaked or 'none'}")


if __name__ == "__main__":
    main()
