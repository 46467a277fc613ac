"""Child Python processes for tests that need limits, mounts or users the suite must not have."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import course

ROOT = Path(course.__file__).resolve().parent.parent
"""The checkout whose ``course`` package the suite imports; children import the same one."""

PR_CAPBSET_DROP = 24
FILE_MODE_OVERRIDES = (1, 2)
"""CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: what lets root ignore file modes."""


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a child: this checkout first, no bytecode written (a child may run
    under a file size limit or as another user)."""
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1", **extra}


def run_python(
    script: str,
    *args: str,
    before: Sequence[str] = (),
    preexec_fn: Callable[[], None] | None = None,
    **extra_env: str,
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (with ``args``) in a fresh interpreter, optionally behind a ``before``
    command line such as ``unshare``; stdout and stderr are captured as text."""
    return subprocess.run(
        [*before, sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=child_env(**extra_env),
        preexec_fn=preexec_fn,
        cwd=ROOT,
    )


def last_json(outcome: subprocess.CompletedProcess[str]) -> Any:
    """The JSON report a child printed as its last line of output."""
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    return json.loads(outcome.stdout.strip().splitlines()[-1])


def unprivileged() -> Callable[[], None] | None:
    """A ``preexec_fn`` under which file modes apply to root too (it drops the capabilities
    that override them); ``None`` when the suite runs as an ordinary user."""
    if os.geteuid() != 0:
        return None

    def drop() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in FILE_MODE_OVERRIDES:
            if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "cannot drop a capability")

    return drop


def checkpoint(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``checkpoint 11 ARGS`` in a child, its output captured."""
    command = [sys.executable, "-m", "course.cli.checkpoint", "11", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


LAB_COUNTS = ("status", "passed", "total", "agreed", "cases")


def lab_counts(labs: list[dict[str, Any]]) -> dict[str, tuple[object, ...]]:
    """Each lab's id → its status and counts, from a result's or a gradebook row's labs."""
    return {lab["id"]: tuple(lab[key] for key in LAB_COUNTS) for lab in labs}


def practice_and_roster(
    workspace: Path, archive: Path, folder: Path
) -> tuple[dict[str, tuple[object, ...]], dict[str, Any]]:
    """``workspace`` graded by ``--practice``, and ``archive`` (its saved zip, as ``ada.zip``)
    by ``--roster``, both unsandboxed: (the counted labs' counts ``--practice`` gave, the
    gradebook's row)."""
    roster = folder / "roster"
    roster.mkdir()
    shutil.move(archive, roster / "ada.zip")
    own = folder / "own.json"
    checkpoint("--practice", workspace, "--unsandboxed", "--json", own)
    graded = checkpoint("--roster", roster, "--unsandboxed", "--gradebook", folder / "gb")
    assert graded.returncode == 0, graded.stderr
    [row] = json.loads((folder / "gb" / "gradebook.json").read_text())["learners"]
    counted = [lab for lab in json.loads(own.read_text())["labs"] if not lab["optional"]]
    return lab_counts(counted), row
