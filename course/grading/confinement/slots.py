"""Host users of their own for the runs at a time, where only RLIMIT_NPROC caps a run's tasks.

The kernel's RLIMIT_NPROC counts every task (process or thread) of a real user, so runs that share
one host user share one count: a learner who keeps starting threads makes a classmate's sandbox,
started beside it as the same user, fail ("Creating new namespace failed: Resource temporarily
unavailable"). A root grader without a pids cgroup therefore starts each run at a time as a user
of its own (``take``): one of ``SLOT_UIDS`` that no account names, that this user namespace maps,
that no task runs as, and that no other run holds, of this grader or of another on the machine
(a lock held on a file of the user's in the kit's cache, which only the grader's user writes);
its cap is then the run's alone.
Every process of such a user is the run's, so when the run ends they are all ended
(``end_processes``): a daemon learner code double-forked, out of every process group the grader
knows, included.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import threading
import time
from pathlib import Path

from ...harness.kit import kit_cache

SLOT_UIDS = range(65_500, 65_534)
"""The host users a root grader may give its runs (below ``nobody``, 65534, above accounts)."""
_taken: dict[int, int] = {}  # uid → the descriptor of its lock file, held while the run lasts
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


NO_LOCK = -1
"""``_reserve`` where no lock file can be kept (a cache that cannot be written): this grader's
runs still pick their users apart, as before locks."""


def _reserve(uid: int) -> int | None:
    """A descriptor holding the machine-wide lock on ``uid``, or ``NO_LOCK``; None when another
    run holds it."""
    folder = kit_cache() / "slots"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle = os.open(folder / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        return NO_LOCK
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(handle)
        return None
    return handle


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
            handle = _reserve(uid)
            if handle is None:
                continue
            if handle != NO_LOCK and tasks_by_user().get(uid):  # another run's, just started
                os.close(handle)
                continue
            _taken[uid] = handle
            return uid
    return None


def give_back(uid: int) -> None:
    with _lock:
        handle = _taken.pop(uid, None)
    if handle is not None and handle != NO_LOCK:
        os.close(handle)  # and with it the lock


END_ROUNDS = 200
"""Scans of ``/proc`` ``end_processes`` makes at most (a process forking as it is killed
leaves a child for the next one; a user's tasks are capped at the run's 64)."""


def _user_of(status: str) -> tuple[list[str], str]:
    """A ``/proc/PID/status``'s real, effective and saved user ids, and its state's letter."""
    uids: list[str] = []
    state = ""
    for line in status.splitlines():
        if line.startswith("Uid:"):
            uids = line.split()[1:4]
        elif line.startswith("State:"):
            state = line.split()[1] if len(line.split()) > 1 else ""
    return uids, state


def processes_of(uid: int, proc: Path = Path("/proc")) -> list[int]:
    """The processes running as ``uid`` (its real, effective or saved user), but zombies."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(proc):
            if not entry.name.isdigit():
                continue
            try:
                status = (Path(entry.path) / "status").read_text(encoding="ascii", errors="replace")
            except OSError:
                continue
            uids, state = _user_of(status)
            if str(uid) in uids and state != "Z":
                found.append(int(entry.name))
    return found


def _kill(pid: int, uid: int, proc: Path) -> None:
    """SIGKILL ``pid`` if it still runs as ``uid``: through a pidfd taken before the check, so
    a pid reused meanwhile by another process is never signalled."""
    try:
        handle = os.pidfd_open(pid)
    except OSError:
        return  # gone already (or a kernel without pidfds: nothing safe to signal)
    try:
        status = (proc / str(pid) / "status").read_text(encoding="ascii", errors="replace")
        if str(uid) in _user_of(status)[0]:
            signal.pidfd_send_signal(handle, signal.SIGKILL)
    except OSError:
        pass
    finally:
        os.close(handle)


def end_processes(uid: int, proc: Path = Path("/proc")) -> bool:
    """End every process of host user ``uid``, scanning again while any is left (a process
    forking meanwhile, a daemon out of every process group); whether none is left. Only for a
    user no one else runs as (``take``): a run's own."""
    for round_ in range(END_ROUNDS):
        left = processes_of(uid, proc)
        if not left:
            return True
        for pid in left:
            _kill(pid, uid, proc)
        time.sleep(min(0.05, 0.001 * (round_ + 1)))  # let the killed die before looking again
    return not processes_of(uid, proc)
