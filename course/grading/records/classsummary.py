"""The class summary an instructor teaches from: per lab, rule and case, who failed, most first.

Built from the graded rows (each lab's ``probes.failing``: every disagreeing case id) and the
run's probe sets (a case's rule, input and replay). A lab not started (``pending``: its
functions still the starter's) is counted apart and adds no failed case, so the rules and cases
most failed are what was misunderstood, not what nobody wrote; nor does a lab per-lab credit
passed through others' (its cases failed in the labs it builds on, counted where those are
written). ``ClassSummary.to_json`` is
gradebook.json's ``summary``; ``summary_html`` a self-contained page (inline SVG, no script,
nothing fetched, the long tables folded), with the learners' names or without them, to project
in class: the assignment's own cases (``@audit``) count in their rules only, never listed with
their input, as learners never see them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from string import Formatter
from typing import Any, TypeVar

from ...harness.manifest import Lab
from ...locale import code_spans, current_edition, unquoted
from ...locale import gettext as _
from ...sandboxed.probecases import case_label, shown_input
from ...sandboxed.status import Status
from ..verdict.probes import AUDIT_MARK, ProbeSet
from .gradebook import Grade

CASES_PLOTTED = 15  # the most-failed cases the page draws (every one is in its table)


@dataclass(frozen=True)
class LabCount:
    """One lab across the class: how many learners were graded on it, how many started it
    (it is not ``pending``) and how many passed."""

    lab: str
    passed: int
    graded: int
    started: int = 0

    @property
    def failed(self) -> int:
        """Started and not passed: what the class got wrong."""
        return self.started - self.passed

    @property
    def not_started(self) -> int:
        return self.graded - self.started

    def to_json(self) -> dict[str, Any]:
        counts = {"passed": self.passed, "failed": self.failed, "not_started": self.not_started}
        return {"lab": self.lab, **counts, "graded": self.graded}


@dataclass(frozen=True)
class Failure:
    """A rule or a case, how many learners failed it, and the first of them as an example."""

    key: str  # a case id (``11.3#007``) or a rule (``build_context: a repeated id``)
    lab: str
    learners: int
    example: str
    rule: str = ""  # a case's rule
    inputs: tuple[str, ...] = ()  # a case's input, as a failure describes it
    replay: str = ""  # the command that replays a case

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"lab": self.lab, "learners": self.learners}
        data |= {"example": self.example}
        if self.rule:
            data |= {"rule": self.rule, "input": list(self.inputs), "replay": self.replay}
        return data


@dataclass(frozen=True)
class ClassSummary:
    """The whole class: each lab's passes, and every rule and case failed, most failed first."""

    learners: int  # rows graded (skipped rows left out)
    labs: tuple[LabCount, ...]
    rules: tuple[Failure, ...]
    cases: tuple[Failure, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "learners": self.learners,
            "labs": [lab.to_json() for lab in self.labs],
            "rules": [{"rule": rule.key, **rule.to_json()} for rule in self.rules],
            "cases": [{"case": case.key, **case.to_json()} for case in self.cases],
        }


BLANK = "…"
"""What a rule shows where its cases fill in a value (``build_context: … interactions``)."""


def rule_of(case: Mapping[str, Any]) -> str:
    """A case's rule: its function and its label, in the current edition, every value its cases
    fill in shown as ``BLANK``."""
    label = str(case.get("label", case["id"]))
    names = {
        name for text in (label, _(label)) for _, name, _, _ in Formatter().parse(text) if name
    }
    return case_label({**case, "label_args": dict.fromkeys(names, BLANK)})


Known = dict[str, tuple[str, tuple[str, ...], str]]
AUDIT_SEPARATOR = "@"
"""In a failing case's id, what starts its audit mark (``@audit``; ``@SEED`` in a gradebook
made before issue 53): no shipped case's id holds it."""


def _cases_by_id(probes: ProbeSet | None, audit: ProbeSet | None) -> Known:
    """Each case id a row may name: (its rule, its input lines, its replay command)."""
    found: Known = {}
    sets = [(probes, [""])]
    if audit is not None:  # a row of a gradebook made before issue 53 says ``@SEED``
        sets.append((audit, [AUDIT_MARK, f"{AUDIT_SEPARATOR}{audit.seed}"]))
    for probe_set, marks in sets:
        if probe_set is None:
            continue
        for case in probe_set.cases:
            case_id = str(case["id"])
            inputs = tuple(probe_set.inputs.get(case_id, ()))
            shown = tuple(shown_input(line) for line in inputs)
            for mark in marks:
                found[case_id + mark] = (rule_of(case), shown, probe_set.replay(case_id))
    return found


Key = TypeVar("Key", str, tuple[str, str])


def _most_first(counts: Mapping[Key, list[str]]) -> list[Key]:
    """Keys by how many learners they hold, most first; ties in key order."""
    return sorted(counts, key=lambda key: (-len(counts[key]), key))


