"""Text from learner code or a learner's files, made safe to show, store and print.

Each channel from learner code (the records file, the output pipe, a stack dump) passes every
string through ``safe_text`` once: downstream nothing sees a control character, an escape
sequence or a lone surrogate, and no text is longer than its cap (with a note of the cut).
"""

from __future__ import annotations

import itertools
import sys

from ..locale import gettext as _

MESSAGE_CHARS = 4000  # a test's failure, a probe answer's error
NAME_CHARS = 200  # a test's name or node id, a frame's path, function or line
KEPT = "\n"  # the one control character kept: messages have lines (diffs, frames)


def _shown(char: str, keep: str) -> str:
    """``char``, or its escape when it is not printable (a lone surrogate is not either)."""
    if char.isprintable() or char in keep:
        return char
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def escape(text: str, keep: str = KEPT) -> str:
    """``text`` with every non-printable character but those in ``keep`` escaped, never cut."""
    return safe_text(text, sys.maxsize, keep)


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def safe_text(value: object, limit: int = MESSAGE_CHARS, keep: str = KEPT) -> str:
    """Any value as text safe to show: escaped, at most ``limit`` characters and a cut note."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit and text.isprintable():
        return text
    pieces = [_shown(char, keep) for char in text[:limit]]
    # the characters whose escapes fit in ``limit``: an escape takes up to ten
    used = sum(1 for end in itertools.accumulate(map(len, pieces)) if end <= limit)
    left = len(text) - used
    cut = _("… [{count} more characters cut]").format(count=left) if left else ""
    return "".join(pieces[:used]) + cut


def safe_name(value: object) -> str:
    """A one-line name from learner code: no newline, at most ``NAME_CHARS``."""
    return safe_text(value, NAME_CHARS, keep="")
