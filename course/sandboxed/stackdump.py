"""The stacks of a test that runs too long, written to a file before the parent kills it.

``faulthandler``'s watchdog reads frames without the interpreter lock, so code that keeps
making and freeing frames (an endless generator expression) can crash it (SIGSEGV, not a
timeout). A Python thread holding the lock writes the dump in its format; ``faulthandler``
is the later fallback for a long C call that holds the lock (then no frame changes).
"""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
import traceback

FALLBACK_DELAY = 0.25  # seconds after the Python dump was due: faulthandler writes one


def format_stacks(skip: int) -> str:
    """Every thread's stack but ``skip``'s, most recent call first, as ``faulthandler`` does."""
    main = threading.main_thread().ident
    frames = sys._current_frames()
    lines = []
    for ident in sorted(frames.keys() - {skip}, key=lambda i: i != main):  # the main thread first
        lines.append(f"Thread 0x{ident:016x} (most recent call first):")
        for frame, line in traceback.walk_stack(frames[ident]):
            code = frame.f_code
            lines.append(f'  File "{code.co_filename}", line {line} in {code.co_name}')
        lines.append("")
    return "\n".join(lines)


class StackDumper:
    """Arms a dump of the stacks ``after`` seconds from now into the file open at ``fd``."""

    def __init__(self, fd: int, after: float) -> None:
        self.fd = fd
        self.after = after
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._armed = 0  # a number per arming: a late timer never writes a later test's dump

    def arm(self) -> None:
        with self._lock:
            self._armed += 1
            os.ftruncate(self.fd, 0)
            os.lseek(self.fd, 0, os.SEEK_SET)
            timer = threading.Timer(self.after, self._dump, args=(self._armed,))
            timer.daemon = True
            self._timer = timer
        faulthandler.dump_traceback_later(self.after + FALLBACK_DELAY, file=self.fd)
        timer.start()

    def disarm(self) -> None:
        faulthandler.cancel_dump_traceback_later()
        with self._lock:
            self._armed += 1
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def _dump(self, armed: int) -> None:
        text = format_stacks(skip=threading.get_ident())
        with self._lock:
            if armed != self._armed:
                return
            faulthandler.cancel_dump_traceback_later()
            os.write(self.fd, text.encode("utf-8", "backslashreplace"))
