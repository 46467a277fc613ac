"""A child process in the browser: a second Pyodide in a Web Worker, ended when it overruns.

``WorkerChild`` stands where ``subprocess.Popen`` stands for the supervisor: a fresh Pyodide in a
worker gets the graded copy and the grader's library, and runs ``python -m MODULE ARGS``. The
files the parent watches are devices there whose writes are posted back and appended to the
parent's copy; the parent waits with ``pyodide.ffi.run_sync`` (JavaScript Promise Integration),
while the worker's messages arrive. ``kill`` terminates the worker, so an endless loop ends
however it is written (a bare ``except:`` or a C loop) and the page keeps working. The worker
sees only the graded copy, never the learner's files or the kernel's modules.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..locale import gettext as _
from ..sandboxed.untrusted import safe_text

WORKER_PACKAGES = ("pytest", "hypothesis")
"""What the focused tests and the probe driver import besides the graded copy and the library."""
STARTUP_SECONDS = 60.0  # a worker's Pyodide boot, after which the child failed to start

BOOT = """
import os, runpy, sys, traceback

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
"""
"""``python -m`` as a child would run it, from a fresh namespace (nothing of the kit imported
before the child's own path is in place)."""

WORKER = """
const post = (message) => self.postMessage(message);
self.onmessage = async ({ data }) => {
  let py;
  try {
    const { loadPyodide } = await import(data.indexURL + "pyodide.mjs");
    const say = (text) => post({ kind: "output", text: text + "\\n" });
    py = await loadPyodide({
      indexURL: data.indexURL, packages: data.packages, stdout: say, stderr: say,
    });
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
          post({ kind: "write", path, bytes: buffer.slice(offset, offset + length) });
          return length;
        },
      });
      FS.mkdirTree(path.slice(0, path.lastIndexOf("/")) || "/");
      FS.mkdev(path, device);
    });
    post({ kind: "ready" });
    const scope = py.toPy({});
    py.runPython(data.boot, { globals: scope });
    const code = scope.get("run")(py.toPy(data.argv), py.toPy(data.env), data.cwd);
    post({ kind: "exit", code });
  } catch (error) {
    const status = error && error.status;  // os._exit ends the runtime with an ExitStatus
    if (typeof status === "number") post({ kind: "exit", code: status });
    else post({ kind: "error", message: String(error && error.message || error) });
  }
};
"""
"""The worker's script (a module worker made from a Blob URL)."""

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
    or where none can be waited for, the run is in this process (``grading/inprocess.py``)."""
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
        self._channel = channel if channel is not None else BrowserChannel()
        files = bundle(graded_roots(env, cwd), skip=streamed)
        self._channel.start(
            {
                "packages": list(WORKER_PACKAGES),
                "files": files,
                "streamed": list(self.streamed),
                "boot": BOOT,
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
        for message in self._channel.take():
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
            elif kind == "error" and self.returncode is None:
                self._say(f"{message.get('message', '')}\n")
                self.returncode = 1

    def poll(self) -> int | None:
        self._receive()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait until the child ends (at most ``timeout`` seconds: then ``TimeoutExpired``)."""
        if self.poll() is None:
            self._channel.next(timeout if timeout is not None else STARTUP_SECONDS)
        if (code := self.poll()) is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
        return code

    def kill(self) -> None:
        """Terminate the worker: whatever ran in it stops at once."""
        self._channel.stop()
        if self.returncode is None:
            self.returncode = -9
