"""``session-log import``: the three policies, exit statuses, messages and safe writing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pi_builders import header, user, write

from course.interop import pi_session_files
from course.session import JsonlSessionStore
from course.tools.sessionlog import main

ROOT = Path(__file__).resolve().parents[2]


def session_log(*args: str | Path) -> int:
    return main([str(arg) for arg in args])


def import_bytes(tmp_path: Path, content: bytes, *args: str) -> int:
    """Import a Pi file holding ``content`` to ``o.jsonl`` beside it."""
    source = tmp_path / "pi.jsonl"
    source.write_bytes(content)
    return session_log("import", source, "-o", tmp_path / "o.jsonl", *args)


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("before-compaction", "line 628: L628: unanswered_call: tool call "),
        (
            "damaged-line-session",
            "line 440: L440: damaged_line: holds two JSON objects with no newline between them",
        ),
    ],
)
def test_strict_exits_1_naming_the_line_and_id_and_writes_nothing(
    name: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    assert session_log("import", pi_session_files()[name], "-o", out) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"session-log import: {expected}")
    assert "--repair 'synthesize' or 'drop'" in err and err.count("\n") == 1
    assert not out.exists() and leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            b'{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00Z"}\n{"type":"m",\n',
            "line 2: -: damaged_line: is not valid JSON (Expecting property name",
        ),
        (
            b'{"type":"session","id":"s","timestamp":"2025-01-01T00:00:00Z"}\n'
            b'{"type":"poll","timestamp":"2025-01-01T00:00:00Z"}\n',
            "line 2: L2: unknown_type: unknown entry type 'poll'",
        ),
    ],
)
def test_what_strict_refuses_the_other_policies_keep(
    tmp_path: Path, content: bytes, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert import_bytes(tmp_path, content) == 1
    assert capsys.readouterr().err.startswith(f"session-log import: {expected}")
    assert import_bytes(tmp_path, content, "--repair", "drop") == 0
    printed = capsys.readouterr().out
    assert "repair drop: 1 item" in printed and expected in printed


def test_the_split_turn_choice_and_failed_messages_are_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = pi_session_files()["damaged-line-session"]
    args = ("import", source, "--repair", "synthesize", "--report", tmp_path / "r.json")
    assert session_log(*args, "-o", tmp_path / "a.jsonl") == 0
    printed = capsys.readouterr().out
    assert "split turn turn-start: 1 item\n  line 463: L463: split_turn: " in printed
    more = ("--split-turn", "next-user", "--keep-failed", "--force")
    assert session_log(*args, "-o", tmp_path / "b.jsonl", *more) == 0
    assert "split turn next-user: 1 item" in capsys.readouterr().out
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["splitTurn"] == "next-user" and report["keepFailed"] is True
    with JsonlSessionStore(tmp_path / "a.jsonl") as store:
        kept = len(store)
    with JsonlSessionStore(tmp_path / "b.jsonl") as store:
        assert len(store) == kept  # the same entries: failed messages are data or messages


@pytest.mark.parametrize("repair", ["synthesize", "drop"])
def test_a_repair_writes_a_log_the_store_opens(
    real_session: Path, tmp_path: Path, repair: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    assert session_log("import", real_session, "-o", out, "--repair", repair) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith(f"{real_session} (Pi v1) -> {out}: ")
    assert printed[1].startswith(f"repair {repair}: ")
    assert printed[-1].startswith("mapping: ")
    assert all(line.startswith(("  line ", "split turn ")) for line in printed[2:-1])
    with JsonlSessionStore(out) as store:
        assert len(store) == int(printed[0].split(": ")[1].split(" entries")[0].replace(",", ""))
    assert (out.stat().st_mode & 0o777) == 0o666 & ~current_umask()


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_an_existing_output_is_kept_unless_forced(
    real_session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("precious\n")
    assert session_log("import", real_session, "-o", out, "--repair", "drop") == 2
    assert "out.jsonl: already exists (pass --force to replace it)" in capsys.readouterr().err
    assert out.read_text() == "precious\n"
    assert session_log("import", real_session, "-o", out, "--repair", "drop", "--force") == 0
    assert out.read_text() != "precious\n" and leftovers(tmp_path) == []


def test_the_report_lists_every_item_as_json(real_session: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    args = ("import", real_session, "-o", tmp_path / "o.jsonl", "--repair", "synthesize")
    assert session_log(*args, "--report", report) == 0
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["policy"] == "synthesize" and data["sourceVersion"] == 1
    assert sum(data["counts"].values()) == len(data["items"])
    assert set(data["items"][0]) == {"line", "id", "kind", "message"}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"type":"session","id":"s","version":9}\n', "line 1: version: unsupported session"),
        (b'{"type":"message","timestamp":"2025-01-01T00:00:00Z"}\n', "line 1: type: the first"),
        (b"\xff\n", "no line of it can be read"),
    ],
)
def test_bad_input_exits_2_with_the_line_and_field(
    tmp_path: Path, content: bytes, expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert import_bytes(tmp_path, content) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"session-log import: {tmp_path / 'pi.jsonl'}: {expected}")
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("missing.jsonl", "-o", "o.jsonl"), "missing.jsonl: cannot read (No such file"),
        (("pi.jsonl", "-o", "pi.jsonl", "--force"), "pi.jsonl: is the Pi session being imported"),
        (("pi.jsonl", "-o", "nowhere/o.jsonl"), "nowhere: no such directory"),
    ],
)
def test_unusable_paths_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    expected: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pi.jsonl", [header(), user("hi")])
    assert session_log("import", *args) == 2
    assert expected in capsys.readouterr().err


def test_an_unknown_policy_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        session_log("import", tmp_path / "x", "-o", tmp_path / "y", "--repair", "guess")
    assert caught.value.code == 2
    assert "invalid choice: 'guess'" in capsys.readouterr().err


def test_check_and_repair_are_unchanged_and_mention_import(
    real_session: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o.jsonl"
    assert session_log("import", real_session, "-o", out, "--repair", "drop") == 0
    capsys.readouterr()
    assert session_log("check", out) == 0
    assert capsys.readouterr().out.startswith(f"{out}: ")
    with pytest.raises(SystemExit):
        session_log("--help")
    assert "session-log import PI_FILE -o OUT.jsonl" in capsys.readouterr().out


def test_the_module_runs_as_a_command_without_a_traceback(tmp_path: Path) -> None:
    source = write(tmp_path / "pi.jsonl", [header(), user("hi")])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "course.tools.sessionlog", "import", str(source)]
    done = subprocess.run(
        [*command, "-o", str(tmp_path / "o.jsonl")], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "1 item" not in done.stdout and "repair strict: 0 items" in done.stdout
    again = subprocess.run(
        [*command, "-o", str(tmp_path / "o.jsonl")], capture_output=True, text=True, env=env
    )
    assert again.returncode == 2 and "Traceback" not in again.stderr
