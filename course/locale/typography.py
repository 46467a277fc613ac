"""Chinese typography as chapter 11 sets it: the punctuation and spacing a zh text may not show.

The rules (docs/editions.md, "Typography") are checked on prose only: code spans (`x`,
``x``), ``{placeholders}``, reST literal blocks and fenced code stand for one Latin word, so
ids, code names and program output are exempt. Each problem names the rule and quotes the text
around it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from . import CLOSING, HAN, LATIN_COLON, OPENING
from .english import BACKTICKED, without_literal_blocks

CODE = re.compile(rf"{BACKTICKED.pattern}|\[[^\[\]\n{HAN}]*\]|\([^()\n{HAN}]*,[^()\n{HAN}]*\)")
"""Code spans, and brackets of ASCII only (``[u1, a1]``, ``(entry_ids, reason)``): code."""
PLACEHOLDER = re.compile(r"\{(\w*)([^{}\n]*)\}")
VALUE_NAMES = frozenset(
    re.findall(
        r"\w+",
        "count amount total passed number line lines path root file files id ids lab seconds got "
        "expected value values limit size index field entry",
    )
)
"""Placeholders that stand for a number, path, id or value: spaced like Latin. Any other
placeholder may stand for a translated phrase (``{why}``, ``{problem}``) and is left alone."""
FENCE = re.compile(r"^```.*?^```[^\n]*$", re.MULTILINE | re.DOTALL)
BLOCK_START = re.compile(r"\s*(?:[-*+] |\d+[.)] |#|\||>|<!--|```)")

CHINESE = f"[{HAN}{OPENING}{CLOSING}]"
RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ASCII punctuation after Chinese text", re.compile(rf"{CHINESE}[:,;()](?!:\s*$)", re.M)),
    ("a space between two Chinese characters", re.compile(rf"{CHINESE} +{CHINESE}")),
    ("a space after full-width punctuation", re.compile(rf"[{OPENING}{CLOSING}] +[^\s|]")),
    ("a space before full-width punctuation", re.compile(rf"[^\s|] +[{CLOSING}]")),
    (
        "no space between Chinese and Latin text",
        re.compile(rf"[{HAN}](?:[A-Za-z0-9]|/[\w.])|[A-Za-z0-9%][{HAN}]"),
    ),
    ("a list with ', ' where Chinese uses '、'", re.compile(r"\S, +\S")),
)
"""Each rule's name and what it finds in prose whose code has been replaced by ``X``."""


@dataclass(frozen=True)
class Problem:
    """One place a text breaks a rule."""

    rule: str
    around: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.around!r}"


def has_han(text: str) -> bool:
    """Whether ``text`` holds Chinese: a Han character or full-width punctuation."""
    return re.search(CHINESE, text) is not None


def prose(text: str) -> str:
    """``text`` with every code span, literal block, code fence and value placeholder as
    ``X``, and every other placeholder as a character no rule looks at."""
    text = FENCE.sub("X", without_literal_blocks(text))
    text = PLACEHOLDER.sub(_placeholder, text)
    return CODE.sub("X", text)


def _placeholder(found: re.Match[str]) -> str:
    name, rest = found.groups()
    return "X" if name in VALUE_NAMES or rest else "\ue000"


def soft_breaks(text: str) -> Iterator[tuple[str, str]]:
    """Markdown's line breaks inside a paragraph, as (the line before, the line after): a
    reader sees each as a space."""
    for previous, line in itertools.pairwise(text.split("\n")):
        if not line.strip() or not previous.strip() or BLOCK_START.match(line):
            continue
        if previous.lstrip().startswith(("#", "|")) or previous.endswith("  "):
            continue  # a heading or table row ends at its line; two spaces make a hard break
        yield previous.rstrip(), line.strip()


def problems(text: str, *, markdown: bool = False) -> list[Problem]:
    """Where ``text`` breaks the typography of the chapter (nothing for a text without Han).

    ``markdown``: ``text`` is rendered, so a line break inside a paragraph reads as a space;
    where that space breaks a spacing rule, the line break is the problem."""
    if not has_han(text):
        return []
    plain = prose(text)
    chinese = [line for line in plain.split("\n") if has_han(line)]  # no English or code line
    found = [
        Problem(rule, line[max(0, match.start() - 8) : match.end() + 8])
        for line in chinese
        for rule, pattern in RULES
        for match in pattern.finditer(line)
    ]
    if markdown:
        for before, after in soft_breaks(plain):
            seam = f"{before[-1]} {after[0]}"
            if any(pattern.search(seam) for _, pattern in RULES[1:4]):
                found.append(Problem(LINE_BREAK, f"{before[-8:]}⏎{after[:8]}"))
    return found


LINE_BREAK = "a line break inside a Chinese sentence"


BACKTICK = "a Markdown backtick outside Markdown"
RENDERED_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (BACKTICK, re.compile(r"`")),
    ("a space inside a Chinese phrase", re.compile(rf"{CHINESE} {CHINESE}")),
    ("a space after full-width punctuation", re.compile(rf"[{OPENING}{CLOSING}] [^\s|]")),
    ("ASCII punctuation after Chinese text", re.compile(rf"[{HAN}][,;:()]")),
    ("an ASCII colon after Latin text in a Chinese line", LATIN_COLON),
    ("a list joined with '; ' in a Chinese line", re.compile(r"\S; \S")),
    ("an opening mark at the end of a line", re.compile(rf"[{OPENING}]$")),
)
"""What a rendered zh line (a terminal's, a notebook's output) may not show. A run of two or
more spaces is a table's column, not a space inside a phrase."""
NUMBER_CUT = "a line break between 第 and its number"


def rendered_problems(text: str) -> list[Problem]:
    """Where text the kit rendered for a zh reader (terminal lines, a notebook output's text)
    breaks the chapter's typography: every line holding Chinese, checked as printed."""
    found = [
        Problem(rule, line[max(0, match.start() - 8) : match.end() + 8])
        for line in text.split("\n")
        if has_han(line)
        for rule, pattern in RENDERED_RULES
        for match in pattern.finditer(line)
    ]
    for before, after in itertools.pairwise(text.split("\n")):
        if before.rstrip().endswith("第") and after.strip()[:1].isdigit():
            found.append(Problem(NUMBER_CUT, f"{before[-8:]}⏎{after.strip()[:8]}"))
    return found
