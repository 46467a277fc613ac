"""Curriculum manifests: one TOML file per chapter, read and checked into typed records."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path, PurePosixPath
from typing import Any, Literal, TypeVar

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
PathBase = Literal["chapter", "kit"]
PATH_BASES: tuple[PathBase, ...] = ("chapter", "kit")
BUILT_IN_FOLDER = "course/curricula"
"""Where the built-in chapters are, kit-relative: the only ones that may write ``paths = "kit"``."""


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
    """The chapter's heading that explains the lab's idea, as the chapter writes it (in a door,
    as its edition reads it: ``sections``)."""
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
    sections: tuple[tuple[str, str], ...] = ()
    """The heading in each edition the chapter is written in (``section = { en = …, zh = … }``);
    none when ``section`` is one heading, the same in every edition."""

    def in_edition(self, edition: str) -> Lab:
        """The lab with its ``section`` in ``edition`` (its first one's where it has none)."""
        section = dict(self.sections).get(edition, self.section)
        return self if section == self.section else replace(self, section=section)

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
    probes: str | None = None  # the probe module: cases, how to call each lab
    probe_seed: int = 0  # every door draws with it, so the same files get the same verdict
    folder: str = ""  # the chapter's folder (kit-relative, or absolute for COURSE_CHAPTERS')
    notebook_sources: str = ""  # the notebooks' sources ("": FOLDER/notebooks)
    other_notebooks: tuple[str, ...] = ()  # a workspace's notebooks besides the labs' ones
    parent: str | None = None
    """The chapter this one builds on: its modules come first (``inherit``)."""
    paths: PathBase = "chapter"
    """What its chapter paths are written from (``CHAPTER_PATHS``): its folder, or the kit's
    root (a built-in chapter whose files live across the kit, as chapter 11's). Once the
    chapter is found (``located``) they are kit paths: kit-relative, or absolute."""

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
        said = _("chapter {chapter} has no lab {lab_id} (labs: {known})")
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


class _Reader(TableReader):
    """A manifest's table. Without ``problems`` it raises at the first bad field (what every
    command does); given a list, it records each problem there and reads on with a stand-in
    value, so a check names every problem of a manifest at once (``checked_manifest``)."""

    def __init__(self, table: object, where: str, source: str, problems: list[str] | None) -> None:
        self.problems = problems
        super().__init__(table, where, source, ManifestError)

    def fail(self, key: str, problem: str) -> None:
        """Raise, or record, that ``key`` has ``problem``."""
        error = self.error(key, problem)
        if self.problems is None:
            raise error
        self.problems.append(str(error))

    def _read(self, read: Callable[[], _T], stand_in: _T) -> _T:
        if self.problems is None:
            return read()
        try:
            return read()
        except ManifestError as error:
            self.problems.append(str(error))
            return stand_in

    def text(self, key: str, default: str | None = None, *, allow_empty: bool = False) -> str:
        return self._read(
            lambda: super(_Reader, self).text(key, default, allow_empty=allow_empty), ""
        )

    def texts(self, key: str, *, allow_empty: bool = False) -> tuple[str, ...]:
        return self._read(lambda: super(_Reader, self).texts(key, allow_empty=allow_empty), ())

    def count(self, key: str, *, minimum: int = 0) -> int:
        return self._read(lambda: super(_Reader, self).count(key, minimum=minimum), minimum)

    def flag(self, key: str, default: bool = False) -> bool:
        return self._read(lambda: super(_Reader, self).flag(key, default), default)

    def tables(self, key: str, *, allow_empty: bool = False) -> list[object]:
        return self._read(lambda: super(_Reader, self).tables(key, allow_empty=allow_empty), [])

    def within(self, value: object, where: str) -> _Reader | None:
        """A reader of ``value``, a table inside this one (None, recorded: not a table)."""
        return self._read(lambda: _Reader(value, where, self.source, self.problems), None)

    def finish(self) -> None:
        """Refuse keys nobody read: a typo should not silently drop a field."""
        for key in self.table:
            if key not in self.used:
                self.fail(str(key), "unknown field")


_T = TypeVar("_T")
WORKSPACE = "the workspace"
"""Where a workspace path is (``path``, ``focused_tests``, a lab's ``files`` and ``test_file``)."""
WRITTEN_FROM = {"chapter": "the chapter's folder", "kit": "the kit"}
"""Where a chapter path is, by the manifest's ``paths``."""


def _path(f: _Reader, key: str, inside: str, default: str | None = None) -> str:
    """A path relative to ``inside``: never absolute, never with ``..``."""
    value = f.text(key, default)
    path = PurePosixPath(value)
    if value and (path.is_absolute() or ".." in path.parts):
        f.fail(key, f"must be a relative path inside {inside}, got {value!r}")
    return value


def _each(f: _Reader, key: str) -> Iterator[_Reader]:
    """A reader of each table of the array ``key``, finished once the caller has read it."""
    for index, table in enumerate(f.tables(key)):
        item = f.within(table, f"{f.where}.{key}[{index}]".lstrip("."))
        if item is not None:
            yield item
            item.finish()


def _table(f: _Reader, key: str) -> _Reader | None:
    if key in f.table:
        return f.within(f.raw(key), key)
    f.fail(key, "missing field")
    return None


def _card(f: _Reader | None, inside: str) -> Card:
    names = [field.name for field in fields(Card)]
    if f is None:
        stand_in: dict[str, Any] = {n: () if n == "teaching_files" else "" for n in names}
        return Card(**stand_in)
    values: dict[str, Any] = {n: f.texts(n) if n == "teaching_files" else f.text(n) for n in names}
    for index, path in enumerate(values["teaching_files"]):
        if PurePosixPath(path).is_absolute() or ".." in PurePosixPath(path).parts:
            f.fail(f"teaching_files[{index}]", f"must be a relative path inside {inside}")
    card = Card(**values)
    f.finish()
    return card


HINT_LEVELS = 3
"""Every lab's help comes in three levels: the idea, a strategy, the steps."""


def _hints(f: _Reader) -> tuple[str, ...]:
    hints = f.texts("hints")
    if hints and len(hints) != HINT_LEVELS:
        f.fail("hints", f"must hold {HINT_LEVELS} levels (idea, strategy, steps)")
    return hints


def _section(f: _Reader) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A lab's ``section``: one heading, or a table of each edition's; the first is the default."""
    value = f.raw("section", None)
    if not isinstance(value, dict):
        return f.text("section"), ()
    wrong = [key for key, text in value.items() if not isinstance(text, str) or not text.strip()]
    unknown = [key for key in value if key not in EDITIONS]
    if not value or wrong or unknown:
        said = f"must be a heading or a table of edition = heading ({', '.join(EDITIONS)})"
        f.fail("section", f"{said}, got {value!r}")
    sections = tuple((str(key), str(text)) for key, text in value.items())
    return (sections[0][1] if sections else ""), sections


def _lab(f: _Reader, focused_tests: str) -> Lab:
    functions = tuple(_lab_function(g) for g in _each(f, "functions"))
    optional = f.flag("optional")
    section, sections = _section(f)
    lab = Lab(
        id=f.text("id"),
        title=f.text("title"),
        tests=f.count("tests", minimum=1),
        files=f.texts("files"),
        goal=f.text("goal"),
        section=section,
        hints=_hints(f),
        heading=f.text("heading"),
        notebook=f.text("notebook"),
        select=f.text("select"),
        functions=functions,
        test_file=_path(f, "test_file", WORKSPACE, focused_tests),
        optional=optional,
        sections=sections,
    )
    return replace(lab, points=f.count("points") if "points" in f.table else lab.tests)


def _lab_function(f: _Reader) -> LabFunction:
    function = LabFunction(name=f.text("name"), todo=f.text("todo"))
    module, _, name = function.name.partition(".")
    if function.name and (not module or not name or "." in name):
        f.fail("name", f"{function.name!r} must look like 'module.function'")
    return function


def _review(f: _Reader) -> Review:
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
        test_file=_path(f, "test_file", WORKSPACE),
        questions=tuple(questions),
        checks=tuple(checks),
    )
    f.finish()
    if repeated := _repeated(review.tests):
        f.fail("", f"test {repeated[1]!r} is named twice")
    return review


def _test_name(f: _Reader, key: str) -> str:
    name = f.text(key)
    if name and (not name.isidentifier() or not name.startswith("test_")):
        f.fail(key, f"must name a test function (test_…), got {name!r}")
    return name


def _editions(value: object, f: _Reader, inside: str) -> dict[str, str]:
    if not isinstance(value, dict) or not value:
        f.fail("notebooks", "must be a table of edition = folder, e.g. { en = 'notebooks' }")
        return dict(DEFAULT_NOTEBOOKS)
    for edition, folder in value.items():
        path = PurePosixPath(folder) if isinstance(folder, str) else None
        if path is None or not folder or path.is_absolute() or ".." in path.parts:
            said = f"must be a relative folder inside {inside}, got {folder!r}"
            f.fail(f"notebooks.{edition}", said)
    return {str(edition): str(folder) for edition, folder in value.items()}


def _workspace_file(f: _Reader, inside: str) -> WorkspaceFile:
    path = _path(f, "path", WORKSPACE)
    starter = _path(f, "starter", inside)
    reference = _path(f, "reference", inside, starter or None)
    role = next((r for r in FILE_ROLES if r == f.text("role")), None)
    if role is None and "role" in f.table:
        f.fail("role", f"must be one of {', '.join(FILE_ROLES)}, got {f.table['role']!r}")
    return WorkspaceFile(path, starter, reference, role or "given", f.flag("optional"))


DEFAULT_NOTEBOOKS = {SOURCE_EDITION: "notebooks"} | {
    edition: f"notebooks/{edition}" for edition in EDITIONS if edition != SOURCE_EDITION
}
"""The editions' notebook folders of a manifest that names none: ``notebooks`` for the source
edition, ``notebooks/<edition>`` for each other (in the chapter's folder)."""


def parse_manifest(text: str, source: str = "<manifest>") -> Manifest:
    """Read a manifest from TOML text; ``ManifestError`` names the field that is wrong. Its
    chapter paths are as written (``located`` makes them kit paths) and a ``parent`` is only
    named here: ``with_parents`` gives the chapter its parent's files."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ManifestError(f"{source}: not valid TOML ({error})") from None
    return _read_manifest(_Reader(data, "", source, None))


def checked_manifest(text: str, source: str = "<manifest>") -> tuple[Manifest | None, list[str]]:
    """The manifest as far as it reads, and every problem of its text, each naming its field
    (none: ``parse_manifest`` reads it the same); no manifest when it is not TOML."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return None, [f"{source}: not valid TOML ({error})"]
    problems: list[str] = []
    return _read_manifest(_Reader(data, "", source, problems)), problems


def _read_manifest(f: _Reader) -> Manifest:
    paths = next((base for base in PATH_BASES if base == f.text("paths", "chapter")), None)
    if paths is None:
        f.fail("paths", f"must be one of {', '.join(PATH_BASES)}, got {f.table['paths']!r}")
    inside = WRITTEN_FROM[paths or "chapter"]
    focused_tests = _path(f, "focused_tests", WORKSPACE)
    labs = tuple(_lab(g, focused_tests) for g in _each(f, "labs"))
    files = tuple(_workspace_file(g, inside) for g in _each(f, "workspace"))
    chapter = f.text("chapter")
    review = _table(f, "review") if "review" in f.table else None
    manifest = Manifest(
        chapter=chapter,
        title=f.text("title"),
        package=f.text("package"),
        reference=f.text("reference"),
        focused_tests=focused_tests,
        default_workspace=f.text("default_workspace", f"practice-{chapter}"),
        card=_card(_table(f, "card"), inside),
        labs=labs,
        files=files,
        notebooks=_editions(f.raw("notebooks", DEFAULT_NOTEBOOKS), f, inside),
        source=f.source,
        review=_review(review) if review is not None else None,
        probes=_path(f, "probes", inside) if "probes" in f.table else None,
        probe_seed=f.count("probe_seed") if "probe_seed" in f.table else 0,
        notebook_sources=(
            _path(f, "notebook_sources", inside) if "notebook_sources" in f.table else ""
        ),
        other_notebooks=f.texts("other_notebooks", allow_empty=True),
        parent=f.text("parent") if "parent" in f.table else None,
        paths=paths or "chapter",
    )
    f.finish()
    _check_consistency(manifest, f)
    return manifest


def _repeated(values: Sequence[str]) -> tuple[int, str] | None:
    """The first value met a second time, and where."""
    return next(((i, value) for i, value in enumerate(values) if value in values[:i]), None)


def _check_consistency(manifest: Manifest, f: _Reader) -> None:
    if repeated := _repeated([lab.id for lab in manifest.labs]):
        f.fail(f"labs[{repeated[0]}].id", f"duplicate lab id {repeated[1]!r}")
    paths = [file.path for file in manifest.files]
    if repeated := _repeated(paths):
        f.fail(f"workspace[{repeated[0]}].path", f"duplicate workspace path {repeated[1]!r}")
    tests = {"focused_tests": manifest.focused_tests}
    tests |= {f"labs[{i}].test_file": lab.test_file for i, lab in enumerate(manifest.labs)}
    if manifest.review is not None:
        tests["review.test_file"] = manifest.review.test_file
    for key, path in tests.items():
        if path and path not in paths:
            f.fail(key, "must also be listed as a [[workspace]] file")
    learner_paths = {file.path for file in manifest.files_with_role("learner")}
    for index, lab in enumerate(manifest.labs):
        for path in lab.files:
            if path not in learner_paths:
                f.fail(f"labs[{index}].files", f"{path!r} is not a learner file of the workspace")


def located(manifest: Manifest, folder: str, *, built_in: bool) -> Manifest:
    """``manifest`` found in ``folder`` (kit-relative for a built-in chapter, else absolute),
    its chapter paths made kit paths: from its folder, or (``paths = "kit"``, a built-in
    chapter's only) from the kit's root. A ``ManifestError`` when a chapter found through
    ``COURSE_CHAPTERS`` says ``paths = "kit"``: its files would be the kit's, silently."""
    if manifest.paths == "kit" and not built_in:
        said = f'must be "chapter" for a chapter found through {CHAPTER_ROOTS} (its files are '
        raise ManifestError(f"{manifest.source}: paths: {said}read from its own folder)")
    base = "" if manifest.paths == "kit" else folder

    def at(path: str) -> str:
        return f"{base}/{path}" if base and path else path

    card = replace(manifest.card, teaching_files=tuple(map(at, manifest.card.teaching_files)))
    return replace(
        manifest,
        folder=folder,
        card=card,
        files=tuple(
            replace(f, starter=at(f.starter), reference=at(f.reference)) for f in manifest.files
        ),
        notebooks={edition: at(path) for edition, path in manifest.notebooks.items()},
        notebook_sources=at(manifest.notebook_sources) or f"{folder}/notebooks",
        probes=at(manifest.probes) if manifest.probes is not None else None,
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
    return list(map(parents_resolver(manifests), manifests))


def parents_resolver(manifests: Sequence[Manifest]) -> Callable[[Manifest], Manifest]:
    """What gives one of ``manifests`` its parents' files (``with_parents``), a chapter at a
    time: a ``ManifestError`` for one names its own ``parent`` field, and no other chapter's."""
    by_chapter = {manifest.chapter: manifest for manifest in manifests}
    done: dict[str, Manifest] = {}

    def resolved(manifest: Manifest, chain: tuple[str, ...] = ()) -> Manifest:
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

    return resolved


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
    found = [
        (item.parent, f"{BUILT_IN_FOLDER}/{item.parent.name}") for item in _manifests(built_in)
    ]
    for root in elsewhere:
        found += [(item.parent, str(item.parent)) for item in _manifests(root)]
    return found


def _manifests(root: Path) -> list[Path]:
    return sorted(root.glob(f"*/{MANIFEST_NAME}"))


def manifest_text(path: Path, name: str) -> tuple[str, str]:
    """The text of the manifest in the chapter folder ``path``, and the name its errors give it
    (``name``: the folder's, as ``chapter_folders`` gives it)."""
    source = f"{name}/{MANIFEST_NAME}"
    try:
        return (path / MANIFEST_NAME).read_text("utf-8"), source
    except (OSError, UnicodeDecodeError) as error:
        raise ManifestError(f"{source}: cannot be read ({error})") from None


def read_chapter(path: Path, name: str) -> Manifest:
    """The manifest of the chapter folder ``path`` known as ``name``, located (``located``),
    without its parent's files."""
    text, source = manifest_text(path, name)
    return located(parse_manifest(text, source), name, built_in=_built_in(name))


def check_chapter(path: Path, name: str) -> tuple[Manifest | None, list[str]]:
    """``read_chapter``'s manifest as far as it reads, and every problem of its text at once
    (``checked_manifest``)."""
    try:
        text, source = manifest_text(path, name)
    except ManifestError as error:
        return None, [str(error)]
    manifest, problems = checked_manifest(text, source)
    if manifest is None:
        return None, problems
    try:
        return located(manifest, name, built_in=_built_in(name)), problems
    except ManifestError as error:
        return None, [*problems, str(error)]


def _built_in(name: str) -> bool:
    return name.startswith(f"{BUILT_IN_FOLDER}/")


def _installed() -> Iterator[Manifest]:
    """Every chapter found, read, each with its parents' files (``with_parents``); a chapter id
    met twice is an error naming both manifests."""
    seen: dict[str, str] = {}
    read = []
    for path, name in chapter_folders():
        manifest = read_chapter(path, name)
        if manifest.chapter in seen:
            said = _("{source}: chapter {chapter!r} is already defined by {other}")
            other, source = seen[manifest.chapter], manifest.source
            raise ManifestError(said.format(source=source, chapter=manifest.chapter, other=other))
        seen[manifest.chapter] = manifest.source
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
    said = _("no curriculum for chapter {chapter} (chapters: {known})")
    raise ManifestError(said.format(chapter=chapter, known=known))
