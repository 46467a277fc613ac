"""Each chapter's catalog and glossary, found in its folder: read before the kit's, extended from
the kit's, and covered by ``course-kit catalogs`` wherever the chapter is found."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from course.harness.kit import kit_root
from course.harness.manifest import MANIFEST_NAME, load_manifest
from course.locale import CHAPTER_ROOTS, chapter_catalog_path, translations
from course.locale.glossary import avoided_words, glossary
from course.tools import catalogs

KIT = kit_root()
KITS_OWN = 'no edition "{language}" (editions: {editions})'  # a machinery message


def extra_chapter(root: Path, messages: dict[str, str], glossary_text: str = "") -> Path:
    """A chapter 98 under ``root`` (chapter 11's manifest renumbered) with a zh catalog of
    ``messages`` and, when given, a zh glossary."""
    folder = root / "ch98"
    eleven = kit_root() / load_manifest("11").source
    text = eleven.read_text("utf-8").replace('chapter = "11"', 'chapter = "98"', 1)
    text = text.replace('\npaths = "kit"\n', "\n", 1)  # only a built-in chapter's may say it
    (folder / "locale" / "zh").mkdir(parents=True)
    (folder / MANIFEST_NAME).write_text(text, encoding="utf-8")
    po = chapter_catalog_path(folder, "zh")
    po.parent.mkdir(parents=True)
    catalog = Catalog(locale="zh", domain="chapter")
    for message, translation in messages.items():
        catalog.add(message, translation)
    with po.open("wb") as file:
        write_po(file, catalog)
    if glossary_text:
        (folder / "locale" / "zh" / "glossary.toml").write_text(glossary_text, encoding="utf-8")
    return folder


def test_a_chapters_catalog_is_read_before_the_kits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kits = translations("zh").gettext(KITS_OWN)
    extra_chapter(tmp_path, {"a message of chapter 98": "第 98 章的消息", KITS_OWN: "改写的"})
    assert translations("zh").gettext("a message of chapter 98") == "a message of chapter 98"
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path))
    zh = translations("zh")
    assert zh.gettext("a message of chapter 98") == "第 98 章的消息"
    assert zh.gettext(KITS_OWN) == "改写的", "a chapter's catalog is asked first"
    assert zh.gettext("Checking {where}") == translations("zh").gettext("Checking {where}")
    monkeypatch.delenv(CHAPTER_ROOTS)
    assert translations("zh").gettext(KITS_OWN) == kits


def test_a_chapters_glossary_extends_the_kits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    term = '[[term]]\nen = "estimate cache"\nzh = "估算缓存"\navoid = ["估计缓存"]\n'
    extra_chapter(tmp_path, {}, term + '[english]\nallowed = ["memo"]\n')
    terms = len(glossary("zh")["term"])
    assert avoided_words("估计缓存") == []
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path))
    assert avoided_words("估计缓存") == ["估计缓存 (estimate cache: 估算缓存)"]
    assert len(glossary("zh")["term"]) == terms + 1
    assert "memo" in glossary("zh")["english"]["allowed"]


def test_catalogs_check_covers_every_chapter_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = extra_chapter(tmp_path, {})
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path))
    found = catalogs.all_catalogs()
    assert [c.owner for c in found][-1] == "chapter 98"
    assert found[-1].path("zh") == chapter_catalog_path(folder, "zh")
    assert catalogs.main(check=True, do_update=False) == 1
    assert "course-kit: zh: chapter 98 has no babel.cfg" in capsys.readouterr().err


def test_a_message_two_catalogs_translate_differently_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra_chapter(tmp_path, {KITS_OWN: "改写的"})
    assert catalogs.disagreements("zh", catalogs.all_catalogs()) == []
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path))
    found = catalogs.disagreements("zh", catalogs.all_catalogs())
    assert [(gap.message, gap.problem) for gap in found] == [
        (KITS_OWN, "translated differently in the kit and chapter 98")
    ]


def test_a_message_that_moves_to_another_catalog_keeps_its_translation(tmp_path: Path) -> None:
    """``catalogs --update`` fills a catalog's new message from the one that held it: moving a
    module into a chapter (or splitting a catalog) loses no translation."""
    (tmp_path / "babel.cfg").write_text("[python: course/locale/__init__.py]\n", "utf-8")
    moved = catalogs.Catalog("a new chapter", tmp_path / "babel.cfg", tmp_path, "chapter", KIT)
    catalogs.update(moved)
    assert catalogs.read_catalog("zh", moved)[KITS_OWN].string == ""
    moved.path("zh").unlink()
    catalogs.update(moved, catalogs.known_translations([catalogs.kit_catalog()]))
    assert catalogs.read_catalog("zh", moved)[KITS_OWN].string == translations("zh").gettext(
        KITS_OWN
    )


def test_update_takes_translations_from_another_po_too(tmp_path: Path) -> None:
    """``catalogs --update --from PO``: the other side of a merge lends its translations."""
    (tmp_path / "babel.cfg").write_text("[python: course/locale/__init__.py]\n", "utf-8")
    merged = catalogs.Catalog("a merged catalog", tmp_path / "babel.cfg", tmp_path, "chapter", KIT)
    other = Catalog(locale="zh", domain="course")
    other.add(KITS_OWN, "另一边的译文")
    with (tmp_path / "other.po").open("wb") as file:
        write_po(file, other)
    catalogs.update(merged, catalogs.known_translations([], [tmp_path / "other.po"]))
    assert catalogs.read_catalog("zh", merged)[KITS_OWN].string == "另一边的译文"


def test_moved_lines_alone_rewrite_no_catalog(tmp_path: Path) -> None:
    """``catalogs --update`` writes a catalog only when its messages or translations change:
    a source whose lines moved leaves the ``.po`` as it is (building one chapter, or the kit's
    catalog on a clean checkout, changes no other file), a new message rewrites it whole."""
    module = tmp_path / "module.py"
    module.write_text("from course.locale import gettext as _\n\n_('a first message')\n", "utf-8")
    (tmp_path / "babel.cfg").write_text("[python: module.py]\n", "utf-8")
    owned = catalogs.Catalog("a chapter", tmp_path / "babel.cfg", tmp_path, "chapter", tmp_path)
    assert catalogs.update(owned) == [owned.path("zh")]
    written = owned.path("zh").read_bytes()
    assert b"#: module.py:3" in written
    module.write_text("\n\n" + module.read_text("utf-8"), "utf-8")
    assert catalogs.update(owned) == []
    assert owned.path("zh").read_bytes() == written
    module.write_text(module.read_text("utf-8") + "_('a second message')\n", "utf-8")
    assert catalogs.update(owned) == [owned.path("zh")]
    rewritten = owned.path("zh").read_bytes()
    assert b"#: module.py:5" in rewritten and b'msgid "a second message"' in rewritten


def test_a_chapters_catalog_is_extracted_from_its_folder_wherever_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chapter's ``babel.cfg`` is read from its folder: the test chapter copied outside the
    kit gives the messages it gives inside, each located in the folder itself."""
    inside = KIT / "tests" / "chapters"
    shutil.copytree(inside / "ch12", tmp_path / "ch12", ignore=shutil.ignore_patterns("*.mo"))
    found = {}
    for root in (inside, tmp_path):
        monkeypatch.setenv(CHAPTER_ROOTS, str(root))
        [catalog] = [c for c in catalogs.all_catalogs() if c.owner == "chapter 12"]
        assert catalog.base == root / "ch12"
        found[root] = {m.id: m.locations for m in catalogs.template(catalog) if m.id}
    assert found[tmp_path] == found[inside] and len(found[inside]) > 50
    places = {where for locations in found[inside].values() for where, _ in locations}
    assert {"tokens.py", "chapter.toml", "probes.py"} <= places


def test_a_chapter_folder_that_is_a_link_gives_its_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder of chapters may name a chapter by a link to its folder: its catalog is
    extracted from the folder the link leads to (it was once a catalog of no message)."""
    shutil.copytree(KIT / "tests" / "chapters" / "ch12", tmp_path / "kept" / "ch12")
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "ch12").symlink_to(tmp_path / "kept" / "ch12")
    monkeypatch.setenv(CHAPTER_ROOTS, str(tmp_path / "chapters"))
    [catalog] = [c for c in catalogs.all_catalogs() if c.owner == "chapter 12"]
    assert len([m for m in catalogs.template(catalog) if m.id]) > 50
