"""A chapter folder anywhere: the test chapter 12, copied outside the kit, at every door.

The copy is found through ``COURSE_CHAPTERS`` alone (the kit's own ``tests/chapters`` is not
named here), and its manifest and ``babel.cfg`` name its files from its own folder, so every
door reads them there: the maintainer's checks and builds, ``practice`` in both editions,
``checkpoint``, a roster in the sandbox, the Gradescope zip's own scripts, Classroom 50's
autograder and the zero-install site's build. None of it changes a file of the kit, nor of the
copy (``git status`` of the kit, and the copy's bytes, before and after).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from harness_support import cli, roster_workspace
from solutions import solve_lab
from test_chapter12_doors import (
    a_roster_of_two,
    carried_by_the_site,
    course_kit,
    on_classroom_50,
    on_gradescope,
)

from course.harness.kit import kit_root
from course.harness.manifest import CHAPTER_ROOTS, Manifest, load_manifest

CHAPTER = "12"
KIT = kit_root()
pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)


@contextmanager
def chapters_in(root: Path) -> Iterator[None]:
    """``COURSE_CHAPTERS`` naming ``root`` alone while the block runs (a module's fixtures are
    made before a test's ``monkeypatch``)."""
    before = os.environ.get(CHAPTER_ROOTS)
    os.environ[CHAPTER_ROOTS] = str(root)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(CHAPTER_ROOTS, None)
        else:
            os.environ[CHAPTER_ROOTS] = before


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the kit holding a copy of the test chapter (``ch12``), as a maintainer
    keeps a chapter of their own: no compiled catalog, no bytecode."""
    root = tmp_path_factory.mktemp("elsewhere") / "chapters"
    ignored = shutil.ignore_patterns("__pycache__", "*.mo")
    shutil.copytree(KIT / "tests" / "chapters" / "ch12", root / "ch12", ignore=ignored)
    assert not root.is_relative_to(KIT)
    return root


@pytest.fixture(autouse=True)
def found_there(outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test, and every command it starts, finds chapter 12 in the copy alone."""
    monkeypatch.setenv(CHAPTER_ROOTS, str(outside))


@pytest.fixture(scope="module")
def manifest(outside: Path) -> Manifest:
    with chapters_in(outside):
        return load_manifest(CHAPTER)


def kit_status() -> str:
    done = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=KIT,
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".mo"
    }


# --------------------------------------------------------------------------- the maintainer


def test_the_manifest_names_every_file_in_the_copy(manifest: Manifest, outside: Path) -> None:
    folder = outside / "ch12"
    assert manifest.folder == str(folder)
    own = [f for f in manifest.files if not f.starter.startswith("course/")]
    named = [f.starter for f in own] + [f.reference for f in own] + [str(manifest.probes)]
    named += [*manifest.notebooks.values(), manifest.source_folder]
    assert named and all(Path(path).is_relative_to(folder) for path in named), named


def test_building_and_checking_the_chapter_changes_no_file(outside: Path) -> None:
    """What docs/chapters.md has a maintainer run, run on the copy: the checks pass, and the
    builds write nothing anew, in the kit or in the copy (a catalog's line references are the
    copy's own, the same wherever it is)."""
    kit, copy = kit_status(), files_of(outside)
    for command in (
        ["starters"], ["notebooks"], ["catalogs", "--update"], ["catalogs"],
        ["chapters"], ["starters", "--check"], ["notebooks", "--check"], ["catalogs", "--check"],
    ):  # fmt: skip
        done = course_kit(*command)
        assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"
    assert "12 (2 labs)" in course_kit("chapters").stdout
    assert re.search(r"chapter 12 \d+\)", course_kit("catalogs", "--check").stdout)
    assert kit_status() == kit, "a kit file changed"
    assert files_of(outside) == copy, "a file of the chapter changed"


# --------------------------------------------------------------------------- the learner


