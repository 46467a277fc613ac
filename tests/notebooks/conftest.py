"""Fixtures for the notebook tests: practice workspaces, fresh or solved."""

from __future__ import annotations

from pathlib import Path

import pytest
from notebook_support import create_workspace, solve


@pytest.fixture(scope="session")
def fresh_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return create_workspace(tmp_path_factory.mktemp("fresh") / "practice-11")


@pytest.fixture(scope="session")
def solved_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return solve(create_workspace(tmp_path_factory.mktemp("solved") / "practice-11"))
