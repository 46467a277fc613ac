"""The exception a starter raises where a lab's code has not been written yet."""

from __future__ import annotations

from course.locale import N_, current_edition, stub_title, tidy, translations, unquoted

STUB = N_("Lab {lab_id} {title} not implemented yet ({function}): {todo}")


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
        super().__init__(stub_message(lab_id, title, function, hint))


def stub_message(
    lab_id: str, title: str, function: str, hint: str, edition: str | None = None
) -> str:
    """What a stub says in ``edition`` (the current one by default), as plain text:
    ``Lab 11.1 compaction entry not implemented yet (parse_summary): …``."""
    said = translations(edition or current_edition()).gettext
    message = said(STUB).format(
        lab_id=lab_id, title=stub_title(title, edition), function=function, todo=hint and said(hint)
    )
    return tidy(unquoted(message))  # shown in tracebacks: no Markdown backticks
