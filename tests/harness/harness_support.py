"""Helpers for the harness's own tests: running the CLIs and editing workspace files."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from mutants import Mutant
from solutions import solve_lab

from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.harness.results import CheckpointResult, ProbeSummary
from course.harness.runner import Limits
from course.harness.workspace import create_workspace
from course.locale import ENVIRONMENT

CHAPTER = "11"
DEFAULT_LIMITS = Limits()
QUICK = Limits(test_seconds=2.0)
"""Short per-test limit for runs that expect timeouts (the focused tests take milliseconds)."""

MakeWorkspace = Callable[[str], Path]
"""The ``make_workspace`` fixture: a fresh practice workspace named by its argument."""

Check = Callable[..., CheckpointResult]
"""The ``check`` fixture: run the checkpoint on the reference or a workspace."""


def cli(
    tool: str, *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python3 -m course.cli.<tool> ARGS`` the way a user would, capturing its output.

    ``env`` adds to (or, with an empty value, removes from) the inherited environment.
    """
    environment = dict(os.environ)
    for key, value in (env or {}).items():
        if value:
            environment[key] = value
        else:
            environment.pop(key, None)
    return subprocess.run(
        [sys.executable, "-m", f"course.cli.{tool}", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@contextlib.contextmanager
def enterable_folder() -> Iterator[Path]:
    """A scratch folder in the system's temporary folder that other users may enter (never
    list), removed afterwards: pytest keeps its own folders its user's alone, and makes them
    so again whenever another pytest run starts, so another user cannot count on reaching them."""
    folder = Path(tempfile.mkdtemp(prefix="course-test-"))
    folder.chmod(0o711)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def lab_verdicts(result: CheckpointResult) -> dict[str, tuple[str, int, int, int, int]]:
    """Each lab's (status, passed, tests, agreed, cases): what every door must show alike."""
    return {
        lab.lab.id: (str(lab.status), lab.passed, lab.total, lab.agreed, lab.cases)
        for lab in result.labs
    }


def watch_once(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``checkpoint 11 --watch ARGS`` in ``workspace``, quit at once with ``q``: its start."""
    return subprocess.run(
        [sys.executable, "-m", "course.cli.checkpoint", CHAPTER, "--watch", *args],
        cwd=workspace,
        input="q\n",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def roster_workspace(manifest: Manifest, roster: Path, name: str, solved: int = 0) -> Path:
    """A workspace ``roster/name`` with the first ``solved`` required labs done."""
    folder = roster / name
    create_workspace(manifest, kit_root(), folder)
    for lab in manifest.required_labs[:solved]:
        solve_lab(manifest, kit_root(), folder, lab.id)
    return folder


def replace_in(path: Path, old: str, new: str) -> None:
    """Edit a workspace file, insisting that ``old`` occurs exactly once."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path.name}: expected one {old!r}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def solved_workspace(manifest: Manifest, kit: Path, make: MakeWorkspace, name: str) -> Path:
    """A fresh workspace with every lab's reference functions copied in."""
    workspace = make(name)
    for lab in manifest.labs:
        solve_lab(manifest, kit, workspace, lab.id)
    return workspace


HANGS = "while True: __import__('time').sleep(0.05)"
"""A first line for ``sabotage`` that never returns: it waits rather than spins, so a test that
only needs a timeout verdict costs the machine nothing while the limit runs out (the tests of
the limits themselves, ``test_runner_limits.py`` and the in-kernel and worker checks, spin)."""


def sabotage(workspace: Path, module: str, function: str, first_line: str) -> None:
    """Make ``function`` of the learner's ``module`` start with ``first_line``."""
    replace_in(
        workspace / "pi_course" / f"{module}.py",
        f"def {function}(",
        f"def {function}(*args, **kwargs):\n    {first_line}\n\n\ndef _was_{function}(",
    )


def processes_with(token: str) -> list[int]:
    """Pids of the processes whose command line holds ``token`` (what an attack left behind)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if token.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
    return found


def kill_processes_with(token: str) -> None:
    """End, by pid, each process an escaped attack left running (the suite leaves none)."""
    for pid in processes_with(token):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def words(text: str) -> str:
    """``text`` with every run of whitespace one space (terminals wrap long lines), and
    without the ``E`` pytest puts before each line of an exception's message."""
    return " ".join(re.sub(r"(?m)^E +", "", text).split())


def plain_pytest(workspace: Path, select: str) -> subprocess.CompletedProcess[str]:
    """``python -m pytest -k SELECT`` in the workspace, as LEARNING.md says to run one lab."""
    env = {k: v for k, v in os.environ.items() if k not in ("COURSE_LAB_PACKAGE", "PYTEST_ADDOPTS")}
    env[ENVIRONMENT] = "en"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rf", "-k", select],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def with_mutant(manifest: Manifest, kit: Path, make: MakeWorkspace, mutant: Mutant) -> Path:
    """A workspace with every lab solved, then the mutant's mistake made in it."""
    workspace = make(f"mutant-{mutant.name}")
    for lab in manifest.labs:
        solve_lab(manifest, kit, workspace, lab.id)
    replace_in(workspace / "pi_course" / mutant.module, mutant.old, mutant.new)
    return workspace


def failure_ids(summary: ProbeSummary) -> list[str]:
    """The case ids the summary names, from each failure's first line (``… (11.3#007): …``)."""
    found = [re.search(r"\((\d+\.\w+#[\w-]+)[,)]", f.splitlines()[0]) for f in summary.failures]
    return [m.group(1) for m in found if m is not None]


def essentials(report: dict[str, Any], lab: str | None = None) -> dict[str, Any]:
    """What must agree: per lab, status and counts; per test, its status; the failing cases.
    With ``lab``, that lab's only (a report of several labs, read one lab at a time)."""
    if lab is not None:
        report = {
            "labs": [each for each in report["labs"] if each["id"] == lab],
            "tests": [test for test in report["tests"] if test["lab"] == lab],
        }
    labs = {
        lab["id"]: {
            key: lab[key] for key in ("status", "passed", "total", "agreed", "cases", "earned")
        }
        | {
            "named cases": [
                line.split("\n")[0] for line in lab.get("probes", {}).get("failures", [])
            ]
        }
        for lab in report["labs"]
    }
    tests = {test["name"]: test["status"] for test in report["tests"]}
    return {"labs": labs, "tests": tests}


def on_the_command_line(
    workspace: Path, lab: str, seconds: float, tmp_path: Path
) -> dict[str, Any]:
    return essentials(command_line_report(workspace, [lab], seconds, tmp_path))


def command_line_report(
    workspace: Path, labs: Sequence[str], seconds: float, tmp_path: Path
) -> dict[str, Any]:
    """``checkpoint 11 --lab ID… --practice DIR --json FILE --timeout SECONDS``: the report."""
    saved = tmp_path / f"cli-{'-'.join(labs)}.json"
    done = cli(
        "checkpoint",
        "11",
        *(arg for lab in labs for arg in ("--lab", lab)),
        "--practice",
        str(workspace),
        "--json",
        str(saved),
        "--timeout",
        f"{seconds:g}",
    )
    assert saved.exists(), f"checkpoint wrote no JSON:\n{done.stdout}\n{done.stderr}"
    report: dict[str, Any] = json.loads(saved.read_text(encoding="utf-8"))
    return report
