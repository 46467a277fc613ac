"""Every door that runs learner code, and how it confines it (issue 44, item 3).

``DOORS`` lists each door an instructor or a learner uses, with the isolation and the host user
its learner code gets. Each is driven on a workspace whose lab module, on import, writes a
witness file into a folder of the host (world-writable, so any user could write it): confined
learner code does not see that folder (the sandbox's ``/tmp`` is its own), so no witness may
appear. Before this check, ``checkpoint 11 --practice DIR --replay CASE`` imported the learner's
package into the grader's own process: as root, learner code ran as host root, unconfined.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from unittest import mock

import pytest
from harness_support import CHAPTER, cli, enterable_folder, roster_workspace
from hostile import MODULE, append

from course.display.notebook import check
from course.grading.confinement.sandbox import sandbox_status
from course.grading.verdict import engine
from course.harness.kit import kit_root
from course.harness.manifest import Manifest

pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)

WITNESS = """
import os as _os

try:  # only a process that sees the host's folder (unconfined) can write here
    with open({folder!r} + "/ran-" + str(_os.getpid()), "w") as _out:
        _out.write(str(_os.geteuid()))
except OSError:
    pass
"""
FAST = ("--lab", "11.1", "--timeout", "5")


@dataclass(frozen=True)
class Place:
    workspace: Path  # a learner's workspace, ``roster/ada``
    roster: Path
    scratch: Path
    no_sandbox: bool = False  # bubblewrap not found (``PATH`` without it)

    @property
    def env(self) -> dict[str, str]:
        return {"PATH": "/nonexistent"} if self.no_sandbox else {}


Run = Callable[[Place], object]


def in_the_workspace(at: Place) -> object:
    return cli("checkpoint", CHAPTER, "--no-card", *FAST, cwd=at.workspace, env=at.env)


def practice(at: Place) -> object:
    return cli("checkpoint", CHAPTER, "--practice", str(at.workspace), *FAST, env=at.env)


def roster(at: Place) -> object:
    gradebook = str(at.scratch / "gradebook")
    where = ("--roster", str(at.roster), "--gradebook", gradebook)
    return cli("checkpoint", CHAPTER, *where, *FAST, env=at.env)


def review(at: Place) -> object:
    return cli("checkpoint", CHAPTER, "--review", "--timeout", "5", cwd=at.workspace, env=at.env)


def watch(at: Place) -> object:
    command = [sys.executable, "-m", "course.cli.checkpoint", CHAPTER, "--watch", "--timeout", "5"]
    environment = os.environ | at.env
    return subprocess.run(
        command, cwd=at.workspace, input="q\n", capture_output=True, text=True, timeout=300,
        env=environment, check=False,
    )  # fmt: skip


def replay_in_the_workspace(at: Place) -> object:
    return cli("checkpoint", CHAPTER, "--replay", "11.1#001", cwd=at.workspace, env=at.env)


def replay_practice(at: Place) -> object:
    practice = ("--practice", str(at.workspace))
    return cli("checkpoint", CHAPTER, *practice, "--replay", "11.1#001", env=at.env)


def gradescope(at: Place) -> object:
    root = at.scratch / "autograder"
    shutil.copytree(at.workspace, root / "submission")
    (root / "results").mkdir()
    return cli("checkpoint", CHAPTER, "--gradescope", str(root), *FAST, env=at.env)


def notebook_check(at: Place) -> object:
    if not at.no_sandbox:
        return check("11.1", start=at.workspace / "notebooks", timeout=5)
    with mock.patch.object(engine, "sandbox_status", return_value=(None, "no bwrap here")):
        return check("11.1", start=at.workspace / "notebooks", timeout=5)


AUTO = (
    "the sandbox when it starts; else, for an ordinary user, unconfined with a note (the "
    "learner's own code), and for root a refusal (--unsandboxed to run it anyway)"
)
REQUIRED = "the sandbox, else a refusal (--unsandboxed to run it anyway)"
CONTAINER = (
    "the sandbox; else (a container that makes no namespaces) a root grader runs learner code "
    "outside a sandbox as an unprivileged host user who can write neither the kit nor the "
    "results, saying so; else no results and a failed run"
)
AS = "; a root grader starts the sandbox as host user 65534 (nobody), without capabilities"
DOORS: dict[str, tuple[Run, str]] = {
    "checkpoint in a workspace": (in_the_workspace, AUTO + AS),
    "checkpoint --practice DIR": (practice, REQUIRED + AS),
    "checkpoint --roster DIR": (roster, REQUIRED + AS),
    "checkpoint --review": (review, AUTO + AS),
    "checkpoint --watch": (watch, AUTO + AS),
    "checkpoint --replay CASE (in a workspace)": (replay_in_the_workspace, AUTO + AS),
    "checkpoint --practice DIR --replay CASE": (replay_practice, REQUIRED + AS),
    "checkpoint --gradescope ROOT": (gradescope, CONTAINER + AS),
    "check() in a notebook": (notebook_check, AUTO + AS),
}
"""Each door that runs learner code: how it is driven here, and how it confines that code."""


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder other users may enter."""
    with enterable_folder() as folder:
        yield folder


