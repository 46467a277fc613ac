"""Text that came from learner code or a learner's files, made safe to show, store and print.

Learner code speaks to the grader through three channels: the records file
(``records.RecordReader``), its output pipe (``supervisor.CappedOutput``) and the stack dump
of a test that runs too long (``runner``). Each channel's reader passes every string it hands
on through ``safe_text`` once, so nothing downstream (a terminal, the CSV, the JSON, a
notebook) ever sees a control character, an escape sequence or a lone surrogate, and no text
is longer than its documented cap (and a note of how much was cut).
"""

from __future__ import annotations

from ..locale import gettext as _

MESSAGE_CHARS = 4000
"""Longest message (a test's failure, a probe answer's error) kept; the rest is cut, counted."""
NAME_CHARS = 200
"""Longest name (a test's name or node id, a frame's path, function or line) kept."""
KEPT = "\n"
"""The one control character kept: messages have lines (diffs, frames)."""


def _escaped(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def is_surrogate(char: str) -> bool:
    return 0xD800 <= ord(char) <= 0xDFFF


def _shown(char: str, keep: str) -> str:
    if (char.isprintable() and not is_surrogate(char)) or char in keep:
        return char
    return _escaped(char)


def escape(text: str, keep: str = KEPT) -> str:
    """``text`` with every non-printable character (control characters, escape sequences'
    ``ESC``, C1 controls, bidirectional overrides, lone surrogates) shown as ``\\xNN``,
    ``\\uNNNN`` or ``\\UNNNNNNNN``; the characters in ``keep`` stay as they are."""
    if text.isprintable() and not any(is_surrogate(c) for c in text):
        return text
    return "".join(_shown(c, keep) for c in text)


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, an ellipsis marking the cut (for a line
    shown whole in a table or a message; ``safe_text`` cuts what has not been made safe)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cut_note(left: int) -> str:
    return _("… [{count} more characters cut]").format(count=left)


def safe_text(value: object, limit: int = MESSAGE_CHARS, keep: str = KEPT) -> str:
    """Any value from learner code as text safe to show: escaped, and at most ``limit``
    characters followed by a note of how many of the original were cut (``cut_note``)."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit and text.isprintable() and not any(is_surrogate(c) for c in text):
        return text
    pieces: list[str] = []
    length = used = 0
    for char in text[:limit]:
        piece = _shown(char, keep)
        if length + len(piece) > limit:
            break
        pieces.append(piece)
        length += len(piece)
        used += 1
    left = len(text) - used
    return "".join(pieces) + (cut_note(left) if left else "")


def safe_name(value: object) -> str:
    """A one-line name from learner code: no newline, at most ``NAME_CHARS``."""
    return safe_text(value, NAME_CHARS, keep="")
