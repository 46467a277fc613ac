"""A child process in the browser: a Pyodide in a Web Worker, kept warm, ended when it overruns.

``WorkerChild`` stands where ``subprocess.Popen`` stands for the supervisor: a Pyodide in a
worker gets the graded copy and the grader's library, and runs ``python -m MODULE ARGS``. The
files the parent watches are devices there whose writes are posted back and appended to the
parent's copy; the parent waits with ``pyodide.ffi.run_sync`` (JavaScript Promise Integration),
while the worker's messages arrive. ``kill`` terminates the worker, so an endless loop ends
however it is written (a bare ``except:`` or a C loop) and the page keeps working; a fresh worker
boots in its place. A worker that ran its child to the end is cleaned (the run's modules, state
and files gone) and serves the next child (``WarmWorkers``): a check boots no Pyodide but the
first. The worker sees only the graded copy, never the learner's files or the kernel's modules.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import count
from pathlib import Path
from typing import Any, Protocol

from ..locale import gettext as _
from ..sandboxed.untrusted import safe_text

WORKER_PACKAGES = ("pytest", "hypothesis")
"""What the focused tests and the probe driver import besides the graded copy and the library."""
STARTUP_SECONDS = 60.0  # a worker's Pyodide boot, after which the child failed to start

BOOT = """
import builtins, os, runpy, shutil, sys, traceback, warnings

MISSING = object()

def run(argv, env, cwd):
    os.environ.clear()
    os.environ.update(env)
    sys.path[:0] = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.chdir(cwd)
    sys.argv = [argv[1], *argv[2:]]
    try:
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    except SystemExit as stop:
        code = stop.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException:
        traceback.print_exc()
        return 1
    return 0

def files_under(trees):
    found = {}
    for tree in trees:
        for folder, folders, names in os.walk(tree):
            for name in folders + names:
                path = os.path.join(folder, name)
                info = os.lstat(path)
                kept = os.path.isdir(path) and not os.path.islink(path)
                found[path] = (
                    (info.st_mode,) if kept else (info.st_mode, info.st_size, info.st_mtime_ns)
                )
    return found

def warm(trees, preloaded):
    global BEFORE
    for name in preloaded:
        __import__(name)
    BEFORE = {
        "modules": dict(sys.modules),
        "namespaces": {
            name: dict(vars(module)) for name, module in sys.modules.items()
            if isinstance(getattr(module, "__dict__", None), dict) and vars(module) is not globals()
        },
        "lists": {
            id(target): (target, list(target))
            for target in (sys.path, sys.meta_path, sys.path_hooks, sys.argv, warnings.filters)
        },
        "environ": dict(os.environ),
        "cwd": os.getcwd(),
        "limits": (sys.getrecursionlimit(), sys.get_int_max_str_digits()),
        "trees": tuple(trees),
        "files": files_under(trees),
    }

def clean():
    for name in set(sys.modules) - set(BEFORE["modules"]):
        del sys.modules[name]
    sys.modules.update(BEFORE["modules"])
    for name, kept in BEFORE["namespaces"].items():
        namespace = vars(BEFORE["modules"][name])
        for key in [key for key in namespace if key not in kept]:
            del namespace[key]
        for key, value in kept.items():
            if namespace.get(key, MISSING) is not value:
                namespace[key] = value
    for target, kept in BEFORE["lists"].values():
        target[:] = kept
    sys.path_importer_cache.clear()
    os.environ.clear()
    os.environ.update(BEFORE["environ"])
    os.chdir(BEFORE["cwd"])
    sys.setrecursionlimit(BEFORE["limits"][0])
    sys.set_int_max_str_digits(BEFORE["limits"][1])
    sys.settrace(None)
    sys.setprofile(None)
    now, kept = files_under(BEFORE["trees"]), BEFORE["files"]
    for path in sorted(set(now) - set(kept), reverse=True):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.lexists(path):
            os.unlink(path)
    return all(now[path] == kept[path] for path in kept if path in now) and set(kept) <= set(now)
