"""Child processes of a run: started in their own session, drained, read and killed.

It serves the focused tests (``runner.py``) and the probes (``grading/verdict/probes.py``); in a
browser the child is a Web Worker (``webworker.WorkerChild``), read, waited for and ended alike.
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
from typing import IO

from ..sandboxed.frames import dump_file
from .webworker import KeptOutput, WorkerChild, in_a_browser

POLL_SECONDS = 0.02  # how often a supervisor looks at its child's records and clock


@dataclass(frozen=True)
class Limits:
    """How much one run may take."""

    test_seconds: float = 10.0  # wall-clock limit of one test (setup, call and teardown)
    startup_seconds: float = 60.0  # for a child to start pytest and collect
    output_bytes: int = 64 * 1024  # child output kept for diagnostics; the rest is dropped
    memory_mb: int = 2048  # address-space limit of the child (0: none)
    deadline: float | None = None  # ``time.monotonic()`` past which no child's records are read
    written_bytes: int = 64 * 1024 * 1024  # what a run's children may leave on the grader's disk


AFTER_A_HANG = 0.1  # the share of its limit a test or case gets once another overran
SHORTEST_LIMIT = 1.0


def after_a_hang(limits: Limits) -> Limits:
    """The limits once something ran past its limit: an endless loop in one lab's function
    usually hangs every later lab that calls it, so each later hang costs a tenth of the limit
    (at least a second). An honest run (milliseconds a test) never sees the shorter limit."""
    shorter = max(SHORTEST_LIMIT, limits.test_seconds * AFTER_A_HANG)
    return replace(limits, test_seconds=min(limits.test_seconds, shorter))


Child = subprocess.Popen[bytes] | WorkerChild  # a process, or in a browser a Web Worker


Wrap = Callable[[list[str], dict[str, str], tuple[Path, ...]], tuple[list[str], dict[str, str]]]
"""Turns a child's command and environment into the ones to start (inside a sandbox, say);
the paths are files the child must be able to write."""


class CappedOutput(KeptOutput):
    """Drains a pipe on a thread, keeping only the last ``limit`` bytes."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        super().__init__(limit)
        self.thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self.thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        while chunk := os.read(stream.fileno(), 65536):
            self.keep(chunk)
        stream.close()

    def text(self) -> str:
        self.thread.join(timeout=1.0)
        return super().text()


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
    given: bytes | None = None,
) -> tuple[Child, KeptOutput]:
    """Start a child in its own session (through ``wrap``), or a Web Worker in a browser. A
    confined child may write only ``results`` and the stack dump, made here before it starts.
    ``given``: what it reads on its standard input (a pipe only it holds; else none)."""
    written = (results, dump_file(results))
    if wrap is not None:
        written[1].touch()
        command, env = wrap(command, env, written)
    if in_a_browser():
        assert given is None, "a worker has no standard input"
        worker = WorkerChild(command, env, cwd, written, limits.output_bytes)
        return worker, worker
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL if given is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert process.stdout is not None
    if given is not None:
        assert process.stdin is not None
        feeding = threading.Thread(target=_feed, args=(process.stdin, given), daemon=True)
        feeding.start()  # a child that never reads never blocks the grader
    return process, CappedOutput(process.stdout, limits.output_bytes)


def _feed(stream: IO[bytes], data: bytes) -> None:
    with contextlib.suppress(OSError), stream:
        stream.write(data)


def remove_written(results: Path) -> int:
    """Remove a child's results file and stack dump once read: learner code can fill each up
    to its file size limit, so no more than one child's pair is ever on the grader's disk.
    Returns their size: a run counts it against ``Limits.written_bytes``, as the learner's."""
    size = 0
    for path in (results, dump_file(results)):
        with contextlib.suppress(OSError):
            size += path.stat().st_size
        path.unlink(missing_ok=True)
    return size


EXIT_GRACE_SECONDS = 2.0  # for a child that said it is done to exit on its own


def let_exit(process: Child) -> None:
    """Give a child that said it is done a moment to exit before it is killed: a worker that
    exits is kept warm for the next child (``webworker.WarmWorkers``), a killed one is not."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=EXIT_GRACE_SECONDS)


def pause(process: Child) -> None:
    """Wait one poll's length, less if the child ends (a worker's messages arrive meanwhile)."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=POLL_SECONDS)
