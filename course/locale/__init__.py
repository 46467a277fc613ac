"""The kit's editions: which language a learner reads, and gettext for it.

Learner-facing strings are English inside ``_()`` (``N_()`` for constants translated later);
English is the source text. An edition's messages are looked up in every chapter's catalog
(``<chapter folder>/locale/<edition>/LC_MESSAGES/chapter.po``: the built-in chapters', then those
of the ``COURSE_CHAPTERS`` folders), then in the kit's (``<edition>/LC_MESSAGES/course.po``,
the machinery's messages). The door sets the edition (``--lang``, else the workspace's);
otherwise ``COURSE_LANG``, then ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES`` and ``LANG`` choose.

Standard library only: the graded copy's child imports this module with ``course.sandboxed``
and the compiled catalogs the grader writes beside it (``grading.verdict.engine.grader_library``).
"""

from __future__ import annotations

import functools
import gettext as _gettext
import html
import io
import os
import re
from collections.abc import Mapping
from pathlib import Path

EDITIONS = ("en", "zh")
"""The editions the kit speaks; the first is the source text and the fallback."""
SOURCE_EDITION = EDITIONS[0]
CHAPTER_EDITION = EDITIONS[1]
"""The edition the chapter is written in: its glossary and typography are the house style."""
DOMAIN = "course"
CHAPTER_DOMAIN = "chapter"
"""The name of a chapter's catalog (``chapter.po``) in its folder's ``locale/``."""
ENVIRONMENT = "COURSE_LANG"
"""The variable a door sets for its children, and a user may set to choose the edition."""
CHAPTER_ROOTS = "COURSE_CHAPTERS"
"""The environment variable naming more folders of chapters (``os.pathsep``-separated), found
after the built-in ones."""
LOCALE_DIR = Path(__file__).resolve().parent
BUILT_IN_CHAPTERS = LOCALE_DIR.parent / "curricula"
"""The built-in chapters' folders, ``chNN/`` each (in the graded copy: their compiled catalogs)."""

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
OPENING = "\uff08\u201c\u2018\u300a\u300c\u3010"
"""Full-width marks that open: parenthesis, quotes, title and corner brackets."""
CLOSING = "\uff0c\u3002\u3001\uff1b\uff1a\uff1f\uff01\uff09\u201d\u2019\u300b\u300d\u3011"
"""Full-width marks that close or follow a word: comma, full stop, enumeration comma (the
lists' mark), semicolon, colon, question and exclamation marks, closing brackets and quotes."""
_CHINESE = re.compile(f"[{HAN}{OPENING}{CLOSING}]")
_JOINED_HAN = re.compile(rf"(?<=[{HAN}{OPENING}{CLOSING}]) (?=[{HAN}{OPENING}{CLOSING}])")
_SPACE_AFTER_MARK = re.compile(rf"(?<=[{OPENING}{CLOSING}]) (?=[^\s|])")
LATIN_COLON = re.compile(rf"(?<=[\w.\])'\"`]): (?=[{HAN}{OPENING}])")
"""An ASCII colon after Latin text, before Chinese: the chapter writes a full-width one."""
_LIST_SEMICOLON = re.compile(r"(?<=\S); (?=\S)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
"""A Markdown code span: outside Markdown its backticks would show as themselves."""

_chosen: str | None = None


class EditionError(ValueError):
    """An edition the kit does not have."""


def normalize(language: str) -> str | None:
    """``zh`` for ``zh_CN.UTF-8``, ``zh-Hans`` or ``zh``; ``None`` for what is no edition."""
    base = language.strip().replace("-", "_").split(".")[0].split("@")[0].split("_")[0].lower()
    return base if base in EDITIONS else None


def checked(language: str) -> str:
    """``language`` as an edition, or an ``EditionError`` that lists the editions."""
    edition = normalize(language)
    if edition is None:
        unknown = _('no edition "{language}" (editions: {editions})')
        raise EditionError(unknown.format(language=language, editions=_(", ").join(EDITIONS)))
    return edition


def edition_from_environment(environ: Mapping[str, str]) -> str:
    """The edition the environment asks for, as gettext reads it; English when none is known."""
    for key in (ENVIRONMENT, "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(key, "")
        if not value:
            continue
        edition = next(filter(None, map(normalize, value.split(":"))), None)
        if edition is not None:
            return edition
        if key != "LANGUAGE":  # LANGUAGE only lists wishes; the others decide
            return SOURCE_EDITION
    return SOURCE_EDITION


def set_edition(language: str | None) -> str:
    """Make ``language`` (or the environment's choice, for ``None``) this process's edition."""
    global _chosen
    _chosen = checked(language) if language else None
    return current_edition()


def current_edition() -> str:
    """The edition this process speaks."""
    return _chosen or edition_from_environment(os.environ)


def catalog_path(edition: str, suffix: str = ".po") -> Path:
    """The kit's catalog of ``edition`` (the machinery's messages)."""
    return LOCALE_DIR / edition / "LC_MESSAGES" / f"{DOMAIN}{suffix}"


def chapter_catalog_path(folder: Path, edition: str, suffix: str = ".po") -> Path:
    """The catalog of ``edition`` of the chapter in ``folder``."""
    return folder / "locale" / edition / "LC_MESSAGES" / f"{CHAPTER_DOMAIN}{suffix}"


def chapter_roots(roots: str | None = None) -> list[Path]:
    """The folders that hold chapters: the built-in ones, then each ``COURSE_CHAPTERS`` folder
    (``roots``: that variable's value, read from the environment when ``None``)."""
    given = os.environ.get(CHAPTER_ROOTS, "") if roots is None else roots
    return [
        BUILT_IN_CHAPTERS,
        *(Path(root).absolute() for root in given.split(os.pathsep) if root.strip()),
    ]


def chapter_locales(roots: str | None = None) -> list[Path]:
    """The chapters' folders that hold a ``locale/``, in lookup order (each root in name order)."""
    return [
        folder
        for root in chapter_roots(roots)
        for folder in sorted(root.glob("*/"))
        if (folder / "locale").is_dir()
    ]


def translations(edition: str) -> _gettext.NullTranslations:
    """The edition's messages: the chapters' catalogs, then the kit's; English, the source
    text, has none."""
    return _translations(edition, os.environ.get(CHAPTER_ROOTS, ""))


@functools.cache
def _translations(edition: str, roots: str) -> _gettext.NullTranslations:
    if edition == SOURCE_EDITION:
        return _gettext.NullTranslations()
    pairs = [
        (chapter_catalog_path(folder, edition), chapter_catalog_path(folder, edition, ".mo"))
        for folder in chapter_locales(roots)
    ]
    pairs.append((catalog_path(edition), catalog_path(edition, ".mo")))
    found = [read_translations(po, mo) for po, mo in pairs]
    chain = [catalog for catalog in found if isinstance(catalog, _gettext.GNUTranslations)]
    if not chain:
        return _gettext.NullTranslations()
    for catalog in chain[1:]:
        chain[0].add_fallback(catalog)  # each is asked in turn, the kit's last
    return chain[0]


def read_translations(po: Path, mo: Path) -> _gettext.NullTranslations:
    """The catalog ``compiled`` gives, or none when there is neither file."""
    data = compiled(po, mo)
    if data is None:
        return _gettext.NullTranslations()
    return _gettext.GNUTranslations(io.BytesIO(data))


def compiled(po: Path, mo: Path) -> bytes | None:
    """The ``.mo`` bytes: the built ``mo``, or ``po`` compiled in memory (once per version of
    it) when the ``mo`` is missing or older, so an edited translation is read at once."""
    if mo.is_file() and (not po.is_file() or mo.stat().st_mtime >= po.stat().st_mtime):
        return mo.read_bytes()
    if not po.is_file():
        return None
    return _compiled_once(po, po.stat().st_mtime_ns)


@functools.cache
def _compiled_once(po: Path, stamp: int) -> bytes:
    return compile_catalog(po.read_bytes())


def compile_catalog(po_text: bytes) -> bytes:
    """A ``.po`` file's bytes compiled to ``.mo`` bytes (Babel; fuzzy entries left out)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    catalog = read_po(io.BytesIO(po_text))
    out = io.BytesIO()
    write_mo(out, catalog)
    return out.getvalue()


def gettext(message: str) -> str:
    """``message`` in the current edition."""
    return translations(current_edition()).gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The singular or plural of a message with ``count``, in the current edition."""
    return translations(current_edition()).ngettext(singular, plural, count)


def N_(message: str) -> str:
    """Mark a constant for extraction; it is translated where it is shown, with ``_()``."""
    return message


def NP_(context: str, message: str) -> str:
    """Mark ``message`` for extraction under ``context`` (a msgctxt): a text an edition says
    one way in one place only, looked up there with ``in_context``."""
    return message


STUB_TITLE = "the lab's name in its stub"
"""The context of a lab title its stub says otherwise than the lab's title everywhere else (a
chapter that quotes its first red light: ``Lab 11.1 compaction entry 尚未实现``)."""


def in_context(context: str, message: str, edition: str | None = None) -> str | None:
    """``message`` as a catalog translates it under ``context`` in ``edition`` (the current
    one by default); None when none has it there (gettext hands back the very string it was
    given)."""
    found = translations(edition or current_edition()).pgettext(context, message)
    return None if found is message else found


def stub_title(title: str, edition: str | None = None) -> str:
    """A lab's title as its stub says it in ``edition`` (the current one by default): under
    ``STUB_TITLE`` where a catalog has it so, else as everywhere (``""`` stays ``""``)."""
    if not title:
        return title
    found = in_context(STUB_TITLE, title, edition)
    return found or translations(edition or current_edition()).gettext(title)


def unquoted(text: str) -> str:
    """``text`` with its Markdown code spans' backticks taken off (for a terminal, a traceback
    or plain HTML, where a backtick would show as itself)."""
    return CODE_SPAN.sub(r"\1", text)


def tidy(text: str) -> str:
    """A filled-in zh text set as the chapter sets it: a placeholder that held a Chinese phrase
    keeps no space beside Chinese (``交互分组 尚未实现`` becomes ``交互分组尚未实现``), no space
    after a full-width mark, a full-width colon after Latin text before Chinese (after
    ``compact-1.summary.files``), a full-width semicolon between list items. A line without
    Chinese is left as it is; so is a run of spaces (a table's column). Here, not in
    ``typography``, because the graded copy carries this module only."""
    return "\n".join(
        _tidy_line(line) if _CHINESE.search(line) else line for line in text.split("\n")
    )


def _tidy_line(line: str) -> str:
    line = _JOINED_HAN.sub("", line)
    line = _SPACE_AFTER_MARK.sub("", line)
    line = LATIN_COLON.sub("\uff1a", line)
    return _LIST_SEMICOLON.sub("\uff1b", line)


def tidy_filled(text: str) -> str:
    """``text`` ``tidy``-ed in the chapter's edition; in any other, as it is: an English line that
    holds a Chinese name (``Regraded 李雷 (lilei) into …; …``) keeps its English punctuation."""
    return tidy(text) if current_edition() == CHAPTER_EDITION else text


def code_spans(text: str) -> str:
    """``text`` as HTML, its Markdown code spans as ``<code>`` (a page's counterpart of
    ``unquoted``)."""
    parts = CODE_SPAN.split(text)  # text, code, text, code, ..., text
    return "".join(
        f"<code>{html.escape(part)}</code>" if index % 2 else html.escape(part)
        for index, part in enumerate(parts)
    )


_ = gettext
