"""The curriculum as data: the chapter 11 manifest, and clear errors for broken manifests."""

from __future__ import annotations

import ast
import os
import re
from collections import Counter
from pathlib import Path

import pytest

from course.harness.kit import kit_root
from course.harness.manifest import (
    CHAPTER_ROOTS,
    ManifestError,
    available_chapters,
    load_manifest,
    parse_manifest,
)

SHIPPED = (Path(__file__).parents[2] / "course/curricula/ch11/chapter.toml").read_text("utf-8")


def lab_markers(test_file: Path) -> Counter[str]:
    """How many focused tests carry each ``@pytest.mark.lab(...)`` id."""
    counts: Counter[str] = Counter()
    for node in ast.parse(test_file.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            for decorator in node.decorator_list:
                if isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith(
                    "mark.lab"
                ):
                    counts[str(ast.literal_eval(decorator.args[0]))] += 1
    return counts


def test_the_manifest_promises_what_the_focused_tests_hold() -> None:
    manifest = load_manifest("11")
    markers: Counter[str] = Counter()
    for test_file in manifest.test_files:
        markers += lab_markers(kit_root() / test_file)
    assert {lab.id: lab.tests for lab in manifest.labs} == dict(markers)
    assert [lab.tests for lab in manifest.required_labs] == [3, 3, 3, 2, 3]
    assert manifest.total_tests == 14
    for lab in manifest.labs:
        select = re.compile(lab.select)
        names = [n for n in _test_names(kit_root() / lab.test_file) if select.search(n)]
        assert len(names) == lab.tests, f"-k {lab.select} selects {names}"


def _test_names(test_file: Path) -> list[str]:
    tree = ast.parse(test_file.read_text(encoding="utf-8"))
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name[:5] == "test_"]


def test_every_file_the_manifest_names_exists_in_the_kit() -> None:
    manifest = load_manifest("11")
    kit = kit_root()
    for file in manifest.files:
        assert (kit / file.starter).is_file(), file.starter
        assert (kit / file.reference).is_file(), file.reference
    for path in manifest.card.teaching_files:
        assert (kit / path).is_file(), path
    assert manifest.probes is not None and (kit / manifest.probes).is_file()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("tests = 3\n", 'tests = "3"\n', "labs[0].tests: must be a whole number of at least 1"),
        ('id = "11.2"', 'id = "11.1"', "labs[1].id: duplicate lab id '11.1'"),
        ('mode = "rebuild"\n', "", "card.mode: missing field"),
        ('mode = "rebuild"\n', 'mode = "rebuild"\nmood = "calm"\n', "card.mood: unknown field"),
        ('role = "given"', 'role = "spare"', "workspace[0].role: must be one of"),
        ('starter = "course/labs.py"', 'starter = "../labs.py"', "workspace[1].starter: must be"),
        (
            'name = "context.select_groups"',
            'name = "select_groups"',
            "labs[2].functions[0].name: 'select_groups' must look",
        ),
        ('chapter = "11"', "chapter = [", "not valid TOML"),
        (
            'test_file = "tests/chapter11/review_11.py"',
            'test_file = "tests/chapter11/review_12.py"',
            "review.test_file: must also be listed as a [[workspace]] file",
        ),
        (
            'show = "test_review_shows_the_budget"',
            'show = "test_review_shows_the_groups"',
            "review: test 'test_review_shows_the_groups' is named twice",
        ),
        (
            'test = "test_review_returned_copies_are_isolated"',
            'test = "isolation"',
            "review.checks[0].test: must name a test function (test_…), got 'isolation'",
        ),
        (
            'probes = "course/',
            'probes = "/course/',
            "probes: must be a relative path inside the kit",
        ),
    ],
)
def test_a_broken_manifest_names_the_field(old: str, new: str, message: str) -> None:
    assert old in SHIPPED
    with pytest.raises(ManifestError, match=re.escape(message)):
        parse_manifest(SHIPPED.replace(old, new, 1), "ch11.toml")


