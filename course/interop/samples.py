"""The real Pi sessions shipped with the kit (``course/data/pi-sessions``)."""

from __future__ import annotations

from pathlib import Path

PI_SESSIONS_DIR = Path(__file__).resolve().parent.parent / "data" / "pi-sessions"
PI_SESSION_NAMES = ("large-session", "before-compaction", "damaged-line-session")


def pi_session_files() -> dict[str, Path]:
    """The shipped Pi session files by name (``PI_SESSION_NAMES``)."""
    return {name: PI_SESSIONS_DIR / f"{name}.jsonl.gz" for name in PI_SESSION_NAMES}