"""
"""The worker's Python: ``run`` runs ``python -m`` as a child would, from a fresh namespace
(nothing of the kit imported before the child's own path is in place); ``warm`` notes the state
of a booted worker, ``clean`` puts it back after a run (see ``docs/lite.md``): the modules the
run imported are forgotten, the names it rebound in the modules loaded before are bound again,
``sys``'s lists, the environment and the folder restored, and the files it left removed. It
answers whether the worker may serve again: not if a file there before the run was changed."""

PRELOADED = ("pytest", "hypothesis")
"""Imported once when a worker boots (part of the state every run starts from): each run of a
warm worker would otherwise import them again."""


def worker_trees() -> list[str]:
    """The folders of a worker's file system a run may write to, as this kernel's Pyodide (the
    worker's) has them: the graded copy is laid under the temporary folder; what a run leaves
    in any of them is removed after it."""
    return [tempfile.gettempdir(), str(Path.home()), sysconfig.get_paths()["purelib"]]


WORKER = """
const post = (message) => self.postMessage(message);
let booted = null;
let current = null;
let queue = Promise.resolve();
const say = (text) => post({ kind: "output", id: current, text: text + "\\n" });

async function boot(data) {
  const { loadPyodide } = await import(data.indexURL + "pyodide.mjs");
  const py = await loadPyodide({
    indexURL: data.indexURL, packages: data.packages, stdout: say, stderr: say,
  });
  const scope = py.toPy({});
  py.runPython(data.boot, { globals: scope });
  scope.get("warm")(py.toPy(data.trees), py.toPy(data.preloaded));
  return { py, scope };
}

async function serve(data) {
  current = data.id;
  let py;
  try {
    booted = booted || boot(data);
    const worker = await booted;
    py = worker.py;
    if (!data.argv) return;  // only booted, ahead of the next run
    const FS = py.FS;
    for (const [path, bytes] of Object.entries(data.files)) {
      FS.mkdirTree(path.slice(0, path.lastIndexOf("/")) || "/");
      FS.writeFile(path, bytes);
    }
    data.streamed.forEach((path, index) => {
      const device = FS.makedev(64, index);
      FS.registerDevice(device, {
        open() {}, close() {}, read() { return 0; }, llseek() { return 0; },
        write(stream, buffer, offset, length) {
          post({ kind: "write", id: data.id, path, bytes: buffer.slice(offset, offset + length) });
          return length;
        },
      });
      FS.mkdirTree(path.slice(0, path.lastIndexOf("/")) || "/");
      FS.mkdev(path, device);
    });
    post({ kind: "ready", id: data.id });
    const code = worker.scope.get("run")(py.toPy(data.argv), py.toPy(data.env), data.cwd);
    const reusable = Boolean(worker.scope.get("clean")());
    post({ kind: "exit", id: data.id, code, reusable });
  } catch (error) {
    booted = Promise.reject(error);  // a worker that failed serves no more runs
    booted.catch(() => {});
    const status = error && error.status;  // os._exit ends the runtime with an ExitStatus
    if (typeof status === "number") post({ kind: "exit", id: data.id, code: status });
    else post({ kind: "error", id: data.id, message: String(error && error.message || error) });
  }
}

self.onmessage = ({ data }) => { queue = queue.then(() => serve(data)); };
"""
"""The worker's script (a module worker made from a Blob URL): it boots Pyodide once, then
serves one run per message, in turn, cleaning up after each."""

CHANNEL = """
(source) => {
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  const worker = new Worker(url, { type: "module" });
  URL.revokeObjectURL(url);
  const queue = [];
  let wake = null;
  const arrive = (message) => { queue.push(message); if (wake) { wake(); wake = null; } };
  worker.onmessage = ({ data }) => arrive(data);
  worker.onerror = (event) => arrive({ kind: "error", message: String(event.message) });
  return {
    start: (message) => worker.postMessage(message),
    next: (ms) => new Promise((resolve) => {
      if (queue.length) return resolve(true);
      const timer = setTimeout(() => { wake = null; resolve(false); }, ms);
      wake = () => { clearTimeout(timer); resolve(true); };
    }),
    take: () => queue.splice(0, queue.length),
    stop: () => worker.terminate(),
  };
}
"""
"""The kernel's end of one worker (not ``send``: a ``JsProxy`` reserves it for generators)."""


class Channel(Protocol):
    """The kernel's end of one worker, as ``CHANNEL`` makes it (a test gives its own)."""

    def start(self, message: Mapping[str, Any]) -> None: ...
    def next(self, seconds: float) -> None:
        """Return once a message has arrived or ``seconds`` have passed."""

    def take(self) -> list[dict[str, Any]]: ...
    def stop(self) -> None: ...


def in_a_browser() -> bool:
    """Whether this is Pyodide, which starts no child process: its children are Web Workers,
    or where none can be waited for, the run is in this process
    (``grading/verdict/inprocess.py``)."""
    return sys.platform == "emscripten"


def available() -> bool:
    """Whether this is a browser whose kernel can start a worker and wait for it."""
    if not in_a_browser():
        return False
    try:
        import js
        from pyodide.ffi import can_run_sync
    except ImportError:
        return False
    return bool(can_run_sync()) and hasattr(js, "Worker")


class BrowserChannel:
    """``CHANNEL`` in this kernel, waited on with ``run_sync``."""

    def __init__(self) -> None:
        from pyodide.code import run_js

        self._end = run_js(CHANNEL)(WORKER)

    def start(self, message: Mapping[str, Any]) -> None:
        import js
        import pyodide_js
        from pyodide.ffi import to_js

        # the worker loads the Pyodide this kernel was loaded from
        asked = dict(message) | {"indexURL": str(pyodide_js._api.config.indexURL)}
        self._end.start(to_js(asked, dict_converter=js.Object.fromEntries))

    def next(self, seconds: float) -> None:
        from pyodide.ffi import run_sync

        run_sync(self._end.next(max(1, round(seconds * 1000))))

    def take(self) -> list[dict[str, Any]]:
        return list(self._end.take().to_py())

    def stop(self) -> None:
        self._end.stop()


class WarmWorkers:
    """The worker kept warm between runs: at most one, idle (booted, or booting ahead of the
    next run). A run takes it, or a new one; gives it back when it ended clean; a run ended
    for overrunning stops its worker, and a fresh one boots in its place."""

    def __init__(self) -> None:
        self.idle: Channel | None = None

    def take(self) -> Channel:
        channel, self.idle = self.idle, None
        return channel if channel is not None else BrowserChannel()

    def give(self, channel: Channel) -> None:
        if self.idle is not None:
            self.idle.stop()
        self.idle = channel

    def replace(self) -> None:
        """Boot a fresh worker now, while the run goes on without it."""
        channel = self.take()
        channel.start(boot_message())
        self.give(channel)

    def end(self) -> None:
        """Stop the idle worker (the next run boots its own)."""
        if self.idle is not None:
            self.idle.stop()
            self.idle = None


WARM = WarmWorkers()
RUN_IDS = count(1)


def boot_message() -> dict[str, Any]:
    """What a worker needs to boot: with no ``argv``, a message asks only that."""
    return {
        "id": 0,
        "packages": list(WORKER_PACKAGES),
        "boot": BOOT,
        "trees": worker_trees(),
        "preloaded": list(PRELOADED),
    }


def bundle(roots: Iterable[Path], skip: Sequence[Path] = ()) -> dict[str, bytes]:
    """Every file under ``roots`` (their ``__pycache__`` left out), by absolute path."""
    files: dict[str, bytes] = {}
    for root in roots:
        for path in sorted(root.rglob("*")) if root.is_dir() else ():
            if path.is_file() and "__pycache__" not in path.parts and path not in skip:
                files[str(path)] = path.read_bytes()
    return files


def graded_roots(env: Mapping[str, str], cwd: Path) -> list[Path]:
    """The folders a child reads its code from: its own and its ``PYTHONPATH`` (those of this
    Python's installation left out: the worker's Pyodide has its own)."""
    libraries = ("stdlib", "platstdlib", "purelib", "platlib")
    installed = {Path(sysconfig.get_paths()[name]) for name in libraries}
    paths = [cwd] + [Path(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    kept: list[Path] = []
    for path in paths:
        inside = any(path == base or base in path.parents for base in installed)
        if path.is_dir() and not inside and path not in kept:
            kept.append(path)
    return kept


class KeptOutput:
    """A child's output: its last ``limit`` bytes, safe to show (learner code writes it)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()

    def keep(self, chunk: bytes) -> None:
        self.kept += chunk
        if len(self.kept) > 2 * self.limit:
            del self.kept[: len(self.kept) - self.limit]

    def text(self) -> str:
        return safe_text(bytes(self.kept[-self.limit :]).decode("utf-8", "replace"), self.limit)


class WorkerChild(KeptOutput):
    """``python -m ...`` in a Web Worker, as the ``Popen`` the supervisor expects; its writes to
    ``streamed`` are appended to them. Made once its Pyodide is up (the boot, like a process's
    ``exec``, is not the child's start-up), or with ``returncode`` set."""

    pid = 0

    def __init__(
        self,
        command: Sequence[str],
        env: Mapping[str, str],
        cwd: Path,
        streamed: Sequence[Path],
        output_bytes: int,
        channel: Channel | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if list(command[1:2]) != ["-m"]:
            raise ValueError(f"a worker runs `python -m MODULE ...`, not {list(command)!r}")
        super().__init__(output_bytes)
        self.args = list(command)
        self.returncode: int | None = None
        self.ready = False
        self.streamed = {str(path): path for path in streamed}
        self.id = next(RUN_IDS)
        self._kept_warm = channel is None
        self._channel: Channel | None = WARM.take() if channel is None else channel
        files = bundle(graded_roots(env, cwd), skip=streamed)
        self._channel.start(
            boot_message()
            | {
                "id": self.id,
                "files": files,
                "streamed": list(self.streamed),
                "argv": self.args[1:],
                "env": dict(env),
                "cwd": str(cwd),
            }
        )
        ends = clock() + STARTUP_SECONDS
        while not self.ready and self.returncode is None:
            left = ends - clock()
            if left <= 0:
                said = _("the worker's Python did not start within {seconds}s")
                self._say(said.format(seconds=f"{STARTUP_SECONDS:g}") + "\n")
                self.kill()
                break
            self._channel.next(left)
            self._receive()

    def _say(self, text: str) -> None:
        self.keep(text.encode("utf-8", "replace"))

    def _receive(self) -> None:
        if self._channel is None:
            return
        for message in self._channel.take():
            if message.get("id", self.id) != self.id:
                continue  # what an earlier run of a warm worker said last
            kind = message.get("kind")
            if kind == "ready":
                self.ready = True
            elif kind == "write" and str(message.get("path")) in self.streamed:
                with open(self.streamed[str(message["path"])], "ab") as sink:
                    sink.write(bytes(message.get("bytes", b"")))
            elif kind == "output":
                self._say(str(message.get("text", "")))
            elif kind == "exit" and self.returncode is None:
                code = message.get("code")
                self.returncode = code if isinstance(code, int) else 1
                self._let_go(reusable=bool(message.get("reusable")))
                return
            elif kind == "error" and self.returncode is None:
                self._say(f"{message.get('message', '')}\n")
                self.returncode = 1
                self._let_go(reusable=False)
                return

    def _let_go(self, reusable: bool) -> None:
        """Done with the worker: kept warm for the next run if it ended clean, else stopped."""
        channel, self._channel = self._channel, None
        if channel is None:
            return
        if reusable and self._kept_warm:
            WARM.give(channel)
        else:
            channel.stop()

    def poll(self) -> int | None:
        self._receive()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait until the child ends (at most ``timeout`` seconds: then ``TimeoutExpired``)."""
        if self.poll() is None and self._channel is not None:
            self._channel.next(timeout if timeout is not None else STARTUP_SECONDS)
        if (code := self.poll()) is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        return code

    def kill(self) -> None:
        """Terminate the worker: whatever ran in it stops at once. A warm worker's place is
        taken by a fresh one, booting meanwhile. A child that ended has let its worker go."""
        if self.returncode is not None:
            return
        self.returncode = -9
        self._let_go(reusable=False)
        if self._kept_warm:
            WARM.replace()
