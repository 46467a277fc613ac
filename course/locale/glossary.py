"""The zh edition's glossary: each term's one word, and the words avoided. The kit's
(``zh/glossary.toml``: the machinery's words) is extended by each chapter's
(``<chapter folder>/locale/zh/glossary.toml``: its terms, its labs' titles, its English words)."""

from __future__ import annotations

import functools
import os
import tomllib
from pathlib import Path
from typing import Any

from . import CHAPTER_EDITION, CHAPTER_ROOTS, LOCALE_DIR, SOURCE_EDITION, chapter_locales

GLOSSARY = "glossary.toml"


def glossary(edition: str = CHAPTER_EDITION) -> dict[str, Any]:
    """The kit's glossary extended by every chapter's: the terms of all, the ``[labs]`` titles
    of all, and the ``[english] allowed`` words of all."""
    return _glossary(edition, os.environ.get(CHAPTER_ROOTS, ""))


def glossary_paths(edition: str = CHAPTER_EDITION, roots: str | None = None) -> list[Path]:
    """The kit's glossary, then each chapter's that exists."""
    chapters = [folder / "locale" / edition / GLOSSARY for folder in chapter_locales(roots)]
    return [LOCALE_DIR / edition / GLOSSARY, *(path for path in chapters if path.is_file())]


@functools.cache
def _glossary(edition: str, roots: str) -> dict[str, Any]:
    merged: dict[str, Any] = {"term": [], "labs": {}, "english": {"allowed": []}}
    for path in glossary_paths(edition, roots):
        table = tomllib.loads(path.read_text("utf-8"))
        merged["term"] += table.get("term", [])
        merged["labs"] |= table.get("labs", {})
        merged["english"]["allowed"] += table.get("english", {}).get("allowed", [])
    return merged


def avoided_words(text: str, edition: str = CHAPTER_EDITION) -> list[str]:
    """The glossary's avoided words ``text`` uses, each as ``word (term: the chapter's word)``."""
    return [
        f"{word} ({term[SOURCE_EDITION]}: {term[edition]})"
        for term in glossary(edition).get("term", [])
        for word in term.get("avoid", [])
        if word in text
    ]
