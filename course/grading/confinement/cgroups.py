"""Per-run cgroups (memory and pids controllers, v1 or v2): create, limit, empty, remove.

A cgroup caps what all of a run's processes use together, which per-process resource limits
cannot (four forked children of 1 GiB each are four times one child's limit). Writable cgroup
v1 hierarchies come first; else a cgroup v2 in a delegated subtree with the ``memory`` and
``pids`` controllers (``COURSE_GRADING_CGROUP``, else this process's own cgroup); else a
systemd scope with the caps, held by a sleeping process, that every process of the run joins;
else, where the grader may not join it, a scope for each process the run starts.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

PREFIX = "course-grading"
DELEGATED = "COURSE_GRADING_CGROUP"
"""Environment variable naming a delegated cgroup v2 folder to make runs' cgroups in."""
SCOPE_VARIABLES = ("XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS")
"""What ``systemd-run --user`` needs to reach the user's manager (and nothing after it gets)."""
_numbers = itertools.count(1)


def tried(
    command: list[str], env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def last_said(output: str, code: int) -> str:
    """The last line a command printed, else its exit code."""
    return (output.strip().splitlines() or [f"exit code {code}"])[-1]


def _mounts(mountinfo: str) -> dict[str, Path]:
    """Controller name → mount point of each cgroup hierarchy (``""``: v2) in ``mountinfo``."""
    found: dict[str, Path] = {}
    for line in mountinfo.splitlines():
        fields, _, tail = line.partition(" - ")
        parts, options = fields.split(), tail.split()
        if len(parts) >= 5 and options[:1] == ["cgroup2"]:
            found.setdefault("", Path(parts[4]))
        elif len(parts) >= 5 and len(options) >= 3 and options[0] == "cgroup":
            for option in options[2].split(","):
                found.setdefault(option, Path(parts[4]))
    return found


def _own_paths(cgroup: str) -> dict[str, str]:
    """Controller name → this process's cgroup path, from ``/proc/self/cgroup`` (``""``: v2)."""
    found: dict[str, str] = {}
    for line in cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(","):
                found[controller] = parts[2]
    return found


def _proc_self() -> tuple[str, str] | None:
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text(encoding="utf-8")
        return mountinfo, Path("/proc/self/cgroup").read_text(encoding="utf-8")
    except OSError:
        return None


def v2_mount(mountinfo: str) -> Path | None:
    """The mount point of the cgroup v2 hierarchy in ``/proc/self/mountinfo``, if any."""
    return _mounts(mountinfo).get("")


def v2_parent(mountinfo: str, cgroup: str, delegated: str | None) -> Path | None:
    """Where a run's v2 cgroup goes: the delegated folder, else this process's own cgroup."""
    if delegated:
        return Path(delegated)
    mount, own = v2_mount(mountinfo), _own_paths(cgroup).get("")
    return None if mount is None or own is None else mount / own.lstrip("/")


def v2_usable(parent: Path) -> bool:
    """Whether ``parent`` hands the memory and pids controllers down to new children."""
    try:
        enabled = (parent / "cgroup.subtree_control").read_text(encoding="ascii").split()
    except OSError:
        return False
    return {"memory", "pids"} <= set(enabled)


def parent_directories() -> dict[str, Path]:
    """Where new memory and pids cgroups go: under this process's own cgroup when visible."""
    texts = _proc_self()
    if texts is None:
        return {}
    mounts, own = _mounts(texts[0]), _own_paths(texts[1])
    parents: dict[str, Path] = {}
    for controller in ("memory", "pids"):
        if controller in mounts:
            inside = mounts[controller] / own.get(controller, "/").lstrip("/")
            parents[controller] = inside if inside.is_dir() else mounts[controller]
    return parents


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process
    return True


def _remove_stale(parent: Path) -> None:
    """Remove empty cgroups left by graders that are gone (killed before cleaning up)."""
    with contextlib.suppress(OSError):
        for child in parent.glob(f"{PREFIX}-*"):
            owner = child.name.split("-")[2]
            if owner.isdigit() and not _alive(int(owner)):
                with contextlib.suppress(OSError):
                    child.rmdir()


@dataclass
class Cgroups:
    """The cgroups of one graded run, joined by every process it starts (v2: one folder)."""

    memory: Path | None
    pids: Path | None
    version: str = "v1"
    holder: subprocess.Popen[bytes] | None = None  # keeps a run's systemd scope alive

    @property
    def directories(self) -> list[Path]:
        return list(dict.fromkeys(d for d in (self.memory, self.pids) if d is not None))

    def processes(self) -> set[int]:
        found: set[int] = set()
        for directory in self.directories:
            with contextlib.suppress(OSError, ValueError):
                text = (directory / "cgroup.procs").read_text(encoding="ascii")
                found |= {int(pid) for pid in text.split()}
        return found

    def kill(self) -> None:
        for pid in self.processes():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the run for reaching the memory cap."""
        if self.memory is None:
            return False
        name = "memory.events" if self.version == "v2" else "memory.oom_control"
        try:
            text = (self.memory / name).read_text(encoding="ascii")
        except OSError:
            return False
        counts = dict(line.split() for line in text.splitlines() if len(line.split()) == 2)
        return counts.get("oom_kill", "0") != "0" or counts.get("under_oom", "0") != "0"

    def remove(self, wait: float = 5.0) -> None:
        """Kill what is left, wait until the cgroups are empty, remove them."""
        deadline = time.monotonic() + wait
        while self.processes() and time.monotonic() < deadline:
            self.kill()
            time.sleep(0.02)
        if self.holder is not None:
            self.holder.kill()
            self.holder.wait()
            return  # systemd removes the scope once it is empty
        for directory in self.directories:
            with contextlib.suppress(OSError):
                directory.rmdir()


def _make(parent: Path, settings: dict[str, int]) -> Path | None:
    """A new cgroup under ``parent`` with ``settings`` written (None if it cannot be made),
    once the stale ones there are removed."""
    _remove_stale(parent)
    directory = parent / f"{PREFIX}-{os.getpid()}-{next(_numbers)}"
    try:
        directory.mkdir()
    except OSError:
        return None
    try:
        for key, value in settings.items():
            (directory / key).write_text(str(value), encoding="ascii")
    except OSError:
        with contextlib.suppress(OSError):
            directory.rmdir()
        return None
    return directory


def create_v2(memory_mb: int, processes: int) -> Cgroups | None:
    """A cgroup v2 capping memory at ``memory_mb`` (no swap) and tasks at ``processes``."""
    texts = _proc_self()
    parent = None if texts is None else v2_parent(*texts, os.environ.get(DELEGATED))
    if parent is None or not v2_usable(parent):
        return None
    folder = _make(parent, {"memory.max": memory_mb * 1024 * 1024, "pids.max": processes})
    if folder is None:
        return None
    with contextlib.suppress(OSError):  # absent where swap is not accounted
        (folder / "memory.swap.max").write_text("0", encoding="ascii")
    return Cgroups(folder, folder, "v2")


def create(memory_mb: int, processes: int) -> Cgroups | None:
    """Cgroups capping memory (and swap) at ``memory_mb`` and tasks at ``processes``:
    cgroup v1 where its hierarchies are writable, else a delegated cgroup v2."""
    found = _create_v1(memory_mb, processes)
    if found is None or found.memory is None or found.pids is None:
        v2 = create_v2(memory_mb, processes)
        if v2 is not None:
            if found is not None:
                found.remove()
            return v2
    return found


def _create_v1(memory_mb: int, processes: int) -> Cgroups | None:
    parents = parent_directories()
    memory = pids = None
    if "memory" in parents:
        size = memory_mb * 1024 * 1024
        memory = _make(parents["memory"], {"memory.limit_in_bytes": size})
        if memory is not None and (memory / "memory.memsw.limit_in_bytes").exists():
            with contextlib.suppress(OSError):
                (memory / "memory.memsw.limit_in_bytes").write_text(str(size), encoding="ascii")
    if "pids" in parents:
        pids = _make(parents["pids"], {"pids.max": processes})
    if memory is None and pids is None:
        return None
    return Cgroups(memory, pids)


def scope_command(
    systemd_run: str, env: str, memory_mb: int, processes: int, user: bool
) -> list[str]:
    """The prefix that runs what follows in a new systemd scope capping its memory (no swap)
    and tasks, delegated to the grader's user, then with an empty environment (``env -i``)."""
    return [
        systemd_run,
        *(["--user"] if user else []),
        *["--scope", "--quiet", "--collect", "--property=Delegate=yes"],
        f"--property=MemoryMax={memory_mb}M",
        "--property=MemorySwapMax=0",
        f"--property=TasksMax={processes}",
        *("--", env, "-i"),
    ]


def scope_environment(environ: dict[str, str]) -> dict[str, str]:
    return {key: environ[key] for key in SCOPE_VARIABLES if key in environ}


@functools.cache
def systemd_scope() -> tuple[tuple[str, str, bool] | None, str]:
    """((systemd-run, env, user manager?) or None, why not): whether systemd can put each
    process of a run in a scope with limits here (tried once, with a trivial command)."""
    systemd_run = shutil.which("systemd-run")
    env = shutil.which("env", path="/usr/bin:/bin")
    if systemd_run is None or env is None:
        return None, "systemd-run is not installed"
    user = os.geteuid() != 0
    command = scope_command(systemd_run, env, 64, 8, user) + ["true"]
    try:
        done = tried(command, scope_environment(dict(os.environ)), timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"systemd-run did not start: {error}"
    if done.returncode != 0:
        said = last_said(done.stderr, done.returncode)
        return None, f"systemd-run cannot make a scope here ({said})"
    return (systemd_run, env, user), ""


def holder_command(
    scope: tuple[str, str, bool], sleep: str, memory_mb: int, processes: int
) -> list[str]:
    """A holder (``sleep infinity``) in a new scope with a run's caps, for the run to join."""
    systemd_run, env, user = scope
    return scope_command(systemd_run, env, memory_mb, processes, user) + [sleep, "infinity"]


def scope_folder(mount: Path, own: str | None, holder: str) -> Path | None:
    """The holder's scope folder, once it is in one (``holder``: its ``/proc/PID/cgroup``)."""
    path = _own_paths(holder).get("")
    if path is None or path == own or not path.endswith(".scope"):
        return None
    return mount / path.lstrip("/")


def create_scope(
    scope: tuple[str, str, bool], memory_mb: int, processes: int, wait: float = 10.0
) -> Cgroups | None:
    """A systemd scope capping all of a run's processes together, held by a sleeping process;
    None where it has no cgroup v2 caps (whether the run may join it is the caller's check)."""
    sleep = shutil.which("sleep", path="/usr/bin:/bin")
    texts = _proc_self()
    mount = None if texts is None else v2_mount(texts[0])
    if sleep is None or texts is None or mount is None:
        return None
    try:
        holder = subprocess.Popen(
            holder_command(scope, sleep, memory_mb, processes),
            env=scope_environment(dict(os.environ)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return None
    found = Cgroups(None, None, "v2", holder)
    deadline, own, folder = time.monotonic() + wait, _own_paths(texts[1]).get(""), None
    while folder is None and holder.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            text = Path(f"/proc/{holder.pid}/cgroup").read_text(encoding="utf-8")
            folder = scope_folder(mount, own, text)
        if folder is None:
            time.sleep(0.02)
    if folder is None or not all((folder / f).exists() for f in ("memory.max", "pids.max")):
        found.remove()
        return None
    found.memory = found.pids = folder
    return found