def test_practice_and_checkpoint_in_both_editions(manifest: Manifest, tmp_path: Path) -> None:
    made = cli("practice", CHAPTER, str(tmp_path / "en"))
    assert made.returncode == 0, made.stderr
    starter = (Path(manifest.folder) / "starters" / "12-tokens.py").read_bytes()
    assert (tmp_path / "en" / "pi_course" / "tokens.py").read_bytes() == starter
    solve_lab(manifest, KIT, tmp_path / "en", "12.1")
    done = cli("checkpoint", CHAPTER, cwd=tmp_path / "en")
    assert done.returncode == 1, done.stdout + done.stderr
    assert re.search(r"^Lab 12\.1 .*3/3 tests · (\d+)/\1 cases +passed$", done.stdout, re.M)
    assert re.search(r"^Lab 12\.2 .*0/2 tests .*pending$", done.stdout, re.M), done.stdout

    made = cli("practice", CHAPTER, str(tmp_path / "zh"), "--lang", "zh")
    assert made.returncode == 0, made.stderr
    done = cli("checkpoint", CHAPTER, cwd=tmp_path / "zh")
    assert "下一步：Lab 12.1 字符估算（0/3 项测试" in done.stdout, done.stdout
    hint = cli("checkpoint", CHAPTER, "--hint", cwd=tmp_path / "zh")
    assert hint.returncode == 0 and "用字符数估算 token" in hint.stdout, hint.stdout
    sections = {  # each edition's heading of the chapter's section, where the manifest gives one
        edition: (tmp_path / edition / "LEARNING.md").read_text(encoding="utf-8")
        for edition in ("en", "zh")
    }
    assert "“Estimating tokens by characters”" in sections["en"]
    assert "“用字符数估算 token”" in sections["zh"]

    reference = cli("checkpoint", CHAPTER, cwd=tmp_path)
    assert reference.returncode == 0, reference.stdout + reference.stderr
    assert "grade 100/100" in reference.stdout


# --------------------------------------------------------------------------- the instructor


def test_a_roster_grades_in_the_sandbox(manifest: Manifest, tmp_path: Path) -> None:
    rows = a_roster_of_two(manifest, tmp_path / "class")
    assert {name: (row["status"], row["score"]) for name, row in rows.items()} == {
        "ada": ("passed", "100"),
        "ben": ("pending", "60"),
    }


def test_the_gradescope_zip_carries_the_chapter(manifest: Manifest, tmp_path: Path) -> None:
    """The zip holds the copy's folder, and its own scripts find it there, with no
    ``COURSE_CHAPTERS`` (``setup.sh`` checks ``checkpoint 12`` before any submission)."""
    halfway = roster_workspace(manifest, tmp_path / "learners", "halfway", solved=1)
    names, scores = on_gradescope(halfway, tmp_path)
    assert {f"kit/chapters/ch12/{name}" for name in files_of(Path(manifest.folder))} <= names
    assert not [name for name in names if str(tmp_path.parent) in name]
    assert scores == {"12.1": (60, 60), "12.2": (0, 40)}


def test_classroom_50_carries_the_chapter(manifest: Manifest, tmp_path: Path) -> None:
    text, tests = on_classroom_50(manifest, tmp_path)
    assert str(tmp_path.parent) not in text, "the folder travels in it, not its path"
    assert [(score, most) for _, score, most in tests] == [(60, 60), (0, 40)]


def test_the_site_is_built_with_the_chapter(manifest: Manifest, tmp_path: Path) -> None:
    """The site's parts that need no download (``carried_by_the_site``): the wheel carries the
    folder once, among the built-in chapters, with the probe set drawn for it; the browser
    tests' key of the site reads the folder where it is."""
    from course.tools import lite

    sys.path.insert(0, str(KIT / "tests" / "browser"))
    try:
        from lite_site import kit_digest
    finally:
        sys.path.remove(str(KIT / "tests" / "browser"))
    carried = carried_by_the_site(manifest, tmp_path)
    assert not [path for path in carried if "ch12" in path and not path.startswith("course/")]
    assert len(lite.drawn_probe_sets(KIT, [manifest])) == 2  # its answers and its cases
    assert re.fullmatch(r"[0-9a-f]{16}", kit_digest())
