"""A lab's verdict as a notebook shows it: the checkpoint's own result, rendered, no timings.

``check()`` hands the engine's ``CheckpointResult`` to ``VerdictView``; nothing here counts or
decides anything: every number shown is the result's own, and a lab's text is the terminal's
(``harness/report.py``), so the notebook, the checkpoint and the gradebook always agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..harness.columns import columns, pad
from ..harness.report import (
    counts,
    counts_width,
    lab_counts,
    lab_line,
    probe_details,
    render_lab,
    render_not_run,
    render_printed,
)
from ..harness.results import CheckpointResult, LabResult, TestOutcome
from ..harness.status import TONE_MARKS, Status, Tone, worst
from ..harness.verdicts import readable
from ..locale import gettext as _
from ..locale import ngettext
from .views import TONE_COLOURS, Shown, esc

MESSAGE_LIMIT = 240
"""Characters of each line of a test's message that are shown."""
MESSAGE_LINES = 8
"""Lines of a test's message that are shown (a diff's first lines, say)."""


@dataclass(frozen=True, repr=False)  # a notebook shows ``text``, not the fields
class VerdictView(Shown):
    """What a check found (``result``), for one lab or the whole chapter; or why it could not."""

    result: CheckpointResult | None
    lab: str | None = None
    """The lab asked for (None: the chapter)."""
    problem: str = ""
    replace: tuple[str, str] = ("", "")
    """A folder name shown as a placeholder (``<workspace>``) in messages."""
    titles: Mapping[str, str] = field(default_factory=dict)
    """Lab titles by id, as the notebook's edition reads them (the result's own otherwise)."""

    @property
    def labs(self) -> tuple[LabResult, ...]:
        if self.result is None:
            return ()
        return tuple(lab for lab in self.result.labs if self.lab in (None, lab.lab.id))

    @property
    def counted(self) -> tuple[LabResult, ...]:
        """The labs whose counts the headline adds up (optional ones only when asked for)."""
        return tuple(lab for lab in self.labs if self.lab is not None or not lab.lab.optional)

    @property
    def text(self) -> str:
        return render_text(self)

    @property
    def html(self) -> str:
        return render_html(self)


def lab_title(view: VerdictView, lab: LabResult) -> str:
    """A lab's title in the view's edition."""
    return view.titles.get(lab.lab.id, lab.lab.title)


def _clean(view: VerdictView, text: str) -> str:
    old, new = view.replace
    return text.replace(old, new) if old else text


def headline(view: VerdictView) -> str:
    """One line: what was checked and its verdict."""
    labs = view.labs
    if view.lab is not None:
        title = lab_title(view, labs[0]) if labs else ""
        if title:
            scope = _("Lab {lab} · {title}").format(lab=view.lab, title=title)
        else:
            scope = _("Lab {lab}").format(lab=view.lab)
    else:
        chapter = view.result.chapter if view.result is not None else ""
        scope = _("Chapter {chapter}").format(chapter=chapter).strip()
    problems = [view.problem] if view.problem else []
    if view.result is not None:
        problems += list(view.result.problems)
    if problems:
        return _("{scope}: no result — {problem}").format(
            scope=scope, problem=_clean(view, _first_line(problems[0]))
        )
    counted = view.counted
    if not counted:
        return _("{scope}: no focused tests found").format(scope=scope)
    if view.lab is not None:
        return lab_line(counted[0], lab_title(view, counted[0]), title_width=0)
    result = view.result
    assert result is not None  # a view with counted labs has its result
    probed = any(lab.probes is not None for lab in counted)  # the chapter's required labs
    shown = counts(result.passed, result.total, result.agreed, result.cases if probed else None)
    statuses = {lab.status for lab in counted}
    words = _(", ").join(s.label for s in Status if s != Status.PASSED and s in statuses)
    return _("{scope}: {counts}  {statuses}").format(
        scope=scope, counts=shown, statuses=words or Status.PASSED.label
    )


def overall_tone(view: VerdictView) -> Tone:
    """ok when every lab counted passed; pending when nothing is broken but some are pending."""
    if view.problem or view.result is None or view.result.problems or not view.counted:
        return "error"
    return worst(lab.status for lab in view.counted).tone


def shown_tests(view: VerdictView) -> tuple[TestOutcome, ...]:
    """A lab check lists every test; a chapter check only those that are broken (HTML)."""
    if view.lab is not None:
        return tuple(test for lab in view.labs for test in lab.tests)
    return tuple(test for lab in view.counted for test in lab.tests if test.status.broken)


def probe_failures(view: VerdictView) -> list[str]:
    """The named probe cases that disagreed, lab by lab (HTML)."""
    lines: list[str] = []
    for lab in view.labs:
        probes = lab.probes
        if probes is None or probes.agree or probes.status == Status.PENDING:
            continue
        lines += [
            _("Lab {lab} probe: {failure}").format(lab=lab.lab.id, failure=failure)
            for failure in probes.failures
        ]
    return lines


