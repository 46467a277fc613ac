"""The assignment file: what is fixed once per assignment, so every regrade draws the same cases.

``assignment-11.toml`` holds the chapter and the audit seed (the probe cases no workspace holds).
It is made once, with a secret seed, and kept: beside the roster's gradebook, or inside the
Gradescope zip. The same learner files then get the same grade and flags at every regrade.

Whoever chose the file chose the seed, and with it every audit input. So a file found where the
roster looks for one by default is used only when this kit made it here: each file it makes is
remembered by a digest of its bytes in the kit's cache, which only the instructor's user
writes. Any other file there (one put beside the gradebook before the first run, one copied
from another machine) is refused, naming it, until the instructor names it with
``--assignment``; a file named that way is the instructor's.
"""

from __future__ import annotations

import secrets
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ...harness.kit import digest, kit_cache
from ...locale import gettext as _
from ...sandboxed.marker import WorkspaceError
from ...sandboxed.tables import TableReader
from ..intake.safefs import atomic_write
from .kitcache import keep

FORMAT = 1
SEED_LIMIT = 2**31
MOST_BYTES = 64 * 1024


class AssignmentError(WorkspaceError):
    """An assignment file that cannot be read; the message names the file and the field."""


@dataclass(frozen=True)
class Assignment:
    """One assignment's fixed choices, and the file that keeps them."""

    chapter: str
    audit_seed: int
    path: Path


def file_name(chapter: str) -> str:
    return f"assignment-{chapter}.toml"


def new_seed(avoid: int) -> int:
    """A secret seed other than ``avoid`` (the chapter's, which every workspace holds)."""
    seed = secrets.randbelow(SEED_LIMIT)
    while seed == avoid:
        seed = secrets.randbelow(SEED_LIMIT)
    return seed


def render(chapter: str, seed: int) -> str:
    comment = (
        f"# Chapter {chapter}'s assignment: the seed of the probe cases no workspace holds.\n"
        "# Keep this file with the assignment (beside the gradebook) and never share it:\n"
        "# the same files then get the same grade at every regrade.\n"
    )
    return f'{comment}format = {FORMAT}\nchapter = "{chapter}"\naudit_seed = {seed}\n'


def read_assignment(path: Path, chapter: str) -> Assignment:
    """The assignment kept at ``path`` for ``chapter``; ``AssignmentError`` naming the field."""
    try:
        data = path.read_bytes()
        if len(data) > MOST_BYTES:
            raise AssignmentError(_("{path}: larger than an assignment file").format(path=path))
        table = tomllib.loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise AssignmentError(f"{path}: {error}") from None
    f = TableReader(table, "", str(path), AssignmentError)
    if f.count("format", minimum=1) != FORMAT:
        raise f.error("format", f"must be {FORMAT}")
    found = Assignment(f.text("chapter"), f.count("audit_seed"), path)
    f.finish()
    if found.chapter != chapter:
        said = _("{path}: the assignment of chapter {found}, not of chapter {chapter}")
        raise AssignmentError(said.format(path=path, found=found.chapter, chapter=chapter))
    return found


MADE = "assignments"
"""In the kit's cache: one empty file per assignment file this kit made, named by its digest."""


def _made_record(data: bytes) -> Path:
    return kit_cache() / MADE / digest(data)


def made_here(path: Path) -> bool:
    """Whether this kit made the assignment file at ``path`` (as it now reads), here."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return len(data) <= MOST_BYTES and _made_record(data).is_file()


def make_assignment(path: Path, chapter: str, seed: int) -> Assignment:
    """A new assignment file at ``path`` (never over an existing one), remembered as made here."""
    if path.exists() or path.is_symlink():
        return read_assignment(path, chapter)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = render(chapter, seed).encode("utf-8")
    keep(_made_record(data), b"")
    atomic_write(path, data)
    return Assignment(chapter, seed, path)


def kept_or_made(
    path: Path, chapter: str, avoid: int, seed: int | None = None, named: bool = False
) -> tuple[Assignment, bool]:
    """The assignment at ``path``, made there first (with ``seed``, else a secret one) when
    there is none; and whether it was made now. A file already there is used only when the
    instructor ``named`` it (``--assignment``) or this kit made it (``made_here``); any other
    is an ``AssignmentError`` naming it and what to do."""
    if path.exists() or path.is_symlink():
        if not named and not made_here(path):
            said = _(
                "{path}: an assignment file this kit did not make here, so it is not used "
                "(whoever put it there chose the audit seed). If it is yours, name it: "
                "--assignment {path}; if not, move it away and the next run makes a new one"
            )
            raise AssignmentError(said.format(path=path))
        return read_assignment(path, chapter), False
    return make_assignment(path, chapter, seed if seed is not None else new_seed(avoid)), True
