"""A Chinese instructor grades a small class: every door of ``--roster --lang zh`` speaks Chinese.

The class, in zh workspaces, with a class list of Chinese names: lisi solved every lab; zhangsan
solved them with one mistake in Lab 11.2 (the last interaction dropped when it holds one message:
the focused tests pass, the probe cases do not); wangwu left the scaffold as it was; 赵六 is on the
list and submitted nothing; zhouqi handed in an empty folder and sunjiu a report without code;
qianba's folder holds loose lab files. ``checkpoint 11 --roster DIR --lang zh --class-list LIST``
grades it under ``LANG=C.UTF-8``, then ``--only 张三`` regrades one learner by the name the
class list gives.

Each door is read as a Chinese instructor reads it: the terminal (the progress lines too), the
gradebook's text cells, both summary pages, every feedback file, Moodle's feedback column and the
Actions workflow's titles. Each is held to the typography the learner's doors are held to
(``course.locale.typography.rendered_problems``), to ``english_sentences`` (no run of English
words outside code, ids, quoted data and the chapter's own English terms) and to no unfilled
``{placeholder}``. What is not the kit's text is left out, each by one rule: a probe case's input
lines as the probe data holds them (data), and what the learner's code raised (here the
reference's English refusals, which the solved workspaces hold: ``refusals.in_edition`` knows
them).
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, replace
from html.parser import HTMLParser
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from harness_support import CHAPTER, cli, replace_in
from solutions import solve_lab

from course.grading.records.classsummary import ClassSummary, class_summary, summary_html
from course.grading.records.gradebook import graded_row, lab_reason
from course.grading.verdict.probes import ProbeSet
from course.harness.editions import in_edition
from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult, LabResult, ProbeSummary
from course.harness.workspace import create_workspace
from course.locale.english import english_sentences
from course.locale.refusals import in_edition as refusal_in_edition
from course.locale.typography import rendered_problems
from course.sandboxed.columns import columns
from course.sandboxed.status import Status

pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)

STUDENTS = (
    ("S01", "张三", "zhangsan@uni.example"),
    ("S02", "李四", "lisi@uni.example"),
    ("S03", "王五", "wangwu@uni.example"),
    ("S04", "赵六", "zhaoliu@uni.example"),
    ("S05", "周七", "zhouqi@uni.example"),
    ("S06", "孙九", "sunjiu@uni.example"),
)
"""The class list; qianba, whose loose files are graded, is not on it."""
DROPS_A_LONE_LAST_GROUP = (
    "    if current:\n        groups.append(check_tool_pairs(current))\n    return groups",
    "    if len(current) > 1:\n        groups.append(check_tool_pairs(current))\n    return groups",
)
"""zhangsan's Lab 11.2: the path's last interaction is dropped when it is one message alone."""
ZH = {"LANG": "C.UTF-8", "LC_ALL": "", "LANGUAGE": "", "COURSE_LANG": ""}

SHIPPED = json.loads((kit_root() / "starters" / "11-probes.json").read_text(encoding="utf-8"))
DATA_LINES = frozenset(
    line.strip() for lines in SHIPPED["inputs"].values() for line in lines if line.strip()
)
"""Every input line of the probe data, as the data holds it: a failure shows its case's input
as it is (``path: e0 user 1 · m1 metadata``), data and not the kit's words."""
RAISED = re.compile(r"\b[A-Z]\w*Error[:：] ?(?P<message>[^（）\n|]+?(?:\([^()\n]*\))?)(?=）|$| \|)")
"""An exception the learner's code raised, as a failure quotes it: ``CompactionError: …``."""
PLACEHOLDER = re.compile(r"\{\w+\}")
TEXT_COLUMNS = ("flags", "note", "scaffold")
"""The gradebook's columns that hold sentences; the others hold names, numbers, paths and the
stable words of docs/editions.md (statuses, sources)."""


@dataclass(frozen=True)
class GradedClass:
    run: CompletedProcess[str]
    again: CompletedProcess[str]  # --only 张三
    grades: Path
    workflow: str  # the zh workspace's .github/workflows/checkpoint.yml

    def text(self, name: str) -> str:
        return (self.grades / name).read_text(encoding="utf-8-sig")

    def rows(self) -> dict[str, dict[str, str]]:
        table = csv.DictReader(io.StringIO(self.text("gradebook.csv")))
        return {row["learner"]: row for row in table}


def lay_out(manifest: Manifest, base: Path) -> tuple[Path, Path]:
    """The roster folder and the class list, in ``base``."""
    roster = base / "班级"
    roster.mkdir()

    def workspace(name: str) -> Path:
        create_workspace(manifest, kit_root(), roster / name, edition="zh")
        return roster / name

    for name in ("lisi", "zhangsan"):
        solved = workspace(name)
        for lab in manifest.labs:
            solve_lab(manifest, kit_root(), solved, lab.id)
    replace_in(roster / "zhangsan" / "pi_course" / "groups.py", *DROPS_A_LONE_LAST_GROUP)
    workspace("wangwu")
    (roster / "zhouqi").mkdir()
    (roster / "sunjiu").mkdir()
    (roster / "sunjiu" / "实验报告.pdf").write_bytes(b"%PDF-1.4\n")
    (roster / "qianba").mkdir()
    given = (roster / "lisi" / "pi_course" / "context.py").read_bytes()
    (roster / "qianba" / "context.py").write_bytes(given)
    (roster / "qianba" / "report.pdf").write_bytes(b"%PDF-1.4\n")
    listed = base / "名单.csv"
    with listed.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["id", "name", "email"])
        writer.writerows(STUDENTS)
    return roster, listed


