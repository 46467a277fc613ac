"""Where a chapter found through ``COURSE_CHAPTERS`` goes when it travels with the kit.

The graded copy, a platform (Gradescope's image, an Actions runner, Classroom 50's) and the
zero-install site run the kit somewhere else, without the instructor's environment. A built-in
chapter travels with the ``course`` package; one found through ``COURSE_CHAPTERS``, wherever
its folder is (inside the kit or not), travels as that folder, to ``CARRIED/<its name>`` of the
tree that carries it, and the run there names ``CARRIED`` in ``COURSE_CHAPTERS`` itself.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from ..locale import chapter_roots
from ..locale import gettext as _
from .kit import KitError
from .manifest import CHAPTER_ROOTS, Manifest, load_manifest

VARIABLE = CHAPTER_ROOTS
CARRIED = "chapters"
"""The folder of a tree carrying the kit (the graded copy, the Gradescope zip's kit, a runner's
unpacked chapters) that holds the ``COURSE_CHAPTERS`` chapters it carries."""
LEFT_BEHIND = ("__pycache__",)


def carried(path: str) -> str:
    """The name of the kit path ``path`` in a tree that carries its chapter: a kit-relative path
    as it is, a file of a ``COURSE_CHAPTERS`` folder under ``CARRIED`` (``chapters/ch13/…``)."""
    if not PurePosixPath(path).is_absolute():
        return path
    for root in chapter_roots()[1:]:
        if Path(path).is_relative_to(root):
            return f"{CARRIED}/{Path(path).relative_to(root).as_posix()}"
    said = _("{path}: neither in the kit nor in a folder of {variable}")
    raise KitError(said.format(path=path, variable=VARIABLE))


def travelling(manifest: Manifest) -> list[Manifest]:
    """The chapters whose folders travel with ``manifest``'s: it and its ancestors found through
    ``COURSE_CHAPTERS`` (a child reads its parent's files and manifest)."""
    chain, chapter = [], manifest
    while True:
        if Path(chapter.folder).is_absolute():
            chain.append(chapter)
        if chapter.parent is None:
            return chain
        chapter = load_manifest(chapter.parent)


def chapter_files(manifest: Manifest) -> dict[str, Path]:
    """Every file of the folders that travel with ``manifest`` (``travelling``), by the name
    ``carried`` gives it ({} for a built-in chapter of built-in parents)."""
    found: dict[str, Path] = {}
    for chapter in travelling(manifest):
        for path in sorted(Path(chapter.folder).rglob("*")):
            if path.is_file() and not any(part in LEFT_BEHIND for part in path.parts):
                found[carried(str(path))] = path
    return found


def chapters_root(manifest: Manifest) -> str | None:
    """``CARRIED`` when ``manifest``'s chapter travels as a folder (a run elsewhere names it in
    ``COURSE_CHAPTERS``), else None."""
    return CARRIED if travelling(manifest) else None


def chapter_bundle(manifest: Manifest) -> bytes:
    """The folders that travel with ``manifest``, as a gzipped tar of the files under
    ``CARRIED`` (``ch13/chapter.toml``…): the same bytes for the same files, so a script that
    embeds it changes only when the chapter does."""
    import gzip  # only the scripts that carry a chapter pay for these
    import io
    import tarfile

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, path in chapter_files(manifest).items():
            info = tarfile.TarInfo(name.removeprefix(f"{CARRIED}/"))
            data = path.read_bytes()
            info.size, info.mode = len(data), 0o644
            archive.addfile(info, io.BytesIO(data))
    return gzip.compress(buffer.getvalue(), mtime=0)
