"""What reading submissions costs before grading: ``python3 bench/intake.py [--learners N]``.

Lays out a roster of N learners' workspaces, a third each as a folder, a zip and a tar.gz,
then prints the time to survey the roster, to unpack and snapshot one archived workspace
(against snapshotting the same workspace as a folder), and to refuse a zip bomb of 20 MiB.
The goal: intake stays a small fraction of a workspace's grading (seconds), and a bomb is
refused from its headers, in milliseconds, without unpacking it.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``course`` and the test helpers importable
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "harness"))

from packing import tar_folder, zip_folder  # noqa: E402

from course.grading.intake.archives import Refused, unpack  # noqa: E402
from course.grading.intake.folder import opened, survey  # noqa: E402
from course.grading.intake.snapshot import workspace_snapshot  # noqa: E402
from course.harness.kit import kit_root  # noqa: E402
from course.harness.manifest import load_manifest  # noqa: E402
from course.harness.workspace import create_workspace  # noqa: E402


def best_ms(action: Callable[[], object], repeats: int = 5) -> float:
    """The median of ``repeats`` timed runs, in milliseconds."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=30)
    args = parser.parse_args()
    manifest, kit = load_manifest("11"), kit_root()
    with tempfile.TemporaryDirectory() as base:
        roster, work = Path(base) / "roster", Path(base) / "work"
        workspace = work / "practice-11"
        create_workspace(manifest, kit, workspace)
        for n in range(args.learners):
            if n % 3 == 0:
                create_workspace(manifest, kit, roster / f"folder-{n}")
            elif n % 3 == 1:
                roster.mkdir(exist_ok=True)
                zip_folder(workspace, roster / f"zip-{n}.zip")
            else:
                tar_folder(workspace, roster / f"tar-{n}.tar.gz", "practice-11/")
        rows = survey(roster).submissions
        by_source = {row.source: row for row in rows}

        def snapshot(source: str) -> None:
            with opened(roster, by_source[source]) as tree:
                workspace_snapshot(manifest, kit, tree)

        bomb = Path(base) / "bomb.zip"
        with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as out:
            out.writestr("zeros", bytes(20 * 1024 * 1024))

        def refuse_bomb() -> None:
            with tempfile.TemporaryDirectory() as target:
                try:
                    unpack(bomb, Path(target))
                except Refused:
                    return
            raise AssertionError("the bomb was unpacked")

        size = (roster / "zip-1.zip").stat().st_size // 1024
        print(f"roster of {len(rows)} submissions (zip of one workspace: {size} KiB)")
        print(f"  survey of the roster          {best_ms(lambda: survey(roster)):8.1f} ms")
        for source in ("folder", "zip", "tar.gz"):
            took = best_ms(functools.partial(snapshot, source))
            print(f"  open + snapshot, {source:<12} {took:8.1f} ms")
        print(f"  refuse a 20 MiB zip bomb      {best_ms(refuse_bomb):8.1f} ms")


if __name__ == "__main__":
    main()
