"""No learner harms a classmate graded beside it, where no cgroup caps a run (issue 44, item 5).

Without a pids cgroup the process cap is RLIMIT_NPROC, which the kernel counts per host user,
threads included. Before, every run of a root grader was host user 65534 and its cap was what
that user ran (counted in processes) plus the run's share: a learner who kept starting threads
made the next learner's bubblewrap fail ("Creating new namespace failed: Resource temporarily
unavailable"), 5 runs of 5. Each run at a time now is a host user of its own (``slots.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from course.grading.confinement import cgroups, slots
from course.grading.confinement.sandbox import (
    Confinement,
    SandboxLimits,
    host_user_check,
    open_confinement,
    rlimits,
    sandbox_status,
)
from course.harness.kit import kit_root

THREADS = """
import threading, time
started = 0
try:
    for _ in range(200):
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        started += 1
except RuntimeError:
    pass
print("started", started, flush=True)
time.sleep(60)
"""
"""A learner that starts threads until its cap stops it, then holds them."""
HONEST = """
import threading
workers = [threading.Thread(target=sum, args=([1, 2],)) for _ in range(6)]
for worker in workers:
    worker.start()
for worker in workers:
    worker.join()
print("graded")
"""
"""A classmate whose code (or test runner) uses a few threads, well within its own cap."""


@pytest.fixture
def no_cgroups(monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented fallback: no writable cgroup and no systemd scope, so RLIMIT_NPROC."""
    monkeypatch.setattr(cgroups, "create", lambda memory, processes: None)
    monkeypatch.setattr(cgroups, "systemd_scope", lambda: (None, "no systemd here"))


def confined(tmp_path: Path, name: str) -> Confinement:
    bwrap, why = sandbox_status(kit_root(), ("course",))
    assert bwrap is not None, f"the sandbox must start here: {why}"
    copy, run = tmp_path / name / "copy", tmp_path / name / "run"
    copy.mkdir(parents=True)
    run.mkdir()
    return open_confinement(
        sandboxed=True,
        graded=(copy,),
        python_path=(copy,),
        hidden=(kit_root(),),
        limits=SandboxLimits(processes=16),
        run_directory=run,
        bwrap=bwrap,
    )


@pytest.fixture
def two_runs(tmp_path: Path, no_cgroups: None) -> Iterator[tuple[Confinement, Confinement]]:
    if os.geteuid() != 0 or host_user_check()[0] is None:
        pytest.skip("only a root grader that starts the sandbox as another user has this fallback")
    first = confined(tmp_path, "threads")
    try:
        second = confined(tmp_path, "honest")
        try:
            yield first, second
        finally:
            second.close()
    finally:
        first.close()


def test_a_learner_starting_threads_never_fails_a_classmates_sandbox(
    two_runs: tuple[Confinement, Confinement],
) -> None:
    threads, honest = two_runs
    assert threads.cgroup is None and honest.cgroup is None, "the rlimit fallback"
    command, env = threads.wrap([sys.executable, "-c", textwrap.dedent(THREADS)], {}, ())
    hog = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert hog.stdout is not None
        said = hog.stdout.readline()
        assert said.startswith("started "), said
        command, env = honest.wrap([sys.executable, "-c", textwrap.dedent(HONEST)], {}, ())
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stdout) == (0, "graded\n"), done.stderr
    finally:
        threads.kill()
        hog.wait(timeout=30)
    assert int(said.split()[1]) < 16, "the thread starter is still held to its own cap"


def test_each_run_at_a_time_is_a_host_user_of_its_own_and_gives_it_back(
    two_runs: tuple[Confinement, Confinement],
) -> None:
    first, second = two_runs
    assert first.host is not None and second.host is not None
    assert first.own_user and second.own_user
    assert first.host[1] != second.host[1]
    assert {first.host[1], second.host[1]} <= set(slots.SLOT_UIDS)
    assert any("a user of this run's own" in line for line in first.enforced())
    uid = second.host[1]
    second.close()
    assert uid not in slots.taken(), "given back when the run ends"


def test_rlimit_nproc_counts_what_the_kernel_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Threads, not processes: before, a process of 60 threads counted as one."""
    for pid, threads in (("100", 60), ("200", 1)):
        for task in range(threads):
            (tmp_path / pid / "task" / str(int(pid) + task)).mkdir(parents=True)
    (tmp_path / "self").mkdir()
    assert slots.tasks_by_user(tmp_path) == {os.getuid(): 61}
    limits = SandboxLimits(processes=16)
    monkeypatch.setattr(slots, "tasks_by_user", lambda: {424_242: 61})
    assert rlimits(limits, None, 424_242)["processes"] == 61 + 16, "a shared user: tasks + 16"
    assert rlimits(limits, None, 424_242, own_user=True)["processes"] == 16, "the run's own"


def test_a_slot_user_is_mapped_unnamed_and_idle() -> None:
    assert slots.mapped(65_500, "         0          0 4294967295\n")
    assert not slots.mapped(65_500, "         0     100000      65536\n".replace("65536", "100"))
    assert 0 not in slots.SLOT_UIDS and 65_534 not in slots.SLOT_UIDS
