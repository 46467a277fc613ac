"""``course-kit catalogs``: extract the messages, keep every ``.po`` whole, build the ``.mo``.

Babel does the extracting, merging and compiling; ``babel.cfg`` says where the messages are.
``--check`` fails on any message an edition does not translate (a learner would read English),
on a translation left fuzzy or stale, and on one whose ``{placeholders}`` differ from the source.
"""

from __future__ import annotations

import functools
import io
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import IO, Any

from ..grading.safefs import atomic_write
from ..harness.docstrings import docstrings
from ..harness.kit import kit_root
from ..harness.manifest import (
    available_chapters,
    curriculum_texts,
    load_manifest,
    parse_manifest,
)
from ..locale import (
    CHAPTER_EDITION,
    DOMAIN,
    EDITIONS,
    SOURCE_EDITION,
    catalog_path,
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
    the string after a constant), as ``docstrings.localized`` looks each up."""
    for line, text in docstrings(fileobj.read().decode("utf-8")):
        yield line, None, text, []


def extract_lesson(fileobj: IO[bytes], keywords: Any, tags: Any, options: Any) -> Extracted:
    """Babel extractor for a lesson module: its marked messages, and, for a module a workspace
    is given (a curriculum file of role ``given``), its docstrings as ``extract_docstrings``."""
    from babel.messages.extract import extract_python

    data = fileobj.read()
    found: Iterator[Any] = extract_python(io.BytesIO(data), keywords, tags, options)
    yield from found  # (line, function, message, comments), as Babel's own extractor gives it
    if Path(getattr(fileobj, "name", "")).resolve() in given_modules():
        yield from extract_docstrings(io.BytesIO(data), keywords, tags, options)


@functools.cache
def given_modules() -> frozenset[Path]:
    """The kit's modules every curriculum copies into a workspace as given."""
    kit = kit_root()
    return frozenset(
        (kit / file.starter).resolve()
        for chapter in available_chapters()
        for file in load_manifest(chapter).files_with_role("given")
        if file.starter.endswith(".py")
    )


def template() -> Any:
    """The catalog template: every message the kit's sources mark, as Babel extracts it."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
    from babel.messages.frontend import parse_mapping_cfg

    kit = kit_root()
    with (kit / "babel.cfg").open(encoding="utf-8") as config:
        method_map, options_map = parse_mapping_cfg(config, "babel.cfg")  # type: ignore[no-untyped-call]
    catalog = Catalog(project="course-kit", domain=DOMAIN, charset="utf-8")
    for filename, lineno, message, comments, context in extract_from_dir(
        str(kit), method_map, options_map, keywords=DEFAULT_KEYWORDS
    ):
        catalog.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return catalog


def read_catalog(edition: str) -> Any:
    from babel.messages.pofile import read_po

    path = catalog_path(edition)
    with path.open("rb") as file:
        return read_po(file, locale=edition, domain=DOMAIN)


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


def _key(message: Any) -> str:
    return str(_forms(message.id)[0])


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


def gaps(edition: str, source: Any | None = None) -> list[Gap]:
    """Every message of the sources that ``edition`` leaves to English, or translates wrongly."""
    source = template() if source is None else source
    path = catalog_path(edition)
    if not path.is_file():
        return [Gap(edition, str(path), "no catalog")]
    catalog = read_catalog(edition)
    found = ((m, _problem(m, catalog.get(_key(m), m.context), edition)) for m in source if m.id)
    wrong = [Gap(edition, _key(message), problem) for message, problem in found if problem]
    known = {_key(m) for m in source if m.id}
    obsolete = [_key(m) for m in catalog if m.id and _key(m) not in known]
    return wrong + [Gap(edition, key, "obsolete: no source marks it any more") for key in obsolete]


def house_style(text: str, edition: str, *, markdown: bool = False) -> list[str]:
    """What a translation breaks of the edition's style: the typography the chapter sets
    (``locale/typography.py``) and the glossary's avoided words (``locale/glossary.py``)."""
    if edition != CHAPTER_EDITION:
        return []
    found = [f"typography: {problem}" for problem in problems(text, markdown=markdown)]
    return found + [f"glossary avoids {word}" for word in avoided_words(text, edition)]


HEADER = """\
# The {edition} edition of the course kit's messages. The English source text is in the code;
# fill in the msgstr lines. `course-kit catalogs --update` adds newly marked messages and
# `course-kit catalogs --check` lists what is left (see docs/editions.md)."""


def update() -> list[Path]:
    """Merge the sources' messages into every edition's ``.po`` (new ones untranslated)."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    source = template()
    written = []
    for edition in TRANSLATED:
        path = catalog_path(edition)
        if path.is_file():
            catalog = read_catalog(edition)
        else:
            catalog = Catalog(locale=edition, domain=DOMAIN, project="course-kit")
        source.creation_date = catalog.creation_date  # a merge alone changes no header line
        catalog.update(source, no_fuzzy_matching=True)
        catalog.obsolete.clear()
        # the header says what the file is, with no template placeholders and no changing date
        catalog.header_comment = HEADER.format(edition=edition)
        catalog.project, catalog.version = "course-kit", metadata.version("course")
        catalog.msgid_bugs_address = "the kit's issue tracker"
        catalog.last_translator = catalog.language_team = "course-kit maintainers"
        catalog.revision_date = catalog.creation_date
        catalog.fuzzy = False
        path.parent.mkdir(parents=True, exist_ok=True)
        out = io.BytesIO()
        write_po(out, catalog, width=100, omit_header=False, sort_output=False)
        path.write_bytes(out.getvalue())
        written.append(path)
    return written


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


def main(check: bool, do_update: bool) -> int:
    kit = kit_root()
    if do_update:
        for path in update():
            print(f"wrote {path.relative_to(kit)}")
    if check:
        source = template()
        found = [gap for edition in TRANSLATED for gap in gaps(edition, source)]
        for gap in found:
            print(f"course-kit: {gap}", file=sys.stderr)
        if found:
            print(
                f"catalogs: {len(found)} message(s) to fix; `course-kit catalogs --update` adds "
                "new ones to the .po files",
                file=sys.stderr,
            )
            return 1
        print(f"catalogs: every edition translates all {len(source)} messages")
        return 0
    for edition in TRANSLATED:  # compile each .po into the .mo the kit reads
        if build_one(catalog_path(edition), mo := catalog_path(edition, ".mo")):
            print(f"wrote {mo.relative_to(kit)}")
    return 0
