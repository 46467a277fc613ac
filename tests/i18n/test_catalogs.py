"""The editions' catalogs: every marked message is translated, and nothing is left outside them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from course.locale import (
    EDITIONS,
    SOURCE_EDITION,
    compile_catalog,
    read_translations,
    set_edition,
    translations,
)
from course.tools import catalogs

TRANSLATED = [edition for edition in EDITIONS if edition != SOURCE_EDITION]


CATALOGS = catalogs.all_catalogs()


def extracted(catalog: catalogs.Catalog, tmp_path: Path) -> set[str]:
    """What ``pybabel extract`` finds with the catalog's ``babel.cfg``, run as a maintainer runs
    it (from where its paths are written from: the chapter's folder, or the kit's root)."""
    pot = tmp_path / "messages.pot"
    pybabel = Path(sys.executable).with_name("pybabel")
    subprocess.run(
        [str(pybabel), "extract", "-F", str(catalog.config), "-o", str(pot), "--no-location", "."],
        cwd=catalog.base,
        check=True,
        capture_output=True,
    )
    with pot.open("rb") as file:
        return {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(file) if m.id}


@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda catalog: catalog.owner)
@pytest.mark.parametrize("edition", TRANSLATED)
def test_pybabel_extract_finds_no_message_outside_the_catalog(
    edition: str, catalog: catalogs.Catalog, tmp_path: Path
) -> None:
    found = extracted(catalog, tmp_path)
    with catalog.path(edition).open("rb") as file:
        held = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(file) if m.id}
    missing = sorted(found - held)
    assert not missing, f"{len(missing)} message(s) not in {catalog.path(edition)}: {missing[:5]}"
    assert len(found) > 100, "the extraction found too little: is its babel.cfg still right?"


def test_the_kits_catalog_holds_no_chapters_message() -> None:
    """A message only a chapter's sources mark lives in that chapter's catalog alone."""
    kit, *chapters = CATALOGS
    machinery = {m.id for m in catalogs.template(kit) if m.id}
    for chapter in chapters:
        with chapter.path("zh").open("rb") as file:
            chapters_own = {m.id for m in read_po(file) if m.id} - machinery
        with kit.path("zh").open("rb") as file:
            in_kit = {m.id for m in read_po(file) if m.id} & chapters_own
        assert chapters_own and not in_kit, f"{chapter.owner}'s messages in the kit's: {in_kit}"


@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda catalog: catalog.owner)
@pytest.mark.parametrize("edition", TRANSLATED)
def test_no_message_falls_back_to_english(edition: str, catalog: catalogs.Catalog) -> None:
    """Untranslated, fuzzy, stale, placeholder or English-left messages: the count stays 0."""
    gaps = catalogs.gaps(edition, catalog=catalog)
    assert [str(gap) for gap in gaps] == []


@pytest.mark.parametrize("edition", TRANSLATED)
def test_the_compiled_catalog_is_what_the_kit_reads(edition: str) -> None:
    message = 'no edition "{language}" (editions: {editions})'
    translated = translations(edition).gettext(message)
    assert translated != message and "{language}" in translated


def test_english_is_the_source_and_needs_no_catalog() -> None:
    message = 'no edition "{language}" (editions: {editions})'
    assert translations(SOURCE_EDITION).gettext(message) == message


def test_the_edition_follows_lang_and_the_door(monkeypatch: pytest.MonkeyPatch) -> None:
    from course.locale import current_edition, edition_from_environment

    assert edition_from_environment({"LANG": "zh_CN.UTF-8"}) == "zh"
    assert edition_from_environment({"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"
    assert edition_from_environment({"LANGUAGE": "fr:zh", "LANG": "en_US.UTF-8"}) == "zh"
    assert edition_from_environment({"COURSE_LANG": "en", "LANG": "zh_CN.UTF-8"}) == "en"
    assert edition_from_environment({}) == "en"
    monkeypatch.setenv("COURSE_LANG", "zh")
    try:
        assert set_edition(None) == "zh"
        assert set_edition("en") == "en" and current_edition() == "en"
    finally:
        set_edition(None)


def test_an_unknown_edition_is_refused_by_name() -> None:
    from course.locale import EditionError

    with pytest.raises(EditionError, match=r'"fr".*en, zh'):
        set_edition("fr")


def _po(translation: str) -> bytes:
    return (
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=utf-8\\n"\n\n'
        f'msgid "budget"\nmsgstr "{translation}"\n'
    ).encode()


def test_a_stale_mo_is_not_read(tmp_path: Path) -> None:
    """A .po edited after the build is compiled afresh, so a maintainer never reads old text."""
    po, mo = tmp_path / "course.po", tmp_path / "course.mo"
    po.write_bytes(_po("预算"))
    mo.write_bytes(compile_catalog(po.read_bytes()))
    assert read_translations(po, mo).gettext("budget") == "预算"
    po.write_bytes(_po("新预算"))
    os.utime(mo, (1, 1))  # the build is older than the edit
    assert read_translations(po, mo).gettext("budget") == "新预算"
    mo.unlink()
    assert read_translations(po, mo).gettext("budget") == "新预算"


def test_the_build_makes_an_unchanged_but_older_mo_current(tmp_path: Path) -> None:
    """A .po saved again without a change (``catalogs --update`` does) leaves the .mo's bytes
    as they are, yet the build marks it current: else every process compiles the .po anew."""
    po, mo = tmp_path / "course.po", tmp_path / "course.mo"
    po.write_bytes(_po("预算"))
    assert catalogs.build_one(po, mo), "a missing .mo is written"
    os.utime(mo, (1, 1))
    assert not catalogs.build_one(po, mo), "the same bytes are not written again"
    assert mo.stat().st_mtime >= po.stat().st_mtime, "but the .mo is no longer older"
    po.write_bytes(_po("新预算"))
    assert catalogs.build_one(po, mo) and read_translations(po, mo).gettext("budget") == "新预算"
