"""open_chapter(): `import pi_course` is the learner's package in a workspace, or the reference."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import course.groups
from course.display.notebook import open_chapter, pending_note
from course.labs import LabNotImplemented


@pytest.fixture
def isolated_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(sys, "path", list(sys.path))
    saved = {n: m for n, m in sys.modules.items() if n.split(".")[0] == "pi_course"}
    yield
    for name in [n for n in sys.modules if n.split(".")[0] == "pi_course"]:
        del sys.modules[name]
    sys.modules.update(saved)


@pytest.mark.usefixtures("isolated_imports")
def test_outside_a_workspace_the_reference_stands_in_for_pi_course(tmp_path: Path) -> None:
    opened = open_chapter("11", tmp_path)
    import pi_course.groups

    assert pi_course.groups is course.groups
    assert opened.workspace is None and "reference" in opened.label


@pytest.mark.usefixtures("isolated_imports")
def test_inside_a_workspace_pi_course_is_the_learners_own(fresh_workspace: Path) -> None:
    opened = open_chapter("11", fresh_workspace / "notebooks")
    import pi_course.groups

    where = Path(pi_course.groups.__file__ or "").resolve()
    assert where.is_relative_to(fresh_workspace.resolve())
    assert opened.workspace is not None and "your practice workspace" in opened.label
    assert str(fresh_workspace) not in opened.label
    with pytest.raises(NotImplementedError) as raised:
        pi_course.groups.group_interactions([])
    note = pending_note(raised.value)
    assert note is not None and note.text.startswith("… pending · Lab 11.2 interaction groups")


def test_only_a_lab_stub_becomes_a_pending_note() -> None:
    assert pending_note(NotImplementedError("plain")) is None
    assert pending_note(ValueError("x")) is None
    stub = LabNotImplemented("11.3", "budget projection", "build_context", "hint")
    note = pending_note(stub)
    assert note is not None and "\n" not in note.text
