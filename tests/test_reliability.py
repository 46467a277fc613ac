"""Crash safety, repair, one writer per log, hardened parsing and fuzzing of the boundaries."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from json_strategies import ANY_JSON, valid_entries

from course.fixtures import chapter_path_json
from course.session import (
    JsonlSessionStore,
    SessionEntryError,
    SessionStoreError,
    entry_to_json,
    parse_session_entry,
    recover_jsonl,
    repair_jsonl,
)

FUZZ_EXAMPLES = int(os.environ.get("COURSE_FUZZ_EXAMPLES", "300"))
"""Examples per fuzz test; the dedicated run sets COURSE_FUZZ_EXAMPLES=10000."""


def committed(*values: dict[str, Any]) -> bytes:
    return "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values).encode()


def torn_log(tmp_path: Path) -> tuple[Path, bytes, bytes]:
    values = chapter_path_json()
    good = committed(*values[:4])
    tail = json.dumps(values[4]).encode()[:25]
    log = tmp_path / "session.jsonl"
    log.write_bytes(good + tail)
    return log, good, tail


# --------------------------------------------------------------------------- crash trials


def test_crash_trials_lose_no_acknowledged_entry(tmp_path: Path) -> None:
    outcome = subprocess.run(
        [sys.executable, "-m", "course.tools.crashtest", "--trials", "4", "--dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    *_, torn, last = outcome.stdout.strip().splitlines()
    assert last.startswith("crash trials: 4, acknowledged entries: ")
    assert last.endswith(", lost: 0"), outcome.stdout + outcome.stderr
    assert int(last.split("acknowledged entries: ")[1].split(",")[0]) > 0
    assert outcome.returncode == 0
    seen, repaired = re.fullmatch(
        r"torn tails seen: (\d+), repaired on reopen: (\d+)", torn
    ).groups()
    assert int(seen) >= 2, "every second trial kills a write it split: a torn tail each time"
    assert seen == repaired, "every torn tail is repaired when its log is reopened"
    for log in tmp_path.glob("crash-*.jsonl"):
        assert recover_jsonl(log.read_bytes()).warnings == [], "no log is left torn"


# --------------------------------------------------------------------------- repair


def test_repair_sets_the_torn_tail_aside_and_keeps_committed_lines(tmp_path: Path) -> None:
    log, good, tail = torn_log(tmp_path)
    result = repair_jsonl(log)
    assert result.backup == tmp_path / "session.jsonl.torn-1"
    assert result.backup.read_bytes() == tail
    assert (result.removed_bytes, result.line) == (len(tail), 5)
    assert log.read_bytes() == good
    with JsonlSessionStore(log) as store:
        store.append(chapter_path_json()[4])
        assert [e.id for e in store.entries()] == ["u1", "a1", "u2", "a2", "u3"]
    assert repair_jsonl(log).backup is None, "a clean log needs no repair"


def test_a_second_repair_never_overwrites_an_earlier_backup(tmp_path: Path) -> None:
    log, good, tail = torn_log(tmp_path)
    repair_jsonl(log)
    log.write_bytes(good + b'{"type":')
    assert repair_jsonl(log).backup == tmp_path / "session.jsonl.torn-2"
    assert (tmp_path / "session.jsonl.torn-1").read_bytes() == tail


def test_the_open_store_can_repair_itself(tmp_path: Path) -> None:
    log, good, _ = torn_log(tmp_path)
    with JsonlSessionStore(log) as store:
        with pytest.raises(SessionStoreError, match="uncommitted tail"):
            store.append(chapter_path_json()[4])
        store.repair()
        store.append(chapter_path_json()[4])
    assert log.read_bytes().startswith(good)
    recovered = recover_jsonl(log.read_bytes())
    assert [e.id for e in recovered.entries] == ["u1", "a1", "u2", "a2", "u3"]
    assert recovered.warnings == []


def test_repair_refuses_a_malformed_committed_line(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    original = committed(chapter_path_json()[0]) + b"not json\n"
    log.write_bytes(original)
    with pytest.raises(SessionStoreError, match="line 2: invalid JSON"):
        repair_jsonl(log)
    assert log.read_bytes() == original


def test_repair_command_line(tmp_path: Path) -> None:
    log, good, tail = torn_log(tmp_path)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "course.tools.sessionlog", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )

    checked = run("check", str(log))
    assert checked.returncode == 1 and "uncommitted_tail" in checked.stdout
    repaired = run("repair", str(log))
    assert repaired.returncode == 0 and f"moved {len(tail)} uncommitted bytes" in repaired.stdout
    assert run("check", str(log)).returncode == 0
    assert log.read_bytes() == good
    missing = run("check", str(tmp_path / "absent.jsonl"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


# --------------------------------------------------------------------------- one writer


WRITER = textwrap.dedent("""
    import sys, time
    from course.session import JsonlSessionStore, SessionStoreError
    try:
        store = JsonlSessionStore(sys.argv[1])
    except SessionStoreError as error:
        print("refused:", error, flush=True)
        sys.exit(3)
    print("open", flush=True)
    parent = store.entries()[-1].id if store.entries() else None
    for n in range(200):
        entry_id = sys.argv[2] + str(n)
        store.append({"type": "message", "id": entry_id, "parentId": parent, "timestamp": n,
                      "message": {"role": "user", "content": "x" * 5000}})
        parent = entry_id
    time.sleep(float(sys.argv[3]))
    store.close()
