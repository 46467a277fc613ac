"""The zh edition speaks the chapter's words: each term one way, the labs named as it names them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from course.harness.editions import in_edition
from course.harness.learning import render_learning
from course.harness.manifest import load_manifest
from course.locale import set_edition
from course.locale.english import BACKTICKED as ENGLISH_BACKTICKED
from course.locale.glossary import avoided_words, glossary
from course.tools.catalogs import all_catalogs

GLOSSARY = glossary("zh")
"""The kit's glossary with every chapter's (``locale/glossary.py``)."""
ZH_NOTEBOOK_SOURCES = Path(__file__).resolve().parents[2] / load_manifest("11").source_folder
BACKTICKED = ENGLISH_BACKTICKED


def _pairs() -> list[tuple[str, str]]:
    """(message, translation) of every zh catalog, the kit's and each chapter's."""
    pairs = []
    for catalog in all_catalogs():
        with catalog.path("zh").open("rb") as file:
            pairs += [
                (m.id, m.string)
                for m in read_po(file)
                if m.id and isinstance(m.id, str) and isinstance(m.string, str) and m.string
            ]
    return pairs


def _uses(text: str, term: str) -> bool:
    """``term`` as words of the prose (not inside backticks, not part of a code name)."""
    prose = BACKTICKED.sub(" ", text)
    return (
        re.search(rf"(?<![\w./-]){re.escape(term)}(?![\w./(-])", prose, re.IGNORECASE) is not None
    )


@pytest.mark.parametrize("term", GLOSSARY["term"], ids=lambda t: t["en"])
def test_each_term_is_translated_as_the_chapter_writes_it(term: dict[str, object]) -> None:
    english, chinese = str(term["en"]), str(term["zh"])
    titles = {lab.title for lab in load_manifest("11").labs}  # the [labs] table names those
    wrong = [
        (m, s) for m, s in _pairs() if m not in titles and _uses(m, english) and chinese not in s
    ]
    assert not wrong, f"{english!r} should read {chinese!r} in: {wrong[:3]}"


def zh_texts() -> list[tuple[str, str]]:
    """(where, text) of everything the zh edition writes: the catalog (messages, the card, the
    given and learner modules' docstrings), the zh notebook sources and a zh LEARNING.md."""
    texts = [(f"catalog: {m[:50]!r}", s) for m, s in _pairs()]
    sources = sorted(ZH_NOTEBOOK_SOURCES.glob("*.md"))
    assert sources, f"no notebook source in {ZH_NOTEBOOK_SOURCES}"
    for path in sources:
        texts += [(f"{path.name}: zh block", block) for block in zh_blocks(path)]
    manifest = load_manifest("11")
    learning = render_learning(manifest, "0" * 40, ["notebooks/11-0-chapter.ipynb"], edition="zh")
    return [*texts, ("LEARNING.md", learning)]


def zh_blocks(path: Path) -> list[str]:
    """The zh text of every markdown cell of a notebook source."""
    parts = re.split(r"^<!-- (code|[a-z]{2}) -->\s*$", path.read_text("utf-8"), flags=re.M)
    return [text for kind, text in zip(parts[1::2], parts[2::2], strict=True) if kind == "zh"]


def test_no_text_uses_a_word_the_glossary_avoids() -> None:
    found = [f"{where}: {word}" for where, text in zh_texts() for word in avoided_words(text)]
    assert found == [], "\n".join(found)


def test_a_planted_avoided_word_is_found() -> None:
    assert avoided_words("把理由设为 `single_group_overflow`") == ["理由 (reason: reason)"]
    assert sorted(avoided_words("回答预留 4，本套件")) == [  # a chapter's term, the kit's
        "回答预留 (reserved output: 输出预留)",
        "套件 (kit: 课程)",
    ]


def test_lab_titles_are_the_chapters() -> None:
    set_edition("zh")
    try:
        manifest = in_edition(load_manifest("11"))
    finally:
        set_edition(None)
    titles = {lab.id: lab.title for lab in manifest.labs}
    assert titles == GLOSSARY["labs"]
