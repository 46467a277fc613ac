"""The Chinese pages a learner reads before any workspace exists: docs/zh/*.md and the README's
Chinese paragraph keep the chapter's typography and use no English word outside code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from course.harness.kit import kit_root
from course.locale import HAN
from course.locale.english import english_words
from course.locale.typography import FENCE, problems

KIT = kit_root()
PAGES = sorted((KIT / "docs" / "zh").glob("*.md"))
LINK = re.compile(r"\]\([^)\s]+\)")
"""A Markdown link's target: a path or a URL, never prose."""


def chinese_paragraphs(text: str) -> list[str]:
    """The paragraphs of a Markdown text that hold Chinese, fenced code left out."""
    prose = FENCE.sub("", text)
    return [p for p in re.split(r"\n\s*\n", prose) if re.search(f"[{HAN}]", p)]


def readme_chinese() -> list[str]:
    return chinese_paragraphs((KIT / "README.md").read_text("utf-8"))


@pytest.mark.parametrize("page", PAGES, ids=lambda path: path.name)
def test_a_chinese_page_keeps_the_chapters_typography(page: Path) -> None:
    paragraphs = chinese_paragraphs(page.read_text("utf-8"))
    assert paragraphs
    found = [str(p) for text in paragraphs for p in problems(text, markdown=True)]
    assert found == [], found
    english = [w for text in paragraphs for w in english_words(LINK.sub("]", text))]
    assert english == [], english


def test_the_readmes_chinese_paragraph_keeps_the_chapters_typography() -> None:
    paragraphs = readme_chinese()
    assert len(paragraphs) == 1, "one paragraph, one line"
    assert [str(p) for p in problems(paragraphs[0], markdown=True)] == []
    assert english_words(LINK.sub("]", paragraphs[0])) == []


def test_the_chinese_pages_start_where_the_english_ones_do() -> None:
    """A reader of Chinese alone learns the setup step, the hint's import and the platforms
    the grade is counted as (docs/learners.md and the README say the same)."""
    guide = (KIT / "docs" / "zh" / "learners.md").read_text("utf-8")
    first = chinese_paragraphs(guide)[1]
    assert "`bash scripts/setup`" in first, first
    assert "`bash scripts/setup`" in readme_chinese()[0]
    assert "GitHub Actions 和 Classroom 50" in guide and "GitHub Classroom 的计算方式" not in guide
    assert "三项测试只过一项的 Lab 还不得分" in guide
    assert "已经导入了 `hint`" in guide
