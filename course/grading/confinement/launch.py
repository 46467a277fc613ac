"""Start one confined command: record its pid, join its cgroups, set its limits, then exec it.

``python -I -S launch.py SPEC -- COMMAND…``; SPEC is JSON: ``pids`` (a file to append this pid
to), ``cgroups`` (directories to join), ``stage`` (directories to bind on mount points in a
mount namespace of its own, so a user the command switches to can reach a directory inside one
it cannot enter, such as a Python under ``/root``), ``limits`` (resource limits by name) and
``env`` (the command's whole environment: not even the ``LC_CTYPE`` Python may add). All before
the exec, so every limit holds from the command's first instruction. Standard library only:
this file runs outside any package.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import sys
from collections.abc import Sequence

LIMITS = {
    "address_space": resource.RLIMIT_AS,
    "file_size": resource.RLIMIT_FSIZE,
    "cpu": resource.RLIMIT_CPU,
    "processes": resource.RLIMIT_NPROC,
    "core": resource.RLIMIT_CORE,
}
FAILED = 125
"""Exit code when the command could not be started confined."""
CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000


def lower_limit(resource_id: int, value: int) -> None:
    """Set soft and hard limits to ``value``, never above the current hard limit."""
    _, hard = resource.getrlimit(resource_id)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(resource_id, (value, value))


def stage(pairs: Sequence[Sequence[str]], covers: Sequence[str] = ()) -> None:
    """Bind each source on its mount point, in a new mount namespace nothing propagates from;
    then (``covers``: no sandbox follows, the command only switches user) cover each of
    ``covers`` with an empty tmpfs others may enter and bind each source back at its own path
    inside it, so the command reaches the sources and nothing else of the covered folder."""
    libc = ctypes.CDLL(None, use_errno=True)

    def check(result: int, what: str) -> None:
        if result != 0:
            number = ctypes.get_errno()
            raise OSError(number, f"{what}: {os.strerror(number)}")

    check(libc.unshare(CLONE_NEWNS), "unshare the mount namespace")
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    for source, target in pairs:
        flags = MS_BIND | MS_REC
        check(libc.mount(os.fsencode(source), os.fsencode(target), None, flags, None), target)
    for cover in covers:
        check(libc.mount(b"tmpfs", os.fsencode(cover), b"tmpfs", 0, b"mode=0755"), cover)
    for source, target in pairs:
        if any(os.path.commonpath([source, cover]) == cover for cover in covers):
            os.makedirs(source, exist_ok=True)
            flags = MS_BIND | MS_REC
            check(libc.mount(os.fsencode(target), os.fsencode(source), None, flags, None), source)


def main(argv: Sequence[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("launch: usage: launch.py SPEC -- COMMAND…", file=sys.stderr)
        return FAILED
    spec = json.loads(argv[1])
    command = list(argv[3:])
    try:
        with open(spec["pids"], "a", encoding="ascii") as pids:
            pids.write(f"{os.getpid()}\n")
        for cgroup in spec["cgroups"]:
            with open(os.path.join(cgroup, "cgroup.procs"), "w", encoding="ascii") as procs:
                procs.write(str(os.getpid()))
        if spec.get("stage"):
            stage(spec["stage"], spec.get("cover", ()))
        for name, value in spec["limits"].items():
            lower_limit(LIMITS[name], int(value))
        os.execve(command[0], command, dict(spec.get("env", {})))
    except (OSError, ValueError, KeyError) as error:
        print(f"launch: cannot start {command[0]} confined: {error}", file=sys.stderr)
    return FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv))
