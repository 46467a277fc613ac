"""What a roster folder holds: each entry a submission to grade, a row saying why not, or a skip.

Every entry (a folder, a git repository, an archive, a file) ends up in exactly one place: a
``Submission`` (a gradebook row) or a ``Skip`` (printed with why). A learner's name is the entry's
less its archive suffix, or a ``--names`` pattern's ``learner`` group; of several submissions the
newest is graded, at most ``SUBMISSIONS_LISTED`` are rows. Every pass is linear in the entries.
A submission is a workspace, or lab files without one (``loose.py``): at the roster's top, named
for their learner by ``--names``; in a learner's folder; in an archive; or in a workspace that
lost its marker. ``opened`` gives what is graded of it, or says why there is nothing to grade.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from pathlib import Path
from typing import Literal

from ...locale import gettext as _
from ...locale import ngettext
from ...sandboxed.columns import pad
from ...sandboxed.marker import MARKER, WorkspaceError
from ..records.gradebook import Grade, clean, is_feedback_folder, is_gradebook_name
from .archives import (
    DEFAULT_CAPS,
    READ_SUFFIXES,
    Caps,
    Refused,
    archive_suffix,
    is_readable_archive,
    unpack,
)
from .gitrepo import Checkout
from .loose import NO_LAB_FILES, LabFiles, Loose, find_loose, roster_files
from .safefs import Tree, UnsafePath, lstat_kind

SEARCH_DEPTH = 3  # how deep under a learner's folder (or unpacked archive) a workspace may be
SUBMISSIONS_LISTED = 10  # a learner's submissions that are rows (the newest); the rest counted
IGNORED_IN_ARCHIVES = ("__MACOSX",)
LOOSE_NAMED = 5  # a folder of loose files: the names its reason lists (the rest are counted)

Kind = Literal["workspace", "archive", "files", "skipped", "symlink", "unreadable", "refused"]
GRADABLE = ("workspace", "archive", "files")


class NamesError(WorkspaceError):
    """A ``--names`` pattern that cannot be used; the message says why."""


class NothingToGrade(WorkspaceError):
    """A submission holding no workspace and no lab file (an empty one, a report alone): a
    row that is not graded, saying what it holds; never a refusal."""


def files_are_not_a_submission() -> str:
    """Why a file at the roster's top is not a row (the archives read named)."""
    said = _("a file that is not a submission (not a folder, nor an archive: {suffixes})")
    return said.format(suffixes=_(", ").join(READ_SUFFIXES))


@dataclass(frozen=True)
class Submission:
    """One row of the gradebook: a workspace to grade, or why an entry is not graded."""

    learner: str  # a nested folder's is its path below the roster, e.g. gus/practice-11
    kind: Kind
    why: str = ""
    entry: str = ""  # the roster entry it came from, e.g. ada.zip
    below: tuple[str, ...] = ()  # a workspace folder's path below the roster
    mtime: float = 0.0
    named: bool = True  # False when a --names pattern did not match the entry's name
    newer: str = ""  # the newer submission of this learner graded instead
    older: tuple[str, ...] = ()  # the graded one's learner also handed in these, older
    late: bool = False  # the platform's name marks it late (``marked_late``)
    files: tuple[tuple[str, str], ...] = ()
    """Lab files at the roster's top: each entry and the file name it stands for, the learner's
    name taken off (``fay_6_1006_summary.py``, ``summary.py``)."""

    @property
    def parts(self) -> tuple[str, ...]:
        return self.below or (self.entry,)

    @property
    def source(self) -> str:
        """How it arrived: ``folder``, ``files``, ``symbolic link`` or the archive's suffix."""
        if self.kind == "symlink":
            return "symbolic link"
        if self.files:
            return "files"
        if self.kind in ("archive", "refused"):
            return archive_suffix(self.entry).lstrip(".")
        return "folder"


@dataclass(frozen=True)
class Skip:
    """A roster entry that is not a row of the gradebook, and why."""

    name: str
    why: str


