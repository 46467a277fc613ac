"""``course-kit catalogs``: extract the messages, keep every ``.po`` whole, build the ``.mo``.

One catalog per owner: the kit's (``course/locale``: the machinery's messages, found by the
kit's ``babel.cfg``) and each chapter's (``<folder>/locale``, found by the ``babel.cfg`` in the
chapter's folder, its paths written from where its manifest's are: the chapter's folder, or the
kit's root for ``paths = "kit"``). Babel does the extracting, merging and compiling; a catalog
whose messages and translations are unchanged is never written again (a message's line
references alone are no change), so building one chapter changes no other catalog.
``--check`` fails on any message an edition does not translate (a learner would read English),
on a translation left fuzzy or stale, and on one whose ``{placeholders}`` differ from the
source.
"""

from __future__ import annotations

import functools
import io
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import IO, Any

from ..grading.intake.safefs import atomic_write
from ..harness.docstrings import comments, docstrings
from ..harness.kit import kit_root, shown
from ..harness.manifest import (
    Manifest,
    chapter_folders,
    curriculum_texts,
    parse_manifest,
    read_chapter,
)
from ..locale import (
    CHAPTER_DOMAIN,
    CHAPTER_EDITION,
    CHAPTER_ROOTS,
    DOMAIN,
    EDITIONS,
    LOCALE_DIR,
    SOURCE_EDITION,
    compile_catalog,
)
from ..locale.english import english_words
from ..locale.glossary import avoided_words
from ..locale.typography import problems

PLACEHOLDER = re.compile(r"\{[^{}]*\}")
TRANSLATED = tuple(edition for edition in EDITIONS if edition != SOURCE_EDITION)
"""The editions with a catalog (English is the source text)."""
Extracted = Iterator[tuple[int, str | None, Any, list[str]]]
"""What a Babel extractor yields: (line, function, message, comments)."""


def extract_curriculum(fileobj: IO[bytes], keywords: Any, tags: Any, options: Any) -> Extracted:
    """Babel extractor for a curriculum TOML: every text a learner reads (see ``translated``)."""
    text = fileobj.read().decode("utf-8")
    manifest = parse_manifest(text, getattr(fileobj, "name", "<curriculum>"))
    for message in curriculum_texts(manifest):
        first = message.split("\n")[0][:40]
        line = next((n for n, row in enumerate(text.splitlines(), 1) if first[:20] in row), 1)
        yield line, None, message, []


def extract_docstrings(fileobj: IO[bytes], keywords: Any, tags: Any, options: Any) -> Extracted:
    """Babel extractor for a learner's starter: every docstring (module, class, function and
    the string after a constant) and every comment a learner reads, as
    ``docstrings.localized`` looks each up."""
    source = fileobj.read().decode("utf-8")
    for line, text in docstrings(source):
        yield line, None, text, []
    for comment in comments(source):
        yield comment.first, None, comment.text, []


def extract_lesson(fileobj: IO[bytes], keywords: Any, tags: Any, options: Any) -> Extracted:
    """Babel extractor for a lesson module: its marked messages, and, for a module a workspace
    is given (a curriculum file of role ``given``), its docstrings as ``extract_docstrings``."""
    from babel.messages.extract import extract_python

    data = fileobj.read()
    found: Iterator[Any] = extract_python(io.BytesIO(data), keywords, tags, options)
    yield from found  # (line, function, message, comments), as Babel's own extractor gives it
    if Path(getattr(fileobj, "name", "")).resolve() in given_modules():
        yield from extract_docstrings(io.BytesIO(data), keywords, tags, options)


@dataclass(frozen=True)
class Catalog:
    """One catalog: whose messages it holds, the ``babel.cfg`` that finds them, and its ``.po``
    (and ``.mo``) per edition under ``locale``."""

    owner: str  # "the kit" or "chapter 11", for messages
    config: Path
    locale: Path
    domain: str
    base: Path  # what the ``babel.cfg``'s paths are written from (the folder Babel walks)

    def path(self, edition: str, suffix: str = ".po") -> Path:
        return self.locale / edition / "LC_MESSAGES" / f"{self.domain}{suffix}"


def kit_catalog() -> Catalog:
    kit = kit_root()
    return Catalog("the kit", kit / "babel.cfg", LOCALE_DIR, DOMAIN, kit)


def chapter_catalog(manifest: Manifest, folder: Path) -> Catalog:
    """The catalog of ``manifest``'s chapter, whose folder is ``folder``."""
    base = kit_root() if manifest.paths == "kit" else folder
    owner = f"chapter {manifest.chapter}"
    return Catalog(owner, folder / "babel.cfg", folder / "locale", CHAPTER_DOMAIN, base)


