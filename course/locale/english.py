"""Finding English a Chinese reader would meet: Latin-letter words that are not code or ids."""

from __future__ import annotations

import functools
import re
import tomllib

from . import LOCALE_DIR

BACKTICKED = re.compile(r"``[^`\n]*``|`[^`\n]*`")  # Markdown and reStructuredText
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'\u2019-]*")
CODE_NEIGHBOURS = set("._/\\=()[]{}<>:#@$%*+|~")


@functools.cache
def allowed_words(edition: str = "zh") -> frozenset[str]:
    """The edition's documented English words (the glossary's ``[english] allowed``)."""
    path = LOCALE_DIR / edition / "glossary.toml"
    table = tomllib.loads(path.read_text("utf-8")).get("english", {})
    return frozenset(word.lower() for word in table.get("allowed", []))


def _is_code(word: str, before: str, after: str) -> bool:
    if len(word) == 1 or any(c.isdigit() or c == "_" for c in word):
        return True
    if word.isupper() or re.search(r"[a-z][A-Z]", word):  # JSON, SIGKILL; toolCallId
        return True
    return before in CODE_NEIGHBOURS or after in CODE_NEIGHBOURS or before == "-"


def english_words(text: str, edition: str = "zh") -> list[str]:
    """The words of ``text`` a reader of ``edition`` would read as English prose."""
    allowed = allowed_words(edition)
    text = BACKTICKED.sub(" ", text)
    found = []
    for match in WORD.finditer(text):
        word = match.group().rstrip("'\u2019-")
        before = text[match.start() - 1] if match.start() else " "
        after = text[match.end()] if match.end() < len(text) else " "
        if word.lower() in allowed or _is_code(word, before, after):
            continue
        found.append(word)
    return found
