"""Fixtures for the Pi import tests: the shipped real sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.interop import pi_session_files


@pytest.fixture(params=["large-session", "before-compaction", "damaged-line-session"])
def real_session(request: pytest.FixtureRequest) -> Path:
    """Each real Pi session shipped with the kit, in turn."""
    path: Path = pi_session_files()[request.param]
    return path
