"""``course-kit new-chapter N DIR``: a skeleton that meets the whole contract at once.

The skeleton is written outside the kit, with and without a parent, and found through
``COURSE_CHAPTERS``: every maintainer's check passes on it, ``checkpoint`` passes on its
reference and finds every lab pending in a fresh workspace of either edition, its manifest
holds every field the reader knows, and writing it changes no file of the kit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from dataclasses import fields
from pathlib import Path

import pytest
from harness_support import cli
from test_chapter_anywhere import kit_status

from course.harness.kit import kit_root
from course.harness.manifest import CHAPTER_ROOTS, Card, Lab, Manifest, WorkspaceFile
from course.tools.newchapter import NewChapterError, write_chapter

KIT = kit_root()
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)
SKELETONS = {"13": None, "14": "11"}
"""The chapters written: one without a parent, one building on chapter 11."""


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Both skeletons in one folder of chapters outside the kit, each written by the command
    as a maintainer runs it; the kit's ``git status`` before."""
    root = tmp_path_factory.mktemp("mine") / "chapters"
    before = kit_status()
    environment = {k: v for k, v in os.environ.items() if k != CHAPTER_ROOTS}
    for chapter, parent in SKELETONS.items():
        command = [str(BIN / "course-kit"), "new-chapter", chapter, str(root / f"ch{chapter}")]
        command += ["--parent", parent] if parent else []
        done = subprocess.run(
            command, env=environment, capture_output=True, text=True, timeout=600, check=False
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"{CHAPTER_ROOTS}={root}" in done.stdout
    return root, before


@pytest.fixture(autouse=True)
def found_there(written: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CHAPTER_ROOTS, str(written[0]))


def course_kit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "course-kit"), *args], capture_output=True, text=True, timeout=600, check=False
    )


def test_every_check_passes_on_the_skeletons_and_the_kit_is_unchanged(
    written: tuple[Path, str],
) -> None:
    for command in (["chapters"], *([c, "--check"] for c in ("starters", "notebooks", "catalogs"))):
        done = course_kit(*command)
        assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"
    assert "13 (2 labs), 14 (2 labs) meet the contract" in course_kit("chapters").stdout
    assert kit_status() == written[1], "writing a chapter changed a file of the kit"


@pytest.mark.parametrize("chapter", SKELETONS)
def test_the_reference_passes_and_a_fresh_workspace_is_pending(
    chapter: str, tmp_path: Path
) -> None:
    reference = cli("checkpoint", chapter, cwd=tmp_path)
    assert reference.returncode == 0, reference.stdout + reference.stderr
    assert f"Lab {chapter}.1  first step" in reference.stdout
    assert "grade 100/100" in reference.stdout
    made = cli("practice", chapter, str(tmp_path / "zh"), "--lang", "zh")
    assert made.returncode == 0, made.stderr
    fresh = cli("checkpoint", chapter, cwd=tmp_path / "zh")
    assert fresh.returncode == 1, fresh.stdout + fresh.stderr
    assert f"下一步：Lab {chapter}.1 第一步（0/2 项测试" in fresh.stdout, fresh.stdout


def manifest_keys(path: Path) -> tuple[set[str], set[str], set[str], set[str]]:
    """The keys the manifest at ``path`` writes: its own, its card's, a lab's, a file's."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    lab_keys = {key for lab in data["labs"] for key in lab} - {"functions"}
    files = {key for file in data["workspace"] for key in file}
    return set(data), set(data["card"]), lab_keys, files


def test_the_manifest_writes_every_field(written: tuple[Path, str]) -> None:
    """A maintainer fills fields in rather than looks them up: every field the reader knows is
    there (the review only as a comment: it needs a test file of its own)."""
    own, card, lab, file = manifest_keys(written[0] / "ch14" / "chapter.toml")
    found = {"labs", "workspace", "card", "source", "folder", "files", "review"}
    assert {f.name for f in fields(Manifest)} - found <= own | {"paths"}
    assert {f.name for f in fields(Card)} == card
    assert {f.name for f in fields(Lab)} - {"sections"} == lab | {"functions"}
    assert {f.name for f in fields(WorkspaceFile)} - {"optional"} <= file
    assert "parent" not in manifest_keys(written[0] / "ch13" / "chapter.toml")[0]
    assert (written[0] / "ch13" / "given" / "labs.py").read_bytes() == (
        KIT / "course" / "labs.py"
    ).read_bytes()


def test_a_folder_in_use_a_chapter_that_exists_and_a_kit_module_are_refused(
    written: tuple[Path, str], tmp_path: Path
) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.md").write_text("mine", encoding="utf-8")
    refused = {
        "not empty": ("15", tmp_path / "full", "chapter15"),
        "exists already": ("13", tmp_path / "again", "chapter13"),
        "course package has": ("15", tmp_path / "clash", "context"),
    }
    for said, (chapter, folder, module) in refused.items():
        with pytest.raises(NewChapterError, match=said):
            write_chapter(chapter, folder, module, None)
    assert (tmp_path / "full" / "notes.md").read_text(encoding="utf-8") == "mine"
    assert not (tmp_path / "again").exists() and not (tmp_path / "clash").exists()
