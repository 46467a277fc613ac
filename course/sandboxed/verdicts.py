"""What a test's end says: its status, and a message naming the error and the learner's lines."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..locale import gettext as _
from .deadline import Overran
from .diffs import head as diff_head
from .frames import Frame, render_frames
from .status import Status

PENDING_ATTRIBUTE = "lab_id"  # a NotImplementedError carrying it is a lab stub: pending
# a test that never reached its own code: the same marker in every edition (reports are read
# back); ``readable`` shows it in the reader's words
NOT_RUN = "not run: "
MESSAGE_LINES = 120  # a longer message (a flood, not a diff) is cut, and says so
MESSAGE_CHARS = 20_000


def is_pending(error: BaseException) -> bool:
    """Whether ``error`` is a lab stub's ``LabNotImplemented`` (its lab id a string)."""
    return isinstance(error, NotImplementedError) and isinstance(
        getattr(error, PENDING_ATTRIBUTE, None), str
    )


@dataclass(frozen=True)
class Verdict:
    """How one test ended, as the parent will report it."""

    status: Status
    message: str
    frames: tuple[Frame, ...] = ()
    fatal: bool = False
    """Every later test would end the same way (the package cannot be imported)."""


def bounded(text: str) -> str:
    """``text`` whole, unless it is a flood: then its head and how much was left out."""
    lines = text.splitlines()
    if len(lines) <= MESSAGE_LINES and len(text) <= MESSAGE_CHARS:
        return text
    kept: list[str] = []
    size = 0
    for line in lines[: MESSAGE_LINES - 1]:
        if size + len(line) > MESSAGE_CHARS:
            break
        kept.append(line)
        size += len(line) + 1
    more = _("[{count} more lines of this message not shown]").format(count=len(lines) - len(kept))
    return "\n".join([*kept, more])


def readable(message: str) -> str:
    """``message`` as a reader sees it: the ``NOT_RUN`` marker in the current edition."""
    if message.startswith(NOT_RUN):
        return _("not run: {reason}").format(reason=message.removeprefix(NOT_RUN))
    return message


def with_frames(head: str, frames: Sequence[Frame]) -> str:
    """``head`` (placed at the innermost learner frame), then the frames, one per line."""
    if not frames:
        return head
    first, _, rest = head.partition("\n")
    lines = [f"{first} ({frames[-1].place})"] + ([rest] if rest else [])
    return "\n".join([*lines, *render_frames(frames)])


def verdict(when: str, error: BaseException, frames: Sequence[Frame]) -> Verdict:
    """The verdict on an exception raised in a test's ``when`` phase (setup, call, teardown)."""
    if is_pending(error):
        return Verdict(Status.PENDING, " ".join(str(error).split()))
    frames = tuple(frames)
    if isinstance(error, Overran):  # a test run in this process, past its limit
        return Verdict(Status.TIMEOUT, bounded(with_frames(str(error), frames)), frames)
    exited = isinstance(error, SystemExit)
    if isinstance(error, SystemExit):
        head = f"sys.exit({error.code!r})"
    elif isinstance(error, SyntaxError):
        head = _("{kind}: {error}").format(kind=type(error).__name__, error=error.msg)
    elif isinstance(error, AssertionError):
        differ = diff_head()
        head = str(error).strip().replace(f"assert {differ}", differ) or _("assertion failed")
    else:  # the edition's colon (a full-width one in zh), as a probe's refusal shows it
        head = _("{kind}: {error}").format(kind=type(error).__name__, error=error).strip()
    # an error from running the package's module code: importing it failed
    module_code = isinstance(error, SyntaxError) or any(f.function == "<module>" for f in frames)
    if when == "setup" and module_code:
        if exited:
            why = _("the package exited at import: {error}").format(error=head)
        else:
            why = _("the package failed at import: {error}").format(error=head)
        message = bounded(with_frames(NOT_RUN + why, frames))
        return Verdict(Status.ERROR, message, frames, fatal=True)
    if exited:
        head = _("the code under test called {call}").format(call=head)
    message = bounded(with_frames(head, frames))
    if when == "call":
        return Verdict(Status.ERROR if exited else Status.FAILED, message, frames)
    phase = _("setup: {message}") if when == "setup" else _("teardown: {message}")
    return Verdict(Status.ERROR, phase.format(message=message), frames)
