"""One grade per set of files: ``python3 bench/regrade.py [--rosters N] [--mutants NAME,…]``.

Lays out one workspace per curated mistake (``tests/harness/mutants.py``: every lab written,
then the mistake made), then grades each as an instructor does, N times over, each time as a
new roster in a new folder with default options (so each run makes its own assignment file and
draws its own audit seed), and once with ``checkpoint 11 --practice``. Prints, per mistake, the
grades and flag sets seen: one of each is the goal (``gradebook.json``'s score and flags against
``--practice``'s ``--json`` score), and the seconds a roster run took.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``course`` and the test helpers importable
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "harness"))

from doors import unsandboxed_here  # noqa: E402
from harness_support import replace_in  # noqa: E402
from mutants import MUTANTS  # noqa: E402
from solutions import solve_lab  # noqa: E402

from course.harness.kit import kit_root  # noqa: E402
from course.harness.manifest import load_manifest  # noqa: E402
from course.harness.workspace import create_workspace  # noqa: E402

CHECKPOINT = [sys.executable, "-m", "course.cli.checkpoint", "11"]
DEFAULT_MUTANTS = (
    "strict_less_at_the_edge,groups_share_entries_with_the_path,accepts_a_call_without_result"
)


def mistaken_workspace(folder: Path, name: str) -> Path:
    manifest, kit = load_manifest("11"), kit_root()
    mutant = next(m for m in MUTANTS if m.name == name)
    workspace = folder / name / "practice-11"
    create_workspace(manifest, kit, workspace)
    for lab in manifest.labs:
        solve_lab(manifest, kit, workspace, lab.id)
    replace_in(workspace / "pi_course" / mutant.module, mutant.old, mutant.new)
    return workspace


def roster_grade(
    workspace: Path, folder: Path, more: list[str]
) -> tuple[int, tuple[str, ...], float]:
    """(score, flags, seconds) of one new roster holding ``workspace`` alone."""
    roster = folder / "submissions"
    shutil.copytree(workspace, roster / "learner", symlinks=True)
    started = time.perf_counter()
    run = subprocess.run(
        [*CHECKPOINT, "--roster", str(roster), "--gradebook", str(folder), *more],
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - started
    book = folder / "gradebook.json"
    if not book.exists():
        raise SystemExit(f"the roster wrote no gradebook:\n{run.stdout}{run.stderr}")
    (row,) = json.loads(book.read_text(encoding="utf-8"))["learners"]
    return int(row["score"]), tuple(row["flags"]), took


def practice_grade(workspace: Path, folder: Path, more: list[str]) -> int:
    report = folder / "practice.json"
    subprocess.run(
        [*CHECKPOINT, "--practice", str(workspace), "--json", str(report), *more],
        capture_output=True,
        text=True,
        check=False,
    )
    return int(json.loads(report.read_text(encoding="utf-8"))["score"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rosters", type=int, default=50, help="new rosters a mistake (default 50)")
    p.add_argument("--mutants", default=DEFAULT_MUTANTS, help="curated mistakes, by name")
    args = p.parse_args(argv)
    names = [name for name in args.mutants.split(",") if name]
    steady, more = 0, unsandboxed_here()
    with tempfile.TemporaryDirectory(prefix="bench-regrade-") as scratch:
        base = Path(scratch)
        for name in names:
            workspace = mistaken_workspace(base / "workspaces", name)
            seen: set[tuple[int, tuple[str, ...]]] = set()
            seconds = []
            for attempt in range(args.rosters):
                score, flags, took = roster_grade(
                    workspace, base / name / f"roster-{attempt}", more
                )
                seen.add((score, flags))
                seconds.append(took)
            practice = practice_grade(workspace, base / name, more)
            scores = sorted({score for score, _ in seen})
            flag_sets = sorted({flags for _, flags in seen})
            one = len(seen) == 1 and scores == [practice]
            steady += one
            counts = sorted({len(flags) for flags in flag_sets})
            print(
                f"{name}: {args.rosters} rosters gave score(s) {scores} and {len(flag_sets)} "
                f"set(s) of flags (of {counts} flags); --practice gave {practice}; "
                f"a roster run {min(seconds):.1f}-{max(seconds):.1f} s"
                + ("" if one else f"  <- more than one grade: {[list(f) for f in flag_sets]}")
            )
    print(f"{steady} of {len(names)} mistakes got one grade and one set of flags everywhere")
    return 0


if __name__ == "__main__":
    sys.exit(main())
