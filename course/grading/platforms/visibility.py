"""Gradescope's names a command line takes: where it lays out an autograder and who sees what.

Kept apart from ``gradescope.py`` so that ``checkpoint`` and ``course-kit`` build their parsers
without importing the grading machinery.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from ...locale import gettext as _

ROOT = Path("/autograder")  # where Gradescope lays out an autograder (or AUTOGRADER_ROOT)
Visibility = Literal["hidden", "after_due_date", "after_published", "visible"]
VISIBILITIES: tuple[Visibility, ...] = ("hidden", "after_due_date", "after_published", "visible")


def visibility(text: str) -> Visibility:
    """A Gradescope visibility named on the command line (``ValueError`` otherwise)."""
    if text not in VISIBILITIES:
        said = _("not a Gradescope visibility: {text!r} (one of {known})")
        raise ValueError(said.format(text=text, known=", ".join(VISIBILITIES)))
    return text
