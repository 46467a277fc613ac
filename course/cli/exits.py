"""How a command ends: its exit codes, and a closed pipe ended quietly (``… | head``)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable

CLOSED_PIPE = 128 + signal.SIGPIPE  # as a closed pipe's writer ends
INTERRUPTED = 128 + signal.SIGINT


def quiet_on_closed_pipe(run: Callable[[], int]) -> int:
    """``run()``'s exit code, its output flushed; when the reader has closed the pipe (``practice
    11 DIR | head -1``: it has all it wanted) ``CLOSED_PIPE`` and no traceback, now or at exit."""
    try:
        code = run()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        with contextlib.suppress(OSError, ValueError, AttributeError):  # what is left: nowhere
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return CLOSED_PIPE
