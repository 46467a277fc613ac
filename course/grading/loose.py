"""Lab files handed in loose (no workspace): found, read safely, and laid into the kit's scaffold.

A platform upload is often just the files a learner edited: ``pi_course/summary.py`` …, or
``summary.py`` … at the upload's top, or those in one folder, or one archive of either. The
workspace graded is a fresh one of the kit's scaffold with those files put in; a lab file not
handed in stays the starter's (its lab is pending), and everything else uploaded is listed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..harness.manifest import Manifest
from ..harness.workspace import create_workspace
from ..locale import gettext as _
from .archives import Refused, is_readable_archive, unpack
from .intake import find_workspaces
from .safefs import Tree, UnsafePath

IGNORED = ("__MACOSX", "__pycache__")


@dataclass(frozen=True)
class Loose:
    """The lab files found in an upload (workspace path → bytes), and what else it held."""

    files: Mapping[str, bytes]
    found_as: Mapping[str, str]  # workspace path → where in the upload it was
    others: tuple[str, ...]  # the upload's other entries, by their path in it


def _lab_names(manifest: Manifest) -> dict[str, str]:
    """Each learner file's workspace path by its name (``summary.py``: ``pi_course/summary.py``)."""
    return {PurePosixPath(f.path).name: f.path for f in manifest.files_with_role("learner")}


def find_loose(manifest: Manifest, tree: Tree) -> Loose | None:
    """The lab files at ``tree``'s top, in its package folder, or in its one folder (``None``
    when none is there); never through a symbolic link."""
    names = _lab_names(manifest)
    kinds = {n: k for n, k in tree.kinds().items() if n not in IGNORED and not n.startswith(".")}
    folders = [name for name, kind in kinds.items() if kind == "directory"]
    package = manifest.package
    places: list[tuple[str, ...]] = [()]
    if package in folders:
        places.append((package,))
    elif len(folders) == 1 and not any(kinds.get(name) == "file" for name in names):
        places = [(folders[0],), (folders[0], package)]  # the files zipped inside one folder
    files: dict[str, bytes] = {}
    found_as: dict[str, str] = {}
    for place in places:
        above = Tree(tree.base, (*tree.below, *place[:-1]))
        if place and above.kind(place[-1]) != "directory":
            continue
        below = Tree(tree.base, (*tree.below, *place))
        for name, kind in below.kinds().items():
            if kind == "file" and name in names and names[name] not in files:
                files[names[name]] = below.read(name)
                found_as[names[name]] = "/".join((*place, name))
    if not files:
        return None
    used = {place[0] for place in places if place} | {
        where for where in found_as.values() if "/" not in where
    }
    others = sorted(name for name in kinds if name not in used)
    return Loose(files, found_as, tuple(others))


@contextmanager
def loose_upload(manifest: Manifest, upload: Path) -> Iterator[Loose | str]:
    """The loose lab files of the folder ``upload``, or of its one archive; else why none."""
    tree = Tree(upload)
    try:
        found = find_loose(manifest, tree)
        archives = [
            name
            for name, kind in tree.kinds().items()
            if kind == "file" and is_readable_archive(name) and not name.startswith(".")
        ]
    except UnsafePath as error:
        yield str(error)
        return
    if found is not None:
        yield found
        return
    if len(archives) != 1:
        said = _("no lab files ({names}) at its top, in {package}/ or in its one folder")
        yield said.format(names=", ".join(_lab_names(manifest)), package=manifest.package)
        return
    with tempfile.TemporaryDirectory(prefix="course-loose-") as folder:
        yield _from_archive(manifest, upload / archives[0], Path(folder) / "unpacked")


def _from_archive(manifest: Manifest, archive: Path, root: Path) -> Loose | str:
    """The loose lab files of ``archive`` unpacked into ``root``, or why none."""
    root.mkdir(mode=0o700)
    try:
        unpack(archive, root)
        if find_workspaces(Tree(root)):
            return _("{archive} holds a workspace").format(archive=archive.name)
        found = find_loose(manifest, Tree(root))
    except (Refused, UnsafePath) as error:
        return _("{archive}: refused: {error}").format(archive=archive.name, error=error)
    if found is None:
        said = _("{archive} holds no lab files ({names})")
        return said.format(archive=archive.name, names=", ".join(_lab_names(manifest)))
    return found


def build_workspace(manifest: Manifest, kit: Path, loose: Loose, target: Path) -> None:
    """A fresh workspace of the kit's scaffold at ``target`` with ``loose``'s files put in."""
    create_workspace(manifest, kit, target)
    for path, data in loose.files.items():
        (target / path).write_bytes(data)


def describe(manifest: Manifest, loose: Loose) -> list[str]:
    """What the instructor (and the learner) should know of a loose upload."""
    paths = [f.path for f in manifest.files_with_role("learner") if f.path in loose.found_as]
    found = ", ".join(f"{loose.found_as[path]} → {path}" for path in paths)
    lines = [_("loose lab files put in the kit's scaffold: {found}").format(found=found)]
    missing = [f.path for f in manifest.files_with_role("learner") if f.path not in loose.files]
    if missing:
        said = _("not handed in, so the starter's: {paths}")
        lines.append(said.format(paths=", ".join(missing)))
    if loose.others:
        lines.append(_("also uploaded, not graded: {names}").format(names=", ".join(loose.others)))
    return lines
