"""The Chinese edition's notebooks show no English prose: stored outputs and rendered views.

Every stored output of every ``notebooks/zh`` notebook (streams, ``text/plain``, and
``text/html`` read as text), and every display helper rendered in the zh edition, must have no
word ``course.locale.english.english_words`` reads as English. Code (identifiers, ids, paths,
``backticked`` text) and the glossary's allowed words pass by that function's own rules.

What is left out, and why, precisely:

- **Data values**: every string value of the chapter's fixture (``course.fixtures``: the nine
  entries, the continuation, both summaries, the system prompt), each message as the display
  shows it (``show.content_line``, also cut to the widths the tables cut it to), the summary
  messages the reference's ``summary_message`` renders from them, the record's and the
  summary's field names (the rows of ``show.record`` and ``show.summary``, code names), and the
  same for the real Pi session of 11-7 (its entries, its compaction's summary); entry ids are
  among these values. They are the learner's data, not the kit's words: the fixture's
  summaries and the Pi session are English.
- **The reference's own output**: the ``reason``/``status`` values the lab functions return
  (``trimmed``, ``overflow``), Python values printed by a cell (a line that is a Python
  literal; ``True``/``False``/``None``). A refusal the reference raised is shown in the
  reader's edition (``course.locale.refusals``), so it is checked like the kit's own words.
- **A probe failure's case data**: the input lines of a case the failure names (the case's
  arguments, as the shipped probe data ``starters/11-probes.json`` holds them) and the field of
  the answer that differs (the ``reason`` before ``应为``): the case's data and field names.
- **The Pi importer's kind ids** (``course.interop``): each report item's ``kind``
  (``converted``, ``fields``, ``summary``, ``thinking``…, the rows of the report's table), and
  the ``split_turn`` option values (``turn-start``, ``next-user``), which a cell prints as
  labels. The strict import's error and each item's message are the kit's words and must be
  Chinese; only the Pi session's own values inside them (as above) are left out.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import html
import json
import re
import sys
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any, get_args

import nbformat
import pytest
from notebook_support import EDITIONS, REPO, create_workspace

from course import fixtures
from course.compaction import latest_compaction, summary_message
from course.curricula.ch11 import show
from course.display.notebook import (
    OpenedChapter,
    PendingCells,
    folder_edition,
    kernel_edition,
    open_chapter,
    pending_note,
)
from course.display.verdict import VerdictView
from course.harness.editions import in_edition
from course.harness.manifest import load_manifest
from course.harness.results import CheckpointResult, LabResult, ProbeSummary, TestOutcome
from course.labs import LabNotImplemented
from course.locale import current_edition
from course.locale.english import english_words
from course.locale.typography import problems, rendered_problems
from course.sandboxed.marker import read_workspace
from course.sandboxed.probecases import NAMED_LINE
from course.sandboxed.status import Status
from course.summary import CompactionEntry, CompactionSummary, parse_summary
from course.tools.notebooks import parse_source

MANIFEST = load_manifest("11")
ZH_NOTEBOOKS = sorted(EDITIONS["zh"].glob("*.ipynb"))
CUT_WIDTHS = (50, 60, 70, 90)
"""The widths ``show`` cuts a cell's text to (``_short``): a cut value ends in ``…``."""
RETURNED_VALUES = ("trimmed", "overflow")
"""``reason`` and ``status`` values the lab functions return (code names shown as data)."""
PYTHON_CONSTANTS = ("True", "False", "None")


# --------------------------------------------------------------------------- the data


def strings(value: Any) -> Iterator[str]:
    """Every string inside ``value`` (dicts, lists, dataclasses)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from strings(getattr(value, field.name))


def message_texts(values: Iterable[Any]) -> Iterator[str]:
    """Each message's one-line form, as the display shows it, and its cut forms."""
    for value in values:
        message = value.get("message") if isinstance(value, dict) else None
        if isinstance(message, dict):
            line = show.content_line(message)
            yield line
            yield from (line[: width - 1] + "…" for width in CUT_WIDTHS if len(line) > width)


def summary_texts(summary: Any) -> Iterator[str]:
    """The lines of the summary message the reference renders, and the joined lists."""
    lines = str(summary_message(summary)["content"]).splitlines()
    yield from lines
    yield from (line.rstrip(":") for line in lines if line.endswith(":"))  # a heading's name
    for field in dataclasses.fields(summary):
        items = getattr(summary, field.name)
        if isinstance(items, list):
            yield "; ".join(str(item) for item in items)


