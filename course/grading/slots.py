"""Host users of their own for the runs at a time, where only RLIMIT_NPROC caps a run's tasks.

The kernel's RLIMIT_NPROC counts every task (process or thread) of a real user, so runs that share
one host user share one count: a learner who keeps starting threads makes a classmate's sandbox,
started beside it as the same user, fail ("Creating new namespace failed: Resource temporarily
unavailable"). A root grader without a pids cgroup therefore starts each run at a time as a user
of its own (``take``): one of ``SLOT_UIDS`` that no account names, that this user namespace maps,
that no task runs as, and that no other run of this grader holds; its cap is then the run's alone.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

SLOT_UIDS = range(65_500, 65_534)
"""The host users a root grader may give its runs (below ``nobody``, 65534, above accounts)."""
_taken: set[int] = set()
_lock = threading.Lock()


def tasks_by_user(proc: Path = Path("/proc")) -> dict[int, int]:
    """How many tasks (processes and threads, as RLIMIT_NPROC counts them) each user runs."""
    found: dict[int, int] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir(proc):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    uid = entry.stat().st_uid
                    found[uid] = found.get(uid, 0) + len(os.listdir(Path(entry.path) / "task"))
    return found


def mapped(uid: int, uid_map: str) -> bool:
    """Whether ``uid`` is mapped in ``uid_map`` (``/proc/self/uid_map``: inside, outside, count)."""
    for line in uid_map.splitlines():
        fields = line.split()
        if len(fields) == 3 and all(field.isdigit() for field in fields):
            start, count = int(fields[0]), int(fields[2])
            if start <= uid < start + count:
                return True
    return False


def _unnamed(uid: int) -> bool:
    import pwd  # here: the browser's Python, which grades without host users, has no pwd

    try:
        pwd.getpwuid(uid)
    except KeyError:
        return True
    return False


def taken() -> frozenset[int]:
    """The users this grader's runs hold now."""
    with _lock:
        return frozenset(_taken)


def take() -> int | None:
    """A host user of its own for one run (``give_back`` it when the run ends); None when none
    of ``SLOT_UIDS`` is free here."""
    try:
        uid_map = Path("/proc/self/uid_map").read_text(encoding="ascii")
    except OSError:
        return None
    busy = tasks_by_user()
    with _lock:
        for uid in SLOT_UIDS:
            if uid in _taken or busy.get(uid) or not mapped(uid, uid_map) or not _unnamed(uid):
                continue
            _taken.add(uid)
            return uid
    return None


def give_back(uid: int) -> None:
    with _lock:
        _taken.discard(uid)
