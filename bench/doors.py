"""How long a learner waits for a verdict: ``python3 bench/doors.py [--runs N]``.

Lays out a practice workspace with every required lab solved, then measures, in wall-clock
seconds: ``checkpoint 11`` run inside it (the whole command, as a learner types it), and
``checkpoint 11 --watch``'s verdict after a save (from the file's write to the grade line
that follows it). Prints the median and the worst of each, and the goals: under 3 s and 2 s.
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``course`` and the tests' helpers importable
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "harness"))

from solutions import solve_lab  # noqa: E402

from course.grading.confinement.sandbox import sandbox_status  # noqa: E402
from course.harness.kit import kit_root  # noqa: E402
from course.harness.manifest import load_manifest  # noqa: E402
from course.harness.workspace import create_workspace  # noqa: E402

CHECKPOINT_GOAL = 3.0
WATCH_GOAL = 2.0
COMMAND = [sys.executable, "-m", "course.cli.checkpoint", "11"]


def unsandboxed_here() -> list[str]:
    """``["--unsandboxed"]`` where the sandbox cannot start for a root grader (a kit reached
    through links, say: the doors refuse there), saying so; else nothing. A bench measures the
    door as it runs here."""
    bwrap, reason = sandbox_status(kit_root(), ("course",))
    if bwrap is not None or os.geteuid() != 0:
        return []
    print(f"(not sandboxed here, measured with --unsandboxed: {reason})")
    return ["--unsandboxed"]


def door_command() -> list[str]:
    """``checkpoint 11`` as a learner runs it here."""
    return [*COMMAND, *unsandboxed_here()]


def solved_workspace(folder: Path) -> Path:
    manifest, kit = load_manifest("11"), kit_root()
    workspace = folder / "practice-11"
    create_workspace(manifest, kit, workspace)
    for lab in manifest.required_labs:
        solve_lab(manifest, kit, workspace, lab.id)
    return workspace


def time_checkpoint(workspace: Path, command: list[str]) -> float:
    started = time.perf_counter()
    run = subprocess.run(command, cwd=workspace, capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if "14/14" not in run.stdout:
        raise SystemExit(f"checkpoint did not report 14/14:\n{run.stdout}{run.stderr}")
    return took


def time_watch(workspace: Path, saves: int, command: list[str]) -> list[float]:
    """Start ``--watch``, then save a lab file ``saves`` times; seconds from save to verdict."""
    process = subprocess.Popen(
        [*command, "--watch"],
        cwd=workspace,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None and process.stdin is not None
    stream = process.stdout
    threading.Thread(target=lambda: [lines.put(line) for line in stream], daemon=True).start()

    def wait_for(text: str) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if text in lines.get(timeout=0.5):
                    return
            except queue.Empty:
                continue
        raise SystemExit(f"--watch never printed {text!r}")

    module = workspace / "pi_course" / "summary.py"
    took = []
    try:
        wait_for("File changes are picked up")
        for number in range(saves):
            started = time.perf_counter()
            module.write_text(module.read_text("utf-8") + f"\n# save {number}\n", "utf-8")
            wait_for("focused tests  ")  # the grade line's first line
            took.append(time.perf_counter() - started)
        process.stdin.write("q\n")
        process.stdin.flush()
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    return took


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=7, help="measurements of each (default 7)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-doors-") as folder:
        workspace = solved_workspace(Path(folder))
        command = door_command()
        time_checkpoint(workspace, command)  # the first run draws and keeps the probe cases
        checkpoint = [time_checkpoint(workspace, command) for _ in range(args.runs)]
        watch = time_watch(workspace, args.runs, command)
    for name, took, goal in (
        ("checkpoint 11, correct workspace", checkpoint, CHECKPOINT_GOAL),
        ("--watch, save to verdict", watch, WATCH_GOAL),
    ):
        print(
            f"{name}: median {statistics.median(took):.2f} s, worst {max(took):.2f} s "
            f"over {len(took)} runs (goal: under {goal:g} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