@cache
def chapter_data() -> tuple[str, ...]:
    """The chapter fixture's strings, as they can appear in an output."""
    values = [
        fixtures.chapter_path_json(),
        fixtures.continuation_json(),
        fixtures.compact_1_json(),
        copy.deepcopy(fixtures.COMPACT_2_SUMMARY),
        fixtures.SYSTEM_PROMPT,
    ]
    found = set(strings(values))
    for record in (CompactionSummary, CompactionEntry):
        found |= {field.name for field in dataclasses.fields(record)}
    found |= set(message_texts(fixtures.chapter_path_json() + fixtures.continuation_json()))
    for entry_id, summary in (
        ("compact-1", fixtures.COMPACT_1_SUMMARY),
        ("compact-2", fixtures.COMPACT_2_SUMMARY),
    ):
        found |= set(summary_texts(parse_summary(copy.deepcopy(summary), entry_id=entry_id)))
    return tuple(found)


@cache
def pi_session_data() -> tuple[str, ...]:
    """The real Pi session's strings (11-7), and the kind ids and options of its import."""
    from course.interop import KINDS, import_pi_session, pi_session_files
    from course.interop.pi_report import SplitTurn
    from course.session import entry_to_json

    damaged = pi_session_files()["damaged-line-session"]
    imported = import_pi_session(damaged, repair="synthesize")
    found = set(get_args(SplitTurn))  # the option values a cell prints as labels
    found |= set(KINDS)  # the report's kind ids: its table's rows
    values = [entry_to_json(entry) for entry in imported.entries]
    found |= set(strings(values))
    found |= set(message_texts(values))
    latest = latest_compaction(imported.entries)
    if latest is not None:
        found |= set(summary_texts(imported.entries[latest].summary))
    return tuple(found)


# --------------------------------------------------------------------------- what is checked


def without(text: str, removed: Iterable[str]) -> str:
    """``text`` with every ``removed`` string taken out where it stands as a whole."""
    for value in sorted(set(removed), key=len, reverse=True):
        if value and value in text:
            text = re.sub(rf"(?<![\w-]){re.escape(value)}(?![\w-])", " ", text)
    return text


def is_python_value(text: str) -> bool:
    try:
        ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    return True


SHIPPED_PROBES = json.loads((REPO / "starters" / "11-probes.json").read_text(encoding="utf-8"))
PROBE_CASE = re.compile(r"[（(](\d+\.\w+#[\w-]+)[）)]")
ANSWER_FIELD = re.compile(r"([\w.\[\]]+)：(?:应为|应有|缺失|不应出现)")


def probe_case_data(text: str) -> list[str]:
    """What a probe failure shows of the case and of the answers: the input lines of every
    case it names (as the shipped probe data holds them) and the answer's field that differs."""
    cases = PROBE_CASE.findall(text)
    lines = [line.strip() for case in cases for line in SHIPPED_PROBES["inputs"].get(case, ())]
    return lines + [shown_in_zh(line) for line in lines] + ANSWER_FIELD.findall(text)


def shown_in_zh(line: str) -> str:
    """An input line as a zh output shows it: an argument's name with a full-width colon."""
    named = NAMED_LINE.fullmatch(line)
    return f"{named[1]}\uff1a{named[2]}" if named else line


def english_in(text: str, data: Iterable[str], html_text: str = "") -> list[str]:
    """The English words left in ``text`` (and ``html_text``) once the documented parts go."""
    removed = [
        *probe_case_data(text),
        *probe_case_data(html_text),
        *data,
        *RETURNED_VALUES,
        *PYTHON_CONSTANTS,
    ]
    words: list[str] = []
    for body in (text, html_text):
        if not body or is_python_value(body):
            continue
        lines = [line for line in body.splitlines() if not is_python_value(line)]
        words += english_words(without("\n".join(lines), removed))
    return words


def html_as_text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


CODE_ELEMENT = re.compile(r"<code>(.*?)</code>", re.DOTALL)


def code_in(output: Any) -> list[str]:
    """What an output's HTML shows as code (a message's code spans, their backticks gone)."""
    markup = str(output.get("data", {}).get("text/html", ""))
    return [html.unescape(code) for code in CODE_ELEMENT.findall(markup)]


def output_texts(output: Any) -> tuple[str, str]:
    """An output's plain text and its HTML read as text."""
    if output.get("output_type") == "stream":
        return str(output.get("text", "")), ""
    data = output.get("data", {})
    plain, markup = data.get("text/plain", ""), data.get("text/html", "")
    return str(plain), html_as_text(str(markup)) if markup else ""


