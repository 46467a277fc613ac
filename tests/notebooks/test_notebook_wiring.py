"""implementation(): the learner's package inside a workspace, the reference elsewhere."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import course.context
from course.display.notebook import find_workspace, implementation


def make_workspace(root: Path, package: str) -> Path:
    (root / "notebooks").mkdir(parents=True)
    (root / ".course-workspace.toml").write_text(
        f'chapter = "11"\npackage = "{package}"\nparent_fingerprint = "x"\n'
    )
    code = root / package
    code.mkdir()
    (code / "__init__.py").write_text("")
    for module in ("session", "context", "fixtures"):
        (code / f"{module}.py").write_text(f"WHERE = {module!r}\n")
    return root


@pytest.fixture
def isolated_imports(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    for name in [n for n in sys.modules if n.split(".")[0].startswith("learner_pkg")]:
        del sys.modules[name]


def test_outside_a_workspace_the_reference_runs(tmp_path: Path) -> None:
    impl = implementation(tmp_path)
    assert impl.package == "course" and impl.workspace is None
    assert impl.context is course.context
    assert "reference implementation" in impl.label


@pytest.mark.usefixtures("isolated_imports")
def test_inside_a_workspace_its_package_runs(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", "learner_pkg_a")
    impl = implementation(root / "notebooks")
    assert impl.workspace == root.resolve()
    assert (impl.session.WHERE, impl.context.WHERE, impl.fixtures.WHERE) == (
        "session",
        "context",
        "fixtures",
    )
    assert Path(impl.context.__file__).resolve().is_relative_to(root.resolve())
    assert sys.path[0] == str(root.resolve())
    assert "practice workspace" in impl.label and str(root) not in impl.label


@pytest.mark.usefixtures("isolated_imports")
def test_the_package_name_comes_from_the_marker(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", "learner_pkg_b")
    nested = root / "notebooks" / "deeper"
    nested.mkdir()
    workspace = find_workspace(nested)
    assert workspace is not None
    assert (workspace.root, workspace.package, workspace.chapter) == (
        root.resolve(),
        "learner_pkg_b",
        "11",
    )
    assert implementation(nested).package == "learner_pkg_b"
