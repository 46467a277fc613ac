"""Curriculum manifests: one TOML file per chapter, read and checked into typed records."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Literal

# the chapters' folders: the built-in ones (``locale.BUILT_IN_CHAPTERS``: package data, a path
# rather than ``importlib.resources``, whose import every command would pay for), then those of
# ``COURSE_CHAPTERS``, which the doors pass to their children
from ..locale import CHAPTER_ROOTS as CHAPTER_ROOTS
from ..locale import EDITIONS, SOURCE_EDITION, chapter_roots
from ..locale import gettext as _
from ..sandboxed.tables import TableReader

MANIFEST_NAME = "chapter.toml"
FileRole = Literal["learner", "given", "test"]
FILE_ROLES: tuple[FileRole, ...] = ("learner", "given", "test")


class ManifestError(ValueError):
    """A manifest is missing, unreadable or has a bad field; the message names where."""


@dataclass(frozen=True)
class Card:
    """The checkpoint card the chapter prints before its labs."""

    title: str
    mode: str
    parent: str
    target: str
    teaching_files: tuple[str, ...]
    scaffold: str
    know_before: str
    first_step: str
    first_red_light: str
    locate: str
    practice: str
    focused_run: str  # a command, printed in the shell's form (``commands.in_shell``)
    focused_run_note: str
    evidence: str


UNTRANSLATED = ("teaching_files", "locate", "practice", "focused_run")  # paths and commands


@dataclass(frozen=True)
class LabFunction:
    """A reference function the learner writes: ``module.function`` and what its stub says."""

    name: str
    todo: str

    @property
    def module(self) -> str:
        return self.name.partition(".")[0]

    @property
    def function(self) -> str:
        return self.name.partition(".")[2]


@dataclass(frozen=True)
class Lab:
    """One lab: its id, what it builds, how many focused tests prove it, and help."""

    id: str
    title: str
    tests: int
    files: tuple[str, ...]
    goal: str
    """What the lab builds, in a sentence (LEARNING.md); never how."""
    section: str
    """The chapter's heading that explains the lab's idea, as the chapter writes it."""
    hints: tuple[str, ...]
    """Help on request, one level at a time: the idea, a strategy in words, the steps."""
    heading: str
    notebook: str  # relative to an edition's folder
    select: str  # a ``pytest -k`` expression that selects just this lab's tests
    functions: tuple[LabFunction, ...]  # their stubs raise ``LabNotImplemented``
    test_file: str  # the chapter's focused tests unless it says so
    optional: bool = False  # reported on its own, never counted toward the evidence
    points: int = 0
    """What a platform grades it (``points``, else its tests), earned only when it passes whole."""

    @property
    def solution(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.functions)


@dataclass(frozen=True)
class WorkspaceFile:
    """A file of a practice workspace: where it goes, and where the starter scaffold and the
    reference take it from (the same file for everything but the learner's modules)."""

    path: str
    starter: str
    reference: str
    role: FileRole
    optional: bool = False
    """A workspace may lack it (a generated copy of kit data; the zero-install site's leave it
    out): its absence is no edit."""


@dataclass(frozen=True)
class ReviewQuestion:
    """One question of the closing review, and the test that shows the learner's own data."""

    text: str
    show: str  # a test of the review file that records what the learner's code returns


@dataclass(frozen=True)
class ReviewCheck:
    """One demonstration of the closing review, checked by a test on the learner's code."""

    title: str
    test: str
    hint: str


@dataclass(frozen=True)
class Review:
    """The chapter's closing review: questions to explain and demonstrations to check."""

    title: str
    intro: str
    test_file: str  # run by ``checkpoint CHAPTER --review``
    questions: tuple[ReviewQuestion, ...]
    checks: tuple[ReviewCheck, ...]

    @property
    def tests(self) -> tuple[str, ...]:
        return tuple(q.show for q in self.questions) + tuple(c.test for c in self.checks)


@dataclass(frozen=True)
class Manifest:
    """Everything chapter-specific the harness needs."""

    chapter: str
    title: str
    package: str
    reference: str
    focused_tests: str
    default_workspace: str
    card: Card
    labs: tuple[Lab, ...]
    files: tuple[WorkspaceFile, ...]
    notebooks: dict[str, str]  # folders by edition (``en``, ``zh``…); the first is the default
    source: str  # where it was read from (for messages)
    review: Review | None = None
    probes: str | None = None  # the probe module (kit-relative): cases, how to call each lab
    probe_seed: int = 0  # every door draws with it, so the same files get the same verdict
    folder: str = ""  # the chapter's folder (kit-relative, or absolute outside the kit)
    notebook_sources: str = ""  # the notebooks' sources (kit-relative; "": FOLDER/notebooks)
    other_notebooks: tuple[str, ...] = ()  # a workspace's notebooks besides the labs' ones
    parent: str | None = None
    """The chapter this one builds on: its modules come first (``inherit``)."""

    def lab_of_function(self, module: str, function: str) -> Lab | None:
        """The lab whose solution is ``module.function`` (``compaction.latest_compaction``)."""
        name = f"{module}.{function}"
        return next((lab for lab in self.labs if name in lab.solution), None)

    def lab(self, lab_id: str) -> Lab:
        """The lab with ``lab_id``; a ``ManifestError`` lists the known ids otherwise."""
        found = next((lab for lab in self.labs if lab.id == lab_id), None)
        if found is not None:
            return found
        known = _(", ").join(lab.id for lab in self.labs)
        said = _("chapter {chapter} has no lab {lab_id!r} (labs: {known})")
        raise ManifestError(said.format(chapter=self.chapter, lab_id=lab_id, known=known))

    @property
    def required_labs(self) -> tuple[Lab, ...]:
        """The labs the evidence counts (every lab not marked optional)."""
        return tuple(lab for lab in self.labs if not lab.optional)

    @property
    def total_tests(self) -> int:
        return sum(lab.tests for lab in self.required_labs)

    @property
    def test_files(self) -> tuple[str, ...]:
        """Every lab's test file, each once, in lab order."""
        return tuple(dict.fromkeys(lab.test_file for lab in self.labs))

    @property
    def notebook_names(self) -> tuple[str, ...]:
        """The chapter's notebooks (file names in each edition's folder), each once, sorted:
        the labs' and the other ones the manifest lists."""
        return tuple(sorted({lab.notebook for lab in self.labs} | set(self.other_notebooks)))

    @property
    def source_folder(self) -> str:
        """Where the chapter's notebook sources are (kit-relative or absolute; "": none)."""
        if self.notebook_sources:
            return self.notebook_sources
        return f"{self.folder}/notebooks" if self.folder else ""

    @property
    def default_edition(self) -> str:
        return next(iter(self.notebooks))

    def files_with_role(self, role: FileRole) -> tuple[WorkspaceFile, ...]:
        return tuple(f for f in self.files if f.role == role)


def _relative_path(f: TableReader, key: str, default: str | None = None) -> str:
    value = f.text(key, default)
    path = Path(value)
    if path.is_absolute() or ".." in path.parts:
        raise f.error(key, f"must be a relative path inside the kit, got {value!r}")
    return value


def _each(f: TableReader, key: str) -> Iterator[TableReader]:
    """A reader of each table of the array ``key``, finished once the caller has read it."""
    for index, table in enumerate(f.tables(key)):
        where = f"{f.where}.{key}[{index}]".lstrip(".")
        item = TableReader(table, where, f.source, ManifestError)
        yield item
        item.finish()


def _table(f: TableReader, key: str) -> TableReader:
    return TableReader(f.raw(key), key, f.source, ManifestError)


def _card(f: TableReader) -> Card:
    names = [field.name for field in fields(Card)]
    values: dict[str, Any] = {n: f.texts(n) if n == "teaching_files" else f.text(n) for n in names}
    card = Card(**values)
    f.finish()
    return card


HINT_LEVELS = 3
"""Every lab's help comes in three levels: the idea, a strategy, the steps."""


def _hints(f: TableReader) -> tuple[str, ...]:
    hints = f.texts("hints")
    if len(hints) != HINT_LEVELS:
        raise f.error("hints", f"must hold {HINT_LEVELS} levels (idea, strategy, steps)")
    return hints


def _lab(f: TableReader, focused_tests: str) -> Lab:
    functions = tuple(_lab_function(g) for g in _each(f, "functions"))
    optional = f.flag("optional")
    lab = Lab(
        id=f.text("id"),
        title=f.text("title"),
        tests=f.count("tests", minimum=1),
        files=f.texts("files"),
        goal=f.text("goal"),
        section=f.text("section"),
        hints=_hints(f),
        heading=f.text("heading"),
        notebook=f.text("notebook"),
        select=f.text("select"),
        functions=functions,
        test_file=_relative_path(f, "test_file", focused_tests),
        optional=optional,
    )
    return replace(lab, points=f.count("points") if "points" in f.table else lab.tests)


def _lab_function(f: TableReader) -> LabFunction:
    function = LabFunction(name=f.text("name"), todo=f.text("todo"))
    module, _, name = function.name.partition(".")
    if not module or not name or "." in name:
        raise f.error("name", f"{function.name!r} must look like 'module.function'")
    return function


def _review(f: TableReader) -> Review:
    questions = [
        ReviewQuestion(q.text("text"), _test_name(q, "show")) for q in _each(f, "questions")
    ]
    checks = [
        ReviewCheck(c.text("title"), _test_name(c, "test"), c.text("hint"))
        for c in _each(f, "checks")
    ]
    review = Review(
        title=f.text("title"),
        intro=f.text("intro"),
        test_file=_relative_path(f, "test_file"),
        questions=tuple(questions),
        checks=tuple(checks),
    )
    f.finish()
    if repeated := _repeated(review.tests):
        raise f.error("", f"test {repeated[1]!r} is named twice")
    return review


def _test_name(f: TableReader, key: str) -> str:
    name = f.text(key)
    if not name.isidentifier() or not name.startswith("test_"):
        raise f.error(key, f"must name a test function (test_…), got {name!r}")
    return name


def _editions(value: object, f: TableReader) -> dict[str, str]:
    if not isinstance(value, dict) or not value:
        raise f.error("notebooks", "must be a table of edition = folder, e.g. { en = 'notebooks' }")
    for edition, folder in value.items():
        if not isinstance(folder, str) or not folder or Path(folder).is_absolute():
            raise f.error(f"notebooks.{edition}", f"must be a relative folder, got {folder!r}")
    return dict(value)


def _workspace_file(f: TableReader) -> WorkspaceFile:
    path = _relative_path(f, "path")
    starter = _relative_path(f, "starter")
    reference = _relative_path(f, "reference", starter)
    role = next((r for r in FILE_ROLES if r == f.text("role")), None)
    if role is None:
        raise f.error("role", f"must be one of {', '.join(FILE_ROLES)}, got {f.table['role']!r}")
    return WorkspaceFile(path, starter, reference, role, f.flag("optional"))


DEFAULT_NOTEBOOKS = {SOURCE_EDITION: "notebooks"} | {
    edition: f"notebooks/{edition}" for edition in EDITIONS if edition != SOURCE_EDITION
}
"""The editions' notebook folders of a manifest that names none: ``notebooks`` for the source
edition, ``notebooks/<edition>`` for each other."""


def parse_manifest(text: str, source: str = "<manifest>") -> Manifest:
    """Read a manifest from TOML text; ``ManifestError`` names the field that is wrong. A
    ``parent`` is only named here: ``with_parents`` gives the chapter its parent's files."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ManifestError(f"{source}: not valid TOML ({error})") from None
    f = TableReader(data, "", source, ManifestError)
    focused_tests = _relative_path(f, "focused_tests")
    labs = tuple(_lab(g, focused_tests) for g in _each(f, "labs"))
    files = tuple(_workspace_file(g) for g in _each(f, "workspace"))
    chapter = f.text("chapter")
    manifest = Manifest(
        chapter=chapter,
        title=f.text("title"),
        package=f.text("package"),
        reference=f.text("reference"),
        focused_tests=focused_tests,
        default_workspace=f.text("default_workspace", f"practice-{chapter}"),
        card=_card(_table(f, "card")),
        labs=labs,
        files=files,
        notebooks=_editions(f.raw("notebooks", DEFAULT_NOTEBOOKS), f),
        source=source,
        review=_review(_table(f, "review")) if "review" in f.table else None,
        probes=_relative_path(f, "probes") if "probes" in f.table else None,
        probe_seed=f.count("probe_seed") if "probe_seed" in f.table else 0,
        notebook_sources=(
            _relative_path(f, "notebook_sources") if "notebook_sources" in f.table else ""
        ),
        other_notebooks=f.texts("other_notebooks", allow_empty=True),
        parent=f.text("parent") if "parent" in f.table else None,
    )
    f.finish()
    _check_consistency(manifest, f)
    return manifest


def _repeated(values: Sequence[str]) -> tuple[int, str] | None:
    """The first value met a second time, and where."""
    return next(((i, value) for i, value in enumerate(values) if value in values[:i]), None)


def _check_consistency(manifest: Manifest, f: TableReader) -> None:
    if repeated := _repeated([lab.id for lab in manifest.labs]):
        raise f.error(f"labs[{repeated[0]}].id", f"duplicate lab id {repeated[1]!r}")
    paths = [file.path for file in manifest.files]
    if repeated := _repeated(paths):
        raise f.error(f"workspace[{repeated[0]}].path", f"duplicate workspace path {repeated[1]!r}")
    tests = {"focused_tests": manifest.focused_tests}
    tests |= {f"labs[{i}].test_file": lab.test_file for i, lab in enumerate(manifest.labs)}
    if manifest.review is not None:
        tests["review.test_file"] = manifest.review.test_file
    for key, path in tests.items():
        if path not in paths:
            raise f.error(key, "must also be listed as a [[workspace]] file")
    learner_paths = {file.path for file in manifest.files_with_role("learner")}
    for index, lab in enumerate(manifest.labs):
        for path in lab.files:
            if path not in learner_paths:
                raise f.error(
                    f"labs[{index}].files", f"{path!r} is not a learner file of the workspace"
                )


def inherit(child: Manifest, parent: Manifest) -> Manifest:
    """``child`` with ``parent``'s modules first: its given files as they are, its learner files
    as given files taught from their reference; not its test files (the child's tests prove the
    child's labs). A path the child lists itself is the child's."""
    if child.package != parent.package:
        said = f"must be {parent.package!r}, the package of its parent chapter {parent.chapter}"
        raise ManifestError(f"{child.source}: package: {said}")
    own = {file.path for file in child.files}
    given = tuple(
        replace(file, starter=file.reference, role="given") if file.role == "learner" else file
        for file in parent.files
        if file.role != "test" and file.path not in own
    )
    return replace(child, files=given + child.files)


def with_parents(manifests: Sequence[Manifest]) -> list[Manifest]:
    """Every manifest with its parents' files (``inherit``, a parent of a parent first); an
    unknown parent or a cycle is a ``ManifestError`` naming the ``parent`` field."""
    by_chapter = {manifest.chapter: manifest for manifest in manifests}
    done: dict[str, Manifest] = {}

    def resolved(manifest: Manifest, chain: tuple[str, ...]) -> Manifest:
        if manifest.chapter in done:
            return done[manifest.chapter]
        result = manifest
        if manifest.parent is not None:
            parent = by_chapter.get(manifest.parent)
            if parent is None:
                known = ", ".join(sorted(by_chapter))
                said = f"no chapter {manifest.parent!r} to inherit from (chapters: {known})"
                raise ManifestError(f"{manifest.source}: parent: {said}")
            if parent.chapter in (*chain, manifest.chapter):
                cycle = " -> ".join((*chain, manifest.chapter, parent.chapter))
                raise ManifestError(f"{manifest.source}: parent: a cycle ({cycle})")
            result = inherit(manifest, resolved(parent, (*chain, manifest.chapter)))
        done[manifest.chapter] = result
        return result

    return [resolved(manifest, ()) for manifest in manifests]


def translated(manifest: Manifest, translate: Callable[[str], str]) -> Manifest:
    """The manifest with every learner-facing text passed through ``translate``: the one list of
    what a learner reads (ids, paths and commands stay), which ``curriculum_texts`` walks too."""
    t, card = translate, manifest.card
    texts = [field.name for field in fields(Card) if field.name not in UNTRANSLATED]
    translations: dict[str, Any] = {name: t(getattr(card, name)) for name in texts}
    card = replace(card, **translations)
    labs = tuple(
        replace(
            lab,
            title=t(lab.title),
            heading=t(lab.heading),
            goal=t(lab.goal),
            hints=tuple(t(hint) for hint in lab.hints),
            functions=tuple(replace(f, todo=t(f.todo)) for f in lab.functions),
        )
        for lab in manifest.labs
    )
    review = manifest.review
    if review is not None:
        review = replace(
            review,
            title=t(review.title),
            intro=t(review.intro),
            questions=tuple(replace(q, text=t(q.text)) for q in review.questions),
            checks=tuple(replace(c, title=t(c.title), hint=t(c.hint)) for c in review.checks),
        )
    return replace(manifest, title=t(manifest.title), card=card, labs=labs, review=review)


def curriculum_texts(manifest: Manifest) -> list[str]:
    """Every text ``translated`` passes on, in order: what a catalog must translate."""
    seen: list[str] = []

    def record(text: str) -> str:
        seen.append(text)
        return text

    translated(manifest, record)
    return seen


def chapter_folders() -> list[tuple[Path, str]]:
    """Every chapter's folder with the name it is known by (kit-relative for a built-in one):
    the built-in chapters, then those of each ``COURSE_CHAPTERS`` folder, each in name order."""
    built_in, *elsewhere = chapter_roots()  # the locale's: it finds the chapters' catalogs
    found = [(item.parent, f"course/curricula/{item.parent.name}") for item in _manifests(built_in)]
    for root in elsewhere:
        found += [(item.parent, str(item.parent)) for item in _manifests(root)]
    return found


def _manifests(root: Path) -> list[Path]:
    return sorted(root.glob(f"*/{MANIFEST_NAME}"))


def _installed() -> Iterator[Manifest]:
    """Every chapter found, read, each with its parents' files (``with_parents``); a chapter id
    met twice is an error naming both manifests."""
    seen: dict[str, str] = {}
    read = []
    for path, name in chapter_folders():
        source = f"{name}/{MANIFEST_NAME}"
        try:
            text = (path / MANIFEST_NAME).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ManifestError(f"{source}: cannot be read ({error})") from None
        manifest = replace(parse_manifest(text, source), folder=name)
        if manifest.chapter in seen:
            said = _("{source}: chapter {chapter!r} is already defined by {other}")
            other = seen[manifest.chapter]
            raise ManifestError(said.format(source=source, chapter=manifest.chapter, other=other))
        seen[manifest.chapter] = source
        read.append(manifest)
    yield from with_parents(read)


def available_chapters() -> list[str]:
    """The chapter ids that have a manifest, in order."""
    found = [manifest.chapter for manifest in _installed()]
    return sorted(found, key=lambda c: [int(p) if p.isdigit() else p for p in c.split(".")])


def load_manifest(chapter: str) -> Manifest:
    """The manifest of ``chapter``: a built-in chapter's, else one a ``COURSE_CHAPTERS``
    folder holds."""
    for manifest in _installed():
        if manifest.chapter == chapter:
            return manifest
    known = _(", ").join(available_chapters()) or _("none")
    said = _("no curriculum for chapter {chapter!r} (chapters: {known})")
    raise ManifestError(said.format(chapter=chapter, known=known))
