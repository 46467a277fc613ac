"""``checkpoint CHAPTER --watch``: re-run the lab at hand each time a file of the package is saved.

File events (``watchfiles``) and keys (stdin) feed one queue the main thread serves, so runs
never overlap. A probe file, written in a folder of the watch's own beside the workspace (never
inside it, where a learner's link could stand at its name), tells whether events arrive; when
they do not, the watch falls back to polling and says so.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import watchfiles

from ..harness.gradeline import grade_lines
from ..harness.hints import (
    NONE_OPENED,
    Hint,
    HintsError,
    Opened,
    hint_pointer,
    labs_by_id,
    next_hint,
    open_next_hint,
    read_hints,
    render_hint,
)
from ..harness.manifest import Lab, Manifest
from ..harness.report import (
    counts_width,
    render_after_green,
    render_first_failure,
    render_lab,
    render_not_run,
)
from ..harness.results import CheckpointResult, lab_to_work_on
from ..harness.style import PLAIN, Style, is_terminal
from ..locale import gettext as _
from ..sandboxed.commands import BY_NAME, Commands, key_legend
from ..sandboxed.status import Status

PROBE_NAME = ".checkpoint-watch-probe"
PROBE_SECONDS = 3.0
"""How long the probe's event may take before the watch decides events do not arrive."""

Event = tuple[str, str]
"""``("change", path)``, ``("key", k)``, ``("ready", "")``, ``("eof", "")``, ``("error", why)``."""
RunAll = Callable[[], CheckpointResult]
"""Evaluates every lab of the chapter (``grading.evaluate``)."""


class SourceFilter(watchfiles.DefaultFilter):
    """Python sources and the probe; editors' swap files and caches are ignored."""

    def __call__(self, change: watchfiles.Change, path: str) -> bool:
        wanted = path.endswith(".py") or _is_probe(path)
        return wanted and super().__call__(change, path)


def _is_probe(path: str) -> bool:
    return Path(path).name == PROBE_NAME


def file_events(
    folders: Sequence[Path], events: queue.Queue[Event], stop: threading.Event, force_polling: bool
) -> None:
    """Put every saved file of ``folders`` on ``events`` until ``stop`` (a thread's body)."""
    ready = False
    try:
        for changes in watchfiles.watch(
            *folders,
            watch_filter=SourceFilter(),
            stop_event=stop,
            step=50,
            rust_timeout=250,
            yield_on_timeout=True,
            raise_interrupt=False,
            force_polling=force_polling,
            poll_delay_ms=300,
        ):
            if not ready:
                ready = True
                events.put(("ready", ""))
            for _, path in sorted(changes):
                events.put(("change", path))
    except Exception as error:  # a thread: report it to the learner instead of dying silently
        events.put(("error", f"{type(error).__name__}: {error}"))


def key_events(stream: TextIO, events: queue.Queue[Event], single_keys: bool) -> None:
    """Put each key (a terminal) or each line's first character (anything else) on ``events``."""
    if single_keys:
        fd = stream.fileno()
        while data := os.read(fd, 1):
            events.put(("key", data.decode("utf-8", "replace").lower()))
    else:
        for line in stream:
            events.put(("key", (line.strip()[:1] or "\n").lower()))
    events.put(("eof", ""))


@contextlib.contextmanager
def single_key_input(stream: TextIO) -> Iterator[bool]:
    """Read a terminal key by key (no Enter needed) while inside; yields whether it does."""
    if not is_terminal(stream):
        yield False
        return
    import termios
    import tty

    fd = stream.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield True
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


@dataclass
class Probe:
    """A file written in the watch's own folder (``own_folder``, never one of the workspace's) to
    learn whether its change is reported."""

    folder: Path
    sent: float | None = None
    seen: bool = False

    @property
    def path(self) -> Path:
        return self.folder / PROBE_NAME

    def send(self) -> None:
        self.path.write_text(f"{time.time()}\n", encoding="utf-8")
        self.sent = time.monotonic()

    def settle(self) -> None:
        """Stop waiting for the probe's event (it came, or it is overdue)."""
        self.seen = True
        self.path.unlink(missing_ok=True)

    def overdue(self, seconds: float) -> bool:
        return self.sent is not None and not self.seen and time.monotonic() - self.sent > seconds


