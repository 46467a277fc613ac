"""A throwaway JupyterLab on 127.0.0.1: private config, no token, stopped by process group."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

START_TIMEOUT = 90.0
"""Seconds the server may take to answer /api/status."""
STOP_TIMEOUT = 15.0
"""Seconds the server may take to shut its kernels down after SIGTERM before SIGKILL."""

LAB_SETTINGS: dict[str, dict[str, dict[str, Any]]] = {
    # Every cell stays in the DOM, so off-screen cells can be found and read.
    "@jupyterlab/notebook-extension": {"tracker": {"windowingMode": "none"}},
    # No news prompt, no update check, no toast over the page.
    "@jupyterlab/apputils-extension": {
        "notification": {"fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True}
    },
}


class LabServerError(RuntimeError):
    """The server did not come up; the message ends with the tail of its log."""


@dataclass(frozen=True)
class LabServer:
    """A running server: where it listens, what it serves and where it logs."""

    url: str
    root_dir: Path
    log_file: Path
    process: subprocess.Popen[bytes]

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of the server's log."""
        return tail(self.log_file, lines)


def tail(path: Path, lines: int) -> str:
    """The last ``lines`` lines of a text file ('' when it does not exist)."""
    if not path.is_file():
        return ""
    return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def write_lab_settings(settings_dir: Path) -> None:
    """User settings for a quiet, fully rendered notebook (see ``LAB_SETTINGS``)."""
    for extension, plugins in LAB_SETTINGS.items():
        for plugin, values in plugins.items():
            target = settings_dir / extension / f"{plugin}.jupyterlab-settings"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(values, indent=2), encoding="utf-8")


def private_environment(base: Path) -> dict[str, str]:
    """The current environment with Jupyter's and IPython's user folders moved under ``base``.

    The kernelspecs of this Python (``sys.prefix``) stay reachable; a developer's own
    configuration, settings and kernels do not leak in.
    """
    env = dict(os.environ)
    for name, folder in {
        "JUPYTER_CONFIG_DIR": "config",
        "JUPYTER_DATA_DIR": "data",
        "JUPYTER_RUNTIME_DIR": "runtime",
        "IPYTHONDIR": "ipython",
    }.items():
        path = base / folder
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    env.pop("JUPYTER_PATH", None)
    env.pop("JUPYTER_CONFIG_PATH", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def lab_command(root_dir: Path, port: int, settings_dir: Path, workspaces_dir: Path) -> list[str]:
    """``jupyter lab`` on 127.0.0.1:``port`` without a token, a browser or announcements."""
    return [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",
        f"--ServerApp.root_dir={root_dir}",
        f"--LabApp.user_settings_dir={settings_dir}",
        f"--LabApp.workspaces_dir={workspaces_dir}",
        "--LabApp.news_url=None",
    ]


def wait_for_status(server: LabServer, timeout: float = START_TIMEOUT) -> None:
    """Return once /api/status answers; raise if the process exits or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        code = server.process.poll()
        if code is not None:
            raise LabServerError(
                f"jupyter lab exited with status {code} before answering; log:\n"
                + server.log_tail()
            )
        try:
            with urllib.request.urlopen(f"{server.url}api/status", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise LabServerError(
                f"jupyter lab did not answer {server.url}api/status within {timeout:g} s; log:\n"
                + server.log_tail()
            )
        time.sleep(0.25)


def stop(process: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM the server's process group (it shuts its kernels down), SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def running_lab(base: Path) -> Iterator[LabServer]:
    """A server serving ``base / "notebooks"``, stopped on exit whatever happened."""
    root_dir = base / "notebooks"
    settings_dir = base / "lab-settings"
    root_dir.mkdir(parents=True, exist_ok=True)
    write_lab_settings(settings_dir)
    port = free_port()
    log_file = base / "jupyterlab.log"
    with log_file.open("wb") as log:
        process = subprocess.Popen(
            lab_command(root_dir, port, settings_dir, base / "lab-workspaces"),
            cwd=root_dir,
            env=private_environment(base),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = LabServer(f"http://127.0.0.1:{port}/", root_dir, log_file, process)
    try:
        wait_for_status(server)
        yield server
    finally:
        stop(process)
