"""Every store error is the kit's own, names the entry, field, line or file, and prints safely."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from children import child_env, last_json, run_python, unprivileged

from course.fixtures import chapter_path_json
from course.jsonl import read_jsonl
from course.session import (
    InMemorySessionStore,
    JsonlSessionStore,
    SessionEntryError,
    SessionStoreError,
    encode_entry,
    entry_to_json,
    parse_entries,
    parse_session_entry,
    path_to,
    recover_jsonl,
    repair_jsonl,
)


def lines_of(*values: dict[str, Any]) -> bytes:
    return b"".join(encode_entry(parse_session_entry(v)) for v in values)


def session_log(*args: str | bytes) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "course.tools.sessionlog", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=child_env(PYTHONIOENCODING="utf-8"),  # strict: an unprintable line would crash
    )


def metadata(value: Any, **changes: Any) -> dict[str, Any]:
    entry = {"type": "metadata", "id": "m", "parentId": None, "timestamp": 0, "key": "k"}
    return entry | {"value": value} | changes


@pytest.fixture
def log(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "session.jsonl"
    path.write_bytes(lines_of(*chapter_path_json()[:3]))
    yield path


# --------------------------------------------------------------------------- integers


HUGE = 10**5000


def tool_call(arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"type": "toolCall", "id": "c", "name": "n", "arguments": arguments}
    return {
        "type": "message",
        "id": "a",
        "parentId": None,
        "timestamp": 0,
        "message": {"role": "assistant", "content": [call]},
    }


TOO_LONG = "an integer of more than 4300 dig"
NOT_A_FLOAT = "must be a non-negative finite number"


@pytest.mark.parametrize(
    ("value", "where", "problem"),
    [
        pytest.param(metadata([{"x": HUGE}]), r"m\.value\[0\]\.x", TOO_LONG, id="metadata-value"),
        pytest.param(metadata(1, timestamp=HUGE), r"m\.timestamp", NOT_A_FLOAT, id="timestamp"),
        pytest.param(
            tool_call({"n": -HUGE}), r"a\.message\.content\[0\]\.arguments\.n", TOO_LONG, id="arg"
        ),
    ],
)
def test_an_integer_too_long_to_read_back_names_entry_and_field(
    log: Path, value: dict[str, Any], where: str, problem: str
) -> None:
    before = log.read_bytes()
    with JsonlSessionStore(log) as store:
        with pytest.raises(SessionEntryError, match=f"^{where}: {problem}"):
            store.append(value)
        assert len(store) == 3
    assert log.read_bytes() == before


def test_a_raised_integer_limit_still_writes_only_what_reads_back(log: Path) -> None:
    before = log.read_bytes()
    saved = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # no limit in this process: json.dumps would write it
    try:
        with JsonlSessionStore(log) as store, pytest.raises(SessionEntryError, match=r"m\.value"):
            store.append(metadata(HUGE))
    finally:
        sys.set_int_max_str_digits(saved)
    assert log.read_bytes() == before


def test_the_longest_integer_python_reads_back_is_stored_exactly(log: Path) -> None:
    longest = -(10**4300 - 1)  # 4300 digits
    with JsonlSessionStore(log) as store:
        store.append(metadata(longest))
    assert entry_to_json(read_jsonl(log).entries[-1])["value"] == longest


# --------------------------------------------------------------------------- lone surrogates


def raised(action: Callable[[], object]) -> Exception:
    with pytest.raises(ValueError) as caught:
        action()
    return caught.value


def surrogate_errors(tmp_path: Path) -> list[Exception]:
    store = JsonlSessionStore(tmp_path / "s.jsonl")
    memory = InMemorySessionStore()
    escaped = '{"type":"metadata","id":"\\ud800","parentId":null,"timestamp":0,"key":"k","value":1}'
    try:
        return [
            raised(lambda: store.append(metadata(1, id="\ud800", key=""))),
            raised(lambda: store.append(metadata(1, id="\ud800"))),
            raised(lambda: store.append(metadata({"\udc00": 1}))),
            raised(lambda: memory.append(metadata(1, parentId="\udfff"))),
            raised(lambda: recover_jsonl(f"{escaped}\n{escaped}\n")),
            raised(lambda: path_to(parse_entries(chapter_path_json()), "\ud800")),
        ]
    finally:
        store.close()


def test_messages_quoting_a_lone_surrogate_print_to_utf8(tmp_path: Path) -> None:
    errors = surrogate_errors(tmp_path)
    assert [type(e).__name__ for e in errors] == [
        "SessionEntryError",
        "SessionEntryError",
        "SessionEntryError",
        "SessionStoreError",
        "SessionStoreError",
        "SessionPathError",
    ]
    for error in errors:
        stream = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict")
        print(error, file=stream)
        stream.flush()
        assert re.search(r"\\ud[89a-f][0-9a-f]{2}", str(error)), str(error)
    assert str(errors[1]) == "\\ud800.id: contains a lone surrogate, which UTF-8 cannot store"
    assert (tmp_path / "s.jsonl").read_bytes() == b""


def test_session_log_prints_what_it_cannot_encode(tmp_path: Path) -> None:
    escaped = '{"type":"metadata","id":"\\ud800","parentId":null,"timestamp":0,"key":"k","value":1}'
    log = tmp_path / "dup.jsonl"
    log.write_text(f"{escaped}\n{escaped}\n")
    checked = session_log("check", str(log))
    assert checked.returncode == 2 and "Traceback" not in checked.stderr
    assert f"{log}: line 2: \\ud800: duplicate id" in checked.stderr

    odd = os.fsencode(tmp_path) + b"/log-\xff.jsonl"  # a file name that is not UTF-8
    with open(odd, "wb") as handle:
        handle.write(lines_of(chapter_path_json()[0]) + b'{"type":')
    checked = session_log("check", odd)
    assert checked.returncode == 1, checked.stderr
    assert "log-\\udcff.jsonl: 1 committed entries" in checked.stdout
    repaired = session_log("repair", odd)
    assert repaired.returncode == 0 and "moved 8 uncommitted bytes" in repaired.stdout


# --------------------------------------------------------------------------- whitespace


@pytest.mark.parametrize("tail", [b"\x0c", b"\x0b", b" \x0c\t", b"\x00\x00"])
def test_whitespace_json_does_not_allow_after_the_last_newline_is_a_torn_tail(
    log: Path, tail: bytes
) -> None:
    good = log.read_bytes()
    log.write_bytes(good + tail)
    assert [(w.code, w.line) for w in read_jsonl(log).warnings] == [("uncommitted_tail", 4)]
    with JsonlSessionStore(log) as store:
        with pytest.raises(SessionStoreError, match="line 4 is an uncommitted tail"):
            store.append(chapter_path_json()[3])
        assert store.repair().removed_bytes == len(tail)
        store.append(chapter_path_json()[3])
    assert log.read_bytes() == good + lines_of(chapter_path_json()[3])
    assert session_log("check", str(log)).returncode == 0


@pytest.mark.parametrize("tail", [b" ", b"\t", b"\r", b" \t\r"])
def test_a_tail_of_json_whitespace_takes_the_next_line(log: Path, tail: bytes) -> None:
    log.write_bytes(log.read_bytes() + tail)
    with JsonlSessionStore(log) as store:
        assert store.warnings == []
        store.append(chapter_path_json()[3])
    recovered = read_jsonl(log)
    assert len(recovered.entries) == 4 and recovered.warnings == []


@pytest.mark.parametrize(
    ("blank", "error"),
    [
        pytest.param(b"\n", None, id="empty"),
        pytest.param(b" \t\r\n", None, id="json-whitespace"),
        pytest.param(b"\x0c\n", "line 2: invalid JSON", id="form-feed"),
        pytest.param(b"\x0b\n", "line 2: invalid JSON", id="vertical-tab"),
    ],
)
def test_a_committed_line_is_blank_only_with_json_whitespace(
    log: Path, blank: bytes, error: str | None
) -> None:
    first, rest = chapter_path_json()[0], chapter_path_json()[1:3]
    log.write_bytes(lines_of(first) + blank + lines_of(*rest))
    if error is None:
        assert len(read_jsonl(log).entries) == 3
    else:
        with pytest.raises(SessionStoreError, match=f"^{re.escape(str(log))}: {error}"):
            read_jsonl(log)


# --------------------------------------------------------------------------- files


def test_opening_a_malformed_log_names_the_file_and_the_line(log: Path) -> None:
    log.write_bytes(log.read_bytes() + b"not json\n")
    with pytest.raises(SessionStoreError, match=f"^{re.escape(str(log))}: line 4: invalid JSON"):
        JsonlSessionStore(log)
    checked = session_log("check", str(log))
    assert checked.returncode == 2 and f"session-log: {log}: line 4: invalid JSON" in checked.stderr


def torn(log: Path) -> bytes:
    tail = b'{"type":"mess'
    log.write_bytes(log.read_bytes() + tail)
    return tail


def test_repair_never_writes_through_a_symlink_at_a_backup_name(log: Path) -> None:
    tail = torn(log)
    elsewhere = log.with_name("elsewhere")
    victim = log.with_name("victim")
    victim.write_bytes(b"keep me")
    log.with_name("session.jsonl.torn-1").symlink_to(elsewhere)  # dangling
    log.with_name("session.jsonl.torn-2").symlink_to(victim)
    repaired = session_log("repair", str(log))
    assert repaired.returncode == 0, repaired.stderr
    assert f"to {log}.torn-3;" in repaired.stdout
    assert log.with_name("session.jsonl.torn-3").read_bytes() == tail
    assert not elsewhere.exists() and victim.read_bytes() == b"keep me"
    assert read_jsonl(log).warnings == []


def test_the_open_store_repairs_past_a_dangling_symlink_too(log: Path) -> None:
    tail = torn(log)
    log.with_name("session.jsonl.torn-1").symlink_to(log.with_name("nowhere"))
    with JsonlSessionStore(log) as store:
        result = store.repair()
    assert result.backup == log.with_name("session.jsonl.torn-2")
    assert result.backup.read_bytes() == tail and not log.with_name("nowhere").exists()


PERMISSIONS = textwrap.dedent("""
    import json, os, shutil, subprocess, sys, tempfile
    from course.jsonl import JsonlSessionStore, SessionStoreError, read_jsonl, repair_jsonl

    LINE = '{"type":"metadata","id":"m","parentId":null,"timestamp":0,"key":"k","value":1}\\n'
    base = tempfile.mkdtemp()
    outcomes = {}

    def attempt(name, action):
        try:
            action()
            outcomes[name] = "no error"
        except SessionStoreError as error:
            outcomes[name] = str(error)
        except Exception as error:
            outcomes[name] = f"{type(error).__name__}: {error}"

    def log(name, text, mode):
        path = os.path.join(base, name)
        with open(path, "w") as handle:
            handle.write(text)
        os.chmod(path, mode)
        return path

    locked = os.path.join(base, "locked")
    os.mkdir(locked)
    torn = os.path.join(locked, "torn.jsonl")
    with open(torn, "w") as handle:
        handle.write(LINE + '{"type":')
    os.chmod(locked, 0o555)
    attempt("create", lambda: JsonlSessionStore(os.path.join(locked, "new.jsonl")))
    attempt("repair", lambda: repair_jsonl(torn))
    with open(torn) as handle:
        unchanged = handle.read() == LINE + '{"type":'
    attempt("append", lambda: JsonlSessionStore(log("readonly.jsonl", LINE, 0o444)))
    hidden = log("hidden.jsonl", LINE, 0)
    attempt("read", lambda: read_jsonl(hidden))
    cli = subprocess.run([sys.executable, "-m", "course.tools.sessionlog", "check", hidden],
                         capture_output=True, text=True)
    os.chmod(locked, 0o755)
    shutil.rmtree(base)
    print(json.dumps({"base": base, "outcomes": outcomes, "unchanged": unchanged,
                      "cli": [cli.returncode, cli.stderr]}))
