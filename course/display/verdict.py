"""A lab's verdict as a notebook shows it: the checkpoint's own result, rendered, no timings.

``check()`` hands the engine's ``CheckpointResult`` to ``VerdictView``; nothing here counts or
decides anything: every number shown is the result's own, so the notebook, the checkpoint and
the gradebook always agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..harness.results import CheckpointResult, LabResult, TestOutcome
from ..harness.status import Status
from .views import TONE_COLOURS, TONE_MARKS, Shown, Tone, esc

STATUS_TONES: dict[Status, Tone] = {
    Status.PASSED: "ok",
    Status.PENDING: "pending",
    Status.FAILED: "error",
    Status.TIMEOUT: "error",
    Status.ERROR: "error",
}
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


def _clean(view: VerdictView, text: str) -> str:
    old, new = view.replace
    return text.replace(old, new) if old else text


def headline(view: VerdictView) -> str:
    """One line: what was checked and its verdict."""
    labs = view.labs
    if view.lab is not None:
        title = labs[0].lab.title if labs else ""
        scope = f"Lab {view.lab}" + (f" · {title}" if title else "")
    else:
        chapter = view.result.chapter if view.result is not None else ""
        scope = f"Chapter {chapter}".strip()
    problems = [view.problem] if view.problem else []
    if view.result is not None:
        problems += list(view.result.problems)
    if problems:
        return f"{scope}: no result — {_clean(view, _first_line(problems[0]))}"
    counted = view.counted
    if not counted:
        return f"{scope}: no focused tests found"
    passed = sum(lab.passed for lab in counted)
    total = sum(lab.total for lab in counted)
    statuses = {lab.status for lab in counted}
    words = ", ".join(str(s) for s in Status if s != Status.PASSED and s in statuses)
    return f"{scope}: {passed}/{total} passed" + (f" ({words})" if words else "")


def overall_tone(view: VerdictView) -> Tone:
    """ok when every lab counted passed; pending when nothing is broken but some are pending."""
    if view.problem or view.result is None or view.result.problems or not view.counted:
        return "error"
    statuses = {lab.status for lab in view.counted}
    if statuses == {Status.PASSED}:
        return "ok"
    return "error" if any(s.broken for s in statuses) else "pending"


def shown_tests(view: VerdictView) -> tuple[TestOutcome, ...]:
    """A lab check lists every test; a chapter check only those that are broken."""
    if view.lab is not None:
        return tuple(test for lab in view.labs for test in lab.tests)
    return tuple(test for lab in view.counted for test in lab.tests if test.status.broken)


def probe_failures(view: VerdictView) -> list[str]:
    """The named probe cases that disagreed, lab by lab."""
    lines: list[str] = []
    for lab in view.labs:
        probes = lab.probes
        if probes is None or probes.agree or probes.status == Status.PENDING:
            continue
        lines += [f"Lab {lab.lab.id} probe: {failure}" for failure in probes.failures]
    return lines


def notes(view: VerdictView, tests: Sequence[TestOutcome]) -> list[str]:
    """Each test's message, or '' where it passed or repeats the message just shown."""
    shown: list[str] = []
    previous = ""
    for test in tests:
        passed = test.status == Status.PASSED
        message = _clean(view, _excerpt(test.message))
        shown.append(message if not passed and message != previous else "")
        previous = message if not passed else ""
    return shown


def render_text(view: VerdictView) -> str:
    """The verdict as plain text: headline, labs (chapter checks), then tests and probes."""
    lines = [f"{TONE_MARKS[overall_tone(view)]} {headline(view)}"]
    if view.lab is None:
        for lab in view.labs:
            extra = " (optional, not counted)" if lab.lab.optional else ""
            lines.append(
                f"  Lab {lab.lab.id} {lab.lab.title}: {lab.passed}/{lab.total} {lab.status}{extra}"
            )
    tests = shown_tests(view)
    for test, note in zip(tests, notes(view, tests), strict=True):
        mark = TONE_MARKS[STATUS_TONES[test.status]]
        line = f"  {mark} {test.status:<7} {test.name}"
        if note:
            first, *rest = note.splitlines()
            line += f" — {first}" + "".join(f"\n{' ' * 12}{more}" for more in rest)
        lines.append(line)
    lines += [f"  ✗ {_clean(view, _cut(line))}" for line in probe_failures(view)]
    return "\n".join(lines)


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
            colour = TONE_COLOURS[STATUS_TONES[lab.status]]
            counts = f"{lab.passed}/{lab.total} {esc(lab.status)}"
            rows.append(
                _row(f"Lab {esc(lab.lab.id)}", esc(lab.lab.title), _coloured(counts, colour))
            )
    tests = shown_tests(view)
    for test, note in zip(tests, notes(view, tests), strict=True):
        colour = TONE_COLOURS[STATUS_TONES[test.status]]
        rows.append(
            _row(
                _coloured(esc(test.status), colour),
                f"<code>{esc(test.name)}</code>",
                f"<span style='white-space:pre-wrap'>{esc(note)}</span>",
            )
        )
    for line in probe_failures(view):
        colour = TONE_COLOURS["error"]
        rows.append(_row(_coloured("probe", colour), "", esc(_clean(view, _cut(line)))))
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
        shown.append(f"… {len(lines) - MESSAGE_LINES} more lines")
    return "\n".join(shown)


def _cut(line: str) -> str:
    return line if len(line) <= MESSAGE_LIMIT else line[: MESSAGE_LIMIT - 1] + "…"


def _first_line(value: str) -> str:
    lines = [line.strip() for line in value.splitlines() if line.strip()]
    return _cut(lines[0]) if lines else ""
