"""The commands and code that docs/pi-import.md shows run as shown."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from course.interop import ImportedSession
from course.tools.sessionlog import main

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "pi-import.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, re.S)


@pytest.fixture
def in_a_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh directory that sees the shipped sessions where a checkout has them."""
    (tmp_path / "course" / "data").mkdir(parents=True)
    (tmp_path / "course" / "data" / "pi-sessions").symlink_to(
        ROOT / "course" / "data" / "pi-sessions"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_shell_commands_run(in_a_checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    commands = [line for block in blocks("bash") for line in block.splitlines() if line]
    assert commands and all(c.startswith("session-log import ") for c in commands)
    for command in commands:
        assert main(shlex.split(command)[1:]) == 0, capsys.readouterr().err
        assert "line 440: L440: damaged_line: " in capsys.readouterr().out
    assert (in_a_checkout / "chapter.jsonl").is_file()


def test_the_python_example_runs(in_a_checkout: Path) -> None:
    (code,) = blocks("python")
    namespace: dict[str, object] = {}
    exec(compile(code, "docs/pi-import.md", "exec"), namespace)
    imported = namespace["imported"]
    assert isinstance(imported, ImportedSession)
    assert imported.leaf_id == "L463"  # as the example's comment says
    assert (in_a_checkout / "chapter.jsonl").is_file()