@pytest.fixture(scope="module")
def graded(manifest: Manifest, tmp_path_factory: pytest.TempPathFactory) -> GradedClass:
    base = tmp_path_factory.mktemp("zh-class")
    roster, listed = lay_out(manifest, base)
    grades = base / "成绩"
    command = ("--roster", str(roster), "--lang", "zh", "--class-list", str(listed))
    command += ("--gradebook", str(grades))
    run = cli("checkpoint", CHAPTER, *command, env=ZH)
    again = cli("checkpoint", CHAPTER, *command, "--only", "张三", env=ZH)
    made = cli("practice", CHAPTER, "--lang", "zh", str(base / "练习"), "--actions", env=ZH)
    assert made.returncode == 0, made.stderr
    workflow = (base / "练习" / ".github" / "workflows" / "checkpoint.yml").read_text("utf-8")
    return GradedClass(run, again, grades, workflow)


def kits_text(text: str) -> str:
    """``text`` without what is not the kit's: probe data lines, and what learner code raised."""
    kept = [line for line in text.splitlines() if line.strip() not in DATA_LINES]
    text = "\n".join(kept)
    for found in RAISED.finditer(text):
        if refusal_in_edition(found["message"]) != found["message"]:
            text = text.replace(found["message"], "…")
    return text


def chinese_problems(text: str) -> list[str]:
    """What a Chinese instructor should not meet in ``text``: English sentences, unfilled
    placeholders, and breaks of the chapter's typography."""
    text = kits_text(text)
    found = [f"English: {sentence!r}" for sentence in english_sentences(text)]
    found += [f"placeholder: {p!r}" for p in PLACEHOLDER.findall(text)]
    return found + [str(problem) for problem in rendered_problems(text)]


class PageText(HTMLParser):
    """A page's text as a reader meets it: a line per block and per table cell, code and
    styles left out."""

    BLOCKS = frozenset({"p", "h1", "h2", "td", "th", "title", "text", "li", "summary", "pre"})
    SKIPPED = frozenset({"code", "style"})

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.skipping += tag in self.SKIPPED
        if tag == "code":
            self.parts.append("X")  # code stands as one Latin word, as typography.prose has it

    def handle_endtag(self, tag: str) -> None:
        self.skipping -= tag in self.SKIPPED
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)

    @classmethod
    def of(cls, page: str) -> str:
        reader = cls()
        reader.feed(page)
        return "".join(reader.parts)


def test_the_class_is_graded_as_a_chinese_instructor_expects(graded: GradedClass) -> None:
    assert graded.run.returncode == 0, graded.run.stdout + graded.run.stderr
    rows = graded.rows()
    scores = {name: row["score"] for name, row in rows.items()}
    assert scores == {
        "lisi": "100",
        "zhangsan": "80",
        "wangwu": "0",
        "qianba": "20",
        "zhouqi": "",
        "sunjiu": "",
        "赵六": "",
    }, scores
    assert rows["赵六"]["status"] == "missing", "a student on the list who submitted nothing"
    assert rows["zhouqi"]["status"] == rows["sunjiu"]["status"] == "skipped"


def test_the_terminal_speaks_chinese(graded: GradedClass, zh: None) -> None:
    for said in (graded.run, graded.again):
        output = said.stdout + said.stderr
        assert chinese_problems(output) == [], output


def test_the_terminal_names_each_learner_by_the_class_list_and_counts_what_was_not_graded(
    graded: GradedClass,
) -> None:
    lines = graded.run.stdout.splitlines()
    assert "（未评分：已跳过 2、未提交 1）" in lines[1], lines[1]
    rows = {line.split()[0]: line for line in lines if line.startswith("  ") and "/100" in line}
    named = {
        "张三（zhangsan）",
        "李四（lisi）",
        "王五（wangwu）",
        "周七（zhouqi）",
        "赵六",
        "qianba",
    }
    assert named <= set(rows), rows
    assert rows["赵六"].split()[1] == "未提交", rows["赵六"]
    ends = {columns(line.partition("/100")[0]) for line in rows.values()}
    assert len(ends) == 1, "the scores are right-aligned to one width"
    assert lines[-1].startswith("提交目录：成绩表共 7 行"), lines[-1]
    again = graded.again
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.startswith("已重新为张三（zhangsan）评分并写入 "), again.stdout


