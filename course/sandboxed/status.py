"""The ways a test, a probe case, a lab or a gradebook row can end, which is the worst, and how
each looks (label, mark, colour, tone), defined once for every door."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Literal

from ..locale import N_, gettext

Tone = Literal["ok", "pending", "error", "note"]
"""How a notebook colours something: a status's tone, or ``note`` for what is only said."""

TONE_MARKS: dict[Tone, str] = {"ok": "✓", "pending": "…", "error": "✗", "note": "·"}
# ANSI SGR colours: green, yellow, red, the terminal's own; then the same as a notebook's HTML
ANSI_COLOURS: dict[Tone, str] = {"ok": "32", "pending": "33", "error": "31", "note": "0"}
HTML_COLOURS: dict[Tone, str] = {
    "ok": "#2e7d32",
    "pending": "#8d6e00",
    "error": "#c62828",
    "note": "#455a64",
}
LABELS = (
    *(N_("passed"), N_("pending"), N_("failed"), N_("timeout"), N_("error")),
    *(N_("skipped"), N_("missing")),  # a gradebook row's only: no verdict
)
"""Every status's word, marked for the catalogs (``Status.label`` translates it)."""


class Status(StrEnum):
    """How something ended; the value is the stable word used in reports and gradebooks."""

    PASSED = "passed"
    PENDING = "pending"  # it reached a lab stub (LabNotImplemented): not written yet
    FAILED = "failed"
    TIMEOUT = "timeout"
    ERROR = "error"
    SKIPPED = "skipped"  # a gradebook row of a folder that is not a workspace: never a verdict
    MISSING = "missing"  # a gradebook row of a student of the class list who handed in nothing

    @classmethod
    def read(cls, value: object) -> Status:
        """``value`` as a verdict; anything that is not one of the ``GRADED`` words is an error."""
        return cls(value) if isinstance(value, str) and value in GRADED else cls.ERROR

    @property
    def broken(self) -> bool:
        """Failed, timed out or errored: something is wrong, not just unwritten."""
        return self in (Status.FAILED, Status.TIMEOUT, Status.ERROR)

    @property
    def tone(self) -> Tone:
        """``error`` for the broken ones (failed, timed out, errored)."""
        tones: dict[str, Tone] = {
            "passed": "ok",
            "pending": "pending",
            "skipped": "note",
            "missing": "note",
        }
        return tones.get(self.value, "error")

    @property
    def mark(self) -> str:
        return TONE_MARKS[self.tone]

    @property
    def colour(self) -> str:
        return ANSI_COLOURS[self.tone]

    @property
    def label(self) -> str:
        """The word in the current edition (``passed`` → ``通过``); the value stays English."""
        return gettext(self.value)


WORST_FIRST: tuple[Status, ...] = (Status.ERROR, Status.TIMEOUT, Status.FAILED, Status.PENDING)
"""The verdicts that are not a pass, the most serious first."""
GRADED: frozenset[str] = frozenset((Status.PASSED, *WORST_FIRST))
"""The five verdicts a test, a probe case or a lab can have (``skipped`` is not one)."""


def worst(statuses: Iterable[Status]) -> Status:
    """The most serious of ``statuses``: passed only if every one passed (and there was one)."""
    found = set(statuses)
    if found == {Status.PASSED}:
        return Status.PASSED
    return next((status for status in WORST_FIRST if status in found), Status.ERROR)