def notes(view: VerdictView, tests: Sequence[TestOutcome]) -> list[str]:
    """Each test's message, or '' where it passed or repeats the message just shown; then
    what a broken test printed (``report.render_printed``)."""
    shown: list[str] = []
    previous = ""
    for test in tests:
        passed = test.status == Status.PASSED
        message = _clean(view, _excerpt(readable(test.message)))
        printed = [_clean(view, _cut(line)) for line in render_printed(test)]
        said = [message] if not passed and message != previous else []
        shown.append("\n".join(said + printed))
        previous = message if not passed else ""
    return shown


def render_text(view: VerdictView) -> str:
    """The verdict as plain text: the headline, then a chapter check's labs as the terminal
    shows them, or a lab check's every test and its disagreeing probe cases."""
    lines = [f"{TONE_MARKS[overall_tone(view)]} {headline(view)}"]
    if view.lab is None:
        labs = view.labs
        titles = max((columns(lab_title(view, lab)) for lab in labs), default=0)
        width = counts_width(labs)
        for lab in labs:
            shown = render_lab(lab, titles, counts_width=width, title=lab_title(view, lab))
            lines += [f"  {line}" for line in shown.splitlines()]
        if view.result is not None and labs:
            lines += [f"  {line}" for line in render_not_run(view.result)]
        return _clean(view, "\n".join(lines))
    tests = shown_tests(view)
    for test, note in zip(tests, notes(view, tests), strict=True):
        line = f"  {test.status.mark} {pad(test.status.label, 7)} {test.name}"
        if note:
            first, *rest = note.splitlines()
            line += f" — {first}" + "".join(f"\n{' ' * 12}{more}" for more in rest)
        lines.append(line)
    for lab in view.labs:
        lines += [f"  {line}" for line in probe_details(lab)]
    return _clean(view, "\n".join(lines))


def render_html(view: VerdictView) -> str:
    """The verdict as an HTML block with coloured statuses."""
    tone = overall_tone(view)
    parts = [
        f"<div style='color:{TONE_COLOURS[tone]}'><b>{TONE_MARKS[tone]} "
        f"{esc(headline(view))}</b></div>"
    ]
    rows: list[str] = []
    if view.lab is None:
        for lab in view.labs:
            colour = TONE_COLOURS[lab.status.tone]
            shown = esc(f"{lab_counts(lab)}  {lab.status.label}")
            rows.append(
                _row(
                    esc(_("Lab {lab}").format(lab=lab.lab.id)),
                    esc(lab_title(view, lab)),
                    _coloured(shown, colour),
                )
            )
    tests = shown_tests(view)
    for test, note in zip(tests, notes(view, tests), strict=True):
        colour = TONE_COLOURS[test.status.tone]
        rows.append(
            _row(
                _coloured(esc(test.status.label), colour),
                f"<code>{esc(test.name)}</code>",
                f"<span style='white-space:pre-wrap'>{esc(note)}</span>",
            )
        )
    for line in probe_failures(view):
        colour = TONE_COLOURS["error"]
        shown = "\n".join(_clean(view, _cut(part)) for part in line.splitlines())
        cell = f"<span style='white-space:pre-wrap'>{esc(shown)}</span>"
        rows.append(_row(_coloured(esc(_("probe")), colour), "", cell))
    if rows:
        parts.append(f"<table>{''.join(rows)}</table>")
    return "".join(parts)


def _row(*cells: str) -> str:
    """A table row whose cells are left-aligned (notebook front ends centre or right-align)."""
    return "<tr>" + "".join(f"<td style='text-align:left'>{cell}</td>" for cell in cells) + "</tr>"


def _coloured(text: str, colour: str) -> str:
    return f"<span style='color:{colour}'>{text}</span>"


def _excerpt(value: str) -> str:
    """A message's first lines, each cut to ``MESSAGE_LIMIT`` characters."""
    lines = [line.rstrip() for line in value.splitlines() if line.strip()]
    shown = [_cut(line) for line in lines[:MESSAGE_LINES]]
    if len(lines) > MESSAGE_LINES:
        more = len(lines) - MESSAGE_LINES
        shown.append(
            ngettext("… {count} more line", "… {count} more lines", more).format(count=more)
        )
    return "\n".join(shown)


def _cut(line: str) -> str:
    return line if len(line) <= MESSAGE_LIMIT else line[: MESSAGE_LIMIT - 1] + "…"


def _first_line(value: str) -> str:
    lines = [line.strip() for line in value.splitlines() if line.strip()]
    return _cut(lines[0]) if lines else ""