@dataclass(frozen=True)
class Survey:
    """Everything a roster folder holds: the gradebook's rows and the skipped entries."""

    submissions: tuple[Submission, ...]
    skipped: tuple[Skip, ...]

    @property
    def unnamed(self) -> list[str]:
        """Entries a ``--names`` pattern did not match (named by their whole name)."""
        return list(dict.fromkeys(s.entry for s in self.submissions if not s.named))

    def closing(self, rows: int) -> list[str]:
        """The lines after the rows: what ``--names`` did not match, what is skipped, counts."""
        lines = []
        if self.unnamed:
            shown = _(", ").join(clean(entry) for entry in self.unnamed)
            said = ngettext(
                "--names did not match {count} entry, each named by its whole name: {entries}",
                "--names did not match {count} entries, each named by its whole name: {entries}",
                len(self.unnamed),
            )
            lines.append(said.format(count=len(self.unnamed), entries=shown))
        if self.skipped:
            lines.append(_("Not in the gradebook ({count}):").format(count=len(self.skipped)))
        lines += [f"  {pad(clean(skip.name), 24)} {skip.why}" for skip in self.skipped]
        count = len(self.skipped)
        if self.skipped:
            said = ngettext(
                "Roster: {rows} row(s) in the gradebook, {count} entry not in it (listed above)",
                "Roster: {rows} row(s) in the gradebook, {count} entries not in it (listed above)",
                count,
            )
        else:
            said = _("Roster: {rows} row(s) in the gradebook; no entry left out of it")
        lines.append(said.format(rows=rows, count=count))
        return lines


def names_pattern(text: str) -> re.Pattern[str]:
    """A ``--names`` pattern, checked: a valid regular expression with a ``learner`` group."""
    try:
        pattern = re.compile(text)
    except re.error as error:
        said = _("--names {pattern} is not a regular expression: {error}")
        raise NamesError(said.format(pattern=repr(text), error=error)) from None
    if "learner" not in pattern.groupindex:
        said = _("--names {pattern} has no (?P<learner>...) group to take the name from")
        raise NamesError(said.format(pattern=repr(text)))
    return pattern


def learner_name(name: str, pattern: re.Pattern[str] | None) -> tuple[str, bool]:
    """The learner an entry ``name`` belongs to (its ``pattern`` match, else the name less its
    archive suffix) and whether ``pattern`` (if any) gave it."""
    suffix = archive_suffix(name)
    stem = name[: len(name) - len(suffix)] if suffix else name
    found = pattern.match(name) if pattern is not None else None
    learner = found.group("learner") if found else None
    if learner:
        return learner, True
    return stem, pattern is None


def marked_late(name: str, pattern: re.Pattern[str] | None) -> bool:
    """Whether a platform's name marks the entry late: the ``--names`` pattern's ``late`` group
    matched, or Canvas's ``_late_`` follows the learner's name (``smithben_late_12346_…``)."""
    found = pattern.match(name) if pattern is not None else None
    if pattern is None or found is None or not found.group("learner"):
        return False
    if "late" in pattern.groupindex:
        return bool(found.group("late"))
    return name[found.end("learner") :].startswith("_late_")


def mark_older(submissions: Sequence[Submission]) -> list[Submission]:
    """Each learner's newest gradable submission (latest mtime, then last entry name) stays;
    the others point to it (same order)."""
    gradable: dict[str, list[Submission]] = {}
    for item in submissions:
        if item.kind in GRADABLE:
            gradable.setdefault(item.learner, []).append(item)
    age = attrgetter("mtime", "entry")  # the newest: latest mtime, then last entry name
    newest = {learner: max(items, key=age) for learner, items in gradable.items()}
    marked = []
    for item in submissions:
        best = newest.get(item.learner)
        if best is None or item.kind not in GRADABLE or len(gradable[item.learner]) == 1:
            marked.append(item)
        elif best is item:  # once per learner: the pass stays linear
            older = tuple(o.entry for o in gradable[item.learner] if o is not best)
            marked.append(replace(item, older=older))
        else:
            why = _("an older submission of {learner}: {entry} is graded instead")
            why = why.format(learner=item.learner, entry=best.entry)
            marked.append(replace(item, newer=best.entry, why=why))
    return marked


def cap_submissions(
    submissions: Sequence[Submission], listed: int = SUBMISSIONS_LISTED
) -> tuple[list[Submission], list[Skip]]:
    """At most ``listed`` submissions of each learner (nested workspaces counted as their
    folder's learner's), the newest; one ``Skip`` per learner saying how many more and why."""
    groups: dict[str, list[Submission]] = {}
    for item in submissions:
        groups.setdefault(item.learner.split("/")[0], []).append(item)
    dropped: set[int] = set()
    skipped = []
    for learner, items in groups.items():
        if len(items) > listed:
            left = sorted(items, key=attrgetter("mtime", "entry", "below"), reverse=True)[listed:]
            dropped |= {id(item) for item in left}
            why = _(
                "{count} more submissions, older than the {listed} listed: not graded "
                "(at most {listed} submissions of one learner are read)"
            ).format(count=len(left), listed=listed)
            skipped.append(Skip(learner, why))
    return [item for item in submissions if id(item) not in dropped], skipped


