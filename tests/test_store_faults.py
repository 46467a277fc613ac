"""A failed write never poisons the log: injected faults, a file size limit and a full disk."""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import shutil
import signal
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from children import last_json, run_python
from hypothesis import given, settings
from hypothesis import strategies as st

from course.fixtures import chapter_path_json
from course.session import (
    JsonlSessionStore,
    SessionStoreError,
    encode_entry,
    entry_to_json,
    parse_session_entry,
    recover_jsonl,
)

Write = Callable[[int, Any], int]


def message(number: int, parent: str | None, text: str = "x" * 1000) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"e{number}",
        "parentId": parent,
        "timestamp": number,
        "message": {"role": "user", "content": text},
    }


def lines_of(*values: dict[str, Any]) -> bytes:
    return b"".join(encode_entry(parse_session_entry(v)) for v in values)


def ids(store: JsonlSessionStore) -> list[str]:
    return [entry.id for entry in store.entries()]


def oserror(code: int) -> OSError:
    return OSError(code, os.strerror(code))


# --------------------------------------------------------------------------- fault injection


@dataclass
class Faults:
    """What the next operations on one log's descriptor do instead of succeeding."""

    writes: list[Callable[[Write, int, Any], int]]
    """One entry per ``os.write`` on the log, used in order; the rest are real."""
    fsync_error: int | None = None
    """``os.fsync`` of the log fails once with this errno."""
    truncate_error: int | None = None
    """Every ``os.ftruncate`` of the log fails with this errno."""


def prefix_then(code: int, prefix: int) -> Callable[[Write, int, Any], int]:
    """A write that puts ``prefix`` bytes into the file, then raises (nothing returned)."""

    def write(real: Write, fd: int, data: Any) -> int:
        real(fd, bytes(data)[:prefix])
        raise oserror(code)

    return write


def short(prefix: int) -> Callable[[Write, int, Any], int]:
    """A short write: ``prefix`` bytes go to the file and the call says so."""

    def write(real: Write, fd: int, data: Any) -> int:
        return real(fd, bytes(data)[:prefix])

    return write


def failing(code: int) -> Callable[[Write, int, Any], int]:
    def write(real: Write, fd: int, data: Any) -> int:
        raise oserror(code)

    return write


@contextlib.contextmanager
def injected(log: Path, faults: Faults) -> Iterator[None]:
    """Patch ``os.write``, ``os.fsync`` and ``os.ftruncate`` for the descriptors of ``log``."""
    target = (log.stat().st_dev, log.stat().st_ino)
    real_write, real_fsync, real_truncate = os.write, os.fsync, os.ftruncate

    def is_log(fd: int) -> bool:
        status = os.fstat(fd)
        return (status.st_dev, status.st_ino) == target

    def write(fd: int, data: Any) -> int:
        if is_log(fd) and faults.writes:
            return faults.writes.pop(0)(real_write, fd, data)
        return real_write(fd, data)

    def fsync(fd: int) -> None:
        if is_log(fd) and faults.fsync_error is not None:
            code, faults.fsync_error = faults.fsync_error, None
            raise oserror(code)
        real_fsync(fd)

    def ftruncate(fd: int, size: int) -> None:
        if is_log(fd) and faults.truncate_error is not None:
            raise oserror(faults.truncate_error)
        real_truncate(fd, size)

    with (
        mock.patch.object(os, "write", write),
        mock.patch.object(os, "fsync", fsync),
        mock.patch.object(os, "ftruncate", ftruncate),
    ):
        yield


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    path.write_bytes(lines_of(*chapter_path_json()[:2]))
    return path


def test_a_write_that_fails_halfway_is_cut_back(log: Path) -> None:
    before = log.read_bytes()
    with JsonlSessionStore(log) as store:
        value = chapter_path_json()[2]
        with (
            injected(log, Faults([prefix_then(errno.ENOSPC, 25)])),
            pytest.raises(
                SessionStoreError,
                match=r"cannot append u2 \(No space left on device\); the log is back at its "
                "last committed line and the entry was not stored",
            ),
        ):
            store.append(value)
        assert log.read_bytes() == before
        assert ids(store) == ["u1", "a1"], "the failed entry is not in the store either"
        store.append(value)
    assert log.read_bytes() == before + lines_of(value)


