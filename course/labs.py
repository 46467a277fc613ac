"""The exception a starter raises where a lab's code has not been written yet."""

from __future__ import annotations


class LabNotImplemented(NotImplementedError):
    """A lab's branch is still a stub: names the lab, what it builds, the function and a hint.

    The message starts ``Lab 11.1 compaction entry not implemented yet`` so a test run shows
    which lab to work on; the checkpoint reports a test that stops here as *pending*.
    """

    def __init__(self, lab_id: str, title: str, function: str, hint: str) -> None:
        self.lab_id = lab_id
        self.title = title
        self.function = function
        self.hint = hint
        super().__init__(f"Lab {lab_id} {title} not implemented yet ({function}): {hint}")