def find_workspaces(tree: Tree, depth: int = SEARCH_DEPTH) -> list[tuple[str, ...]]:
    """Folders at or below ``tree`` holding a workspace marker, walking no symbolic link
    (``UnsafePath`` if one on the way cannot be listed)."""
    if tree.kind(MARKER) != "missing":
        return [tree.below]
    if depth == 0:
        return []
    found: list[tuple[str, ...]] = []
    for name, kind in tree.kinds().items():
        if kind == "directory" and not name.startswith(".") and name not in IGNORED_IN_ARCHIVES:
            found += find_workspaces(Tree(tree.base, (*tree.below, name)), depth - 1)
    return found


def folder_entries(
    roster: Path,
    name: str,
    pattern: re.Pattern[str] | None = None,
    lab_files: LabFiles = NO_LAB_FILES,
) -> list[Submission]:
    """What the folder ``roster/name`` is: its workspaces (at most ``SEARCH_DEPTH`` down), else
    the archives at its top, else its lab files (``find_loose``), else a skipped entry saying
    what it holds."""
    learner, named = learner_name(name, pattern)
    mtime = os.lstat(roster / name).st_mtime
    late = marked_late(name, pattern)
    entry = Submission(learner, "skipped", entry=name, mtime=mtime, named=named, late=late)
    try:
        found = find_workspaces(Tree(roster, (name,)))
    except UnsafePath as error:
        return [replace(entry, kind="unreadable", why=str(error))]
    if found:
        return [
            replace(entry, learner="/".join((learner, *below[1:])), kind="workspace", below=below)
            for below in found
        ]
    inside = _archives_inside(roster, entry)
    if inside:
        return inside
    try:
        loose = find_loose(lab_files, Tree(roster, (name,)))
    except UnsafePath as error:
        return [replace(entry, kind="unreadable", why=str(error))]
    if loose is not None:
        return [replace(entry, kind="files", below=(name,))]
    return [replace(entry, why=_not_a_workspace(roster, name))]


def _not_a_workspace(roster: Path, name: str) -> str:
    """Why the folder ``roster/name`` holds nothing to grade: it is empty, or what it holds."""
    try:
        held = sorted(n for n in Tree(roster, (name,)).kinds() if n not in IGNORED_IN_ARCHIVES)
    except UnsafePath as error:
        return str(error)
    return holding(held)


def holding(held: Sequence[str]) -> str:
    """Why an upload holding the entries ``held`` (and no workspace, archive or lab file) is not
    graded: ``empty submission``, or the entries, a few named."""
    if not held:
        return _("empty submission")
    shown = _(", ").join(clean(n) for n in held[:LOOSE_NAMED])
    if len(held) > LOOSE_NAMED:
        shown += " " + _("and {count} more").format(count=len(held) - LOOSE_NAMED)
    said = _("no lab files and no practice workspace (no {marker}): {files}")
    return said.format(files=shown, marker=MARKER)


def _archives_inside(roster: Path, folder: Submission) -> list[Submission]:
    """The archives at the top of a folder without a workspace, each a submission of the
    folder's learner (a platform that puts each learner's upload in a folder of their name)."""
    try:
        kinds = Tree(roster, (folder.entry,)).kinds()
    except UnsafePath:
        return []
    return [
        replace(
            folder,
            kind="archive",
            entry=f"{folder.entry}/{name}",
            mtime=os.lstat(roster / folder.entry / name).st_mtime,
        )
        for name, kind in kinds.items()
        if is_readable_archive(name) and not name.startswith(".") and kind == "file"
    ]


