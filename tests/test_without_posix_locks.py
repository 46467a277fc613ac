"""Where Pyodide lacks ``flock`` and hard links: one writer per log, atomic writes still."""

from __future__ import annotations

import errno
import os
import types
from pathlib import Path

import pytest

import course.logfile as logfile
from course.fixtures import chapter_path_json
from course.interop.pi_import import OutputExistsError, write_atomically
from course.session import JsonlSessionStore, SessionStoreError, repair_jsonl


def failing(code: int) -> types.SimpleNamespace:
    """An ``fcntl`` stand-in whose ``flock`` fails with ``code``, as Emscripten's does."""

    def flock(fd: int, operation: int) -> None:
        raise OSError(code, os.strerror(code))

    return types.SimpleNamespace(flock=flock, LOCK_EX=2, LOCK_NB=4)


@pytest.fixture(params=["no fcntl", "no flock", "ENOSYS", "EOPNOTSUPP"])
def without_flock(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    stand_ins = {
        "no fcntl": None,
        "no flock": types.SimpleNamespace(LOCK_EX=2, LOCK_NB=4),
        "ENOSYS": failing(errno.ENOSYS),
        "EOPNOTSUPP": failing(errno.EOPNOTSUPP),
    }
    monkeypatch.setattr(logfile, "fcntl", stand_ins[request.param])


def test_a_second_writer_is_refused_in_process_without_flock(
    without_flock: None, tmp_path: Path
) -> None:
    log = tmp_path / "session.jsonl"
    with JsonlSessionStore(log) as first:
        first.append(chapter_path_json()[0])
        with pytest.raises(SessionStoreError, match="another writer has this session log open"):
            JsonlSessionStore(tmp_path / "." / "session.jsonl")  # the same file, another spelling
        assert len(first) == 1


def test_the_lock_is_released_on_close_without_flock(without_flock: None, tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    with JsonlSessionStore(log) as first:
        first.append(chapter_path_json()[0])
    with JsonlSessionStore(log) as second:
        second.append(chapter_path_json()[1])
        assert len(second) == 2
    assert repair_jsonl(log).backup is None  # the repair takes and drops the same lock
    JsonlSessionStore(log).close()


def test_a_refused_writer_does_not_release_the_holder(without_flock: None, tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    with JsonlSessionStore(log):
        for _attempt in range(2):
            with pytest.raises(SessionStoreError, match="another writer"):
                JsonlSessionStore(log)


def test_two_logs_have_two_writers_without_flock(without_flock: None, tmp_path: Path) -> None:
    with JsonlSessionStore(tmp_path / "a.jsonl"), JsonlSessionStore(tmp_path / "b.jsonl"):
        pass


def test_a_real_lock_failure_is_still_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(logfile, "fcntl", failing(errno.EBADF))
    with pytest.raises(SessionStoreError, match="cannot lock the session log"):
        JsonlSessionStore(tmp_path / "session.jsonl")


def no_hard_links(code: int) -> object:
    def link(source: object, target: object) -> None:
        raise OSError(code, os.strerror(code))

    return link


@pytest.mark.parametrize("code", [errno.EMLINK, errno.ENOSYS, errno.EPERM])
def test_an_atomic_write_needs_no_hard_link(
    code: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(os, "link", no_hard_links(code))
    target = tmp_path / "out.jsonl"
    write_atomically(target, b"new\n", force=False)
    assert target.read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_an_atomic_write_works_where_os_has_no_link_at_all(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delattr(os, "link")  # Pyodide's os module
    target = tmp_path / "out.jsonl"
    write_atomically(target, b"new\n", force=False)
    assert target.read_bytes() == b"new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_without_hard_links_an_existing_name_is_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(os, "link", no_hard_links(errno.EMLINK))
    target = tmp_path / "out.jsonl"
    target.write_bytes(b"precious\n")
    with pytest.raises(OutputExistsError):
        write_atomically(target, b"new\n", force=False)
    assert target.read_bytes() == b"precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_without_hard_links_a_name_taken_meanwhile_is_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    target = tmp_path / "out.jsonl"

    def rival_then_no_link(source: object, name: object) -> None:
        target.write_bytes(b"rival\n")  # another writer took the name after the first check
        raise OSError(errno.EMLINK, os.strerror(errno.EMLINK))

    monkeypatch.setattr(os, "link", rival_then_no_link)
    with pytest.raises(FileExistsError):
        write_atomically(target, b"new\n", force=False)
    assert target.read_bytes() == b"rival\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]


def test_another_link_error_is_not_mistaken_for_no_hard_links(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(os, "link", no_hard_links(errno.ENOSPC))
    target = tmp_path / "out.jsonl"
    with pytest.raises(OSError, match="No space left"):
        write_atomically(target, b"new\n", force=False)
    assert list(tmp_path.iterdir()) == []