""")


def test_a_second_writer_gets_a_clear_error_and_lines_never_interleave(tmp_path: Path) -> None:
    log = tmp_path / "shared.jsonl"
    first = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(log), "a", "2"], stdout=subprocess.PIPE, text=True
    )
    assert first.stdout is not None and first.stdout.readline().strip() == "open"
    second = subprocess.run(
        [sys.executable, "-c", WRITER, str(log), "b", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 3
    assert "another writer has this session log open" in second.stdout
    assert first.wait(timeout=60) == 0
    after = subprocess.run(
        [sys.executable, "-c", WRITER, str(log), "c", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert after.returncode == 0, "the lock is released when the first writer closes"
    recovered = recover_jsonl(log.read_bytes())
    assert recovered.warnings == []
    ids = [e.id for e in recovered.entries]
    assert ids == [f"a{n}" for n in range(200)] + [f"c{n}" for n in range(200)]


# --------------------------------------------------------------------------- hardened parsing


def line_of(value: dict[str, Any]) -> bytes:
    return (json.dumps(value, ensure_ascii=False) + "\n").encode()


META = b'{"type":"metadata","id":"m","parentId":null,"timestamp":0,"key":"k","value":%s}\n'


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (META % b"NaN", r"line 1: invalid JSON \(NaN is not JSON\)"),
        (META % b"Infinity", r"line 1: invalid JSON \(Infinity is not JSON\)"),
        (META % b"-Infinity", r"line 1: invalid JSON \(-Infinity is not JSON\)"),
        (b"\n" + META % b'"\xc3\x28"', "line 2: invalid UTF-8"),
        (META % (b"[" * 100_000 + b"]" * 100_000), "line 1: invalid JSON"),
        (META % (b"[" * 70 + b"]" * 70), r"line 1: m.value\[0\].*nested deeper than 64"),
        (META % (b"1" * 5000), "line 1: invalid JSON"),
        (
            META.replace(b'"timestamp":0', b'"timestamp":true') % b"1",
            "line 1: m.timestamp: must be a non-negative finite number, got boolean",
        ),
        (
            META.replace(b'"timestamp":0', b'"timestamp":1e400') % b"1",
            "line 1: m.timestamp: must be a non-negative finite number, got inf",
        ),
        (b"\xef\xbb\xbf\xef\xbb\xbf" + META % b"1", "line 1: invalid JSON"),
    ],
    ids=[
        "nan",
        "infinity",
        "minus-infinity",
        "invalid-utf8",
        "nesting-100k",
        "nesting-70",
        "int-5000-digits",
        "bool-timestamp",
        "overflowing-float",
        "double-bom",
    ],
)
def test_hostile_lines_fail_with_their_line_number(raw: bytes, error: str) -> None:
    with pytest.raises(SessionStoreError, match=error):
        recover_jsonl(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param(META % b"1" + META.replace(b'"m"', b'"n"') % b"2", ["m", "n"], id="two"),
        pytest.param(b"\xef\xbb\xbf" + META % b"1", ["m"], id="bom"),
        pytest.param((META % b"1").replace(b"\n", b"\r\n"), ["m"], id="crlf"),
        pytest.param(b"\n\n  \n" + META % b"1" + b"\n\t\n", ["m"], id="blank-lines"),
        pytest.param(META % (b'"' + b"x" * 5_000_000 + b'"'), ["m"], id="5-MB-line"),
        pytest.param(META % str(10**400).encode(), ["m"], id="huge-integer"),
        pytest.param(
            META.replace(b'"key":"k"', b'"key":"k","key":"last"') % b"1", ["m"], id="duplicate-key"
        ),
    ],
)
def test_accepted_inputs(raw: bytes, expected: list[str]) -> None:
    assert [e.id for e in recover_jsonl(raw).entries] == expected


def test_duplicate_keys_keep_the_last_value_as_json_parse_does() -> None:
    raw = META.replace(b'"key":"k"', b'"key":"k","key":"last"') % b"1"
    entry = recover_jsonl(raw).entries[0]
    assert entry_to_json(entry)["key"] == "last"


def test_huge_integers_stay_exact() -> None:
    entry = recover_jsonl(META % str(10**400).encode()).entries[0]
    assert entry_to_json(entry)["value"] == 10**400


# --------------------------------------------------------------------------- fuzzing


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(st.lists(valid_entries(), max_size=4), st.binary(max_size=40), st.data())
def test_fuzz_recovery_of_damaged_logs(
    values: list[dict[str, Any]], noise: bytes, data: st.DataObject
) -> None:
    raw = b"".join(line_of(v) for v in values)
    cut = data.draw(st.integers(0, len(raw)))
    damaged = raw[:cut] + noise + raw[cut:]
    try:
        recovered = recover_jsonl(damaged)
    except SessionStoreError as error:
        assert str(error).startswith("line ")
        return
    assert recovered.committed_bytes <= len(damaged)


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(
    st.one_of(
        ANY_JSON,
        valid_entries().flatmap(
            lambda v: st.sampled_from(sorted(v)).flatmap(
                lambda k: ANY_JSON.map(lambda junk: {**v, k: junk})
            )
        ),
    )
)
def test_fuzz_parser_raises_only_its_own_error(value: Any) -> None:
    try:
        entry = parse_session_entry(value)
    except SessionEntryError:
        return
    assert entry_to_json(entry) == value
