"""The zh edition's glossary (``zh/glossary.toml``): each term's one word, and the words avoided."""

from __future__ import annotations

import functools
import tomllib
from typing import Any

from . import CHAPTER_EDITION, LOCALE_DIR, SOURCE_EDITION


@functools.cache
def glossary(edition: str = CHAPTER_EDITION) -> dict[str, Any]:
    return tomllib.loads((LOCALE_DIR / edition / "glossary.toml").read_text("utf-8"))


def avoided_words(text: str, edition: str = CHAPTER_EDITION) -> list[str]:
    """The glossary's avoided words ``text`` uses, each as ``word (term: the chapter's word)``."""
    return [
        f"{word} ({term[SOURCE_EDITION]}: {term[edition]})"
        for term in glossary(edition).get("term", [])
        for word in term.get("avoid", [])
        if word in text
    ]
