"""Hints on request: each lab's three levels, and the workspace's record of the levels opened.

A learner opens a lab's help one level at a time (the idea and the chapter's section, a
strategy in words, the steps); ``.course-hints.toml`` in the workspace keeps the highest level
each lab has opened. It is information for the learner and the instructor, never a penalty.
"""

from __future__ import annotations

import os
import tempfile
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from ..locale import N_, unquoted
from ..locale import gettext as _
from ..sandboxed.columns import terminal_width, wrap
from ..sandboxed.nofollow import UnsafePath, read_regular
from ..sandboxed.tables import TableReader
from ..sandboxed.untrusted import safe_text
from .manifest import Lab

HINTS_FILE = ".course-hints.toml"
WIDTH = 96  # a hint's lines, as the terminal report wraps its own
HINTS_BYTES = 4 * 1024  # a few lines; a larger file is refused before it is read
HEADER = N_(
    "The hint levels each lab has opened (checkpoint --hint, h in --watch, hint() in a "
    "notebook). Information for you and your instructor, never a penalty."
)

Opened = Mapping[str, int]
"""Lab id → the highest hint level opened (1 to the lab's number of levels)."""
NONE_OPENED: Opened = MappingProxyType({})


class HintsError(ValueError):
    """The workspace's hint record cannot be read; the message names the file and the key."""


@dataclass(frozen=True)
class Hint:
    """One level of a lab's help."""

    lab: Lab
    level: int
    text: str

    @property
    def levels(self) -> int:
        return len(self.lab.hints)


def parse_hints(data: bytes, source: str, labs: Mapping[str, Lab]) -> dict[str, int]:
    """The levels a hint record holds; a ``HintsError`` names ``source`` and the key."""
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as error:
        said = _("{source}: not valid TOML ({error})")
        raise HintsError(said.format(source=source, error=error)) from None
    f = TableReader(table, "", source, HintsError)
    opened = TableReader(f.raw("opened", {}), "opened", source, HintsError)
    f.finish()
    found: dict[str, int] = {}
    for lab_id in list(opened.table):
        shown = safe_text(lab_id, 40, keep="")
        if lab_id not in labs:
            raise opened.error(shown, _("no such lab in this chapter"))
        levels = len(labs[lab_id].hints)
        level = opened.raw(lab_id)
        if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= levels:
            said = _("must be a hint level from 1 to {levels}, got {value}")
            raise opened.error(shown, said.format(levels=levels, value=safe_text(repr(level), 40)))
        found[lab_id] = level
    opened.finish()
    return found


def read_hints(root: Path, labs: Mapping[str, Lab]) -> dict[str, int]:
    """The record in workspace ``root`` (none yet: nothing opened), never through a link."""
    shown = safe_text(root / HINTS_FILE, keep="")
    if not os.path.lexists(root / HINTS_FILE):
        return {}
    directory = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        data = read_regular(directory, HINTS_FILE, shown, HINTS_BYTES)
    except UnsafePath as error:
        raise HintsError(str(error)) from None
    finally:
        os.close(directory)
    return parse_hints(data, shown, labs)


def hints_text(opened: Opened) -> str:
    """The record's TOML text: the header, then each lab's level in lab order as given."""
    lines = [f"# {line}\n" for line in wrap(_(HEADER), 94)] + ["[opened]\n"]
    lines += [f'"{lab_id}" = {level}\n' for lab_id, level in opened.items()]
    return "".join(lines)


def write_hints(root: Path, opened: Opened) -> None:
    """Replace the record in ``root`` whole (a link in its place is replaced, never followed)."""
    fd, temporary = tempfile.mkstemp(prefix=".course-hints-", dir=root)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(hints_text(opened))
        os.replace(temporary, root / HINTS_FILE)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def next_hint(lab: Lab, opened: Opened) -> Hint:
    """The level after the last one opened for ``lab``; the last level again once all are."""
    level = min(opened.get(lab.id, 0) + 1, len(lab.hints))
    return Hint(lab, level, lab.hints[level - 1])


def open_next_hint(root: Path, labs: Mapping[str, Lab], lab: Lab) -> Hint:
    """Open ``lab``'s next level and record it in workspace ``root``."""
    opened = read_hints(root, labs)
    hint = next_hint(lab, opened)
    if hint.level > opened.get(lab.id, 0):
        recorded = {**opened, lab.id: hint.level}
        write_hints(root, {known: recorded[known] for known in labs if known in recorded})
    return hint


def render_hint(hint: Hint, again: str) -> list[str]:
    """A hint as a terminal or a notebook shows it; ``again`` opens the next level."""
    lab = hint.lab
    head = _("Hint {level} of {levels} · Lab {lab} {title}").format(
        level=hint.level, levels=hint.levels, lab=lab.id, title=lab.title
    )
    width = terminal_width(widest=WIDTH)
    lines = [head, *wrap(" ".join(hint.text.split()), width, "  ", "  ")]
    if hint.level == 1:
        section = _("In the chapter: the section “{section}”").format(section=lab.section)
        lines += wrap(section, width, "  ", "  ")
    if hint.level < hint.levels:
        said = _("Still stuck? `{command}` shows hint {level} of {levels}.")
        lines.append(unquoted(said.format(command=again, level=hint.level + 1, levels=hint.levels)))
    else:
        lines.append(_("This is the last hint: asked again, it shows this one."))
    return lines


def hint_pointer(lab: Lab, opened: Opened, command: str) -> str:
    """The one line a red run ends with: where the lab's next hint is, never the hint."""
    hint = next_hint(lab, opened)
    if opened.get(lab.id, 0) >= hint.levels:
        said = _("All {levels} hints for Lab {lab} are open: `{command}` shows the last again.")
        return unquoted(said.format(levels=hint.levels, lab=lab.id, command=command))
    said = _("stuck? `{command}` shows hint {level} of {levels} for Lab {lab}")
    return unquoted(said.format(command=command, level=hint.level, levels=hint.levels, lab=lab.id))


def hints_summary(labs: Collection[Lab], opened: Opened) -> str:
    """The levels opened, lab by lab, as information (``--review``): never a penalty."""
    shown = [
        _("Lab {lab} {level} of {levels}").format(
            lab=lab.id, level=opened[lab.id], levels=len(lab.hints)
        )
        for lab in labs
        if lab.id in opened
    ]
    if not shown:
        return _("Hints opened: none.")
    said = _("Hints opened (information, never a penalty): {labs}.")
    return said.format(labs=_(", ").join(shown))


def labs_by_id(labs: Collection[Lab]) -> dict[str, Lab]:
    return {lab.id: lab for lab in labs}