def _entry(
    roster: Path, name: str, pattern: re.Pattern[str] | None, lab_files: LabFiles
) -> list[Submission] | Skip | tuple[str, str]:
    """What one roster entry is: rows of the gradebook, a skip with why, or a file of a learner
    named by ``pattern`` (their name and the file's name without it), grouped by ``survey``."""
    kind = lstat_kind(roster / name)
    if name.startswith("."):
        return Skip(name, _("hidden"))
    if is_gradebook_name(name) and kind in ("file", "symlink"):
        return Skip(name, _("a gradebook (replaced when the gradebook is written, never read)"))
    if is_feedback_folder(name) and kind == "directory":
        return Skip(name, _("feedback files (rewritten when the gradebook is written, never read)"))
    if is_assignment_name(name) and kind == "file":
        return Skip(name, _("the assignment file (its audit seed; read by the grader only)"))
    learner, named = learner_name(name, pattern)
    late = marked_late(name, pattern)
    if kind == "symlink":
        why = _("a symbolic link (to {target}): links are listed, never graded")
        why = why.format(target=os.readlink(roster / name))
        return [Submission(learner, "symlink", why, entry=name, named=named, late=late)]
    if kind == "directory":
        return folder_entries(roster, name, pattern, lab_files)
    if kind == "file" and archive_suffix(name):
        mtime = os.lstat(roster / name).st_mtime
        if is_readable_archive(name):
            return [Submission(learner, "archive", entry=name, mtime=mtime, named=named, late=late)]
        why = _("{suffix} archives are not read ({suffixes} are)")
        why = why.format(suffix=archive_suffix(name), suffixes=_(", ").join(READ_SUFFIXES))
        refused = Submission(learner, "refused", why, entry=name, mtime=mtime, named=named)
        return [replace(refused, late=late)]
    if kind == "file" and pattern is not None and named:
        found = pattern.match(name)
        rest = name[found.end() :] if found is not None else name
        return learner, rest or name
    if kind == "file" and lab_files.named(name):
        said = _(
            "a lab file at the roster's top, whose learner is not known: put it in a folder "
            "named for them, or name them with --names"
        )
        return Skip(name, said)
    if kind == "file":
        return Skip(name, files_are_not_a_submission())
    return Skip(name, _("not a file or folder ({kind})").format(kind=kind))


def is_assignment_name(name: str) -> bool:
    """``assignment-11.toml``, ``assignment-11-2.toml``: names an assignment file may have."""
    return re.fullmatch(r"assignment-[\w.]+?(-\d+)?\.toml", name) is not None


def _learners_files(
    roster: Path,
    files: Mapping[str, list[tuple[str, str]]],
    pattern: re.Pattern[str] | None,
    lab_files: LabFiles,
) -> list[Submission]:
    """Each learner's files at the roster's top as one submission: graded when one of them is
    a lab file, else a row saying what they handed in."""
    rows = []
    for learner, named in files.items():
        entries = [entry for entry, _name in named]
        mtime = max(os.lstat(roster / entry).st_mtime for entry in entries)
        late = any(marked_late(entry, pattern) for entry in entries)
        row = Submission(
            learner, "files", entry=", ".join(entries), mtime=mtime, late=late, files=tuple(named)
        )
        if not any(lab_files.named(name) for _entry_name, name in named):
            row = replace(row, kind="skipped", why=holding([name for _e, name in named]))
        rows.append(row)
    return rows


def survey(
    roster: Path, pattern: re.Pattern[str] | None = None, lab_files: LabFiles = NO_LAB_FILES
) -> Survey:
    """Every entry of ``roster``: the gradebook's rows in name order, and what is skipped
    (``lab_files``: what the chapter's lab files are called, to grade them handed in loose)."""
    roster = roster.resolve()
    if not roster.is_dir():
        raise WorkspaceError(
            _("{roster}: not a directory of learners' workspaces").format(roster=roster)
        )
    if os.path.lexists(roster / MARKER):
        said = _("{roster} is itself a workspace; check it with --practice")
        raise WorkspaceError(said.format(roster=roster))
    rows: list[Submission] = []
    skipped: list[Skip] = []
    files: dict[str, list[tuple[str, str]]] = {}
    for name in sorted(os.listdir(roster)):
        found = _entry(roster, name, pattern, lab_files)
        if isinstance(found, Skip):
            skipped.append(found)
        elif isinstance(found, tuple):
            files.setdefault(found[0], []).append((name, found[1]))
        else:
            rows += found
    rows += _learners_files(roster, files, pattern, lab_files)
    rows.sort(key=attrgetter("entry"))
    rows, overflow = cap_submissions(rows)
    return Survey(tuple(mark_older(rows)), (*skipped, *overflow))


class Many(WorkspaceError):
    """An archive holding several workspaces: whose is not known, so none is graded."""


def archive_workspace(root: Path) -> Tree | None:
    """The one workspace of an unpacked archive, at its top or in its folders; None when it
    holds none; ``Many`` when several (``Refused`` when a folder cannot be listed)."""
    try:
        found = find_workspaces(Tree(root))
    except UnsafePath as error:
        raise Refused(str(error)) from None
    if len(found) > 1:
        listed = _(", ").join("/".join(parts) or "." for parts in found)
        said = _("holds {count} workspaces ({listed}); one archive is one learner's")
        raise Many(said.format(count=len(found), listed=listed))
    return Tree(root, found[0]) if found else None