def test_a_short_write_is_finished_or_its_error_reported(log: Path) -> None:
    before = log.read_bytes()
    value = chapter_path_json()[2]
    with JsonlSessionStore(log) as store:
        with injected(log, Faults([short(10)])):
            store.append(value)  # the rest of the line follows in a second write
        assert log.read_bytes() == before + lines_of(value)
        with (
            injected(log, Faults([short(10), failing(errno.EFBIG)])),
            pytest.raises(SessionStoreError, match=r"cannot append a2 \(File too large\)"),
        ):
            store.append(chapter_path_json()[3])
        assert ids(store) == ["u1", "a1", "u2"]
    assert log.read_bytes() == before + lines_of(value)


def test_a_failed_fsync_cuts_the_whole_line_back(log: Path) -> None:
    before = log.read_bytes()
    with JsonlSessionStore(log, fsync=True) as store:
        with (
            injected(log, Faults([], fsync_error=errno.EIO)),
            pytest.raises(SessionStoreError, match=r"cannot append u2 \(Input/output error\)"),
        ):
            store.append(chapter_path_json()[2])
        assert ids(store) == ["u1", "a1"]
    assert log.read_bytes() == before


def test_an_interrupted_append_leaves_no_partial_line(log: Path) -> None:
    before = log.read_bytes()

    def interrupted(real: Write, fd: int, data: Any) -> int:
        real(fd, bytes(data)[:7])
        raise KeyboardInterrupt

    with JsonlSessionStore(log) as store:
        with injected(log, Faults([interrupted])), pytest.raises(KeyboardInterrupt):
            store.append(chapter_path_json()[2])
        assert ids(store) == ["u1", "a1"]
    assert log.read_bytes() == before


def test_when_the_cut_fails_too_appends_wait_for_a_repair(log: Path) -> None:
    before = log.read_bytes()
    value = chapter_path_json()[2]
    with JsonlSessionStore(log) as store:
        with (
            injected(log, Faults([prefix_then(errno.ENOSPC, 25)], truncate_error=errno.EIO)),
            pytest.raises(
                SessionStoreError,
                match=r"cannot append u2 \(No space left on device\); its partial line 3 could "
                r"not be cut off \(Input/output error\), so the log refuses appends until "
                "repaired",
            ),
        ):
            store.append(value)
        assert [(w.code, w.line) for w in store.warnings] == [("uncommitted_tail", 3)]
        with pytest.raises(SessionStoreError, match="line 3 is an uncommitted tail; repair"):
            store.append(value)
        assert ids(store) == ["u1", "a1"]
        # What a restart would find: the acknowledged entries and a torn tail.
        found = recover_jsonl(log.read_bytes())
        assert [e.id for e in found.entries] == ["u1", "a1"] and found.has_uncommitted_tail
        result = store.repair()
        assert result.backup is not None and result.backup.read_bytes() == lines_of(value)[:25]
        assert (result.removed_bytes, result.line) == (25, 3)
        store.append(value)
    assert log.read_bytes() == before + lines_of(value)


# --------------------------------------------------------------------------- property


FAULTS = st.one_of(
    st.none(),
    st.tuples(
        st.sampled_from(["prefix-then-error", "short-then-error", "fsync"]),
        st.sampled_from([errno.ENOSPC, errno.EFBIG, errno.EIO]),
        st.floats(0, 1, exclude_max=True),
        st.booleans(),
    ),
)
"""None (the append succeeds) or (how it fails, errno, share of the line written, cut fails)."""


