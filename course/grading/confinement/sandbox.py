"""Where learner code runs: a bubblewrap sandbox with resource limits, or (unsandboxed) not.

Every process of a graded run starts through ``Confinement.wrap``: the launcher sets its
resource limits, joins the run's cgroups and records its pid, then execs bubblewrap, which
gives learner code its own user, PID, network, IPC and UTS namespaces, a new session without
a terminal, an empty environment and a filesystem of read-only system and Python directories,
the read-only graded copy and one small private ``/tmp``. The kit, the roster, the gradebook
and the grader's home are simply not there. When the PID namespace's first process dies (the
run ended, was killed, or the grader went away) the kernel kills every process in it, daemons
included. Unsandboxed, the same launcher still applies the limits and the clean environment.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import site
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ...locale import ENVIRONMENT
from ...locale import gettext as _
from ...sandboxed.isolation import SPEC_VARIABLE
from . import cgroups, slots
from .cgroups import Cgroups, last_said, tried

LAUNCHER = Path(__file__).with_name("launch.py")
SYSTEM_DIRECTORIES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime")
PASSED_VARIABLES = (
    "COURSE_LAB_PACKAGE",
    ENVIRONMENT,
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    SPEC_VARIABLE,
)
"""The only variables of a child's environment that reach learner code (besides our own)."""
SANDBOX_UID = 65534
"""Learner code runs as ``nobody`` inside the sandbox's user namespace: no capabilities."""
HOST_UID = 65534
"""Whom learner code runs as on the host when the grader is root (``nobody``): bubblewrap
maps the sandbox's user to the user that starts it, so a root grader starts it as this one."""
MB = 1024 * 1024


