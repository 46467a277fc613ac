"""A checkpoint report as a notebook shows it: per-lab counts and per-test status, no timings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .views import TONE_COLOURS, TONE_MARKS, Tone, esc

TEST_STATUSES = ("passed", "pending", "failed", "timeout", "error")
STATUS_TONES: dict[str, Tone] = {
    "passed": "ok",
    "pending": "pending",
    "failed": "error",
    "timeout": "error",
    "error": "error",
}
MESSAGE_LIMIT = 240
"""Characters of each line of a test's message that are shown."""
MESSAGE_LINES = 8
"""Lines of a test's message that are shown (a diff's first lines, say)."""


@dataclass(frozen=True)
class ReportedTest:
    """One focused test's result."""

    lab: str
    name: str
    status: str
    message: str


@dataclass(frozen=True)
class ReportedLab:
    """One lab's tally."""

    id: str
    title: str
    passed: int
    total: int
    status: str
    optional: bool = False


@dataclass(frozen=True)
class CheckReport:
    """What a check found, or why it could not say."""

    lab: str | None
    chapter: str
    labs: tuple[ReportedLab, ...]
    tests: tuple[ReportedTest, ...]
    passed: int
    total: int
    problem: str = ""

    def counts(self, exclude: set[str] | frozenset[str] = frozenset()) -> dict[str, int]:
        """How many tests ended in each status (tests of the ``exclude`` labs left out)."""
        tests = [t for t in self.tests if t.lab not in exclude]
        return {s: sum(1 for t in tests if t.status == s) for s in TEST_STATUSES}

    def without_text(self, text: str, replacement: str) -> CheckReport:
        """The same report with ``text`` (e.g. a folder) replaced in every message."""
        if not text:
            return self
        tests = tuple(replace(t, message=t.message.replace(text, replacement)) for t in self.tests)
        return replace(self, tests=tests, problem=self.problem.replace(text, replacement))

    @property
    def text(self) -> str:
        return report_text(self)

    @property
    def html(self) -> str:
        return report_html(self)

    def _repr_html_(self) -> str:
        return self.html

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text)

    def __str__(self) -> str:
        return self.text


def failed_report(lab: str | None, problem: str) -> CheckReport:
    """A report that says why no test results are available."""
    chapter = lab.split(".")[0] if lab else ""
    return CheckReport(lab, chapter, (), (), 0, 0, problem)


def parse_report(data: object, *, lab: str | None = None) -> CheckReport:
    """Read the checkpoint's JSON report; raises ``ValueError`` on a malformed one."""
    root = _mapping(data, "report")
    labs = tuple(
        ReportedLab(
            id=_text(item, "id"),
            title=_text(item, "title"),
            passed=_count(item, "passed"),
            total=_count(item, "total"),
            status=_text(item, "status"),
            optional=item.get("optional") is True,
        )
        for item in (_mapping(v, "labs[]") for v in _list(root, "labs"))
    )
    tests = tuple(
        ReportedTest(
            lab=str(item.get("lab") or ""),
            name=_text(item, "name"),
            status=_text(item, "status"),
            message=_excerpt(item.get("message")),
        )
        for item in (_mapping(v, "tests[]") for v in _list(root, "tests"))
    )
    if lab is not None:
        labs = tuple(item for item in labs if item.id == lab)
        tests = tuple(item for item in tests if item.lab == lab)
    notes = [_first_line(p) for p in _list(root, "problems")]
    optional = {item.id for item in labs if item.optional and item.id != lab}
    counted = [t for t in tests if t.lab not in optional]
    return CheckReport(
        lab=lab,
        chapter=str(root.get("chapter", "")),
        labs=labs,
        tests=tests,
        passed=sum(1 for t in counted if t.status == "passed"),
        total=len(counted),
        problem="; ".join(n for n in notes if n),
    )


