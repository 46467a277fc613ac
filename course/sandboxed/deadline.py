"""A time limit on Python code running in this very process, kept with ``sys.settrace``.

Where no child process can start (the browser's Pyodide), a test or a probe case cannot be
killed when it runs too long: instead, a trace function looks at the clock on every line and
call of the traced code and, past the limit, raises ``Overran`` in the frame that runs. An
endless ``while True`` loop stops there. What it cannot stop: code that swallows every
exception (``except BaseException``; CPython removes a trace function once it has raised) and a
single call that never returns to Python (a C loop, a blocking read).
"""

from __future__ import annotations

import sys
import time
from types import FrameType, TracebackType
from typing import Any

from ..locale import gettext as _


class Overran(BaseException):
    """Raised in the traced code once its time limit has passed (not an ``Exception``, so an
    ``except Exception`` of the code under test lets it through)."""


def overran_message(seconds: float) -> str:
    return _("still running after {seconds}s; stopped (an endless loop?)").format(
        seconds=f"{seconds:g}"
    )


class Deadline:
    """``with Deadline(ends, seconds):`` raises ``Overran`` in the code run inside once
    ``time.monotonic()`` passes ``ends``; ``overran`` says afterwards whether it did."""

    def __init__(self, ends: float, seconds: float) -> None:
        self.ends = ends
        self.seconds = seconds
        self.overran = False
        self.saved: Any = None

    def _check(self, frame: FrameType, event: str, arg: object) -> Any:
        if time.monotonic() > self.ends:
            self.overran = True
            raise Overran(overran_message(self.seconds))
        return self._check

    def __enter__(self) -> Deadline:
        self.saved = sys.gettrace()
        sys.settrace(self._check)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        sys.settrace(self.saved)


def deadline(seconds: float) -> Deadline:
    """A ``Deadline`` ``seconds`` from now."""
    return Deadline(time.monotonic() + seconds, seconds)