def label(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@pytest.mark.parametrize("path", ZH_NOTEBOOKS, ids=label)
def test_every_stored_output_of_the_zh_notebooks_is_chinese(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    data = chapter_data() + (pi_session_data() if "real-session" in path.name else ())
    found = []
    for index, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            continue
        for output in cell.outputs:
            plain, markup = output_texts(output)
            words = english_in(plain, (*data, *code_in(output)), markup)
            if words:
                found.append(f"cell {index}: {sorted(set(words))}\n{plain}")
    assert found == [], "\n\n".join(found)


# --------------------------------------------------------------------------- rendered views


@pytest.fixture
def isolated_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``open_chapter`` registers ``pi_course``: put back what was there."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    saved = {n: m for n, m in sys.modules.items() if n.split(".")[0] == "pi_course"}
    yield
    for name in [n for n in sys.modules if n.split(".")[0] == "pi_course"]:
        del sys.modules[name]
    sys.modules.update(saved)


def chapter_views() -> list[Any]:
    """Every display helper, rendered with the reference over the chapter's data."""
    from course.compaction import create_compaction_entry
    from course.context import budget_report, build_context
    from course.groups import group_interactions
    from course.session import parse_session_entry

    path = [parse_session_entry(value) for value in fixtures.chapter_path_json()]
    groups = group_interactions(path)
    estimate = fixtures.chapter_estimator
    result = build_context(path, **fixtures.CHAPTER_BUDGET.options(), estimate_tokens=estimate)
    record = create_compaction_entry(
        path,
        id="compact-1",
        timestamp=100,
        summary=fixtures.COMPACT_1_SUMMARY,
        first_kept_entry_id="u2",
        tokens_before=29,
    )
    many = list(groups) * 20
    return [
        show.entries(path, estimate),
        show.entries([*path, record]),
        show.groups(groups, estimate),
        show.groups([]),
        show.deductions(result.tokens),
        show.projection(result, groups),
        show.bars(many, result.kept_entry_ids),
        show.bars(groups, ["u3", "a3"]),
        show.messages(result.messages),
        show.record(record),
        show.summary(fixtures.COMPACT_1_SUMMARY),
        show.chain([*path, record]),
        show.refused(ValueError("x")),
        show.accepted_wrongly("summary.files"),
        show.accepted("u3", record),
        show.outcomes([("30", "a"), ("31", "a"), ("32", "b")]),
        show.budget_rows(budget_report(groups, estimate_tokens=estimate, available=10)),
        show.interactions(groups, estimate),
        show.interactions([], estimate),
        show.note(show.id_list([f"L{n}" for n in range(40)])),
        show.note(show.id_list([])),
        show.note(show.store_holds(9)),
        show.note(show.path_counts(path, path)),
        show.note(show.sections(["Goal:"])),
        show.note(show.kept_from("u2", result)),
    ]


def verdict_views() -> list[VerdictView]:
    """Verdicts of every kind: passed, pending, failed with probes, a problem, optional."""
    labs = {lab.id: lab for lab in MANIFEST.labs}

    def outcome(status: Status, message: str = "") -> TestOutcome:
        return TestOutcome("t::test_x", "test_x", "11.3", status, message)

    long_message = "\n".join(f"x{n}" for n in range(20))
    failing = LabResult(
        labs["11.3"],
        (outcome(Status.FAILED, long_message), outcome(Status.TIMEOUT), outcome(Status.ERROR)),
        3,
        ProbeSummary(cases=3, agreed=1, status=Status.FAILED, failures=("x",)),
    )
    pending = LabResult(labs["11.1"], (outcome(Status.PENDING),), 3)
    optional = LabResult(labs["11.opt"], (outcome(Status.PASSED),), 1)
    chapter = CheckpointResult("11", "t", (failing, pending, optional))
    titles = {lab.id: lab.title for lab in in_edition(MANIFEST).labs}
    return [
        VerdictView(chapter, None, titles=titles),
        VerdictView(chapter, "11.3", titles=titles),
        VerdictView(chapter, "11.1", titles=titles),
        VerdictView(CheckpointResult("11", "t", ()), None, titles=titles),
        VerdictView(None, "11.2", "x"),
    ]


def notes() -> list[Any]:
    stub = LabNotImplemented("11.2", labs_title("11.2"), "group_interactions", "x")
    waiting = PendingCells({"groups": "x"})
    return [
        pending_note(stub),
        waiting.note_for(NameError("name 'groups' is not defined", name="groups")),
        show.note(waiting._waits_for(stub)),
        show.note(waiting._waits_for(NameError("y", name="nothing"))),
    ]


def labs_title(lab_id: str) -> str:
    return MANIFEST.lab(lab_id).title


def test_every_view_rendered_in_zh_is_chinese(zh: None) -> None:
    import course

    opened = [
        OpenedChapter(in_edition(MANIFEST), course, None, "zh"),
        OpenedChapter(in_edition(MANIFEST), course, object(), "zh"),  # type: ignore[arg-type]
    ]
    shown = [*chapter_views(), *verdict_views(), *notes()]
    found = []
    for view in shown:
        code = [html.unescape(found) for found in CODE_ELEMENT.findall(view.html)]
        words = english_in(view.text, (*chapter_data(), *code), html_as_text(view.html))
        if words:
            found.append(f"{sorted(set(words))}\n{view.text}")
    for chapter in opened:
        if english_words(chapter.label):
            found.append(chapter.label)
    assert found == [], "\n\n".join(found)


# --------------------------------------------------------------------------- which edition


def test_a_kernel_in_a_kit_notebook_folder_speaks_that_folders_edition() -> None:
    assert folder_edition(MANIFEST, EDITIONS["zh"]) == "zh"
    assert folder_edition(MANIFEST, EDITIONS["en"]) == "en"
    assert folder_edition(MANIFEST, REPO / "tests") is None


@pytest.mark.usefixtures("isolated_imports")
def test_open_chapter_speaks_the_folders_edition_else_the_environments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COURSE_LANG", "en")
    opened = open_chapter("11", EDITIONS["zh"])
    assert opened.edition == current_edition() == "zh"
    assert "参考实现" in opened.label
    assert opened.manifest.lab("11.1").title == in_edition(MANIFEST).lab("11.1").title
    assert open_chapter("11", EDITIONS["en"]).edition == current_edition() == "en"
    monkeypatch.setenv("COURSE_LANG", "zh")
    assert open_chapter("11", tmp_path).edition == "zh"


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_a_kernel_in_a_workspace_speaks_the_edition_its_marker_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edition: str
) -> None:
    monkeypatch.setenv("COURSE_LANG", "zh" if edition == "en" else "en")
    root = create_workspace(tmp_path / "practice-11", edition)
    workspace = read_workspace(root)
    assert kernel_edition(MANIFEST, workspace, root / "notebooks") == edition


# --------------------------------------------------------------------------- typography


ZH_SOURCES = sorted((REPO / load_manifest("11").source_folder).glob("*.md"))
assert ZH_SOURCES, "chapter 11's notebook sources are missing"


def typography_of(source: str, where: str) -> list[str]:
    """The typography problems of a notebook source's zh markdown cells, as rendered."""
    cells = parse_source(source, ("en", "zh"), where)
    return [
        f"{where}: {problem}"
        for cell in cells
        if cell.kind == "markdown"
        for problem in problems(cell.texts["zh"], markdown=True)
    ]


@pytest.mark.parametrize("path", ZH_SOURCES, ids=lambda p: p.name)
def test_the_zh_cells_of_each_notebook_source_keep_the_chapters_typography(path: Path) -> None:
    assert typography_of(path.read_text("utf-8"), path.name) == []


def test_a_planted_line_break_in_a_zh_cell_is_found() -> None:
    source = "<!-- en -->\nKeep copies\nof the kept messages.\n<!-- zh -->\n保留消息的\n副本。\n"
    assert typography_of(source, "planted.md") == [
        "planted.md: a line break inside a Chinese sentence: '保留消息的⏎副本。'"
    ]


@pytest.mark.parametrize("path", ZH_NOTEBOOKS, ids=label)
def test_every_stored_output_of_the_zh_notebooks_keeps_the_chapters_typography(
    path: Path,
) -> None:
    """No Markdown backtick, no space inside a Chinese phrase, no ASCII colon or ``; `` after
    Latin text in a Chinese line, in what a zh reader sees (streams, plain text, HTML as text);
    the learner's data (the fixture, the model-facing summary message, the Pi session) as it
    is."""
    notebook = nbformat.read(path, as_version=4)
    data = chapter_data() + (pi_session_data() if "real-session" in path.name else ())
    found = []
    for index, cell in enumerate(notebook.cells, start=1):
        if cell.cell_type != "code":
            continue
        for output in cell.outputs:
            for shown in output_texts(output):
                kept = "\n".join(line for line in shown.splitlines() if not is_data(line, data))
                found += [f"cell {index}: {problem}" for problem in rendered_problems(kept)]
    assert found == [], "\n".join(found)


def is_data(line: str, data: Iterable[str]) -> bool:
    """Whether ``line`` shows a value of the learner's data (whole, or cut with ``…``)."""
    shown = line.strip()
    return any(value and (value in shown or shown.rstrip("…") in value) for value in data)