def test_an_unknown_chapter_lists_the_known_ones() -> None:
    with pytest.raises(ManifestError, match=r"no curriculum for chapter 99 \(chapters: .*11"):
        load_manifest("99")


KIT = Path(__file__).parents[2] / "course"
HARNESS_CODE = [
    path
    for part in ("harness", "sandboxed", "tools", "display")
    for path in sorted((KIT / part).glob("*.py"))
]


def _code_strings(path: Path) -> list[str]:
    """String constants of a module, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


@pytest.mark.parametrize("path", HARNESS_CODE, ids=lambda p: p.name)
def test_harness_code_holds_no_chapter_text(path: Path) -> None:
    manifest = load_manifest("11")
    chapter_text = [lab.title for lab in manifest.labs] + [lab.id for lab in manifest.labs]
    chapter_text += [manifest.card.title, manifest.package, manifest.focused_tests]
    assert manifest.review is not None
    review = manifest.review
    chapter_text += [review.title, review.intro, review.test_file, *review.tests]
    chapter_text += [q.text for q in review.questions]
    chapter_text += [c.title for c in review.checks] + [c.hint for c in review.checks]
    for text in _code_strings(path):
        for specific in chapter_text:
            assert specific not in text, f"{path.name}: {text!r} belongs in the manifest"


def test_the_review_names_tests_that_its_module_defines() -> None:
    manifest = load_manifest("11")
    assert manifest.review is not None
    module = kit_root() / manifest.review.test_file
    assert set(manifest.review.tests) == set(_test_names(module))
    assert len(manifest.review.questions) == 4 and len(manifest.review.checks) == 2


def test_a_chapter_without_a_review_reads_as_none() -> None:
    start = SHIPPED.index("[review]")
    end = SHIPPED.index("# The workspace: path inside it")
    without = SHIPPED[:start] + SHIPPED[end:]
    assert parse_manifest(without, "ch11.toml").review is None


def a_chapter_root(root: Path, folder: str, chapter: str) -> Path:
    """``root`` holding ``folder/chapter.toml``: chapter 11's manifest, renumbered, its paths
    written from its folder (as every chapter found through ``COURSE_CHAPTERS`` writes them)."""
    (root / folder).mkdir(parents=True)
    text = SHIPPED.replace('chapter = "11"', f'chapter = "{chapter}"', 1)
    text = text.replace('\npaths = "kit"\n', "\n", 1)
    (root / folder / "chapter.toml").write_text(text, encoding="utf-8")
    return root


def test_course_chapters_adds_chapters_after_the_built_in_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = a_chapter_root(tmp_path / "more", "ch12", "12")
    monkeypatch.setenv(CHAPTER_ROOTS, os.pathsep.join([str(tmp_path / "none"), "", str(root)]))
    assert available_chapters() == ["11", "12"]
    twelve = load_manifest("12")
    assert twelve.folder == str(root / "ch12")
    assert twelve.source == f"{root / 'ch12'}/chapter.toml"
    assert twelve.source_folder == f"{root / 'ch12'}/notebooks"
    eleven = load_manifest("11")
    assert (eleven.folder, eleven.source) == (
        "course/curricula/ch11",
        "course/curricula/ch11/chapter.toml",
    )
    monkeypatch.delenv(CHAPTER_ROOTS)
    assert available_chapters() == ["11"]
    with pytest.raises(ManifestError, match="no curriculum for chapter 12 "):
        load_manifest("12")


def test_a_chapter_found_twice_is_refused_naming_both_manifests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = a_chapter_root(tmp_path / "more", "ch11-again", "11")
    monkeypatch.setenv(CHAPTER_ROOTS, str(root))
    said = f"{root / 'ch11-again'}/chapter.toml: chapter '11' is already defined by "
    said += "course/curricula/ch11/chapter.toml"
    with pytest.raises(ManifestError, match=re.escape(said)):
        available_chapters()
