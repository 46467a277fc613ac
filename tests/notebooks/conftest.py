"""Fixtures for the notebook tests: practice workspaces, fresh or solved."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from notebook_support import create_workspace, solve, solve_required

from course.locale import set_edition


@pytest.fixture(scope="session")
def fresh_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return create_workspace(tmp_path_factory.mktemp("fresh") / "practice-11")


@pytest.fixture(scope="session")
def solved_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return solve(create_workspace(tmp_path_factory.mktemp("solved") / "practice-11"))


@pytest.fixture(scope="session")
def required_workspaces(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """14/14 in each edition: every required lab written, the optional one not."""
    folder = tmp_path_factory.mktemp("required")
    return [solve_required(create_workspace(folder / edition, edition)) for edition in ("en", "zh")]


@pytest.fixture(autouse=True)
def environment_edition() -> Iterator[None]:
    """``open_chapter`` sets the process's edition, as a kernel wants; each test starts afresh."""
    yield
    set_edition(None)
