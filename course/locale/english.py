"""Finding English a Chinese reader would meet: Latin-letter words that are not code or ids."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from typing import Literal

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


Kind = Literal["prose", "allowed", "code"]


def _words(text: str, edition: str) -> Iterator[tuple[re.Match[str], str, Kind]]:
    """Each Latin word of ``text``: its match, the word, and what a reader of ``edition`` reads
    it as: English prose, a word of the glossaries' ``[english]`` lists, or code."""
    allowed = allowed_words(edition)
    for match in WORD.finditer(text):
        word = match.group().rstrip("'\u2019-")
        before = text[match.start() - 1] if match.start() else " "
        after = text[match.end()] if match.end() < len(text) else " "
        kind: Kind = "prose"
        if word.lower() in allowed:
            kind = "allowed"
        elif _is_code(word, before, after):
            kind = "code"
        yield match, word, kind


def english_words(text: str, edition: str = CHAPTER_EDITION) -> list[str]:
    """The words of ``text`` a reader of ``edition`` would read as English prose."""
    text = BACKTICKED.sub(" ", without_literal_blocks(text))
    return [word for _, word, kind in _words(text, edition) if kind == "prose"]


SENTENCE_WORDS = 3
"""How many English prose words in a row make an English sentence (``english_sentences``)."""
QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"')
"""A double-quoted literal (a JSON string, ``goal="  Fix resume  "``): data, as the program holds
it. The zh edition quotes its own words with “”."""
LABEL_COLON = re.compile(r":(?=\s)")
"""A colon a space follows: it ends a label or a clause, so the word before it may be prose."""
WITHIN_SENTENCE = re.compile(r"[\s,.;:!?]*")
"""What may stand between two words of one sentence: spaces and ASCII punctuation."""


def _blank(found: re.Match[str]) -> str:
    return " " * len(found.group())


def english_sentences(text: str, edition: str = CHAPTER_EDITION) -> list[str]:
    """The English sentences of ``text`` a reader of ``edition`` would meet: runs of words joined
    only by spaces and punctuation holding at least ``SENTENCE_WORDS`` prose words
    (``english_words``'s: code, ids, file names, quoted literals and the glossaries' English
    words never count, and code ends a run). ``Not graded: empty submission`` is one; an id, a
    path, a JSON input or ``user message`` is none."""
    shown = without_literal_blocks(text)
    text = QUOTED.sub(_blank, BACKTICKED.sub(_blank, shown))
    text = LABEL_COLON.sub(" ", text)  # ``Not graded: empty`` is prose, ``a:b`` stays code
    found: list[str] = []
    run: list[tuple[re.Match[str], Kind]] = []

    def close() -> None:
        if sum(kind == "prose" for _, kind in run) >= SENTENCE_WORDS:
            found.append(shown[run[0][0].start() : run[-1][0].end()])
        run.clear()

    for match, _word, kind in _words(text, edition):
        joined = run and WITHIN_SENTENCE.fullmatch(text[run[-1][0].end() : match.start()])
        if kind == "code" or not joined:
            close()
        if kind != "code":
            run.append((match, kind))
    close()
    return found
