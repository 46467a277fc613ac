"""A time limit on Python code in this very process (Pyodide: no child), kept with ``settrace``.

It cannot stop code that swallows every exception (CPython removes a trace function once it
has raised) nor a single call that never returns to Python (a C loop, a blocking read).
"""

from __future__ import annotations

import sys
import time
from types import FrameType
from typing import Any

from ..locale import gettext as _


class Overran(BaseException):
    """Raised past the limit; not an ``Exception``, so ``except Exception`` lets it through."""


class Deadline:
    """Raises ``Overran`` in the code run inside once ``time.monotonic()`` passes ``ends``."""

    def __init__(self, ends: float, seconds: float) -> None:
        self.ends = ends
        self.seconds = seconds
        self.overran = False
        self.saved: Any = None

    def _check(self, frame: FrameType, event: str, arg: object) -> Any:
        if time.monotonic() > self.ends:
            self.overran = True
            said = _("still running after {seconds}s; stopped (an endless loop?)")
            raise Overran(said.format(seconds=f"{self.seconds:g}"))
        return self._check

    def __enter__(self) -> Deadline:
        self.saved = sys.gettrace()
        sys.settrace(self._check)
        return self

    def __exit__(self, *exc_info: object) -> None:
        sys.settrace(self.saved)


def deadline(seconds: float) -> Deadline:
    return Deadline(time.monotonic() + seconds, seconds)