def drop_command(setpriv: str, uid: int = HOST_UID) -> list[str]:
    """The ``setpriv`` prefix running what follows as ``uid``: no groups, capabilities or gains."""
    drop = ["--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return [setpriv, f"--reuid={uid}", f"--regid={uid}", *drop]


def _trial_run(
    bwrap: str, host: tuple[str, int] | None, hidden: Sequence[Path], command: list[str]
) -> subprocess.CompletedProcess[str]:
    """``command`` run once in a sandbox over an empty run folder (graded when ``hidden``)."""
    with tempfile.TemporaryDirectory(prefix="course-sandbox-check-") as scratch:
        run = Path(scratch)
        layout = default_layout([run] if hidden else [], hidden, 8)
        confinement = Confinement(True, layout, (), SandboxLimits(), run, bwrap, host=host)
        wrapped, env = confinement.wrap(command, {}, ())
        try:
            return tried(wrapped, env)
        finally:
            confinement.close()


def _host_user() -> tuple[tuple[str, int] | None, str]:
    """((setpriv, uid) or None, why not): whom a root grader would start the sandbox as."""
    if os.geteuid() != 0:
        return None, "the grader is not root"
    setpriv = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin")
    if setpriv is None:
        return None, "setpriv (util-linux) is not installed"
    return (setpriv, HOST_UID), ""


_PROVEN_HOSTS: set[tuple[str, int]] = set()
"""Host users a sandbox has already been started as, running this Python (``sandbox_status``'s
trial run proves it too: one trial per process instead of two)."""


@functools.cache
def host_user_check() -> tuple[tuple[str, int] | None, str]:
    """((setpriv, uid) or None, why not): whether a root grader can start the sandbox as
    ``HOST_UID`` here (tried once: a sandbox started that way must run this Python)."""
    host, why = _host_user()
    if host is None or host in _PROVEN_HOSTS:
        return host, why
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, "bubblewrap (bwrap) is not installed or not on PATH"
    check = [sys.executable, "-I", "-S", "-c", "import os; print(os.getuid())"]
    try:
        done = _trial_run(bwrap, host, (), check)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"setpriv or bubblewrap did not start: {error}"
    if done.returncode != 0 or done.stdout.split() != [str(SANDBOX_UID)]:
        said = last_said(done.stderr, done.returncode)
        return None, f"user {HOST_UID} cannot start the sandbox here ({said})"
    return host, ""


DROP_CHECK = """\
import os, sys
print(os.getuid())
print("\\n".join(p for p in sys.argv[1:] if os.access(p, os.W_OK)))
"""


@functools.cache
def drop_user_check(guarded: tuple[Path, ...] = ()) -> tuple[tuple[str, int] | None, str]:
    """((setpriv, uid) or None, why not): whether a root grader can run learner code, without
    bubblewrap, as ``HOST_UID``, a user who can write none of ``guarded`` (the kit, the results):
    the fallback where namespaces cannot be made (a platform's container is the boundary)."""
    host, why = _host_user()
    if host is None:
        return None, why
    check = [sys.executable, "-I", "-S", "-c", DROP_CHECK, *map(str, guarded)]
    with tempfile.TemporaryDirectory(prefix="course-drop-check-") as scratch:
        spec: dict[str, object] = {"pids": os.devnull, "cgroups": [], "limits": {}}
        spec |= {"env": {"PATH": "/usr/bin:/bin"}}
        spec |= reach(python_directories(), Path(scratch))
        try:
            done = tried([*_launcher(spec), *drop_command(*host), *check])
        except (OSError, subprocess.TimeoutExpired) as error:
            return None, f"setpriv did not start: {error}"
    said = done.stdout.split("\n")
    if done.returncode != 0 or said[:1] != [str(HOST_UID)]:
        return (
            None,
            f"cannot run as user {HOST_UID} here ({last_said(done.stderr, done.returncode)})",
        )
    if writable := [line for line in said[1:] if line]:
        return None, f"user {HOST_UID} could write {', '.join(writable)}"
    return host, ""


def blocking(path: Path) -> Path | None:
    """The outermost folder above ``path`` that others cannot enter (``None``: none)."""
    for folder in reversed(path.parents):
        try:
            if not folder.stat().st_mode & stat.S_IXOTH:
                return folder
        except OSError:
            return folder
    return None


def reach(paths: Iterable[Path], under: Path) -> dict[str, object]:
    """The launcher's ``stage`` and ``cover`` that let a user without a sandbox reach ``paths``
    others cannot (a Python under ``/root``): each bound, in a mount namespace of its own, at
    its own path inside an empty tmpfs over the folder that shuts others out."""
    staged = staging(paths, under)
    for _source, point in staged:
        point.mkdir(parents=True, exist_ok=True)
    covers = {str(c) for path, _point in staged if (c := blocking(path)) is not None}
    if not staged:
        return {}
    return {"stage": [[str(p), str(q)] for p, q in staged], "cover": sorted(covers)}


def let_through(paths: Iterable[Path], writable: Iterable[Path], uid: int) -> None:
    """Let ``uid`` reach ``paths`` (and write ``writable``): the grader's private temporary
    folders on the way get search permission for others (never read), ``writable`` files
    become ``uid``'s."""
    top = Path(tempfile.gettempdir()).resolve()
    for path in [*paths, *writable]:
        for folder in Path(path).parents:
            if folder == top or not folder.is_relative_to(top):
                break
            with contextlib.suppress(OSError):
                mode = folder.stat().st_mode
                if mode & 0o011 != 0o011:
                    os.chmod(folder, (mode & 0o7777) | 0o011)
    for path in writable:
        with contextlib.suppress(OSError):
            os.chown(path, uid, uid)


def others_can_enter(path: Path) -> bool:
    """Whether others (not owner, not group) may search ``path`` and every folder above it."""
    try:
        return all(folder.stat().st_mode & stat.S_IXOTH for folder in [path, *path.parents])
    except OSError:
        return False


def staging(paths: Iterable[Path], under: Path) -> tuple[tuple[Path, Path], ...]:
    """(directory, mount point) for each of ``paths`` that others cannot enter (a Python under
    ``/root``, say): the launcher binds it on a numbered mount point ``under`` a folder the
    dropped user can reach, and the sandbox binds it back at its own path."""
    hidden = [path for path in paths if not others_can_enter(path)]
    return tuple((path, under / str(number)) for number, path in enumerate(hidden))


@dataclass(frozen=True)
class SandboxLimits:
    """What one graded run may use."""

    memory_mb: int = 1024  # all the run's processes together, swap too (memory cgroup)
    processes: int = 64  # the run's processes and threads (pids cgroup; else RLIMIT_NPROC)
    address_space_mb: int = 2048  # each process's (RLIMIT_AS)
    file_mb: int = 64  # the largest file a process may write (RLIMIT_FSIZE)
    cpu_seconds: int = 300  # each process's CPU time (RLIMIT_CPU)
    scratch_mb: int = 64  # the private /tmp
    shared_memory_mb: int = 16  # the private /dev/shm (the rest of /dev is read-only)


def python_directories() -> list[Path]:
    """The directories this Python needs (prefixes, library paths, user site), outermost only."""
    paths = sysconfig.get_paths()
    names = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    names.append(os.path.dirname(os.path.realpath(sys.executable)))
    names += [paths.get(key, "") for key in ("stdlib", "platstdlib", "purelib", "platlib")]
    found = {Path(name).resolve() for name in names + [str(p) for p in user_site()] if name}
    return outermost(p for p in found if p.exists() and p != Path("/"))


def user_site() -> list[Path]:
    """This user's site-packages, when this Python imports from it (``pip install --user``)."""
    if not site.ENABLE_USER_SITE:
        return []
    path = Path(site.getusersitepackages())
    return [path] if str(path) in sys.path and path.is_dir() else []


def outermost(paths: Iterable[Path]) -> list[Path]:
    """``paths`` without those inside another of them, sorted."""
    unique = sorted(set(paths))
    return [p for p in unique if not any(p != q and p.is_relative_to(q) for q in unique)]


@dataclass(frozen=True)
class Layout:
    """The sandbox's filesystem: what it sees read-only, what is hidden, what it may write."""

    system: tuple[Path, ...]  # the system's (symbolic links are recreated)
    python: tuple[Path, ...]  # this Python's directories
    graded: tuple[Path, ...]  # the graded copy and the grader's own modules
    hidden: tuple[Path, ...] = ()  # never visible, even inside a visible directory
    scratch_mb: int = 64
    shared_memory_mb: int = 16
    sources: tuple[tuple[Path, Path], ...] = ()  # (directory, where it is bound from)


def default_layout(
    graded: Sequence[Path], hidden: Sequence[Path], scratch_mb: int, shared_memory_mb: int = 16
) -> Layout:
    system = tuple(Path(p) for p in SYSTEM_DIRECTORIES + SYSTEM_FILES if os.path.lexists(p))
    python, covered = tuple(python_directories()), tuple(Path(p).resolve() for p in hidden)
    return Layout(system, python, tuple(graded), covered, scratch_mb, shared_memory_mb)


def _binds(option: str, paths: Iterable[Path], sources: Mapping[Path, Path]) -> list[str]:
    """``option SOURCE PATH`` for each of ``paths``, bound from itself unless ``sources`` says."""
    return [arg for path in paths for arg in (option, str(sources.get(path, path)), str(path))]


def mount_arguments(layout: Layout, writable: Sequence[Path]) -> list[str]:
    """bwrap's filesystem arguments for ``layout`` (pure: reads only symbolic links)."""
    sources = dict(layout.sources)
    args: list[str] = []
    for path in layout.system:
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        else:
            args += ["--ro-bind", str(path), str(path)]
    # bubblewrap's own /dev is a tmpfs as large as the host's memory: its shm gets a sized
    # tmpfs of its own (--size applies to the --tmpfs after it), and /dev is then read-only
    args += ["--dev", "/dev", "--size", str(layout.shared_memory_mb * MB), "--tmpfs", "/dev/shm"]
    args += ["--remount-ro", "/dev", "--proc", "/proc"]
    args += ["--size", str(layout.scratch_mb * MB), "--tmpfs", "/tmp"]
    visible = [*layout.system, *layout.python]
    covered = [h for h in layout.hidden if any(h.is_relative_to(v) for v in visible)]
    # a Python after /tmp (a virtual environment may live there), and again after the hidden
    # directories' covers when it is inside one (a venv in the kit, say)
    python = [p for p in layout.python if not any(p.is_relative_to(d) for d in layout.system)]
    again = [p for p in layout.python if any(p.is_relative_to(h) for h in covered)]
    args += _binds("--ro-bind", python, sources)
    args += [arg for path in outermost(covered) for arg in ("--tmpfs", str(path))]
    args += _binds("--ro-bind", again, sources)
    args += _binds("--ro-bind", layout.graded, {}) + _binds("--bind", writable, {})
    return args + ["--remount-ro", "/"]


def bwrap_command(
    bwrap: str, layout: Layout, env: Mapping[str, str], writable: Sequence[Path]
) -> list[str]:
    """The bubblewrap command line that runs what follows it (after ``--``) confined; the
    working directory stays the caller's (the graded copy is mounted at its own path)."""
    args = [bwrap, "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    # --disable-userns: no nested user namespaces
    args += ["--disable-userns", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--hostname", "sandbox", "--die-with-parent", "--new-session"]
    args += ["--clearenv"]
    args += [arg for key, value in sorted(env.items()) for arg in ("--setenv", key, value)]
    return args + mount_arguments(layout, writable) + ["--"]


def confined_environment(
    env: Mapping[str, str], python_path: Sequence[Path], home: Path
) -> dict[str, str]:
    """The environment learner code gets: a few known variables, nothing of the grader's."""
    kept = {key: env[key] for key in PASSED_VARIABLES if key in env}
    return kept | {
        "PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"]),
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "USER": "learner",
        "PYTHONNOUSERSITE": "1",
        "PYTHONPATH": os.pathsep.join(str(p) for p in python_path),
    }


def rlimits(
    limits: SandboxLimits, cgroup: Cgroups | None, uid: int | None, own_user: bool = False
) -> dict[str, int]:
    """The launcher's resource limits. Without a pids cgroup, RLIMIT_NPROC, which counts all of
    a user's tasks (threads too): the run's share alone when ``uid`` is the run's own user
    (``slots``), else what ``uid`` runs now plus the run's share."""
    found = {
        "address_space": limits.address_space_mb * MB,
        "file_size": limits.file_mb * MB,
        "cpu": limits.cpu_seconds,
        "core": 0,
    }
    if cgroup is None or cgroup.pids is None:
        uid = os.getuid() if uid is None else uid
        count = 0 if own_user else slots.tasks_by_user().get(uid, 0)
        found["processes"] = count + limits.processes
    return found


def enforced(
    limits: SandboxLimits,
    cgroup: Cgroups | None,
    sandboxed: bool,
    host: tuple[str, int] | None = None,
    scoped: bool = False,
    own_user: bool = False,
) -> tuple[str, ...]:
    """What is enforced, plainly, in the door's edition (``host``: the user the sandbox starts
    as; ``own_user``: a user of the run's own, ``slots``)."""
    if sandboxed:
        said = _(
            "own user, PID, network, IPC and UTS namespaces; new session, no terminal; empty "
            "environment for the sandbox's first process; read-only system and Python; "
            "read-only graded copy; private {scratch} MB /tmp and {shm} MB /dev/shm, read-only "
            "/dev; kit, roster and gradebook not mounted"
        )
        found = [said.format(scratch=limits.scratch_mb, shm=limits.shared_memory_mb)]
        if host is not None and own_user:
            said = _(
                "learner code is host user {uid} (not root), a user of this run's own, outside "
                "its namespace"
            )
            found.append(said.format(uid=host[1]))
        elif host is not None:
            said = _("learner code is host user {uid} (not root) outside its namespace")
            found.append(said.format(uid=host[1]))
        elif os.geteuid() == 0:
            why = host_user_check()[1]
            said = _("learner code is host root outside its namespace: {why}")
            found.append(said.format(why=why))
        else:
            found.append(_("learner code is the grader's own host user outside its namespace"))
    elif host is not None:
        said = _(
            "no sandbox (bubblewrap cannot make namespaces here): learner code runs as host user "
            "{uid} (not root), without capabilities or new privileges, able to write neither "
            "the kit nor the results; the platform's container is the boundary"
        )
        found = [said.format(uid=host[1])]
    else:
        found = [_("no sandbox: learner code runs with the grader's own permissions")]
    held = cgroup is not None and cgroup.holder is not None
    scope = _("systemd scope of the run, cgroup v2")
    if cgroup is not None and cgroup.memory is not None:
        how = scope if held else _("memory cgroup {version}").format(version=cgroup.version)
        said = _("memory {size} MB for all processes together ({how})")
        found.append(said.format(size=limits.memory_mb, how=how))
    elif scoped:
        said = _(
            "memory {size} MB for each process the run starts, with its children (systemd "
            "scope; no cap on all of them together)"
        )
        found.append(said.format(size=limits.memory_mb))
    else:
        said = _(
            "memory {size} MB address space per process only (no writable memory cgroup, so no "
            "cap on all processes together)"
        )
        found.append(said.format(size=limits.address_space_mb))
    if cgroup is not None and cgroup.pids is not None:
        how = scope if held else _("pids cgroup {version}").format(version=cgroup.version)
        said = _("{count} processes and threads together ({how})")
        found.append(said.format(count=limits.processes, how=how))
    elif scoped:
        said = _(
            "{count} processes and threads for each process the run starts, with its children "
            "(systemd scope)"
        )
        found.append(said.format(count=limits.processes))
    elif os.getuid() == 0 and host is None:
        found.append(_("processes: RLIMIT_NPROC, which the kernel does not enforce for root"))
    elif own_user:
        said = _(
            "{count} processes and threads together (RLIMIT_NPROC of the run's own host user: "
            "each run at a time has a user of its own)"
        )
        found.append(said.format(count=limits.processes))
    elif host is not None:
        said = _("processes: at most {count} more than user {uid} runs (RLIMIT_NPROC)")
        found.append(said.format(count=limits.processes, uid=host[1]))
    else:
        said = _("processes: at most {count} more than the user runs (RLIMIT_NPROC)")
        found.append(said.format(count=limits.processes))
    said = _("files up to {size} MB; {seconds} s of CPU per process")
    found.append(said.format(size=limits.file_mb, seconds=limits.cpu_seconds))
    return tuple(found)


def run_cgroups(
    limits: SandboxLimits, *, sandboxed: bool
) -> tuple[Cgroups | None, tuple[str, str, bool] | None]:
    """A run's cgroups (v1, a delegated v2, else a systemd scope held for the whole run),
    or else, sandboxed, the systemd scope each of its processes gets (see ``cgroups``)."""
    found = cgroups.create(limits.memory_mb, limits.processes)
    if found is not None:
        return found, None
    scope = cgroups.systemd_scope()[0]
    if scope is None:
        return None, None
    held = cgroups.create_scope(scope, limits.memory_mb, limits.processes)
    if held is not None and joinable(held):
        return held, None
    if held is not None:
        held.remove()
    return None, scope if sandboxed else None


def joinable(cgroup: Cgroups) -> bool:
    """Whether the launcher can move a process into ``cgroup``: not where the nearest folder it
    shares with the grader's own is not the grader's to write (a login session's scope)."""
    true = shutil.which("true", path="/usr/bin:/bin")
    if true is None:
        return False
    spec = {"pids": os.devnull, "cgroups": [str(d) for d in cgroup.directories], "limits": {}}
    try:
        return tried(_launcher(spec) + [true], timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def planned_limits(
    limits: SandboxLimits, *, sandboxed: bool, dropped: tuple[str, int] | None = None
) -> tuple[str, ...]:
    """What a run would enforce here (cgroups are tried, then removed); ``dropped``: unsandboxed,
    the user learner code runs as (``drop_user_check``)."""
    trial, scope = run_cgroups(limits, sandboxed=sandboxed)
    try:
        host = host_user_check()[0] if sandboxed else dropped
        own = host is not None and (not sandboxed or trial is None or trial.pids is None)
        if own and host is not None:  # as a run would: a user of its own, if one is free
            uid = slots.take()
            if uid is not None:
                slots.give_back(uid)
                host = (host[0], uid)
            own = uid is not None
        return enforced(limits, trial, sandboxed, host, scope is not None, own)
    finally:
        if trial is not None:
            trial.remove()


@dataclass
class Confinement:
    """Starts the processes of one graded run and cleans up after them."""

    sandboxed: bool
    layout: Layout
    python_path: tuple[Path, ...]
    limits: SandboxLimits
    run_directory: Path  # host-only (the pid file): never visible to learner code
    bwrap: str | None = None
    cgroup: Cgroups | None = None
    host: tuple[str, int] | None = None  # (setpriv, uid) a root grader starts the sandbox as
    scope: tuple[str, str, bool] | None = None  # ``cgroups.systemd_scope``: one per process
    own_user: bool = False  # ``host``'s uid is this run's own (``slots``), given back on close
    dropped: bool = False  # unsandboxed, learner code runs as ``host``'s uid (the fallback)
    expired: str = ""

    @functools.cached_property
    def staged(self) -> tuple[tuple[Path, Path], ...]:
        """``staging`` of this Python's directories, mount points made in the run's folder."""
        found = staging(self.layout.python, self.run_directory / "staged")
        for _source, point in found:
            point.mkdir(parents=True, exist_ok=True)
        return found

    def wrap(
        self, command: list[str], env: dict[str, str], writable: tuple[Path, ...]
    ) -> tuple[list[str], dict[str, str]]:
        """The launcher command that starts ``command`` confined, and its environment."""
        if self.expired:
            return [sys.executable, "-I", "-S", "-c", f"raise SystemExit({self.expired!r})"], {}
        home = Path("/tmp") if self.sandboxed else self.run_directory / "home"
        if not self.sandboxed:
            home.mkdir(exist_ok=True)
        clean = confined_environment(env, self.python_path, home)
        host = self.host if self.sandboxed or self.dropped else None
        spec: dict[str, object] = {
            "pids": str(self.run_directory / "pids"),
            "cgroups": [str(d) for d in (self.cgroup.directories if self.cgroup else [])],
            "limits": rlimits(self.limits, self.cgroup, host[1] if host else None, self.own_user),
            # sandboxed, an empty environment: bwrap's first process in the sandbox keeps bwrap's
            "env": {} if self.sandboxed else clean,
        }
        if not self.sandboxed and host is not None:  # the fallback: another user, no sandbox
            let_through([*self.layout.graded, home], [home, *writable], host[1])
            spec |= reach(self.layout.python, self.run_directory / "staged")
            return _launcher(spec) + drop_command(*host) + command, clean
        if not self.sandboxed:
            return _launcher(spec) + command, clean
        assert self.bwrap is not None
        layout, drop = self.layout, []
        if host is not None:
            staged = self.staged
            let_through([*layout.graded, *(point for _, point in staged)], writable, host[1])
            layout = replace(layout, sources=staged)
            spec["stage"] = [[str(path), str(point)] for path, point in staged]
            drop = drop_command(*host)
        sandbox = drop + bwrap_command(self.bwrap, layout, clean, writable)
        if self.scope is not None:
            systemd_run, env_program, user = self.scope
            memory, processes = self.limits.memory_mb, self.limits.processes
            scope = cgroups.scope_command(systemd_run, env_program, memory, processes, user)
            sandbox = scope + sandbox
            spec["env"] = cgroups.scope_environment(dict(os.environ))  # ``env -i`` clears it
        return _launcher(spec) + sandbox + command, {}

    def enforced(self) -> tuple[str, ...]:
        scoped = self.sandboxed and self.scope is not None
        own = self.own_user
        host = self.host if self.sandboxed or self.dropped else None
        return enforced(self.limits, self.cgroup, self.sandboxed, host, scoped, own)

    def out_of_memory(self) -> bool:
        return self.cgroup is not None and self.cgroup.out_of_memory()

    def expire(self, reason: str) -> None:
        """Kill everything the run started and refuse to start more."""
        self.expired = reason
        self.kill()

    def kill(self) -> None:
        """End every process the run started: their process groups, its cgroup, and where the
        run has a host user of its own, every process of that user (a daemon that left its
        group and its session, where no cgroup holds it: the container fallback)."""
        for pid in _our_children(self.run_directory / "pids"):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        if self.cgroup is not None:
            self.cgroup.kill()
        if self.own_user and self.host is not None:
            slots.end_processes(self.host[1])

    def close(self) -> None:
        self.kill()
        if self.cgroup is not None:
            self.cgroup.remove()
        if self.own_user and self.host is not None:
            self.own_user = False
            slots.give_back(self.host[1])


def _launcher(spec: Mapping[str, object]) -> list[str]:
    return [sys.executable, "-I", "-S", str(LAUNCHER), json.dumps(spec), "--"]


def _our_children(pid_file: Path) -> list[int]:
    """Recorded pids that are still unreaped children of this process (safe to signal)."""
    try:
        pids = [int(line) for line in pid_file.read_text(encoding="ascii").split()]
    except (OSError, ValueError):
        return []
    mine = []
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 1 and fields[1] == str(os.getpid()):
            mine.append(pid)
    return mine


SELF_CHECK = """\
import importlib.util, os, socket, sys
print(os.getuid())
hidden, allowed, modules = sys.argv[1], set(sys.argv[2].split("/")), sys.argv[3:]
problems = [m for m in modules if importlib.util.find_spec(m) is not None]
shown = set(os.listdir(hidden)) - allowed if os.path.isdir(hidden) else set()
problems += [os.path.join(hidden, name) for name in sorted(shown)]
problems += [name for _, name in socket.if_nameindex() if name != "lo"]
print("visible: " + ", ".join(problems) if problems else "confined")
"""


@functools.cache
def sandbox_status(hidden: Path, forbidden_modules: tuple[str, ...]) -> tuple[str | None, str]:
    """(bwrap or None, why not): start a sandbox once and check that ``hidden`` and
    ``forbidden_modules`` are gone (but for a Python inside ``hidden``: the kit's ``.venv``)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, "bubblewrap (bwrap) is not installed or not on PATH"
    inside = [p for p in python_directories() if p.is_relative_to(hidden)]
    shown = "/".join(p.relative_to(hidden).parts[0] for p in inside)
    check = [sys.executable, "-c", SELF_CHECK, str(hidden), shown, *forbidden_modules]

    def why_not_as(host: tuple[str, int] | None) -> str:
        """Why a sandbox started as ``host`` does not confine the check ("" when it does)."""
        try:
            done = _trial_run(bwrap, host, [hidden], check)
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"bubblewrap did not start: {error}"
        said = last_said(done.stdout + done.stderr, done.returncode)
        uid = done.stdout.split()[:1] == [str(SANDBOX_UID)]
        if done.returncode == 0 and said == "confined" and uid:
            return ""
        return f"bubblewrap cannot confine the grading here: {said}"

    # First as the host user a root grader would drop to: passing proves what host_user_check
    # tries too. Else (or where it decided otherwise before) as whom host_user_check allows.
    host = _host_user()[0]
    why = why_not_as(host)
    if not why and host is not None:
        _PROVEN_HOSTS.add(host)
    if (allowed := host_user_check()[0]) != host:
        why = why_not_as(allowed)
    return (None, why) if why else (bwrap, "")


def open_confinement(
    *,
    sandboxed: bool,
    graded: Sequence[Path],
    python_path: Sequence[Path],
    hidden: Sequence[Path],
    limits: SandboxLimits,
    run_directory: Path,
    bwrap: str | None,
    dropped: tuple[str, int] | None = None,
) -> Confinement:
    """A confinement for one graded run, with cgroups when they can be made (``dropped``:
    unsandboxed, learner code run as that user, ``drop_user_check``)."""
    layout = default_layout(graded, hidden, limits.scratch_mb, limits.shared_memory_mb)
    cgroup, scope = run_cgroups(limits, sandboxed=sandboxed)
    host = host_user_check()[0] if sandboxed else dropped
    # RLIMIT_NPROC counts a user's tasks: a run sharing its user with another shares its cap.
    # Without a sandbox a run always gets a user of its own: its processes, daemons included,
    # are then every process of that user, all ended with the run (``Confinement.kill``)
    own = not sandboxed or cgroup is None or cgroup.pids is None
    uid = slots.take() if host is not None and own else None
    host = host if host is None or uid is None else (host[0], uid)
    return Confinement(
        sandboxed,
        layout,
        tuple(python_path),
        limits,
        run_directory,
        bwrap,
        cgroup,
        host,
        scope,
        own_user=uid is not None,
        dropped=not sandboxed and host is not None,
    )