""")


def test_unwritable_and_unreadable_logs_fail_naming_file_and_action() -> None:
    """Runs as an ordinary user (``nobody`` when the suite runs as root), so modes apply."""
    try:
        outcome = run_python(PERMISSIONS, preexec_fn=unprivileged())
    except subprocess.SubprocessError as error:
        pytest.skip(f"cannot drop the capabilities that override file modes: {error}")
    report = last_json(outcome)
    base, outcomes = report["base"], report["outcomes"]
    denied = "(Permission denied)"
    assert outcomes == {
        "create": f"{base}/locked/new.jsonl: cannot open the session log for appending {denied}",
        "repair": f"{base}/locked/torn.jsonl.torn-1: cannot create the backup of a torn tail "
        f"{denied}; the session log is unchanged",
        "append": f"{base}/readonly.jsonl: cannot open the session log for appending {denied}",
        "read": f"{base}/hidden.jsonl: cannot read the session log {denied}",
    }
    assert report["unchanged"]
    returncode, stderr = report["cli"]
    assert returncode == 2
    assert stderr == f"session-log: {base}/hidden.jsonl: cannot read the session log {denied}\n"


def test_repairing_a_missing_log_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(SessionStoreError, match="no such session log"):
        repair_jsonl(tmp_path / "absent.jsonl")