def class_summary(
    labs: Sequence[Lab],
    grades: Sequence[Grade],
    probes: ProbeSet | None = None,
    audit: ProbeSet | None = None,
) -> ClassSummary:
    """The summary of ``grades`` (rows skipped count nowhere); a failing case no probe set
    holds keeps its id as its rule."""
    graded = [grade for grade in grades if grade.graded]
    known = _cases_by_id(probes, audit)
    per_case: dict[str, list[str]] = {}
    per_rule: dict[tuple[str, str], list[str]] = {}  # (the rule, its lab): a lab's own mistake
    lab_of: dict[str, str] = {}
    passed = dict.fromkeys((lab.id for lab in labs), 0)
    sat = dict.fromkeys((lab.id for lab in labs), 0)
    started = dict.fromkeys((lab.id for lab in labs), 0)
    for grade in graded:
        for lab in grade.labs:
            if lab.id not in passed:
                continue
            sat[lab.id] += 1
            passed[lab.id] += lab.status == Status.PASSED
            if lab.status == Status.PENDING:
                continue  # not started: nothing misunderstood, no case counted
            started[lab.id] += 1
            if lab.credit and lab.credit.get("through"):
                continue  # its cases fail through the labs it builds on: counted in their rows
            failing = (lab.probes or {}).get("failing", [])
            rules_here: set[str] = set()
            for case_id in dict.fromkeys(str(i) for i in failing):
                drawn = known.get(case_id)
                rule = drawn[0] if drawn else case_id.partition(AUDIT_SEPARATOR)[0]
                if AUDIT_SEPARATOR not in case_id:
                    per_case.setdefault(case_id, []).append(grade.learner)
                lab_of[case_id] = lab.id
                if rule not in rules_here:
                    rules_here.add(rule)
                    per_rule.setdefault((rule, lab.id), []).append(grade.learner)

    def case_failure(case_id: str) -> Failure:
        rule, inputs, replay = known.get(case_id, (case_id, (), ""))
        learners = per_case[case_id]
        return Failure(case_id, lab_of[case_id], len(learners), learners[0], rule, inputs, replay)

    rules = tuple(
        Failure(rule, lab, len(per_rule[rule, lab]), per_rule[rule, lab][0])
        for rule, lab in _most_first(per_rule)
    )
    return ClassSummary(
        learners=len(graded),
        labs=tuple(LabCount(lab.id, passed[lab.id], sat[lab.id], started[lab.id]) for lab in labs),
        rules=rules,
        cases=tuple(case_failure(case_id) for case_id in _most_first(per_case)),
    )


# --------------------------------------------------------------------------- the page

BAR_WIDTH = 420  # the longest bar, in SVG units
ROW_HEIGHT = 28
LABEL_WIDTH = 400  # room for a rule's name (cut at LABEL_CHARACTERS, whole in its tooltip)
LABEL_CHARACTERS = 52
RULES_PLOTTED = 15  # the most-failed rules the page draws (every one is in its table)


def _cut(label: str) -> str:
    """A bar's label, cut to fit beside its bar (the whole text is in the bar's tooltip)."""
    return label if len(label) <= LABEL_CHARACTERS else label[: LABEL_CHARACTERS - 1] + BLANK


@dataclass(frozen=True)
class Bar:
    """One bar of a plot: its label, its length (``value`` out of ``total``), the number shown
    beside it and its tooltip. An SVG text shows no markup: code spans lose their backticks."""

    label: str
    value: int
    total: int
    number: str
    said: str


