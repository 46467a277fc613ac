"""The zh edition's typography, as chapter 11 sets it: each rule found where planted, code exempt.

``course.locale.typography.problems`` is what ``course-kit catalogs --check`` and the zh
notebooks' test run; these tests plant one break of each rule and expect it found, and show what
is exempt (code, ids, value placeholders, literal blocks).
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from course.locale import tidy, unquoted
from course.locale.typography import LINE_BREAK, NUMBER_CUT, problems, rendered_problems
from course.sandboxed.columns import terminal_width, wrap
from course.tools import catalogs

PLANTED = [
    ("字段（不能共享引用）: 值", "ASCII punctuation after Chinese text"),
    ("成本分别为 7, 7, 15 token", "a list with ', ' where Chinese uses '、'"),
    ("保留 u2 a3(共 7 条)", "ASCII punctuation after Chinese text"),
    ("保留消息的 副本", "a space between two Chinese characters"),
    ("reason： trimmed", "a space after full-width punctuation"),
    ("保留 u2 ，丢弃 u1", "a space before full-width punctuation"),
    ("正在检查/tmp/kit 中的参考实现", "no space between Chinese and Latin text"),
    ("本章共14 项测试", "no space between Chinese and Latin text"),
    ("收到的是{count}", "no space between Chinese and Latin text"),
]


@pytest.mark.parametrize(("text", "rule"), PLANTED, ids=[t for t, _ in PLANTED])
def test_a_planted_break_of_each_rule_is_found(text: str, rule: str) -> None:
    assert rule in [p.rule for p in problems(text)], problems(text)


@pytest.mark.parametrize(
    "text",
    [
        "三组成本依次为 7、7、15，所以函数从最新一组向前选择。",
        "`r-test`、`r-read` 的原路径顺序",
        "按 `3/3 → 3/3` 覆盖记录解析，`groupInteractions()` 为什么得到 `[u1,a1]`？",
        "的分组：[u1, a1, a1b]，返回 (kept_entry_ids, reason)",
        "{why}按 r（或回车）手动重新运行。",
        "写出来是::\n\n    Goal: Fix resume, again\n    - (none)\n",
        "```text\ngroup 1 = [u1, a1]\n```\n",
        "An English line, with commas: it holds no Chinese.",
    ],
)
def test_code_ids_placeholders_and_literal_blocks_are_exempt(text: str) -> None:
    assert problems(text, markdown=True) == []


def test_a_line_break_inside_a_sentence_is_a_problem_only_where_it_renders() -> None:
    text = "保留消息的\n副本，固定成本\n超过窗口时"
    assert [p.rule for p in problems(text, markdown=True)] == [LINE_BREAK, LINE_BREAK]
    assert problems(text) == [], "a docstring's or terminal's line break shows no space"
    assert problems("第一段。\n\n- 一项\n- 另一项\n## 标题\n正文", markdown=True) == []
    assert problems("调用\n`read-1` 和", markdown=True) == [], "the space before code is right"


def planted_catalog(folder: Path, messages: Catalog) -> catalogs.Catalog:
    """A catalog in ``folder`` holding ``messages`` as its zh translation."""
    (folder / "babel.cfg").write_text("[python: nothing/**.py]\n", encoding="utf-8")
    catalog = catalogs.Catalog("a planted catalog", folder / "babel.cfg", folder, "course", folder)
    catalog.path("zh").parent.mkdir(parents=True)
    with catalog.path("zh").open("wb") as file:
        write_po(file, messages)
    return catalog


def test_catalogs_check_names_a_planted_typography_break(tmp_path: Path) -> None:
    source = Catalog(locale="zh", domain="course")
    source.add("costing {costs} tokens")
    planted = Catalog(locale="zh", domain="course")
    planted.add("costing {costs} tokens", "成本分别为 7, 7, 15 token（{costs}）")
    catalog = planted_catalog(tmp_path, planted)
    gaps = catalogs.gaps("zh", source, catalog)
    assert len(gaps) == 1 and "typography: a list with ', '" in gaps[0].problem, gaps


def test_catalogs_check_names_a_planted_avoided_word(tmp_path: Path) -> None:
    source = Catalog(locale="zh", domain="course")
    source.add("reason    {reason}")
    planted = Catalog(locale="zh", domain="course")
    planted.add("reason    {reason}", "理由：{reason}")
    catalog = planted_catalog(tmp_path, planted)
    assert [g.problem for g in catalogs.gaps("zh", source, catalog)] == [
        "glossary avoids 理由 (reason: reason)"
    ]


# What the kit renders: filled placeholders, joined lists, wrapped lines (``rendered_problems``),
# and what sets them right (``tidy``, ``wrap``, ``unquoted``).

RENDERED = [
    ("Lab 11.2 交互分组 尚未实现（group_interactions）", "a space inside a Chinese phrase"),
    ("在 练习目录 /tmp/ws 中", "a space inside a Chinese phrase"),
    ("第 440 行包含 两 个 JSON 对象", "a space inside a Chinese phrase"),
    ("活动路径只恢复选中分支; JSONL 以换行提交", "a list joined with '; ' in a Chinese line"),
    ("compact-1.summary.files: 未知字段", "an ASCII colon after Latin text in a Chinese line"),
    ("用 `FieldReader` 读取每个字段", "a Markdown backtick outside Markdown"),
    ("超时： 2 项测试未运行", "a space after full-width punctuation"),
    ("gradebook.csv 写到哪个目录（", "an opening mark at the end of a line"),
    ("都能工作；第\n11 章的脚手架", "a line break between 第 and its number"),
]


@pytest.mark.parametrize(("text", "rule"), RENDERED, ids=[t for t, _ in RENDERED])
def test_a_planted_break_of_each_rendered_rule_is_found(text: str, rule: str) -> None:
    assert rule in [p.rule for p in rendered_problems(text)], rendered_problems(text)


@pytest.mark.parametrize(
    "text",
    [
        "Lab 11.2  交互分组          0/3 项测试 · 0/63 个用例  待实现",  # a table's columns
        "Lab 11.1 compaction entry 尚未实现（parse_compaction_entry）",
        'value: {"goal": "确认 session 恢复", "next": ["a", "b"]}',
        "An English line: with a colon; and a semicolon.",
        "build_context（max_tokens=24）：(kept_entry_ids, reason)",
    ],
)
def test_rendered_columns_code_and_english_lines_are_exempt(text: str) -> None:
    assert rendered_problems(text) == []


@pytest.mark.parametrize(
    ("filled", "tidied"),
    [
        (
            "Lab 11.2 交互分组 尚未实现（group_interactions）",
            "Lab 11.2 交互分组尚未实现（group_interactions）",
        ),
        ("Lab 11.1 compaction entry 尚未实现", "Lab 11.1 compaction entry 尚未实现"),
        ("第 440 行包含 两 个 JSON 对象", "第 440 行包含两个 JSON 对象"),
        ("compact-1.summary.files: 未知字段", "compact-1.summary.files：未知字段"),
        ("活动路径只恢复选中分支; JSONL 以换行提交", "活动路径只恢复选中分支；JSONL 以换行提交"),
        ("超时： 2 项测试未运行", "超时：2 项测试未运行"),
        ("请先完成 前面的某个 Lab", "请先完成前面的某个 Lab"),
        ("compact-1.summary.files: unknown field", "compact-1.summary.files: unknown field"),
    ],
)
def test_tidy_sets_a_filled_in_text_as_the_chapter_does(filled: str, tidied: str) -> None:
    assert tidy(filled) == tidied
    assert rendered_problems(tidied) == []


def test_wrap_never_breaks_inside_a_code_span_and_drops_its_backticks() -> None:
    text = "三项测试都停在 `Lab 11.1 compaction entry 尚未实现`，然后继续"
    lines = wrap(text, 24)
    assert any("Lab 11.1 compaction entry 尚未实现" in line for line in lines), lines
    assert not any("`" in line for line in lines)
    assert [p.rule for p in rendered_problems("\n".join(lines))] == []
    english = wrap("the tests stop at `Lab 11.1 compaction entry not implemented yet` here", 30)
    assert "Lab 11.1 compaction entry not implemented yet" in english, english


def test_wrap_keeps_a_chapter_number_and_an_opening_bracket_with_what_follows() -> None:
    for width in range(10, 24):
        lines = wrap("记录、两种 Store 都能工作；第 11 章的脚手架（DIR）写到这里", width)
        assert NUMBER_CUT not in [p.rule for p in rendered_problems("\n".join(lines))], lines
        assert not any(line.endswith("（") for line in lines), lines
        assert not any(line.endswith("第") for line in lines), lines


def test_wrap_leaves_no_single_chinese_character_on_the_last_line() -> None:
    lines = wrap("保存并重开一条 compaction 记录", 28)
    assert lines == ["保存并重开一条 compaction", "记录"], lines


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_width_follows_a_terminal_and_is_fixed_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert terminal_width(Terminal()) == 80
    assert terminal_width(io.StringIO()) == 100, "a pipe or a file: the report's own width"
    monkeypatch.setenv("COLUMNS", "300")
    assert terminal_width(Terminal()) == 100, "never wider than the report"
    monkeypatch.setenv("COLUMNS", "20")
    assert terminal_width(Terminal()) == 40, "never narrower than a readable line"


def test_unquoted_drops_backticks_of_code_spans_only() -> None:
    assert unquoted("用 `FieldReader` 读取，`a` 和 `b`") == "用 FieldReader 读取，a 和 b"
