"""A lab's verdict as a notebook shows it: the checkpoint's own result, rendered, no timings.

Nothing here counts or decides: every number is the result's own and a lab's text is the
terminal's (``harness/report.py``), so the notebook, the checkpoint and the gradebook agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..harness.report import (
    counts,
    counts_width,
    credit_details,
    lab_counts,
    lab_line,
    probe_details,
    render_lab,
    render_not_run,
    render_printed,
)
from ..harness.results import CheckpointResult, LabResult, TestOutcome
from ..locale import gettext as _
from ..locale import ngettext
from ..sandboxed.columns import columns, pad
from ..sandboxed.probecases import first_line
from ..sandboxed.status import HTML_COLOURS, TONE_MARKS, Status, Tone, worst
from ..sandboxed.untrusted import clip
from ..sandboxed.verdicts import readable
from .views import Shown, esc, row

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
        labs = self.result.labs if self.result is not None else ()
        return tuple(lab for lab in labs if self.lab in (None, lab.lab.id))

    @property
    def counted(self) -> tuple[LabResult, ...]:
        """The labs whose counts the headline adds up (optional ones only when asked for)."""
        return tuple(lab for lab in self.labs if self.lab is not None or not lab.lab.optional)

    def title(self, lab: LabResult) -> str:
        return self.titles.get(lab.lab.id, lab.lab.title)

    def clean(self, text: str) -> str:
        old, new = self.replace
        return text.replace(old, new) if old else text

    @property
    def tone(self) -> Tone:
        """ok when every lab counted passed; pending when nothing is broken but some are."""
        if self.problem or self.result is None or self.result.problems or not self.counted:
            return "error"
        return worst(lab.status for lab in self.counted).tone

    @property
    def headline(self) -> str:
        """One line: what was checked and its verdict."""
        labs, result = self.labs, self.result
        if self.lab is None:
            chapter = result.chapter if result is not None else ""
            scope = _("Chapter {chapter}").format(chapter=chapter).strip()
        elif labs and self.title(labs[0]):
            scope = _("Lab {lab} · {title}").format(lab=self.lab, title=self.title(labs[0]))
        else:
            scope = _("Lab {lab}").format(lab=self.lab)
        problems = [self.problem] if self.problem else []
        problems += list(result.problems) if result is not None else []
        if problems:
            problem = self.clean(first_line(problems[0], MESSAGE_LIMIT))
            return _("{scope}: no result — {problem}").format(scope=scope, problem=problem)
        counted = self.counted
        if not counted:
            return _("{scope}: no focused tests found").format(scope=scope)
        if self.lab is not None:
            return lab_line(counted[0], self.title(counted[0]), title_width=0)
        assert result is not None  # a view with counted labs has its result
        probed = any(lab.probes is not None for lab in counted)  # the chapter's required labs
        shown = counts(result.passed, result.total, result.agreed, result.cases if probed else None)
        statuses = {lab.status for lab in counted}
        words = _(", ").join(s.label for s in Status if s != Status.PASSED and s in statuses)
        said = _("{scope}: {counts}  {statuses}")
        return said.format(scope=scope, counts=shown, statuses=words or Status.PASSED.label)

    @property
    def tests(self) -> tuple[TestOutcome, ...]:
        """A lab check lists every test; a chapter check only those that are broken (HTML)."""
        if self.lab is not None:
            return tuple(test for lab in self.labs for test in lab.tests)
        return tuple(test for lab in self.counted for test in lab.tests if test.status.broken)

    def notes(self, tests: Sequence[TestOutcome]) -> list[str]:
        """Each test's message, or '' where it passed or repeats the message just shown; then
        what a broken test printed (``report.render_printed``)."""
        shown: list[str] = []
        previous = ""
        for test in tests:
            passed = test.status == Status.PASSED
            message = self.clean(_excerpt(readable(test.message)))
            printed = [self.clean(clip(line, MESSAGE_LIMIT)) for line in render_printed(test)]
            said = [message] if not passed and message != previous else []
            shown.append("\n".join(said + printed))
            previous = message if not passed else ""
        return shown

    @property
    def text(self) -> str:
        """The headline, then a chapter check's labs as the terminal shows them, or a lab
        check's every test and its disagreeing probe cases."""
        lines = [f"{TONE_MARKS[self.tone]} {self.headline}"]
        labs = self.labs
        if self.lab is None:
            titles = max((columns(self.title(lab)) for lab in labs), default=0)
            width = counts_width(labs)
            for lab in labs:
                shown = render_lab(lab, titles, counts_width=width, title=self.title(lab))
                lines += shown.splitlines()
            if self.result is not None and labs:
                lines += render_not_run(self.result)
        else:
            tests = self.tests
            for test, note in zip(tests, self.notes(tests), strict=True):
                line = f"{test.status.mark} {pad(test.status.label, 7)} {test.name}"
                if note:
                    first, *rest = note.splitlines()
                    line += f" — {first}" + "".join(f"\n{' ' * 12}{more}" for more in rest)
                lines.append(line)
            lines += [line for lab in labs for line in probe_details(lab)]
            lines += [line for lab in labs for line in credit_details(lab)]
        return self.clean("\n".join(lines[:1] + [f"  {line}" for line in lines[1:]]))

    @property
    def html(self) -> str:
        """An HTML block with coloured statuses."""
        tone = self.tone
        head = f"<div style='color:{HTML_COLOURS[tone]}'><b>{TONE_MARKS[tone]} {esc(self.headline)}"
        head += "</b></div>"
        rows: list[str] = []
        for lab in self.labs if self.lab is None else ():
            shown = _coloured(f"{lab_counts(lab)}  {lab.status.label}", lab.status.tone)
            rows.append(
                row(esc(_("Lab {lab}").format(lab=lab.lab.id)), esc(self.title(lab)), shown)
            )
        tests = self.tests
        for test, note in zip(tests, self.notes(tests), strict=True):
            status = _coloured(test.status.label, test.status.tone)
            rows.append(row(status, f"<code>{esc(test.name)}</code>", _pre(note)))
        for lab in self.labs:
            probes = lab.probes
            if probes is None or probes.agree or probes.status == Status.PENDING:
                continue
            for failure in probes.failures:
                said = _("Lab {lab} probe: {failure}").format(lab=lab.lab.id, failure=failure)
                shown = "\n".join(
                    self.clean(clip(part, MESSAGE_LIMIT)) for part in said.splitlines()
                )
                rows.append(row(_coloured(_("probe"), "error"), "", _pre(shown)))
        for lab in self.labs:
            if lab.credit is not None:
                shown = "\n".join(line.strip() for line in credit_details(lab))
                said = _("Lab {lab}").format(lab=lab.lab.id)
                rows.append(
                    row(_coloured(lab.status.label, lab.status.tone), esc(said), _pre(shown))
                )
        return head + (f"<table>{''.join(rows)}</table>" if rows else "")


def _coloured(text: str, tone: Tone) -> str:
    return f"<span style='color:{HTML_COLOURS[tone]}'>{esc(text)}</span>"


def _pre(text: str) -> str:
    return f"<span style='white-space:pre-wrap'>{esc(text)}</span>"


def _excerpt(value: str) -> str:
    """A message's first lines, each cut to ``MESSAGE_LIMIT`` characters."""
    lines = [line.rstrip() for line in value.splitlines() if line.strip()]
    shown = [clip(line, MESSAGE_LIMIT) for line in lines[:MESSAGE_LINES]]
    if len(lines) > MESSAGE_LINES:
        more = len(lines) - MESSAGE_LINES
        shown.append(
            ngettext("… {count} more line", "… {count} more lines", more).format(count=more)
        )
    return "\n".join(shown)