def _bars(name: str, title: str, bars: Sequence[Bar]) -> str:
    """A horizontal bar chart as inline SVG."""
    height = ROW_HEIGHT * len(bars) + 10
    width = LABEL_WIDTH + BAR_WIDTH + 140
    parts = [
        f'<svg id="{name}" class="plot" role="img" aria-label="{escape(title)}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        'xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for index, bar in enumerate(bars):
        y = 5 + index * ROW_HEIGHT
        length = round(BAR_WIDTH * bar.value / bar.total) if bar.total else 0
        parts += [
            f'<g class="bar" data-key="{escape(bar.label)}" data-value="{bar.value}">',
            f"<title>{escape(unquoted(bar.said))}</title>",
            f'<text x="{LABEL_WIDTH - 8}" y="{y + 17}" text-anchor="end">'
            f"{escape(_cut(unquoted(bar.label)))}</text>",
            f'<rect x="{LABEL_WIDTH}" y="{y}" width="{BAR_WIDTH}" height="{ROW_HEIGHT - 6}" '
            'class="track"/>',
            f'<rect x="{LABEL_WIDTH}" y="{y}" width="{length}" height="{ROW_HEIGHT - 6}" '
            'class="fill"/>',
            f'<text x="{LABEL_WIDTH + BAR_WIDTH + 8}" y="{y + 17}">{escape(bar.number)}</text>',
            "</g>",
        ]
    parts.append("</svg>")
    return "\n".join(parts)


class Prose(str):
    """A table cell of the kit's text: its Markdown code spans shown as ``<code>``."""


def _cell(cell: str) -> str:
    """A cell's HTML: escaped; prose with its code as code; several lines kept as written."""
    shown = code_spans(cell) if isinstance(cell, Prose) else escape(cell)
    return f"<td><pre>{shown}</pre></td>" if "\n" in cell else f"<td>{shown}</td>"


def _table(name: str, head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table of text cells (escaped here); a ``Prose`` cell's code spans are ``<code>``."""
    cells = "".join(f"<th>{escape(cell)}</th>" for cell in head)
    lines = [f'<table id="{name}"><thead><tr>{cells}</tr></thead><tbody>']
    for row in rows:
        lines.append(f"<tr>{''.join(_cell(cell) for cell in row)}</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _folded(title: str, content: str) -> str:
    """``content`` under a heading that opens it (closed at first: a long table)."""
    return f"<details>\n<summary><h2>{escape(title)}</h2></summary>\n{content}\n</details>"


STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 80em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; display: inline; }
summary { margin-top: 2em; cursor: pointer; }
.plot text { font-size: 13px; fill: #222; }
.plot .track { fill: #eee; } .plot .fill { fill: #3b7dd8; }
#most-failed .fill { fill: #d8573b; }
table { border-collapse: collapse; margin-top: 1em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
pre { margin: 0; white-space: pre-wrap; font-size: 0.9em; }
"""


def summary_html(chapter: str, summary: ClassSummary, names: bool = True) -> str:
    """The page: two plots (pass rates per lab; the rules most failed), the labs' counts, then
    the rules and cases failed in folded tables; ``names``: with a learner of each as an
    example (without: a page to project in class)."""
    title = _("Chapter {chapter}: the class at a glance").format(chapter=chapter)
    graded = _("{count} learner(s) graded").format(count=summary.learners)
    lab_bars = [
        Bar(
            _("Lab {lab}").format(lab=lab.lab),
            lab.passed,
            lab.graded,
            _("{passed}/{graded} passed").format(passed=lab.passed, graded=lab.graded),
            _("Lab {lab}: {passed} of {graded} passed").format(
                lab=lab.lab, passed=lab.passed, graded=lab.graded
            ),
        )
        for lab in summary.labs
    ]
    rule_bars = [
        Bar(
            rule.key,
            rule.learners,
            summary.learners,
            _("{count} failed").format(count=rule.learners),
            _("{rule}: {count} learner(s) failed it").format(rule=rule.key, count=rule.learners),
        )
        for rule in summary.rules[:RULES_PLOTTED]
    ]
    pass_title = _("Pass rate per lab")
    rules_plot = _("The rules most failed (labs not started left out)")
    lab_rows = [
        [lab.lab, str(lab.passed), str(lab.failed), str(lab.not_started), str(lab.graded)]
        for lab in summary.labs
    ]
    example = [_("for example")] if names else []
    rule_rows = [
        [Prose(rule.key), rule.lab, str(rule.learners), *([rule.example] if names else [])]
        for rule in summary.rules
    ]
    case_rows = [
        [case.key, Prose(case.rule), str(case.learners), "\n".join(case.inputs)]
        + ([case.example] if names else [])
        + [case.replay]
        for case in summary.cases
    ]
    nothing = _("No learner failed a probe case of a lab they started.")
    unnamed = _("(without names, to project in class)")
    labs_title = _("Labs")
    rules_title = _("Rules failed, most first ({count})").format(count=len(summary.rules))
    failed_title = _("Cases failed, most first ({count})").format(count=len(summary.cases))
    lab_head = [_("lab"), _("passed"), _("failed"), _("not started"), _("graded")]
    case_head = [_("case"), _("rule"), _("learners"), _("input"), *example, _("replay")]
    body = [
        f"<h1>{escape(title)}</h1>",
        f"<p>{escape(graded)}</p>",
        *([] if names else [f"<p>{escape(unnamed)}</p>"]),
        f"<h2>{escape(pass_title)}</h2>",
        _bars("pass-rates", pass_title, lab_bars),
        f"<h2>{escape(rules_plot)}</h2>",
        _bars("most-failed", rules_plot, rule_bars) if rule_bars else f"<p>{escape(nothing)}</p>",
        f"<h2>{escape(labs_title)}</h2>",
        _table("labs", lab_head, lab_rows),
        _folded(
            rules_title,
            _table("rules", [_("rule"), _("lab"), _("learners"), *example], rule_rows),
        ),
        _folded(failed_title, _table("cases", case_head, case_rows)),
    ]
    head = (
        f'<!DOCTYPE html>\n<html lang="{current_edition()}">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
    )
    return head + "\n".join(body) + "\n</body>\n</html>\n"
