"""Rendering primitives: a view is plain text for the record and HTML for the eye."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Protocol

from ..locale import SOURCE_EDITION, code_spans, current_edition, tidy, unquoted
from ..locale import gettext as _
from ..locale.refusals import in_edition
from ..sandboxed.columns import columns, pad
from ..sandboxed.status import HTML_COLOURS, TONE_MARKS, Tone


class Showable(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def html(self) -> str: ...


class Shown:
    """What a notebook shows of an object with ``text`` (for the record) and ``html`` (the eye)."""

    def _repr_html_(self: Showable) -> str:
        return self.html

    def _repr_pretty_(self: Showable, printer: Any, cycle: bool) -> None:
        printer.text(self.text)

    def __str__(self: Showable) -> str:
        return self.text


@dataclass(frozen=True, repr=False)  # a notebook shows ``text``, not the fields
class View(Shown):
    """Something a notebook cell shows: plain text for the record, HTML for the eye."""

    text: str
    html: str


def stack(views: Iterable[View]) -> View:
    """Several views shown one after the other."""
    items = list(views)
    text = items[0].text if items else ""
    for before, view in pairwise(items):
        text += ("\n\n" if "\n" in before.text + view.text else "\n") + view.text
    return View(
        text, "".join(f"<div style='margin-bottom:0.6em'>{view.html}</div>" for view in items)
    )


def esc(value: object) -> str:
    """HTML-escaped text of ``value``."""
    return html.escape(str(value), quote=True)


def message(text: str, tone: Tone = "note") -> View:
    """A one-line status: ✓ ok, … pending, ✗ error, · note (a Markdown code span in ``text``
    shows as code, never as backticks)."""
    text = tidy(text)
    mark, body = TONE_MARKS[tone], code_spans(text).replace("\n", "<br>")
    return View(
        f"{mark} {unquoted(text)}",
        f"<div style='color:{HTML_COLOURS[tone]}'><b>{mark}</b> <span style='white-space:pre-wrap'>"
        f"{body}</span></div>",
    )


def preformatted(text: str) -> View:
    """Monospaced text, shown as is."""
    return View(text, f"<pre style='margin:0'>{esc(text)}</pre>")


def row(*cells: str) -> str:
    """An HTML row of left-aligned cells (notebook front ends centre or right-align them)."""
    return "<tr>" + "".join(f"<td style='text-align:left'>{cell}</td>" for cell in cells) + "</tr>"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, title: str = "") -> View:
    """A table as aligned plain text and as an HTML table."""
    texts = [[str(cell) for cell in values] for values in rows]
    widths = [
        max([columns(header)] + [columns(values[i]) for values in texts])
        for i, header in enumerate(headers)
    ]

    def line(values: Sequence[str]) -> str:
        return "  ".join(pad(value, widths[i]) for i, value in enumerate(values)).rstrip()

    lines = ([title] if title else []) + [line(headers), line(["-" * w for w in widths])]
    lines += [line(values) for values in texts]
    head = "".join(f"<th style='text-align:left'>{esc(h)}</th>" for h in headers)
    body = "".join(row(*map(esc, values)) for values in texts)
    caption = f"<caption style='text-align:left'><b>{esc(title)}</b></caption>" if title else ""
    return View(
        "\n".join(lines),
        f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>",
    )


def number(value: object) -> str:
    """``31`` for 31 and 31.0, ``2.5`` for 2.5."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def refused(error: BaseException) -> View:
    """A refusal, as the caller sees it: the error's type and message."""
    said = _("refused · {error_type}: {error}")
    shown = in_edition(str(error))
    return message(said.format(error_type=type(error).__name__, error=shown), "error")


def accepted_wrongly(label: str) -> View:
    """An input the caller expected to be refused, that the code under test accepted."""
    said = _("accepted ✗ · {label}: this input should have been refused")
    return message(said.format(label=label), "error")


def note(text_: str) -> View:
    """A one-line remark."""
    return message(text_, "note")


def grouped(number: int | float) -> str:
    """A large count as the edition writes it: ``25,010`` in English, ``25010`` in Chinese (whose
    text groups no digits)."""
    return f"{number:,}" if current_edition() == SOURCE_EDITION else f"{number}"
