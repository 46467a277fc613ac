"""Fixtures for the notebook tests: practice workspaces, fresh or solved."""

from __future__ import annotations

from pathlib import Path

import pytest
from notebook_support import create_workspace, solve, solve_required


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