@contextlib.contextmanager
def own_folder(beside: Path | None) -> Iterator[Path]:
    """A fresh folder of the watch's own beside the workspace ``beside`` (on its file system),
    else in the system's temporary folder; removed with what is in it at the end."""
    made = None
    if beside is not None:
        with contextlib.suppress(OSError):  # a parent the learner cannot write to
            made = tempfile.mkdtemp(prefix=".checkpoint-watch-", dir=beside.parent)
    made = made or tempfile.mkdtemp(prefix="checkpoint-watch-")
    try:
        yield Path(made)
    finally:
        shutil.rmtree(made, ignore_errors=True)


@dataclass
class WatchLoop:
    """The latest verdict of every lab (each run evaluates the whole chapter, so the progress
    line is never stale) and the lab being worked on."""

    manifest: Manifest
    run: RunAll
    out: TextIO
    practice: str | None = None
    commands: Commands = BY_NAME
    style: Style = PLAIN
    latest: CheckpointResult | None = None
    current: Lab | None = None
    root: Path | None = None
    """The workspace whose hint record ``h`` adds to (None: the reference, nothing recorded)."""

    def say(self, *lines: str) -> None:
        for line in lines:
            print(line, file=self.out, flush=True)

    def check(self, shown: Sequence[Lab] = ()) -> CheckpointResult:
        """Evaluate every lab; print the ``shown`` labs' lines (all for none) and the grade line."""
        result = self.latest = self.run()
        wanted = {lab.id for lab in shown}
        width = counts_width(result.labs)
        for lab in result.labs:
            if not wanted or lab.lab.id in wanted:
                self.say(render_lab(lab, style=self.style, counts_width=width))
        problems = [_("problem: {problem}").format(problem=p) for p in result.problems]
        self.say(*render_not_run(result), *problems, *grade_lines(result.labs, whole=True))
        return result

    def start(self) -> None:
        """Run every lab once and settle on the lab given, or the first one that is not green."""
        result = self.check()
        if self.current is None:
            self.current = lab_to_work_on(self.manifest, result)
        self.announce()

    def announce(self) -> None:
        if self.current is None:
            after = render_after_green(self.manifest, self.practice, self.commands)
            self.say(*after, _("Saving a file re-runs every lab; q quits."))
            return
        lab = self.current
        now = _("Now: Lab {id} {title} · edit {files} · notebook {notebook}")
        files, notebook = _(", ").join(lab.files), f"notebooks/{lab.notebook}"
        self.say(now.format(id=lab.id, title=lab.title, files=files, notebook=notebook))

    def rerun(self) -> None:
        """Evaluate again; when the lab at hand turns green, move on to the next open lab."""
        lab = self.current
        result = self.check([lab] if lab is not None else [])
        known = result.lab(lab.id) if lab is not None else None
        if lab is not None and (known is None or known.status != Status.PASSED):
            if known is not None and known.status.broken:  # red: where help is, not the help
                self.say(hint_pointer(lab, self.opened(), "h"))
            return
        self.current = lab_to_work_on(self.manifest, result)
        if lab is not None and self.current != lab:
            self.say(self.style.status(Status.PASSED, _("Lab {id} passes.").format(id=lab.id)))
        self.announce()
        # the first failing line of the lab now at hand, when it fails (not just unwritten)
        if self.current is not None and (known := result.lab(self.current.id)) is not None:
            self.say(*render_first_failure(known))

    def key(self, key: str) -> bool:
        """Act on a key; False when it asks to quit."""
        if key == "q":
            return False
        if key == "h":
            if self.current is None:
                self.say(*render_after_green(self.manifest, self.practice, self.commands))
            else:
                self.say(*render_hint(self.open_hint(self.current), "h"))
        elif key == "n":
            self._skip()
        elif key in ("r", "\n"):
            self.rerun()
        else:
            self.say(_("keys: {keys}").format(keys=key_legend()))
        return True

    def opened(self) -> Opened:
        """The hint levels the workspace has opened (none where nothing is recorded)."""
        if self.root is None:
            return NONE_OPENED
        try:
            return read_hints(self.root, labs_by_id(self.manifest.labs))
        except (HintsError, OSError):
            return NONE_OPENED

    def open_hint(self, lab: Lab) -> Hint:
        """``lab``'s next hint level, recorded in the workspace (said so when it cannot be)."""
        if self.root is None:
            return next_hint(lab, NONE_OPENED)
        try:
            return open_next_hint(self.root, labs_by_id(self.manifest.labs), lab)
        except (HintsError, OSError) as error:
            self.say(_("The hint is not recorded: {error}").format(error=error))
            return next_hint(lab, NONE_OPENED)

    def _skip(self) -> None:
        labs = self.manifest.required_labs
        if self.current is None or self.current not in labs:
            self.say(_("Every lab passes; nothing to skip to."))
            return
        index = labs.index(self.current)
        if index + 1 == len(labs):
            self.say(_("Lab {id} is the last lab; r re-runs it.").format(id=self.current.id))
            return
        self.current = labs[index + 1]
        self.announce()
        self.check([self.current])


