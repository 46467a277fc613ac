"""The five ways a test, a probe case or a lab can end, and which of them is the worst."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Status(StrEnum):
    """How something ended; the value is the stable word used in reports and gradebooks."""

    PASSED = "passed"
    PENDING = "pending"
    """It reached a lab stub (``LabNotImplemented``): not written yet."""
    FAILED = "failed"
    TIMEOUT = "timeout"
    ERROR = "error"

    @classmethod
    def read(cls, value: object) -> Status:
        """``value`` as a status; anything that is not one of the five words is an error."""
        try:
            return cls(value) if isinstance(value, str) else cls.ERROR
        except ValueError:
            return cls.ERROR

    @property
    def broken(self) -> bool:
        """Failed, timed out or errored: something is wrong, not just unwritten."""
        return self in (Status.FAILED, Status.TIMEOUT, Status.ERROR)


WORST_FIRST: tuple[Status, ...] = (Status.ERROR, Status.TIMEOUT, Status.FAILED, Status.PENDING)
"""The statuses that are not a pass, the most serious first."""


def worst(statuses: Iterable[Status]) -> Status:
    """The most serious of ``statuses``: passed only if every one passed (and there was one)."""
    found = set(statuses)
    if found == {Status.PASSED}:
        return Status.PASSED
    return next((status for status in WORST_FIRST if status in found), Status.ERROR)
