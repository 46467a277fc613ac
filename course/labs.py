"""The exception a starter raises where a lab's code has not been written yet."""

from __future__ import annotations

from course.locale import gettext as _
from course.locale import stub_title, tidy, unquoted


class LabNotImplemented(NotImplementedError):
    """A lab's branch is still a stub: names the lab, what it builds, the function and a hint.

    The message starts ``Lab 11.1 compaction entry not implemented yet`` so a test run shows
    which lab to work on (in the Chinese edition ``Lab 11.1 compaction entry 尚未实现``, as the
    chapter quotes it); the checkpoint reports a test that stops here as *pending*, recognised
    by ``lab_id``. The attributes keep the curriculum's own (English) title and hint; the
    message speaks the current edition.
    """

    def __init__(self, lab_id: str, title: str, function: str, hint: str) -> None:
        self.lab_id = lab_id
        self.title = title
        self.function = function
        self.hint = hint
        said = _("Lab {lab_id} {title} not implemented yet ({function}): {todo}").format(
            lab_id=lab_id, title=stub_title(title), function=function, todo=_curriculum(hint)
        )
        super().__init__(tidy(unquoted(said)))  # shown in tracebacks: no Markdown backticks


def _curriculum(text: str) -> str:
    """A curriculum text (a lab title, a to-do) in the current edition; ``""`` stays ``""``."""
    return _(text) if text else text
