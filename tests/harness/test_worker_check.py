"""The browser's check() through Web Workers gives the command line's verdict, stopping any loop.

In the browser each child of a run (the focused tests, the probe driver) runs in a Pyodide in a
Web Worker (``course/harness/webworker.py``), kept warm between runs, ended when it overruns.
Here the same path runs on this machine's Python: ``sys.platform`` says ``emscripten``, and each
worker is played by a ``WarmChannel``: a Python that runs the worker's own ``BOOT`` code, serves
one run after another as the worker does (cleaning up after each), and speaks the worker's
messages. Everything above the channel is the code the browser runs: the engine's browser
branch, ``start_child``'s worker, the supervisor's waits and kills. The real worker is driven in
Chromium by ``tests/browser/test_lite_site.py``.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from harness_support import (
    HANGS,
    QUICK,
    MakeWorkspace,
    essentials,
    on_the_command_line,
    sabotage,
    with_mutant,
)
from mutants import BROWSER_CHECKED, Mutant
from solutions import solve_lab

from course.grading.verdict.engine import GradingOptions, evaluate
from course.harness import webworker
from course.harness.manifest import Manifest
from course.harness.runner import Limits
from course.harness.webworker import (
    BOOT,
    PRELOADED,
    STARTUP_SECONDS,
    WorkerChild,
    bundle,
    graded_roots,
)

pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)

SERVE = (
    BOOT
    + """
import json, os, sys
protocol = os.fdopen(int(sys.argv[1]), "w", buffering=1)
warm(json.loads(sys.argv[2]), json.loads(sys.argv[3]))
for line in sys.stdin:
    asked = json.loads(line)
    protocol.write(json.dumps({"kind": "ready", "id": asked["id"]}) + "\\n")
    code = run(asked["argv"], asked["env"], asked["cwd"])
    exit = {"kind": "exit", "id": asked["id"], "code": code, "reusable": bool(clean())}
    protocol.write(json.dumps(exit) + "\\n")
"""
)
"""The worker's loop (``WORKER``) in Python: boot once, then serve each run asked on stdin."""


class WarmChannel:
    """A worker played by a Python that boots once and serves run after run, as the browser's
    worker does: same files (one file system), the same messages (ready, output, exit), and
    ``stop`` kills it as ``terminate`` ends a worker. ``booted`` counts the Pythons started."""

    booted = 0

    def __init__(self) -> None:
        WarmChannel.booted += 1
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.scratch = tempfile.mkdtemp(prefix="worker-tree-")  # the tree its runs may write
        reading, writing = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVE, str(writing), json.dumps([self.scratch])]
            + [json.dumps(list(PRELOADED))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=[writing],
        )
        os.close(writing)
        assert self.process.stdout is not None
        threading.Thread(
            target=self._relay_output, args=(self.process.stdout,), daemon=True
        ).start()
        threading.Thread(target=self._relay_protocol, args=(reading,), daemon=True).start()

    def _relay_output(self, stream: Any) -> None:
        for line in stream:
            self.messages.put({"kind": "output", "text": line.decode("utf-8", "replace")})

    def _relay_protocol(self, reading: int) -> None:
        with os.fdopen(reading, encoding="utf-8") as protocol:
            for line in protocol:
                self.messages.put(json.loads(line))

    def start(self, message: Mapping[str, Any]) -> None:
        if "argv" not in message:  # only booted ahead: this one booted when it was made
            return
        assert self.process.stdin is not None
        asked = {key: message[key] for key in ("id", "argv", "env", "cwd")}
        self.process.stdin.write((json.dumps(asked) + "\n").encode())
        self.process.stdin.flush()

    def next(self, seconds: float) -> None:
        ends = time.monotonic() + seconds
        while self.messages.empty() and time.monotonic() < ends:
            time.sleep(0.005)

    def take(self) -> list[dict[str, Any]]:
        taken = []
        while not self.messages.empty():
            taken.append(self.messages.get())
        return taken

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture(autouse=True)
def no_worker_left_warm() -> Iterator[None]:
    """Each test starts with no warm worker, and leaves none running."""
    webworker.WARM.end()
    yield
    webworker.WARM.end()


def through_workers(
    manifest: Manifest, kit: Path, workspace: Path, lab: str, seconds: float
) -> dict[str, Any]:
    options = GradingOptions(in_process=False)  # the browser's default where workers can start
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "platform", "emscripten")
        patch.setattr(webworker, "BrowserChannel", WarmChannel)
        result = evaluate(manifest, kit, workspace, [lab], Limits(test_seconds=seconds), options)
    return essentials(result.to_json())


def assert_same_verdict(
    manifest: Manifest, kit: Path, workspace: Path, lab: str, tmp_path: Path, seconds: float
) -> dict[str, Any]:
    here = through_workers(manifest, kit, workspace, lab, seconds)
    there = on_the_command_line(workspace, lab, seconds, tmp_path)
    said = f"Lab {lab} on {workspace}\nexpected (CLI): {there}\ngot (workers): {here}"
    assert here == there, said
    return here


