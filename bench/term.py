"""What grading a term's class costs, as docs/instructors.md says to: ``python3 bench/term.py``.

Lays out the class of ``tests/harness/term_class.py`` (27 entries as Canvas hands them over: 23
learners, one a draft beside the final) and, with ``--learners N``, fresh Canvas-named zips up
to N learners, then times the documented command, ``checkpoint 11 --roster downloads --names …
--class-list class-list.csv --gradebook grades`` with ``--jobs J`` (2 by default), as a
subprocess, ``--runs`` times. It prints the machine (cores, processor, memory), the load
average before each run (the machine may be shared: the figure is then the machine's, not the
kit's), and each run's wall time. The goal: the figure docs/instructors.md states.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``course`` and the test helpers importable
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "harness"))

from packing import zip_folder  # noqa: E402
from term_class import CANVAS, STUDENTS, Term  # noqa: E402

from course.harness.kit import kit_root  # noqa: E402
from course.harness.manifest import load_manifest  # noqa: E402
from course.harness.workspace import create_workspace  # noqa: E402


def machine() -> str:
    """Cores, processor and memory, as a line."""
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores, {model}, {memory:.0f} GiB"


def lay_out(base: Path, learners: int) -> Term:
    """The term's class, then fresh learners up to ``learners``."""
    manifest = load_manifest("11")
    term = Term(manifest, base).lay_out()
    scratch = base / "scratch"
    for extra in range(max(0, learners - len(STUDENTS) + 1)):  # Uma handed nothing in
        folder = scratch / f"x{extra}" / "practice-11"
        create_workspace(manifest, kit_root(), folder)
        number = 100 + extra
        zip_folder(folder, term.roster / f"extra{extra}_{number}_{1000 + number}_practice-11.zip")
    return term


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory(prefix="course-bench-term-") as folder:
        term = lay_out(Path(folder), args.learners)
        entries = len(list(term.roster.iterdir()))
        print(f"class: {entries} entries, {args.learners} learners, --jobs {args.jobs}")
        for run in range(1, args.runs + 1):
            grades = Path(folder) / f"grades-{run}"
            command = [
                sys.executable, "-m", "course.cli.checkpoint", "11",
                "--roster", str(term.roster), "--names", CANVAS,
                "--class-list", str(term.class_list), "--gradebook", str(grades),
                "--jobs", str(args.jobs),
            ]  # fmt: skip
            load = " ".join(f"{value:.1f}" for value in os.getloadavg())
            started = time.monotonic()
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            seconds = time.monotonic() - started
            print(f"run {run}: {seconds:.1f} s (exit {done.returncode}; load before: {load})")
            if done.returncode != 0:
                print(done.stdout[-2000:], done.stderr[-2000:], sep="\n")


if __name__ == "__main__":
    main()
