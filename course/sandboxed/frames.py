"""Learner frames: which stack frames ran the learner's code, and how a report shows them."""

from __future__ import annotations

import dataclasses
import functools
import linecache
import re
import traceback
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from ..locale import gettext as _
from ..locale import ngettext

HARNESS = Path(__file__).resolve().parent  # never the learner's, even inside the package
SHOWN_FRAMES = 3  # innermost learner frames a message shows

_DUMP_FRAME = re.compile(r'^\s*File "(?P<file>.+)", line (?P<line>\d+) in (?P<function>\S+)')
_DUMP_THREAD = re.compile(r"^(Current thread|Thread) 0x[0-9a-f]+")


@dataclasses.dataclass(frozen=True)
class Frame:
    """One frame of the code under test: ``pi_course/context.py:57 in select_groups``."""

    path: str  # relative to the folder holding the package: ``<package>/<module>.py``
    line: int
    function: str
    text: str = ""  # the source line, stripped (empty when the file cannot be read)

    @property
    def module(self) -> str:
        """The module inside the package: ``context`` for ``pi_course/context.py``."""
        return ".".join(Path(*Path(self.path).parts[1:]).with_suffix("").parts)

    @property
    def place(self) -> str:
        return f"{self.path}:{self.line}"

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def frame_from_json(value: object) -> Frame | None:
    """A frame as the results file carries it; None for anything malformed."""
    if not isinstance(value, dict):
        return None
    path, line, function = value.get("path"), value.get("line"), value.get("function")
    if not isinstance(path, str) or not isinstance(line, int) or not isinstance(function, str):
        return None
    text = value.get("text")
    return Frame(path, line, function, text if isinstance(text, str) else "")


def frames_from_json(value: object) -> tuple[Frame, ...]:
    """The frames a record carries (a list of them), leaving out any that is malformed."""
    items = value if isinstance(value, list) else []
    return tuple(frame for frame in map(frame_from_json, items) if frame is not None)


@functools.lru_cache(maxsize=2048)
def learner_path(filename: str, package_dir: Path) -> str | None:
    """``pi_course/context.py`` for a file inside the package; None for any other file
    (remembered: a traceback names the same few files again and again, and resolving each is
    most of a failing test's report)."""
    try:
        where = Path(filename).resolve()
    except (OSError, ValueError):
        return None
    if where.is_relative_to(HARNESS) or not where.is_relative_to(package_dir):
        return None
    return where.relative_to(package_dir.parent).as_posix()


def learner_frames(
    raw: Iterable[tuple[str, int, str]], package_dir: Path, *, source: Path | None = None
) -> list[Frame]:
    """The package's frames among ``(filename, line, function)`` triples, outermost first."""
    frames = []
    for filename, line, function in raw:
        path = learner_path(filename, package_dir)
        if path is not None:
            readable = str(source / path) if source is not None else filename
            frames.append(Frame(path, line, function, linecache.getline(readable, line).strip()))
    return frames


def traceback_triples(tb: TracebackType | None) -> list[tuple[str, int, str]]:
    """``(filename, line, function)`` of each entry of a traceback, outermost first."""
    return [(f.f_code.co_filename, line, f.f_code.co_name) for f, line in traceback.walk_tb(tb)]


def dump_file(results: Path) -> Path:
    """Where a child writes the stacks of a test that runs too long, next to its results."""
    return results.with_name(results.name + ".stacks")


def parse_dump(text: str) -> list[list[tuple[str, int, str]]]:
    """The threads of a ``faulthandler`` dump, each as triples outermost first."""
    threads: list[list[tuple[str, int, str]]] = []
    for line in text.splitlines():
        if _DUMP_THREAD.match(line) or (not threads and _DUMP_FRAME.match(line)):
            threads.append([])
        match = _DUMP_FRAME.match(line)
        if match and threads:
            threads[-1].append((match["file"], int(match["line"]), match["function"]))
    return [list(reversed(thread)) for thread in threads]  # a dump lists most recent first


def dumped_frames(text: str, package_dir: Path, source: Path) -> list[Frame]:
    """The learner frames of the first thread of a dump that was running learner code."""
    found = (learner_frames(thread, package_dir, source=source) for thread in parse_dump(text))
    return next(filter(None, found), [])


def render_frames(frames: Sequence[Frame], limit: int = SHOWN_FRAMES) -> list[str]:
    """The innermost ``limit`` frames, outermost first: a place line, then the code line."""
    lines = []
    if len(frames) > limit:
        left = len(frames) - limit
        outer = ngettext(
            "({count} outer frame of your code not shown)",
            "({count} outer frames of your code not shown)",
            left,
        )
        lines.append(outer.format(count=left))
    for frame in frames[-limit:]:
        lines.append(_("{place} in {function}").format(place=frame.place, function=frame.function))
        if frame.text:
            lines.append(f"    {frame.text}")
    return lines
