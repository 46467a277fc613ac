"""A workspace saved as a zip (the browser edition's download), loaded back, and graded."""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

import pytest
from children import lab_counts, practice_and_roster

from course.display.transfer import load_workspace, save_workspace
from course.harness.kit import kit_root
from course.harness.manifest import load_manifest
from course.harness.workspace import create_workspace
from course.sandboxed.marker import MARKER, WorkspaceError


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "practice-11"
    create_workspace(load_manifest("11"), kit_root(), root)
    return root


def test_a_saved_zip_holds_the_workspace_under_its_folder_without_caches(workspace: Path) -> None:
    (workspace / "pi_course" / "__pycache__").mkdir()
    (workspace / "pi_course" / "__pycache__" / "summary.cpython-311.pyc").write_bytes(b"x")
    (workspace / "notebooks" / ".ipynb_checkpoints").mkdir()
    saved = save_workspace(workspace / "notebooks")
    assert saved.archive == workspace.parent / "practice-11.zip"
    with zipfile.ZipFile(saved.archive) as archive:
        names = archive.namelist()
    assert f"practice-11/{MARKER}" in names and "practice-11/pi_course/summary.py" in names
    assert not [name for name in names if "__pycache__" in name or "checkpoints" in name]
    assert saved.files == len(names)
    assert "download it from the file browser" in str(saved)


def test_a_file_that_cannot_be_read_is_left_out_and_named(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = workspace / "tests" / "chapter11" / "probe_cases.json"
    real = Path.read_bytes

    def read_bytes(path: Path) -> bytes:
        if path == cases:  # as the browser's drive fails on JSON files it serves
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real(path)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    saved = save_workspace(workspace)
    with zipfile.ZipFile(saved.archive) as archive:
        assert "practice-11/tests/chapter11/probe_cases.json" not in archive.namelist()
        assert saved.files == len(archive.namelist())
    assert saved.unread == ("tests/chapter11/probe_cases.json",)
    assert str(saved).endswith(
        "left out, as they could not be read: tests/chapter11/probe_cases.json"
    )


def test_loading_a_zip_puts_the_saved_files_back(workspace: Path, tmp_path: Path) -> None:
    summary = workspace / "pi_course" / "summary.py"
    summary.write_text("# my lab 11.1\n")
    saved = save_workspace(workspace)
    kept = tmp_path / "kept.zip"
    shutil.move(saved.archive, kept)
    summary.write_text("# lost by a reload\n")
    (workspace / "mine.txt").write_text("not in the zip, kept")
    loaded = load_workspace(kept, workspace / "notebooks")
    assert summary.read_text() == "# my lab 11.1\n"
    assert (workspace / "mine.txt").read_text() == "not in the zip, kept"
    assert loaded.loaded and loaded.files == saved.files
    assert str(loaded).startswith(f"loaded {saved.files} files from kept.zip")


def test_a_zip_without_a_workspace_is_refused(workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("notes/readme.txt", "hello")
    with pytest.raises(WorkspaceError, match="holds no practice workspace"):
        load_workspace(other, workspace)


def test_a_zip_reaching_outside_is_refused_before_anything_is_written(
    workspace: Path, tmp_path: Path
) -> None:
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as archive:
        archive.writestr(f"ws/{MARKER}", "x")
        archive.writestr("../escaped.py", "boom")
    with pytest.raises(WorkspaceError):
        load_workspace(evil, workspace)
    assert not (tmp_path / "escaped.py").exists()


def test_saving_outside_a_workspace_says_so(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="no practice workspace here or above"):
        save_workspace(tmp_path)


def test_a_roster_grades_the_saved_zip_to_the_workspace_s_own_counts(
    workspace: Path, tmp_path: Path
) -> None:
    shutil.copyfile(kit_root() / "course" / "summary.py", workspace / "pi_course" / "summary.py")
    expected, row = practice_and_roster(workspace, save_workspace(workspace).archive, tmp_path)
    assert lab_counts(row["labs"]) == expected
    assert expected["11.1"][0] == "passed" and row["learner"] == "ada"


def test_check_in_a_browser_tab_grades_in_the_kernel(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from course.display.notebook import check

    monkeypatch.setattr(sys, "platform", "emscripten")
    view = check("11.1", start=workspace)
    assert [(lab.lab.id, lab.status, lab.total) for lab in view.labs] == [("11.1", "pending", 3)]
    assert view.result is not None
    assert any("graded in this kernel" in note for note in view.result.notes), view.result.notes


@pytest.mark.parametrize(
    ("lab", "command"), [("11.3", "checkpoint 11 --lab 11.3"), ("11", "checkpoint 11")]
)
def test_check_in_a_site_without_the_kits_tests_says_where_the_verdict_is_made(
    lab: str, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from course.display import notebook
    from course.harness.kit import KitError

    def no_kit() -> Path:
        raise KitError("no starters/ and tests/")

    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.setattr(notebook, "kit_root", no_kit)
    view = notebook.check(lab)
    assert view.result is None
    assert "cannot grade here" in view.problem and f"`{command}`" in view.problem


def keep_no_group(*args: object, **kwargs: object) -> list[object]:
    """A wrong ``select_groups`` for ``check_variant`` (defined in source, as it requires)."""
    return []


def test_check_variant_in_a_browser_tab_grades_in_the_kernel(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from course.display.experiments import check_variant

    monkeypatch.setattr(sys, "platform", "emscripten")
    monkeypatch.chdir(workspace)
    view = check_variant("11.3", "context", select_groups=keep_no_group)
    assert view.result is not None
    assert any("graded in this kernel" in note for note in view.result.notes)
    assert [lab.status for lab in view.labs] in (["pending"], ["failed"]), view.labs
