"""Helpers for the intake tests: packing workspaces into archives, as learners and platforms do."""

from __future__ import annotations

import stat
import subprocess
import tarfile
import zipfile
from pathlib import Path

GIT_IDENTITY = ("-c", "user.name=Ada", "-c", "user.email=ada@example.org")


def zip_folder(folder: Path, archive: Path, prefix: str = "") -> Path:
    """Zip every file below ``folder`` under ``prefix`` (``"practice-11/"`` wraps it)."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                out.write(path, prefix + path.relative_to(folder).as_posix())
    return archive


def tar_folder(folder: Path, archive: Path, prefix: str = "") -> Path:
    """A gzipped tar of ``folder``, its members under ``prefix``."""
    with tarfile.open(archive, "w:gz") as out:
        for path in sorted(folder.rglob("*")):
            out.add(path, prefix + path.relative_to(folder).as_posix(), recursive=False)
    return archive


def zip_members(archive: Path, members: dict[str, bytes]) -> Path:
    """A zip of exactly ``members`` (names are written as given, ``../`` included)."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in members.items():
            out.writestr(name, data)
    return archive


def zip_symlink(archive: Path, name: str, target: str) -> Path:
    """A zip whose member ``name`` is a symbolic link to ``target``, as ``zip -y`` makes it."""
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr(info, target)
    return archive


def tar_special(archive: Path, name: str, kind: bytes, target: str = "") -> Path:
    """A gzipped tar holding one member of tarfile type ``kind`` (a link, a device, a FIFO)."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    with tarfile.open(archive, "w:gz") as out:
        out.addfile(info)
    return archive


def git(folder: Path, *args: str) -> str:
    """Run git in a test's own repository (never in a submission under test)."""
    done = subprocess.run(
        ["git", *GIT_IDENTITY, "-C", str(folder), *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def committed(folder: Path) -> str:
    """Make ``folder`` a repository with everything in one commit; the commit's id."""
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "my practice")
    return git(folder, "rev-parse", "HEAD")