def all_catalogs() -> list[Catalog]:
    """The kit's catalog, then each chapter's (every chapter found, ``COURSE_CHAPTERS``'s too)."""
    chapters = [chapter_catalog(read_chapter(*found), found[0]) for found in chapter_folders()]
    return [kit_catalog(), *chapters]


def given_modules() -> frozenset[Path]:
    """The kit's modules whose docstrings a workspace shows: the given modules each chapter's own
    manifest lists, and its learner modules' references (a child chapter is given those)."""
    return _given_modules(os.environ.get(CHAPTER_ROOTS, ""))


@functools.cache
def _given_modules(roots: str) -> frozenset[Path]:
    kit = kit_root()
    found = set()
    for folder, name in chapter_folders():
        manifest = read_chapter(folder, name)
        found |= {file.starter for file in manifest.files_with_role("given")}
        found |= {file.reference for file in manifest.files_with_role("learner")}
    return frozenset((kit / path).resolve() for path in found if path.endswith(".py"))


def template(catalog: Catalog | None = None) -> Any:
    """The catalog's template: every message its ``babel.cfg`` finds, as Babel extracts it."""
    from babel.messages.catalog import Catalog as Messages
    from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
    from babel.messages.frontend import parse_mapping_cfg

    catalog = catalog or kit_catalog()
    with catalog.config.open(encoding="utf-8") as config:
        method_map, options_map = parse_mapping_cfg(config, str(catalog.config))  # type: ignore[no-untyped-call]
    messages = Messages(project="course-kit", domain=catalog.domain, charset="utf-8")
    keywords = {**DEFAULT_KEYWORDS, "NP_": ((1, "c"), 2)}  # course.locale.NP_(context, message)
    for filename, lineno, message, notes, context in extract_from_dir(
        str(catalog.base), method_map, options_map, keywords=keywords
    ):
        messages.add(message, None, [(filename, lineno)], auto_comments=notes, context=context)
    return messages


TELLING = 20
"""The fewest characters of English text ``english_translated`` keeps (with four words at
least): shorter text (an id, a word, a list of ids) may be shown as it is in any edition."""


def translated(edition: str, catalogs: Sequence[Catalog]) -> dict[str, str]:
    """Each message ``catalogs`` translate in ``edition``, by its English, as a learner reads it
    (the first catalog that translates it answers)."""
    found: dict[str, str] = {}
    for catalog in catalogs:
        if catalog.path(edition).is_file():
            for message in read_catalog(edition, catalog):
                translation = " ".join(_forms(message.string))
                if message.id and translation.strip():
                    found.setdefault(_key(message), translation)
    return found


def english_translated(edition: str, catalogs: Sequence[Catalog]) -> frozenset[str]:
    """The English text, between placeholders and code, of every message ``catalogs``
    translate in ``edition`` that its translation does not keep: a notebook's stored outputs of
    that edition that still show it were stored before the translation (``notebooks``)."""
    found = set()
    for message, translation in translated(edition, catalogs).items():
        for text in re.split(r"\{[^{}]*\}|\n|`", message):
            text = text.strip()
            if len(text) >= TELLING and text.count(" ") >= 3 and text not in translation:
                found.add(text)
    return frozenset(found)


def unmatched_patterns(catalog: Catalog) -> list[str]:
    """The patterns of the catalog's ``babel.cfg`` that find no file from its ``base`` (as
    Babel walks it: no folder starting with ``.`` or ``_``): their messages would be missing,
    silently."""
    from babel.messages.frontend import parse_mapping_cfg
    from babel.util import pathmatch

    with catalog.config.open(encoding="utf-8") as config:
        method_map, _options = parse_mapping_cfg(config, str(catalog.config))  # type: ignore[no-untyped-call]
    found = []
    for folder, folders, files in os.walk(catalog.base):
        folders[:] = [name for name in folders if not name.startswith((".", "_"))]
        found += [Path(folder, name).relative_to(catalog.base).as_posix() for name in files]
    return [
        pattern
        for pattern, _method in method_map
        if not any(pathmatch(pattern, path) for path in found)
    ]


def read_catalog(edition: str, catalog: Catalog | None = None) -> Any:
    from babel.messages.pofile import read_po

    catalog = catalog or kit_catalog()
    with catalog.path(edition).open("rb") as file:
        return read_po(file, locale=edition, domain=catalog.domain)


@dataclass(frozen=True)
class Gap:
    """One message an edition's catalog does not translate as it should."""

    edition: str
    message: str
    problem: str

    def __str__(self) -> str:
        head = " ".join(self.message.split())[:90]
        return f"{self.edition}: {self.problem}: {head!r}"