def _unpacked(root: Path, lab_files: LabFiles) -> Tree | Loose:
    """What is graded of an unpacked archive: its workspace, else its lab files; else
    ``NothingToGrade`` saying what it holds."""
    tree = archive_workspace(root)
    if tree is not None:
        return tree
    try:
        loose = find_loose(lab_files, Tree(root))
        held = [n for n in Tree(root).kinds() if n not in IGNORED_IN_ARCHIVES]
    except UnsafePath as error:
        raise Refused(str(error)) from None
    if loose is not None:
        return loose
    raise NothingToGrade(holding(sorted(held)))


@contextlib.contextmanager
def opened(
    roster: Path,
    submission: Submission,
    lab_files: LabFiles = NO_LAB_FILES,
    caps: Caps = DEFAULT_CAPS,
) -> Iterator[Tree | Loose]:
    """What is graded of a submission: its workspace as a ``Tree``, or its lab files (``Loose``,
    to be put in the kit's scaffold). An archive is unpacked and removed afterwards (``Refused``,
    with its name, when it is not); ``NothingToGrade`` when it holds neither; a ``Many`` or
    ``UnsafePath`` as a ``WorkspaceError``."""
    if submission.files:
        try:
            yield roster_files(lab_files, Tree(roster), submission.files)
        except UnsafePath as error:
            raise WorkspaceError(str(error)) from None
        return
    if submission.kind == "files":
        try:
            loose = find_loose(lab_files, Tree(roster, submission.below))
        except UnsafePath as error:
            raise WorkspaceError(str(error)) from None
        if loose is None:
            raise NothingToGrade(_not_a_workspace(roster, submission.below[0]))
        yield loose
        return
    if submission.kind != "archive":
        yield Tree(roster, submission.below)
        return
    with tempfile.TemporaryDirectory(prefix="course-submission-") as folder:
        root = Path(folder) / "unpacked"
        root.mkdir(mode=0o700)
        try:
            unpack(roster / submission.entry, root, caps)
            found = _unpacked(root, lab_files)
        except Refused as error:
            said = _("{entry}: refused: {error}")
            refused = type(error)(said.format(entry=submission.entry, error=error))
            raise refused from None
        except (Many, NothingToGrade) as error:
            said = _("{entry}: {why}").format(entry=submission.entry, why=error)
            raise type(error)(said) from None
        yield found


def where(roster: Path, submission: Submission, tree: Tree | None = None) -> str:
    """Where a submission's workspace is, for the gradebook (inside an archive: after it; of
    files at the roster's top: the first's path, then the others' names)."""
    if submission.files:
        first, *others = (entry for entry, _name in submission.files)
        return ", ".join([str(roster / first), *others])
    if submission.kind != "archive":
        return str(roster.joinpath(*submission.parts))
    inside = "/".join(tree.below) if tree is not None else ""
    return str(roster / submission.entry) + (f"/{inside}" if inside else "")


def with_intake(row: Grade, submission: Submission) -> Grade:
    """``row`` with how the submission arrived, and the learner's older submissions if any."""
    row = replace(row, source=row.source or submission.source)
    if submission.late:
        row = replace(row, late=True, flags=(*row.flags, _("late")))
    if not submission.older:
        return row
    note = _("also handed in {entries} (older, not graded)")
    note = clean(note.format(entries=_(", ").join(submission.older)))
    return replace(row, notes=(*row.notes, note), flags=(*row.flags, _("several submissions")))


def with_checkout(
    row: Grade, checkout: Checkout | None, submission: Submission, files: Mapping[str, bytes]
) -> Grade:
    """``row`` with the git commit graded (or why none is known) and which ``files`` differ."""
    if checkout is None:
        return row
    source = "git" if submission.kind == "workspace" else submission.source
    notes, flags = [checkout.note] if checkout.note else [], list(row.flags)
    changed = checkout.changed(files)
    if changed:
        said = _("changed since the commit, graded as they are: {files}")
        notes.append(said.format(files=_(", ").join(changed)))
        flags.append(_("changed since the commit"))
    notes = [clean(note) for note in notes]
    return replace(
        row, source=source, commit=checkout.commit, notes=(*row.notes, *notes), flags=tuple(flags)
    )