def serve(
    loop: WatchLoop,
    events: queue.Queue[Event],
    probe: Probe,
    fall_back: Callable[[], None],
    probe_seconds: float = PROBE_SECONDS,
) -> int:
    """Serve events until ``q``: saved files re-run the lab at hand, keys act at once."""
    polling = False

    def poll_instead(why: str) -> None:
        nonlocal polling
        if polling:
            loop.say(_("{why} Press r (or Enter) to re-run by hand.").format(why=why))
            return
        polling = True
        loop.say(
            _(
                "{why} Watching by polling instead; if a save is still not picked up, press r "
                "(or Enter) to re-run by hand."
            ).format(why=why)
        )
        fall_back()

    loop.start()
    while True:
        if probe.overdue(probe_seconds):
            probe.settle()
            poll_instead(
                _(
                    "No file change events arrive from {folder} (a file system without change "
                    "notifications?)."
                ).format(folder=probe.folder)
            )
        try:
            kind, value = events.get(timeout=0.1)
        except queue.Empty:
            continue
        if kind == "ready" and probe.sent is None:
            try:
                probe.send()
            except OSError as error:
                probe.seen = True
                loop.say(
                    _(
                        "Cannot test for file events ({error}); if a save is not picked up, "
                        "press r (or Enter) to re-run by hand."
                    ).format(error=error)
                )
        elif kind == "change" and _is_probe(value):
            if not probe.seen:
                probe.settle()
                loop.say(_watching(loop))
        elif kind == "change":
            saved = [value, *_drain_changes(events)]
            names = _(", ").join(dict.fromkeys(Path(p).name for p in saved))
            loop.say(_("saved {names}").format(names=names))
            loop.rerun()
        elif kind == "key" and not loop.key(value):
            return 0
        elif kind == "eof":
            loop.say(_("(no more key input; saving a file still re-runs, Ctrl-C stops)"))
        elif kind == "error":
            poll_instead(_("The file watcher stopped ({why}).").format(why=value))


def _watching(loop: WatchLoop) -> str:
    if loop.current is None:
        every = _("File changes are picked up: save a file to re-run every lab. Keys: {keys}")
        return every.format(keys=key_legend())
    one = _("File changes are picked up: save a file to re-run Lab {id}. Keys: {keys}")
    return one.format(id=loop.current.id, keys=key_legend())


def _drain_changes(events: queue.Queue[Event]) -> list[str]:
    """Further saves already queued (an editor writes several files at once): one run for all."""
    queued: list[Event] = []
    with contextlib.suppress(queue.Empty):
        while True:
            queued.append(events.get_nowait())
    saves = [value for kind, value in queued if kind == "change" and not _is_probe(value)]
    for kind, value in queued:
        if kind != "change" or _is_probe(value):
            events.put((kind, value))
    return saves


def watch(
    loop: WatchLoop,
    folder: Path,
    stdin: TextIO = sys.stdin,
    probe_seconds: float = PROBE_SECONDS,
    beside: Path | None = None,
) -> int:
    """Watch ``folder`` and serve keys from ``stdin`` until ``q`` (the I/O around ``serve``);
    the probe goes in a folder of the watch's own beside the workspace ``beside``."""
    events: queue.Queue[Event] = queue.Queue()
    stops: list[threading.Event] = []
    with own_folder(beside) as probes:
        probe = Probe(probes)

        def start_watcher(force_polling: bool) -> None:
            for old in stops:
                old.set()
            stop = threading.Event()
            stops.append(stop)
            args = ((folder, probes), events, stop, force_polling)
            threading.Thread(target=file_events, args=args, daemon=True, name="watch").start()

        watching = _("Watching {folder} for saved changes · keys: {keys}")
        loop.say(watching.format(folder=folder, keys=key_legend()))
        start_watcher(False)
        try:
            with single_key_input(stdin) as single:
                keys = (stdin, events, single)
                threading.Thread(target=key_events, args=keys, daemon=True, name="keys").start()
                return serve(loop, events, probe, lambda: start_watcher(True), probe_seconds)
        finally:
            for stop in stops:
                stop.set()
