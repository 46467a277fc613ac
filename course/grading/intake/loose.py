"""Lab files handed in without their workspace: found in an upload, graded in the kit's scaffold.

A platform upload is often just the files a learner edited: ``pi_course/summary.py`` …, or
``summary.py`` … at the upload's top, or those in one folder, or one archive of either; Canvas
hands each file of a multi-file upload over on its own, named for its learner
(``lovelaceada_12345_67890_summary.py``). What is graded is the kit's scaffold with those files
put in (``loose_snapshot``); a lab file not handed in stays the starter's (its lab is pending),
and everything else uploaded is listed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ...harness.kit import chapter_fingerprints, read_source
from ...harness.manifest import Manifest
from ...locale import gettext as _
from ...sandboxed.untrusted import safe_name
from .safefs import Tree
from .snapshot import Snapshot, given_notes

IGNORED = ("__MACOSX", "__pycache__")
RENUMBERED = re.compile(r"(?P<stem>.+?)-\d{1,3}(?P<suffix>\.py)")
"""A second upload of ``summary.py`` as Canvas renames it: ``summary-1.py``."""


@dataclass(frozen=True)
class LabFiles:
    """A chapter's lab files: each one's workspace path by its file name, and the package."""

    package: str
    paths: Mapping[str, str]  # summary.py → pi_course/summary.py

    @classmethod
    def of(cls, manifest: Manifest) -> LabFiles:
        paths = {PurePosixPath(f.path).name: f.path for f in manifest.files_with_role("learner")}
        return cls(manifest.package, paths)

    def named(self, name: str) -> str | None:
        """The lab file an uploaded file called ``name`` is (``summary.py``, or ``summary-1.py``
        as Canvas renames a second upload), else None."""
        if name in self.paths:
            return name
        renumbered = RENUMBERED.fullmatch(name)
        if renumbered is None:
            return None
        plain = renumbered["stem"] + renumbered["suffix"]
        return plain if plain in self.paths else None


NO_LAB_FILES = LabFiles("", {})


@dataclass(frozen=True)
class Loose:
    """The lab files found in an upload (workspace path → bytes), and what else it held."""

    files: Mapping[str, bytes]
    found_as: Mapping[str, str]  # workspace path → where in the upload it was
    others: tuple[str, ...]  # the upload's other entries, by their path in it


def find_loose(lab_files: LabFiles, tree: Tree) -> Loose | None:
    """The lab files at ``tree``'s top, in its package folder, or in its one folder (``None``
    when none is there); never through a symbolic link (``UnsafePath`` if a folder on the way
    cannot be listed)."""
    if not lab_files.paths:
        return None
    kinds = {n: k for n, k in tree.kinds().items() if n not in IGNORED and not n.startswith(".")}
    folders = [name for name, kind in kinds.items() if kind == "directory"]
    package = lab_files.package
    places: list[tuple[str, ...]] = [()]
    if package in folders:
        places.append((package,))
    elif len(folders) == 1 and not any(
        kind == "file" and lab_files.named(name) for name, kind in kinds.items()
    ):
        places = [(folders[0],), (folders[0], package)]  # the files zipped inside one folder
    files: dict[str, bytes] = {}
    found_as: dict[str, str] = {}
    for place in places:
        above = Tree(tree.base, (*tree.below, *place[:-1]))
        if place and above.kind(place[-1]) != "directory":
            continue
        below = Tree(tree.base, (*tree.below, *place))
        for name, kind in below.kinds().items():
            lab = lab_files.named(name) if kind == "file" else None
            if lab is not None and lab_files.paths[lab] not in files:
                files[lab_files.paths[lab]] = below.read(name)
                found_as[lab_files.paths[lab]] = "/".join((*place, name))
    if not files:
        return None
    used = {place[0] for place in places if place} | {
        where for where in found_as.values() if "/" not in where
    }
    others = sorted(safe_name(name) for name in kinds if name not in used)
    return Loose(files, found_as, tuple(others))


def roster_files(lab_files: LabFiles, roster: Tree, named: Sequence[tuple[str, str]]) -> Loose:
    """The lab files among the roster's top-level files ``named`` (each entry with the file name
    it stands for once its learner's name is taken off: ``fay_6_1006_summary.py`` is
    ``summary.py``); the first of two uploads of one lab file is used, the rest listed."""
    files: dict[str, bytes] = {}
    found_as: dict[str, str] = {}
    others: list[str] = []
    for entry, name in named:
        lab = lab_files.named(name)
        path = lab_files.paths[lab] if lab is not None else None
        if path is None or path in files:
            others.append(safe_name(entry))
            continue
        files[path] = roster.read(entry)
        found_as[path] = safe_name(entry)
    return Loose(files, found_as, tuple(others))


def loose_snapshot(manifest: Manifest, kit: Path, loose: Loose, where: str) -> Snapshot:
    """What is graded of ``loose``: the kit's scaffold with its lab files put in (a lab file not
    handed in is the starter's), noted as such."""
    learner = {
        f.path: loose.files[f.path] if f.path in loose.files else read_source(kit, f.starter)
        for f in manifest.files_with_role("learner")
    }
    starter = chapter_fingerprints(manifest, kit).starter
    label = _("lab files of {where}, in the kit's scaffold").format(where=where)
    notes = [*describe(manifest, loose), *given_notes(manifest, kit, learner)]
    return Snapshot(label, learner, tuple(notes), starter=starter)


def describe(manifest: Manifest, loose: Loose) -> list[str]:
    """What the instructor (and the learner) should know of a loose upload."""
    paths = [f.path for f in manifest.files_with_role("learner") if f.path in loose.found_as]
    found = _(", ").join(
        path if loose.found_as[path] == path else f"{loose.found_as[path]} → {path}"
        for path in paths
    )
    lines = [_("lab files put in the kit's scaffold (no workspace handed in): {found}")]
    lines[0] = lines[0].format(found=found)
    missing = [f.path for f in manifest.files_with_role("learner") if f.path not in loose.files]
    if missing:
        said = _("not handed in, so the starter's: {paths}")
        lines.append(said.format(paths=_(", ").join(missing)))
    if loose.others:
        lines.append(
            _("also uploaded, not graded: {names}").format(names=_(", ").join(loose.others))
        )
    return lines
