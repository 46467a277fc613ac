"""The zh edition's typography, as chapter 11 sets it: each rule found where planted, code exempt.

``course.locale.typography.problems`` is what ``course-kit catalogs --check`` and the zh
notebooks' test run; these tests plant one break of each rule and expect it found, and show what
is exempt (code, ids, value placeholders, literal blocks).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from course.locale.typography import LINE_BREAK, problems
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


def test_catalogs_check_names_a_planted_typography_break(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = Catalog(locale="zh", domain="course")
    source.add("costing {costs} tokens")
    planted = Catalog(locale="zh", domain="course")
    planted.add("costing {costs} tokens", "成本分别为 7, 7, 15 token（{costs}）")
    po = tmp_path / "course.po"
    with po.open("wb") as file:
        write_po(file, planted)
    monkeypatch.setattr(catalogs, "catalog_path", lambda edition, suffix=".po": po)
    gaps = catalogs.gaps("zh", source)
    assert len(gaps) == 1 and "typography: a list with ', '" in gaps[0].problem, gaps


def test_catalogs_check_names_a_planted_avoided_word(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = Catalog(locale="zh", domain="course")
    source.add("reason    {reason}")
    planted = Catalog(locale="zh", domain="course")
    planted.add("reason    {reason}", "理由：{reason}")
    po = tmp_path / "course.po"
    with po.open("wb") as file:
        write_po(file, planted)
    monkeypatch.setattr(catalogs, "catalog_path", lambda edition, suffix=".po": po)
    assert [g.problem for g in catalogs.gaps("zh", source)] == [
        "glossary avoids 理由 (reason: reason)"
    ]
