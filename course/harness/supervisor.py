"""Child processes of a run: started in their own session, drained, read and killed.

One supervisor serves the focused tests (``runner.py``) and the probes (``grading/probes.py``):
``start_child`` starts a command (through a ``Wrap``, into a sandbox say) with its output
drained on a thread and capped, the child reports through a results file read with
``records.RecordReader``, and ``kill_group`` ends the child and everything it started. In a
browser the child is a second Pyodide in a Web Worker (``webworker.WorkerChild``), which the
same loop reads, waits for and ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Protocol

from ..sandboxed.frames import dump_file
from ..sandboxed.untrusted import safe_text
from .webworker import WorkerChild, in_a_browser

POLL_SECONDS = 0.02
"""How often a supervisor looks at its child's records and clock."""


@dataclass(frozen=True)
class Limits:
    """How much one run may take."""

    test_seconds: float = 10.0
    """Wall-clock limit of one test (setup, call and teardown)."""
    startup_seconds: float = 60.0
    """Time a child may take to start pytest and collect before any test runs."""
    output_bytes: int = 64 * 1024
    """Child output kept for diagnostics; the rest is read and dropped."""
    memory_mb: int = 2048
    """Address-space limit of the child (0: none)."""


AFTER_A_HANG = 0.1
"""The share of its limit a test or probe case gets once another has run past its limit."""
SHORTEST_LIMIT = 1.0


def after_a_hang(limits: Limits) -> Limits:
    """The limits for what still runs once something ran past its limit.

    Focused tests and probe cases take milliseconds, and an endless loop in one lab's function
    usually hangs every later lab that calls it: each later hang then costs a tenth of the
    limit (at least a second), so one loop costs about one time limit, not one per lab. An
    honest run never sees the shorter limit: it only follows a hang.
    """
    shorter = max(SHORTEST_LIMIT, limits.test_seconds * AFTER_A_HANG)
    return replace(limits, test_seconds=min(limits.test_seconds, shorter))


Child = subprocess.Popen[bytes] | WorkerChild
"""A running child: a process, or in a browser a Web Worker."""


class Output(Protocol):
    def text(self) -> str: ...


Wrap = Callable[[list[str], dict[str, str], tuple[Path, ...]], tuple[list[str], dict[str, str]]]
"""Turns a child's command and environment into the ones to start (inside a sandbox, say);
the paths are files the child must be able to write."""


class CappedOutput:
    """Drains a pipe on a thread, keeping only the last ``limit`` bytes."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self.thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        while chunk := os.read(stream.fileno(), 65536):
            self.kept += chunk
            if len(self.kept) > 2 * self.limit:
                del self.kept[: len(self.kept) - self.limit]
        stream.close()

    def text(self) -> str:
        """The kept output, safe to show (learner code writes it)."""
        self.thread.join(timeout=1.0)
        return safe_text(bytes(self.kept[-self.limit :]).decode("utf-8", "replace"), self.limit)


def kill_group(process: Child) -> None:
    """Kill the child's whole process group (whatever learner code started) and reap it; a
    worker is terminated."""
    if isinstance(process, WorkerChild):
        process.kill()
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)


def start_child(
    command: list[str],
    env: dict[str, str],
    cwd: Path,
    wrap: Wrap | None,
    results: Path,
    limits: Limits,
) -> tuple[Child, Output]:
    """Start a child in its own session (through ``wrap``; it may write ``results``).

    A confined child may write only its results file and the stack dump beside it, so the
    dump file is made before the child starts. In a browser the child is a Web Worker, whose
    writes to those two files arrive here.
    """
    if wrap is not None:
        stacks = dump_file(results)
        stacks.touch()
        command, env = wrap(command, env, (results, stacks))
    if in_a_browser():
        worker = WorkerChild(command, env, cwd, (results, dump_file(results)), limits.output_bytes)
        return worker, worker
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    return process, CappedOutput(process.stdout, limits.output_bytes)


def pause(process: Child) -> None:
    """Wait one poll's length, less if the child ends (a worker's messages arrive meanwhile)."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=POLL_SECONDS)