def faults_for(fault: tuple[str, int, float, bool], size: int) -> Faults:
    kind, code, share, cut_fails = fault
    prefix = int(size * share)
    writes = {
        "prefix-then-error": [prefix_then(code, prefix)],
        "short-then-error": [short(max(prefix, 1)), failing(code)],
        "fsync": [],
    }[kind]
    truncate = errno.EIO if cut_fails else None
    return Faults(writes, fsync_error=code if kind == "fsync" else None, truncate_error=truncate)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.text(max_size=300), FAULTS), min_size=1, max_size=12),
    st.booleans(),
)
def test_appends_with_failures_reopen_with_exactly_the_acknowledged_entries(
    plan: list[tuple[str, tuple[str, int, float, bool] | None]], fsync: bool
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        log = Path(directory) / "session.jsonl"
        acknowledged: list[dict[str, Any]] = []
        with JsonlSessionStore(log, fsync=fsync) as store:
            for number, (text, fault) in enumerate(plan):
                parent = acknowledged[-1]["id"] if acknowledged else None
                value = message(number, parent, text)
                if fault is None or (fault[0] == "fsync" and not fsync):
                    store.append(value)
                    acknowledged.append(value)
                else:
                    size = len(lines_of(value))
                    with injected(log, faults_for(fault, size)), pytest.raises(SessionStoreError):
                        store.append(value)
                assert [entry_to_json(e) for e in store.entries()] == acknowledged
                if store.warnings:
                    store.repair()
        assert log.read_bytes() == lines_of(*acknowledged)
        with JsonlSessionStore(log) as reopened:
            assert [entry_to_json(e) for e in reopened.entries()] == acknowledged
            assert reopened.warnings == []


# --------------------------------------------------------------------------- real limits


FILL = textwrap.dedent("""
    import json, os, resource, sys
    from course.jsonl import JsonlSessionStore, SessionStoreError, read_jsonl

    log, room = sys.argv[1], sys.argv[2]
    filler = os.path.join(os.path.dirname(log), "filler")
    if room == "filler":  # takes space that is freed again after the first failure
        with open(filler, "wb") as handle:
            handle.write(b"f" * 16384)
    store = JsonlSessionStore(log)
    acked, errors = [], []

    def append(number):
        entry = {"type": "message", "id": f"e{number}", "timestamp": number,
                 "parentId": acked[-1] if acked else None,
                 "message": {"role": "user", "content": "x" * 1000}}
        try:
            store.append(entry)
            acked.append(entry["id"])
        except SessionStoreError as error:
            errors.append(str(error))

    number = 0
    while not errors and number < 10000:
        append(number)
        number += 1
    held = [entry.id for entry in store.entries()]
    if room == "filler":
        os.unlink(filler)
    else:
        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
    for _ in range(2):
        append(number)
        number += 1
    store.close()
    with JsonlSessionStore(log) as again:
        reopened = [entry.id for entry in again.entries()]
        warnings = [str(w) for w in again.warnings]
    print(json.dumps({"acked": acked, "held": held, "errors": errors, "reopened": reopened,
                      "warnings": warnings, "checked": len(read_jsonl(log).entries)}))
""")

LIMIT = 64 * 1024


def assert_nothing_poisoned(report: dict[str, Any], reason: str) -> None:
    errors, acked = report["errors"], report["acked"]
    assert len(errors) == 1, errors
    failed = len(acked) - 2
    assert f"cannot append e{failed} ({reason})" in errors[0]
    assert report["held"] == acked[:failed], "the failed entry never reached the store"
    assert acked[-2:] == [f"e{failed + 1}", f"e{failed + 2}"], "appends work once there is room"
    assert report["reopened"] == acked and report["warnings"] == []
    assert report["checked"] == len(acked)


def limit_file_size() -> None:
    hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]  # kept, so the child can raise it back
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, hard))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def test_a_file_size_limit_never_poisons_the_log(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    outcome = run_python(FILL, str(log), "limit", preexec_fn=limit_file_size)
    report = last_json(outcome)
    assert_nothing_poisoned(report, "File too large")
    assert [e.id for e in recover_jsonl(log.read_bytes()).entries] == report["acked"]


MOUNT = 'mount -t tmpfs -o size=64k course-test "$1" && echo mounted && shift && exec "$@"'


def test_a_full_disk_never_poisons_the_log(tmp_path: Path) -> None:
    """A 64 KiB tmpfs in a mount namespace of its own; skipped where mounting is not allowed."""
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) to mount a small tmpfs in a private mount namespace")
    namespace = ["unshare", "--mount"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
    before = [*namespace, "sh", "-c", MOUNT, "sh", str(tmp_path)]
    outcome = run_python(FILL, str(tmp_path / "session.jsonl"), "filler", before=before)
    if not outcome.stdout.startswith("mounted"):
        pytest.skip(f"cannot mount a small tmpfs here: {outcome.stderr.strip()}")
    assert_nothing_poisoned(last_json(outcome), "No space left on device")