def _forms(text: str | tuple[str, ...]) -> list[str]:
    return list(text) if isinstance(text, tuple) else [text]


def _plural(text: object) -> bool:
    return isinstance(text, tuple | list)


def _key(message: Any) -> str:
    return str(_forms(message.id)[0])


def _entry(message: Any) -> tuple[str, str]:
    """A message's English and its context (``""`` for none): each pair is one message (a text
    a lab's stub says otherwise has a context of its own, ``course.locale.NP_``)."""
    return _key(message), str(message.context or "")


def _problem(message: Any, translated: Any, edition: str) -> str | None:
    """What is wrong with the translation of ``message`` (None if nothing)."""
    if translated is None:
        return "not in the catalog"
    if translated.fuzzy:
        return "fuzzy"
    if not all(_forms(translated.string)):
        return "untranslated"
    wanted = set(PLACEHOLDER.findall(" ".join(_forms(message.id))))
    # the curriculum's text (the card, hints, the review) is rendered as Markdown, in
    # LEARNING.md and the notebooks, where a line break reads as a space
    markdown = any(str(where).endswith(".toml") for where, _ in message.locations)
    for string in _forms(translated.string):
        if set(PLACEHOLDER.findall(string)) != wanted:
            return "placeholders differ"
        if english := english_words(PLACEHOLDER.sub(" ", string), edition):
            return f"English left ({' '.join(english[:5])})"
        if style := house_style(string, edition, markdown=markdown):
            return "; ".join(style)
    return None


def gaps(edition: str, source: Any | None = None, catalog: Catalog | None = None) -> list[Gap]:
    """Every message of the sources that ``edition`` leaves to English, or translates wrongly
    (in ``catalog``: the kit's unless said)."""
    catalog = catalog or kit_catalog()
    if not catalog.config.is_file():
        return [Gap(edition, str(catalog.config), f"{catalog.owner} has no babel.cfg")]
    source = template(catalog) if source is None else source
    path = catalog.path(edition)
    if not path.is_file():
        return [Gap(edition, str(path), "no catalog")]
    messages = read_catalog(edition, catalog)
    found = ((m, _problem(m, messages.get(_key(m), m.context), edition)) for m in source if m.id)
    wrong = [Gap(edition, _key(message), problem) for message, problem in found if problem]
    known = {_key(m) for m in source if m.id}
    obsolete = [_key(m) for m in messages if m.id and _key(m) not in known]
    return wrong + [Gap(edition, key, "obsolete: no source marks it any more") for key in obsolete]


def house_style(text: str, edition: str, *, markdown: bool = False) -> list[str]:
    """What a translation breaks of the edition's style: the typography the chapter sets
    (``locale/typography.py``) and the glossary's avoided words (``locale/glossary.py``)."""
    if edition != CHAPTER_EDITION:
        return []
    found = [f"typography: {problem}" for problem in problems(text, markdown=markdown)]
    return found + [f"glossary avoids {word}" for word in avoided_words(text, edition)]


HEADER = """\
# The {edition} edition of {owner}'s messages. The English source text is in the code;
# fill in the msgstr lines. `course-kit catalogs --update` adds newly marked messages and
# `course-kit catalogs --check` lists what is left (see docs/editions.md, docs/chapters.md)."""


Known = dict[str, dict[str, Any]]
"""Translations by edition and message, as a catalog holds them (a string, or plural forms)."""


def known_translations(catalogs: list[Catalog], extra: Sequence[Path] = ()) -> Known:
    """Every translation the catalogs hold today, then those of the ``extra`` ``.po`` files (each
    of the edition its ``Language`` header names); the first one read where two hold one."""
    from babel.messages.pofile import read_po

    read = [
        (edition, read_catalog(edition, catalog))
        for catalog in catalogs
        for edition in TRANSLATED
        if catalog.path(edition).is_file()
    ]
    for path in extra:
        with path.open("rb") as file:
            messages = read_po(file)
        if str(messages.locale or "") not in TRANSLATED:
            raise OSError(f"{path}: its Language header names none of {', '.join(TRANSLATED)}")
        read.append((str(messages.locale), messages))
    known: Known = {edition: {} for edition in TRANSLATED}
    for edition, messages in read:
        for message in messages:
            if message.id and all(_forms(message.string)) and not message.fuzzy:
                known[edition].setdefault(_key(message), message.string)
    return known