def _mapping(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{what}: expected an object")
    return value


def _list(value: Mapping[str, Any], key: str) -> Sequence[object]:
    items = value.get(key, [])
    if not isinstance(items, list):
        raise ValueError(f"{key}: expected a list")
    return items


def _text(value: Mapping[str, Any], key: str) -> str:
    item = value.get(key)
    if item is None:
        raise ValueError(f"{key}: missing")
    return str(item)


def _count(value: Mapping[str, Any], key: str) -> int:
    item = value.get(key)
    if isinstance(item, bool) or not isinstance(item, int) or item < 0:
        raise ValueError(f"{key}: expected a count, got {item!r}")
    return item


def _excerpt(value: object) -> str:
    """A message's first lines, each cut to ``MESSAGE_LIMIT`` characters."""
    if value is None:
        return ""
    lines = [line.rstrip() for line in str(value).splitlines() if line.strip()]
    shown = [_cut(line) for line in lines[:MESSAGE_LINES]]
    if len(lines) > MESSAGE_LINES:
        shown.append(f"… {len(lines) - MESSAGE_LINES} more lines")
    return "\n".join(shown)


def _cut(line: str) -> str:
    return line if len(line) <= MESSAGE_LIMIT else line[: MESSAGE_LIMIT - 1] + "…"


def _first_line(value: object) -> str:
    if value is None:
        return ""
    lines = [line.strip() for line in str(value).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    return first if len(first) <= MESSAGE_LIMIT else first[: MESSAGE_LIMIT - 1] + "…"


# --------------------------------------------------------------------------- rendering


def headline(report: CheckReport) -> str:
    """One line: what was checked and how many tests passed."""
    if report.lab is not None:
        titles = [lab.title for lab in report.labs]
        scope = f"Lab {report.lab}" + (f" · {titles[0]}" if titles and titles[0] else "")
    else:
        scope = f"Chapter {report.chapter}" if report.chapter else "Chapter"
    if report.problem:
        return f"{scope}: no result — {report.problem}"
    if report.total == 0:
        return f"{scope}: no focused tests found"
    optional = {lab.id for lab in report.labs if lab.optional and lab.id != report.lab}
    counts = report.counts(exclude=optional)
    others = ", ".join(f"{counts[s]} {s}" for s in TEST_STATUSES if s != "passed" and counts[s])
    return f"{scope}: {report.passed}/{report.total} passed" + (f" ({others})" if others else "")


def overall_tone(report: CheckReport) -> Tone:
    """ok when every test passed; pending when nothing failed but some are pending."""
    if report.problem or report.total == 0:
        return "error"
    optional = {lab.id for lab in report.labs if lab.optional and lab.id != report.lab}
    counts = report.counts(exclude=optional)
    if counts["passed"] == report.total:
        return "ok"
    if counts["failed"] + counts["timeout"] + counts["error"] == 0:
        return "pending"
    return "error"


def shown_tests(report: CheckReport) -> tuple[ReportedTest, ...]:
    """A lab check lists every test; a chapter check only those that failed (not pending)."""
    if report.lab is not None:
        return report.tests
    optional = {lab.id for lab in report.labs if lab.optional}
    return tuple(
        test
        for test in report.tests
        if test.status not in ("passed", "pending") and test.lab not in optional
    )


def notes(tests: Sequence[ReportedTest]) -> list[str]:
    """Each test's message, or '' where it passed or repeats the message just shown."""
    shown: list[str] = []
    previous = ""
    for test in tests:
        note = test.message if test.status != "passed" and test.message != previous else ""
        previous = test.message if test.status != "passed" else ""
        shown.append(note)
    return shown


def report_text(report: CheckReport) -> str:
    """The report as plain text: headline, labs (chapter checks), then each test."""
    lines = [f"{TONE_MARKS[overall_tone(report)]} {headline(report)}"]
    if report.lab is None:
        for lab in report.labs:
            extra = " (optional, not counted)" if lab.optional else ""
            lines.append(
                f"  Lab {lab.id} {lab.title}: {lab.passed}/{lab.total} {lab.status}{extra}"
            )
    tests = shown_tests(report)
    for test, note in zip(tests, notes(tests), strict=True):
        mark = TONE_MARKS[STATUS_TONES.get(test.status, "error")]
        line = f"  {mark} {test.status:<7} {test.name}"
        if note:
            first, *rest = note.splitlines()
            line += f" — {first}" + "".join(f"\n{' ' * 12}{more}" for more in rest)
        lines.append(line)
    return "\n".join(lines)


def report_html(report: CheckReport) -> str:
    """The report as an HTML block with coloured statuses."""
    tone = overall_tone(report)
    parts = [
        f"<div style='color:{TONE_COLOURS[tone]}'><b>{TONE_MARKS[tone]} "
        f"{esc(headline(report))}</b></div>"
    ]
    rows: list[str] = []
    if report.lab is None:
        for lab in report.labs:
            rows.append(
                _row(
                    f"Lab {esc(lab.id)}",
                    esc(lab.title),
                    _coloured(
                        f"{lab.passed}/{lab.total} {esc(lab.status)}", TONE_COLOURS[_lab_tone(lab)]
                    ),
                )
            )
    tests = shown_tests(report)
    for test, note in zip(tests, notes(tests), strict=True):
        colour = TONE_COLOURS[STATUS_TONES.get(test.status, "error")]
        rows.append(
            _row(
                _coloured(esc(test.status), colour),
                f"<code>{esc(test.name)}</code>",
                f"<span style='white-space:pre-wrap'>{esc(note)}</span>",
            )
        )
    if rows:
        parts.append(f"<table>{''.join(rows)}</table>")
    return "".join(parts)


def _row(*cells: str) -> str:
    """A table row whose cells are left-aligned (notebook front ends centre or right-align)."""
    return "<tr>" + "".join(f"<td style='text-align:left'>{cell}</td>" for cell in cells) + "</tr>"


def _coloured(text: str, colour: str) -> str:
    return f"<span style='color:{colour}'>{text}</span>"


def _lab_tone(lab: ReportedLab) -> Tone:
    if lab.total and lab.passed == lab.total:
        return "ok"
    return "pending" if lab.status == "pending" else "error"
