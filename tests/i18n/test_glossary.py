"""The zh edition speaks the chapter's words: each term one way, the labs named as it names them."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from course.harness.editions import in_edition
from course.harness.manifest import load_manifest
from course.locale import LOCALE_DIR, catalog_path, set_edition

GLOSSARY = tomllib.loads((LOCALE_DIR / "zh" / "glossary.toml").read_text("utf-8"))
ZH_NOTEBOOK_SOURCES = Path(__file__).resolve().parents[2] / "notebooks" / "source"
BACKTICKED = re.compile(r"`[^`]*`")


def _pairs() -> list[tuple[str, str]]:
    with catalog_path("zh").open("rb") as file:
        return [
            (m.id, m.string)
            for m in read_po(file)
            if m.id and isinstance(m.id, str) and isinstance(m.string, str) and m.string
        ]


def _uses(text: str, term: str) -> bool:
    """``term`` as words of the prose (not inside backticks, not part of a code name)."""
    prose = BACKTICKED.sub(" ", text)
    return (
        re.search(rf"(?<![\w./-]){re.escape(term)}(?![\w./(-])", prose, re.IGNORECASE) is not None
    )


@pytest.mark.parametrize("term", GLOSSARY["term"], ids=lambda t: t["en"])
def test_each_term_is_translated_as_the_chapter_writes_it(term: dict[str, object]) -> None:
    english, chinese = str(term["en"]), str(term["zh"])
    wrong = [(m, s) for m, s in _pairs() if _uses(m, english) and chinese not in s]
    assert not wrong, f"{english!r} should read {chinese!r} in: {wrong[:3]}"


@pytest.mark.parametrize("term", GLOSSARY["term"], ids=lambda t: t["en"])
def test_no_second_translation_of_a_term(term: dict[str, object]) -> None:
    avoided = [str(word) for word in term.get("avoid", [])]  # type: ignore[attr-defined]
    sources = [s for _, s in _pairs()]
    sources += [p.read_text("utf-8") for p in ZH_NOTEBOOK_SOURCES.glob("*.md")]
    found = [(word, text[:60]) for text in sources for word in avoided if word in text]
    assert not found, f"{term['en']!r} is {term['zh']!r}, not: {found[:3]}"


def test_lab_titles_are_the_chapters() -> None:
    set_edition("zh")
    try:
        manifest = in_edition(load_manifest("11"))
    finally:
        set_edition(None)
    titles = {lab.id: lab.title for lab in manifest.labs}
    assert titles == GLOSSARY["labs"]