def update(catalog: Catalog | None = None, known: Known | None = None) -> list[Path]:
    """Merge the sources' messages into every edition's ``.po``: a new one takes the translation
    ``known`` holds for it (a message that moved from another catalog keeps its own), else
    none."""
    from babel.messages.catalog import Catalog as Messages
    from babel.messages.pofile import write_po

    catalog = catalog or kit_catalog()
    source = template(catalog)
    written = []
    for edition in TRANSLATED:
        path = catalog.path(edition)
        if path.is_file():
            messages = read_catalog(edition, catalog)
        else:
            messages = Messages(locale=edition, domain=catalog.domain, project="course-kit")
        source.creation_date = messages.creation_date  # a merge alone changes no header line
        messages.update(source, no_fuzzy_matching=True)
        messages.obsolete.clear()
        held = (known or {}).get(edition, {})
        for message in messages:
            moved = held.get(_key(message)) if message.id else None
            plural = isinstance(message.id, tuple)
            if moved is not None and not all(_forms(message.string)) and _plural(moved) == plural:
                message.string = moved
        # the header says what the file is, with no template placeholders and no changing date
        messages.header_comment = HEADER.format(edition=edition, owner=catalog.owner)
        messages.project, messages.version = "course-kit", metadata.version("course")
        messages.msgid_bugs_address = "the kit's issue tracker"
        messages.last_translator = messages.language_team = "course-kit maintainers"
        messages.revision_date = messages.creation_date
        messages.fuzzy = False
        out = io.BytesIO()
        write_po(out, messages, width=100, omit_header=False, sort_output=False)
        if path.is_file() and _without_references(path.read_bytes()) == _without_references(
            out.getvalue()
        ):
            continue  # the same messages and translations: only line references would move
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(out.getvalue())
        written.append(path)
    return written


def _without_references(po: bytes) -> list[bytes]:
    """A ``.po``'s lines but its ``#:`` references (where each message is in the sources)."""
    return [line for line in po.splitlines() if not line.startswith(b"#:")]


def build_one(po: Path, mo: Path) -> bool:
    """Compile ``po`` into ``mo``; whether ``mo`` was written. A changed ``.mo`` is replaced whole
    (a running kit never reads half of one). An unchanged one older than its ``.po`` is only
    touched: the kit reads a ``.mo`` older than its ``.po`` as stale, and would compile the
    ``.po`` again in every process (``locale.compiled``)."""
    if not po.is_file():
        return False
    compiled = compile_catalog(po.read_bytes())
    if mo.is_file() and mo.read_bytes() == compiled:
        if mo.stat().st_mtime < po.stat().st_mtime:
            os.utime(mo)
        return False
    atomic_write(mo, compiled)
    return True


def disagreements(edition: str, catalogs: list[Catalog]) -> list[Gap]:
    """Every message two catalogs translate differently: a learner would read one or the other
    depending on which chapters are found (the first catalog that has it answers)."""
    seen: dict[tuple[str, str], tuple[str, Any]] = {}
    found = []
    for catalog in catalogs:
        if not catalog.path(edition).is_file():
            continue
        for message in read_catalog(edition, catalog):
            if not message.id or not all(_forms(message.string)):
                continue
            first = seen.setdefault(_entry(message), (catalog.owner, message.string))
            if first[1] != message.string:
                problem = f"translated differently in {first[0]} and {catalog.owner}"
                found.append(Gap(edition, _key(message), problem))
    return found


def main(check: bool, do_update: bool, sources: Sequence[Path] = ()) -> int:
    kit = kit_root()
    catalogs = all_catalogs()
    if do_update:
        known = known_translations(catalogs, sources)  # before a catalog drops what moved out
        for catalog in catalogs:
            for path in update(catalog, known):
                print(f"wrote {shown(path, kit)}")
    if check:
        found, counts = [], []
        for catalog in catalogs:
            source = template(catalog) if catalog.config.is_file() else []
            found += [gap for edition in TRANSLATED for gap in gaps(edition, source, catalog)]
            counts.append(f"{catalog.owner} {len([m for m in source if m.id])}")
        found += [gap for edition in TRANSLATED for gap in disagreements(edition, catalogs)]
        for gap in found:
            print(f"course-kit: {gap}", file=sys.stderr)
        if found:
            print(
                f"catalogs: {len(found)} message(s) to fix; `course-kit catalogs --update` adds "
                "new ones to the .po files",
                file=sys.stderr,
            )
            return 1
        print(f"catalogs: every edition translates every message ({', '.join(counts)})")
        return 0
    for catalog in catalogs:  # compile each .po into the .mo the kit reads
        for edition in TRANSLATED:
            if build_one(catalog.path(edition), mo := catalog.path(edition, ".mo")):
                print(f"wrote {shown(mo, kit)}")
    return 0
