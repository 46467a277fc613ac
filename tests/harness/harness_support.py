"""Helpers for the harness's own tests: running the CLIs and editing workspace files."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from course.harness.results import CheckpointResult
from course.harness.runner import Limits

CHAPTER = "11"
DEFAULT_LIMITS = Limits()
QUICK = Limits(test_seconds=2.0)
"""Short per-test limit for runs that expect timeouts (the focused tests take milliseconds)."""

MakeWorkspace = Callable[[str], Path]
"""The ``make_workspace`` fixture: a fresh practice workspace named by its argument."""

Check = Callable[..., CheckpointResult]
"""The ``check`` fixture: run the checkpoint on the reference or a workspace."""


def cli(tool: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python3 -m course.<tool> ARGS`` the way a user would, capturing its output."""
    return subprocess.run(
        [sys.executable, "-m", f"course.harness.{tool}", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def replace_in(path: Path, old: str, new: str) -> None:
    """Edit a workspace file, insisting that ``old`` occurs exactly once."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path.name}: expected one {old!r}"
    path.write_text(text.replace(old, new), encoding="utf-8")
