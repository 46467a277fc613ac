"""Finding English a Chinese reader would meet: Latin-letter words that are not code or ids."""

from __future__ import annotations

import functools
import os
import re

from . import CHAPTER_EDITION, CHAPTER_ROOTS
from .glossary import glossary

# Markdown and reStructuredText; a reST inline literal may wrap onto the next line
BACKTICKED = re.compile(r"``[^`\n]*(?:\n[^`\n]*)?``|`[^`\n]*`")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'\u2019-]*")
CODE_NEIGHBOURS = set("._/\\=()[]{}<>:#@$%*+|~")


def allowed_words(edition: str = CHAPTER_EDITION) -> frozenset[str]:
    """The edition's documented English words (the glossaries' ``[english] allowed``)."""
    return _allowed_words(edition, os.environ.get(CHAPTER_ROOTS, ""))


@functools.cache
def _allowed_words(edition: str, roots: str) -> frozenset[str]:
    table = glossary(edition).get("english", {})
    return frozenset(word.lower() for word in table.get("allowed", []))


def without_literal_blocks(text: str) -> str:
    """``text`` with the lines of its reST literal blocks blanked: after a line ending in
    ``::``, every line indented deeper than it (blank lines too) shows code or program output,
    which stays as the program writes it."""
    lines = text.split("\n")
    opener: int | None = None  # the indent of the ``::`` line whose block this may be
    for number, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if opener is not None and (not line.strip() or indent > opener):
            lines[number] = ""
            continue
        opener = indent if line.rstrip().endswith("::") else None
    return "\n".join(lines)


def _is_code(word: str, before: str, after: str) -> bool:
    if len(word) == 1 or any(c.isdigit() or c == "_" for c in word):
        return True
    if word.isupper() or re.search(r"[a-z][A-Z]", word):  # JSON, SIGKILL; toolCallId
        return True
    return before in CODE_NEIGHBOURS or after in CODE_NEIGHBOURS or before == "-"


def english_words(text: str, edition: str = CHAPTER_EDITION) -> list[str]:
    """The words of ``text`` a reader of ``edition`` would read as English prose."""
    allowed = allowed_words(edition)
    text = BACKTICKED.sub(" ", without_literal_blocks(text))
    found = []
    for match in WORD.finditer(text):
        word = match.group().rstrip("'\u2019-")
        before = text[match.start() - 1] if match.start() else " "
        after = text[match.end()] if match.end() < len(text) else " "
        if word.lower() in allowed or _is_code(word, before, after):
            continue
        found.append(word)
    return found