def test_a_fresh_workspace_is_pending_as_on_the_command_line(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    got = assert_same_verdict(manifest, kit, make_workspace("fresh"), "11.2", tmp_path, 10.0)
    assert got["labs"]["11.2"]["status"] == "pending"


@pytest.mark.parametrize("mutant", BROWSER_CHECKED, ids=lambda m: m.name)
def test_a_wrong_version_fails_as_on_the_command_line(
    mutant: Mutant, manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    workspace = with_mutant(manifest, kit, make_workspace, mutant)
    got = assert_same_verdict(manifest, kit, workspace, mutant.lab, tmp_path, 10.0)
    assert got["labs"][mutant.lab]["status"] == "failed"


LOOPS = {
    "plain": "while True:\n        pass",
    # the in-kernel time limit cannot stop this one: its trace function's error is swallowed
    "swallowing every exception": (
        "while True:\n        try:\n            pass\n"
        "        except BaseException:\n            pass"
    ),
}


@pytest.fixture(scope="module")
def a_hang_on_the_command_line(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> dict[str, Any]:
    """``checkpoint``'s verdict on Lab 11.1 when ``parse_summary`` never returns. The command
    line kills whatever overruns, spinning or waiting, so it is taken once, of a loop that waits:
    the loops that must really spin are the workers' (their kill is under test)."""
    workspace = make_workspace("hang")
    solve_lab(manifest, kit, workspace, "11.1")
    sabotage(workspace, "summary", "parse_summary", HANGS)
    return on_the_command_line(workspace, "11.1", QUICK.test_seconds, workspace.parent)


@pytest.mark.parametrize("kind", list(LOOPS))
def test_an_endless_loop_is_ended_as_on_the_command_line(
    kind: str,
    manifest: Manifest,
    kit: Path,
    make_workspace: MakeWorkspace,
    a_hang_on_the_command_line: dict[str, Any],
) -> None:
    workspace = make_workspace("loop")
    solve_lab(manifest, kit, workspace, "11.1")
    sabotage(workspace, "summary", "parse_summary", LOOPS[kind])
    got = through_workers(manifest, kit, workspace, "11.1", QUICK.test_seconds)
    there = a_hang_on_the_command_line
    assert got == there, f"{kind} loop\nexpected (CLI): {there}\ngot (workers): {got}"
    assert got["labs"]["11.1"]["status"] == "timeout"


# --------------------------------------------------------------------------- the worker's end


class Scripted:
    """A worker that says what it is told to, and notes what it was asked."""

    def __init__(self, *messages: dict[str, Any]) -> None:
        self.script = list(messages)
        self.asked: dict[str, Any] = {}
        self.stopped = False

    def start(self, message: Mapping[str, Any]) -> None:
        self.asked = dict(message)

    def next(self, seconds: float) -> None:
        pass

    def take(self) -> list[dict[str, Any]]:
        taken, self.script = self.script, []
        return taken

    def stop(self) -> None:
        self.stopped = True


def test_the_workers_writes_reach_only_the_files_the_parent_watches(tmp_path: Path) -> None:
    watched, elsewhere = tmp_path / "results.jsonl", tmp_path / "other.txt"
    watched.touch()
    worker = Scripted(
        {"kind": "ready"},
        {"kind": "write", "path": str(watched), "bytes": b'{"event": "a"}\n'},
        {"kind": "write", "path": str(elsewhere), "bytes": b"planted"},
        {"kind": "output", "text": "printed\n"},
        {"kind": "exit", "code": 3},
    )
    child = WorkerChild(["python", "-m", "pytest"], {}, tmp_path, [watched], 1024, worker)
    assert child.wait(timeout=1) == 3
    assert watched.read_bytes() == b'{"event": "a"}\n'
    assert not elsewhere.exists(), "a worker wrote a file the parent does not watch"
    assert child.text() == "printed\n"
    assert worker.asked["argv"] == ["-m", "pytest"]
    assert worker.asked["streamed"] == [str(watched)]


def test_a_worker_that_cannot_boot_is_a_child_that_failed_to_start(tmp_path: Path) -> None:
    worker = Scripted({"kind": "error", "message": "pyodide.asm.wasm: 404"})
    child = WorkerChild(["python", "-m", "pytest"], {}, tmp_path, [], 1024, worker)
    assert (child.poll(), child.ready) == (1, False)
    assert "pyodide.asm.wasm: 404" in child.text()


def test_a_worker_that_never_says_ready_is_ended(tmp_path: Path) -> None:
    now = [0.0]

    def clock() -> float:
        now[0] += STARTUP_SECONDS / 4
        return now[0]

    worker = Scripted()
    child = WorkerChild(["python", "-m", "pytest"], {}, tmp_path, [], 1024, worker, clock)
    assert worker.stopped and child.returncode == -9
    assert f"did not start within {STARTUP_SECONDS:g}s" in child.text()


def test_a_worker_is_still_running_until_it_says_it_exited(tmp_path: Path) -> None:
    child = WorkerChild(["python", "-m", "x"], {}, tmp_path, [], 1024, Scripted({"kind": "ready"}))
    assert child.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        child.wait(timeout=0.01)
    child.kill()
    assert child.wait(timeout=0.01) == -9


def test_a_worker_runs_only_python_dash_m(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="python -m MODULE"):
        WorkerChild(["python", "script.py"], {}, tmp_path, [], 1024, Scripted())


def test_the_worker_gets_the_graded_folders_not_this_pythons_installation(tmp_path: Path) -> None:
    copy, library = tmp_path / "copy", tmp_path / "lib"
    (copy / "pkg" / "__pycache__").mkdir(parents=True)
    (copy / "pkg" / "a.py").write_text("A = 1\n")
    (copy / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    (copy / "results.jsonl").touch()
    (library / "course").mkdir(parents=True)
    (library / "course" / "__init__.py").write_text("")
    site_packages = sysconfig.get_paths()["purelib"]
    env = {"PYTHONPATH": f"{library}:{site_packages}:{copy}"}
    assert graded_roots(env, copy) == [copy, library]
    files = bundle(graded_roots(env, copy), skip=[copy / "results.jsonl"])
    assert sorted(files) == [str(copy / "pkg" / "a.py"), str(library / "course" / "__init__.py")]


AFTER_A_RUN = """
import builtins, json, os, sys
tree = sys.argv[1]
os.makedirs(os.path.join(tree, "old"))
with open(os.path.join(tree, "old", "kept.txt"), "w") as kept:
    kept.write("there before")
warm([tree], ["json"])
with open(os.path.join(tree, "planted.py"), "w") as module:
    module.write("X = 1\\n")
sys.path.insert(0, tree)
import planted
builtins.planted = planted
json.dumps = lambda *args, **kwargs: "null"
os.environ["PLANTED"] = "1"
os.chdir(tree)
with open(os.path.join(tree, "old", "new.txt"), "w") as new:
    new.write("left behind")
os.makedirs(os.path.join(tree, "made", "deeper"))
clean_after_the_run = clean()
left = {
    "modules": "planted" in sys.modules,
    "builtins": hasattr(builtins, "planted"),
    "json.dumps": json.dumps([1]),
    "environment": "PLANTED" in os.environ,
    "path": tree in sys.path,
    "folder": os.getcwd() == tree,
    "files": sorted(os.listdir(tree)) + sorted(os.listdir(os.path.join(tree, "old"))),
}
with open(os.path.join(tree, "old", "kept.txt"), "w") as kept:
    kept.write("changed by a run")
print(json.dumps({"left": left, "clean": [clean_after_the_run, clean()]}))
"""


def test_a_cleaned_worker_keeps_nothing_of_the_run(tmp_path: Path) -> None:
    script = BOOT + AFTER_A_RUN
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["left"] == {
        "modules": False,
        "builtins": False,
        "json.dumps": "[1]",
        "environment": False,
        "path": False,
        "folder": False,
        "files": ["old", "kept.txt"],
    }
    # a file that was there before and that a run changed cannot be put back: not clean
    assert said["clean"] == [True, False]


def test_the_next_check_reuses_the_warm_worker_and_none_of_its_state(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    planting = make_workspace("planting")
    solve_lab(manifest, kit, planting, "11.1")
    with (planting / "pi_course" / "summary.py").open("a", encoding="utf-8") as module:
        # what a learner's module could leave in a worker that is not cleaned
        module.write("\nimport json\njson.dumps = lambda *args, **kwargs: 'null'\n")
    solved = make_workspace("solved")
    solve_lab(manifest, kit, solved, "11.1")
    booted = WarmChannel.booted
    through_workers(manifest, kit, planting, "11.1", 10.0)
    got = through_workers(manifest, kit, solved, "11.1", 10.0)
    assert WarmChannel.booted == booted + 1, "each check booted workers of its own"
    assert got == on_the_command_line(solved, "11.1", 10.0, tmp_path)
    assert got["labs"]["11.1"]["status"] == "passed"


def test_a_worker_ended_for_overrunning_is_replaced_by_a_fresh_one(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace, tmp_path: Path
) -> None:
    looping = make_workspace("looping")
    solve_lab(manifest, kit, looping, "11.1")
    sabotage(looping, "summary", "parse_summary", LOOPS["swallowing every exception"])
    solved = make_workspace("solved")
    solve_lab(manifest, kit, solved, "11.1")
    ended = through_workers(manifest, kit, looping, "11.1", QUICK.test_seconds)
    assert ended["labs"]["11.1"]["status"] == "timeout"
    booted = WarmChannel.booted
    assert webworker.WARM.idle is not None, "no fresh worker took the place of the one ended"
    got = through_workers(manifest, kit, solved, "11.1", 10.0)
    assert WarmChannel.booted == booted, "the fresh worker did not serve the next check"
    assert got == on_the_command_line(solved, "11.1", 10.0, tmp_path)