def test_the_gradebooks_sentences_are_chinese(graded: GradedClass, zh: None) -> None:
    rows = graded.rows()
    problems = {
        (name, column): chinese_problems(row[column])
        for name, row in rows.items()
        for column in TEXT_COLUMNS
    }
    assert {key: found for key, found in problems.items() if found} == {}
    flags = rows["lisi"]["flags"]
    assert "与参考实现相似（Lab 11.1，相似度 100%）" in flags, flags
    assert "；" in flags and "; " not in flags and "(" not in flags, flags
    note = rows["zhangsan"]["note"]
    assert note.startswith("测试报告显示 3/3 项测试通过，但探针用例失败："), note


def test_the_summary_pages_speak_chinese(graded: GradedClass, zh: None) -> None:
    for name in ("gradebook-summary.html", "gradebook-summary-anonymous.html"):
        page = graded.text(name)
        text = PageText.of(page.split("<body>", 1)[1])
        assert chinese_problems(text) == [], (name, text)
        numbers = re.findall(r'<text x="\d+" y="\d+">([^<]*)</text>', page)
        assert "1 人未通过" in numbers and "2/4 通过" in numbers, "each plot says what it counts"


def every_case_failed(manifest: Manifest, probe_set: ProbeSet) -> ClassSummary:
    """A class of one who failed every probe case of every lab: every rule on the page."""
    labs = tuple(
        LabResult(lab, (), lab.tests, ProbeSummary(1, 1, Status.PASSED))
        for lab in manifest.required_labs
    )
    row = graded_row("ada", "ada", CheckpointResult(CHAPTER, "practice", labs), ())
    failing = {
        lab.id: sorted(str(case["id"]) for case in probe_set.cases if case["lab"] == lab.id)
        for lab in row.labs
    }
    labs_failed = tuple(
        replace(
            lab, status=Status.FAILED, probes={**(lab.probes or {}), "failing": failing[lab.id]}
        )
        for lab in row.labs
    )
    return class_summary(manifest.required_labs, [replace(row, labs=labs_failed)], probe_set)


def test_a_page_with_every_rule_failed_speaks_chinese(
    manifest: Manifest, probe_set: ProbeSet | None, zh: None
) -> None:
    """Every rule and case label of the chapter on the page at once: before, 58 Markdown
    backticks showed in the zh page's rules (`goal` 前后带空格的 compact-1), and a rule two labs
    share counted its learner twice (2/1)."""
    assert probe_set is not None
    summary = every_case_failed(manifest, probe_set)
    for names in (True, False):
        text = PageText.of(summary_html(CHAPTER, summary, names=names).split("<body>", 1)[1])
        assert chinese_problems(text) == [], text
    assert all(rule.learners == 1 for rule in summary.rules), summary.rules


def test_a_page_with_every_rule_failed_fills_every_rule_in_english(
    manifest: Manifest, probe_set: ProbeSet | None
) -> None:
    assert probe_set is not None
    page = summary_html(CHAPTER, every_case_failed(manifest, probe_set))
    text = PageText.of(page.split("<body>", 1)[1])
    assert PLACEHOLDER.findall(text) == [] and "`" not in text, text


def test_every_feedback_file_speaks_chinese(graded: GradedClass, zh: None) -> None:
    folder = graded.grades / "gradebook-feedback"
    files = sorted(folder.iterdir())
    assert {path.name for path in files} >= {"zhangsan.txt", "赵六.txt", "zhouqi.txt"}
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert chinese_problems(text) == [], (path.name, text)
    zhangsan = (folder / "zhangsan.txt").read_text(encoding="utf-8")
    assert zhangsan.startswith("第 11 章 · 张三（zhangsan）\n"), zhangsan
    named = re.search(r"Lab 11\.2：聚焦测试通过；.* 个不一致：11\.2#\d{3}、11\.2#\d{3}", zhangsan)
    assert named, "before: the note ended in a colon, naming no case"
    moodle = csv.DictReader(io.StringIO(graded.text("gradebook-moodle.csv")))
    for row in moodle:
        assert chinese_problems(row["Chapter 11 反馈"]) == [], row


def test_the_actions_workflow_titles_are_the_editions(
    graded: GradedClass, manifest: Manifest, zh: None
) -> None:
    titles = re.findall(r'^\s+title: "(.*)"$', graded.workflow, re.MULTILINE)
    assert titles == [lab.title for lab in in_edition(manifest).labs if not lab.optional], titles
    names = re.findall(r'^\s+(?:- )?name: "(.*)"$', graded.workflow, re.MULTILINE)
    assert [name for name in names if english_sentences(name)] == [], names


def test_a_note_quoting_a_case_label_shows_no_backtick(manifest: Manifest, zh: None) -> None:
    """A rule's label marks its code (`goal` 前后带空格的 compact-1); a note is plain text, on the
    terminal and in the spreadsheet: before, its backticks showed."""
    lab = manifest.lab("11.1")
    described = "parse_compaction_entry：`goal` 前后带空格的 compact-1（11.1#005）：值不一致"
    described += "\n  value: 1"
    probes = ProbeSummary(58, 57, Status.FAILED, (described,), ("11.1#005",))
    result = LabResult(lab, (), lab.tests, probes)
    reason = lab_reason(result)
    assert "`" not in reason.split(" | ")[0] and "goal 前后带空格的" in reason, reason
    assert chinese_problems(reason) == [], reason