def witnessed(
    manifest: Manifest, tmp_path: Path, witness_in: Path | None = None
) -> tuple[Place, Path]:
    """A workspace whose lab module leaves a witness when it runs unconfined, and the folder
    (in ``witness_in``, when given: a folder any user may enter)."""
    folder = (witness_in or tmp_path) / "witness"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    workspace = roster_workspace(manifest, tmp_path / "roster", "ada")
    append(workspace, MODULE, WITNESS.format(folder=str(folder)))
    return Place(workspace, tmp_path / "roster", tmp_path), folder


def test_the_witness_is_written_by_learner_code_run_unconfined(
    manifest: Manifest, tmp_path: Path
) -> None:
    """The check can fail: the planted module, imported outside any sandbox, leaves a witness."""
    at, folder = witnessed(manifest, tmp_path)
    code = f"import {manifest.package}.summary"
    subprocess.run([sys.executable, "-c", code], cwd=at.workspace, check=True, timeout=60)
    assert [path.read_text() for path in folder.iterdir()] == [str(os.geteuid())]


@pytest.mark.parametrize("sandbox", ["sandbox", "no-sandbox"])
@pytest.mark.parametrize("door", list(DOORS))
def test_no_door_runs_learner_code_unconfined(
    manifest: Manifest, tmp_path: Path, shared: Path, door: str, sandbox: str
) -> None:
    """Where the sandbox starts, every door runs learner code in it; where it cannot, a door
    refuses rather than run learner code unconfined as root (or someone else's at all)."""
    run, isolation = DOORS[door]
    if sandbox == "sandbox":
        bwrap, why = sandbox_status(kit_root(), (manifest.reference,))
        if bwrap is None:
            pytest.skip(f"the sandbox cannot start here ({why})")
    elif os.geteuid() != 0 and isolation.startswith(AUTO):
        pytest.skip("an ordinary user's own code may run unconfined, with a note")
    no_sandbox = sandbox == "no-sandbox"
    fallback = isolation.startswith(CONTAINER) and no_sandbox and os.geteuid() == 0
    # the witness folder reachable by any user, as it says, where learner code runs as another
    at, folder = witnessed(manifest, tmp_path, shared if fallback else None)
    at = replace(at, no_sandbox=no_sandbox)
    done = run(at)
    if isinstance(done, subprocess.CompletedProcess):
        expected = (0, 1) if sandbox == "sandbox" or "gradescope" in door else (2,)
        assert done.returncode in expected, done.stdout + done.stderr
    witnesses = {path.name: path.read_text() for path in folder.iterdir()}
    users = sorted({"root" if uid == "0" else f"uid {uid}" for uid in witnesses.values()})
    if fallback:  # outside a sandbox, said so, and never as root
        assert isinstance(done, subprocess.CompletedProcess)
        assert "isolation: bubblewrap cannot start in this container" in done.stdout, done.stdout
        assert witnesses and "root" not in users, (users, done.stdout)
        return
    assert not witnesses, f"{door} ran learner code unconfined as {', '.join(users)} ({isolation})"
