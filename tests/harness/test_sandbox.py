"""The sandbox learner code runs in: what it sees, what it may use, and what outlives it."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness_support import enterable_folder, kill_processes_with, processes_with

from course.grading.confinement import cgroups
from course.grading.confinement import sandbox as sandbox_module
from course.grading.confinement.sandbox import (
    HOST_UID,
    Confinement,
    Layout,
    SandboxLimits,
    bwrap_command,
    default_layout,
    drop_command,
    drop_user_check,
    host_user_check,
    let_through,
    mount_arguments,
    open_confinement,
    planned_limits,
    sandbox_status,
    staging,
)
from course.grading.confinement.slots import SLOT_UIDS
from course.harness.kit import kit_root

TOKEN = "course-sandbox-test-daemon-5c1e"
SYSTEM = {"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp", "usr"}


def empty_run(tmp_path: Path, limits: SandboxLimits, *, sandboxed: bool = True) -> Confinement:
    """A confinement like a graded run's, over an empty graded copy in ``tmp_path``."""
    bwrap, reason = sandbox_status(kit_root(), ("course",))
    assert bwrap is not None or not sandboxed, f"the sandbox must start here: {reason}"
    copy, run = tmp_path / "copy", tmp_path / "run"
    copy.mkdir()
    run.mkdir()
    return open_confinement(
        sandboxed=sandboxed,
        graded=(copy,),
        python_path=(copy,),
        hidden=(kit_root(), tmp_path / "roster"),
        limits=limits,
        run_directory=run,
        bwrap=bwrap if sandboxed else None,
    )


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Confinement]:
    """A confinement like a graded run's, over an empty graded copy, with a 200 MB cap."""
    confinement = empty_run(tmp_path, SandboxLimits(memory_mb=200, processes=32))
    try:
        yield confinement
    finally:
        confinement.close()
        kill_processes_with(TOKEN)  # only if an attack ever got out


def run_inside(confinement: Confinement, code: str, env: dict[str, str] | None = None) -> str:
    """Run Python ``code`` confined; its stdout."""
    command, clean = confinement.wrap([sys.executable, "-c", textwrap.dedent(code)], env or {}, ())
    done = subprocess.run(
        command, env=clean, capture_output=True, text=True, timeout=120, check=False
    )
    return done.stdout + done.stderr


def test_learner_code_sees_no_kit_no_network_no_grader_environment(
    sandbox: Confinement,
) -> None:
    kit = kit_root()
    said = run_inside(
        sandbox,
        f"""
        import importlib.util, json, os, socket
        def writable(path):
            try:
                open(os.path.join(path, "probe"), "w").close()
                return True
            except OSError:
                return False
        print(json.dumps({{
            "kit": sorted(os.listdir({str(kit)!r})) if os.path.isdir({str(kit)!r}) else [],
            "course": importlib.util.find_spec("course") is not None,
            "interfaces": [name for _, name in socket.if_nameindex()],
            "env": sorted(os.environ),
            "uid": os.getuid(),
            "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
            "root": sorted(os.listdir("/")),
            "writable": [p for p in ("/usr", "/", {str(sys.prefix)!r}, "/tmp") if writable(p)],
        }}))
        """,
        env={"SECRET_TOKEN": "grader", "COURSE_LAB_PACKAGE": "pi_course"},
    )
    seen = json.loads(said.strip().splitlines()[-1])
    # The kit's folder shows only where this Python lives in it (a .venv inside the kit).
    prefix = Path(sys.prefix).resolve()
    inside = [prefix.relative_to(kit).parts[0]] if prefix.is_relative_to(kit) else []
    assert seen["kit"] == inside and seen["course"] is False, "the reference is not there"
    assert seen["interfaces"] == ["lo"], "no network"
    assert "SECRET_TOKEN" not in seen["env"] and "COURSE_LAB_PACKAGE" in seen["env"]
    assert seen["uid"] == 65534, "nobody, without capabilities"
    assert seen["pids"] == [1, 2], "only the sandbox's own processes"
    # A venv's base interpreter may live elsewhere (pyenv under /root, say): its top folder shows.
    python = {path.parts[1] for path in sandbox.layout.python}
    assert set(seen["root"]) <= SYSTEM | python, "the system, this Python, nothing else"
    assert seen["writable"] == ["/tmp"], "one private scratch directory"


def test_a_daemon_dies_with_its_run(sandbox: Confinement) -> None:
    run_inside(
        sandbox,
        f"""
        import os, sys
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(60)",
                                          "{TOKEN}"])
            os._exit(0)
        """,
    )
    assert processes_with(TOKEN) == [], "the PID namespace ended with its first process"


def test_forked_children_share_one_memory_cap(sandbox: Confinement) -> None:
    if sandbox.cgroup is None or sandbox.cgroup.memory is None:
        pytest.skip("no writable memory cgroup here: see docs/grading.md")
    said = run_inside(
        sandbox,
        """
        import os, time
        def child():
            block = bytearray(b"\\x01") * (80 * 1024 * 1024)
            time.sleep(1)
            os._exit(0)
        alone = os.fork()
        if alone == 0:
            child()
        print("alone", os.waitpid(alone, 0)[1])
        pids = []
        for _ in range(4):
            pid = os.fork()
            if pid == 0:
                child()
            pids.append(pid)
        print("together", [os.waitpid(pid, 0)[1] for pid in pids])
        """,
    )
    assert "alone 0" in said, said
    together = json.loads(said.split("together", 1)[1].strip().splitlines()[0])
    assert signal.SIGKILL in together, "80 MB four times is over the 200 MB cap"
    assert sandbox.out_of_memory()


def test_processes_files_and_cpu_are_limited(sandbox: Confinement) -> None:
    said = run_inside(
        sandbox,
        """
        import json, os, resource, time
        children = 0
        try:
            for _ in range(100):
                if os.fork() == 0:
                    time.sleep(2)
                    os._exit(0)
                children += 1
        except OSError:
            pass
        try:
            with open("/tmp/big", "wb") as out:
                out.write(b"x" * (80 * 1024 * 1024))
            wrote = True
        except OSError:
            wrote = False
        limits = {name: resource.getrlimit(getattr(resource, name))[0]
                  for name in ("RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_AS", "RLIMIT_CORE")}
        print(json.dumps({"children": children, "wrote": wrote, "limits": limits}))
        """,
    )
    seen = json.loads(said.strip().splitlines()[-1])
    if sandbox.cgroup is not None and sandbox.cgroup.pids is not None:
        assert seen["children"] < 32, "the pids cgroup caps the whole sandbox"
    assert seen["wrote"] is False, "no file over 64 MB (and /tmp holds 64 MB)"
    mb = 1024 * 1024
    assert seen["limits"] == {
        "RLIMIT_CPU": 300,
        "RLIMIT_FSIZE": 64 * mb,
        "RLIMIT_AS": 2048 * mb,
        "RLIMIT_CORE": 0,
    }


def test_learner_code_has_no_terminal_and_no_grader_to_write_to(sandbox: Confinement) -> None:
    said = run_inside(
        sandbox,
        """
        import os
        try:
            os.open("/dev/tty", os.O_WRONLY)
            print("tty: opened")
        except OSError as error:
            print("tty:", error.errno)
        print("session leader:", os.getsid(0) == os.getpid() or os.getsid(0) == os.getppid())
        print("parent:", os.getppid())
        """,
    )
    assert "tty: opened" not in said
    assert "parent: 1" in said, "the parent is the sandbox's own first process"


def test_a_hidden_path_inside_a_visible_one_is_covered_and_a_python_inside_it_rebound() -> None:
    layout = Layout(
        system=(Path("/usr"),),
        python=(Path("/usr/local/kit/.venv"), Path("/opt/python")),
        graded=(Path("/tmp/grade/copy"),),
        hidden=(Path("/usr/src/roster"), Path("/usr/local/kit"), Path("/srv/elsewhere")),
    )
    args = mount_arguments(layout, [Path("/tmp/run/results.jsonl")])
    text = " ".join(args)
    assert "--ro-bind /opt/python /opt/python" in text
    assert text.index("--tmpfs /tmp") < text.index("/opt/python"), "a venv in /tmp stays visible"
    assert "--tmpfs /usr/src/roster" in text, "a roster inside /usr is covered"
    assert "--tmpfs /srv/elsewhere" not in text, "what is not mounted needs no cover"
    cover = args.index("/usr/local/kit")
    assert args[cover - 1] == "--tmpfs"
    rebound = [i for i, a in enumerate(args) if a == "/usr/local/kit/.venv"]
    assert len(rebound) == 2 and rebound[0] > cover, "a Python inside the kit is mounted again"
    assert args[-5:-2] == ["--bind", "/tmp/run/results.jsonl", "/tmp/run/results.jsonl"]
    assert args[-2:] == ["--remount-ro", "/"], "the sandbox's own root is read-only too"


def test_unsandboxed_runs_keep_the_limits_and_a_clean_environment(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    confinement = open_confinement(
        sandboxed=False,
        graded=(tmp_path,),
        python_path=(tmp_path,),
        hidden=(),
        limits=SandboxLimits(),
        run_directory=run,
        bwrap=None,
    )
    try:
        said = run_inside(
            confinement,
            """
            import json, os, resource
            print(json.dumps([sorted(os.environ), resource.getrlimit(resource.RLIMIT_FSIZE)[0]]))
            """,
            env={"SECRET_TOKEN": "grader"},
        )
    finally:
        confinement.close()
    names, file_size = json.loads(said.strip().splitlines()[-1])
    assert "SECRET_TOKEN" not in names and file_size == 64 * 1024 * 1024
    assert confinement.enforced()[0].startswith("no sandbox")


def test_dev_shm_and_tmp_are_capped_and_dev_is_read_only(sandbox: Confinement) -> None:
    """bubblewrap's /dev is a tmpfs the size of host memory: it must not take learner files."""
    said = run_inside(
        sandbox,
        """
        import json, os
        def fill(folder, megabytes):
            written = 0
            try:
                with open(os.path.join(folder, "fill"), "wb") as out:
                    for _ in range(megabytes):
                        out.write(b"x" * 1024 * 1024)
                        out.flush()
                        written += 1
            except OSError:
                pass
            return written
        def creatable(path):
            try:
                open(path, "w").close()
                return True
            except OSError:
                return False
        print(json.dumps({
            "shm": fill("/dev/shm", 64),
            "tmp": fill("/tmp", 128),
            "dev": creatable("/dev/fill"),
            "null": creatable("/dev/null"),
        }))
        """,
    )
    seen = json.loads(said.strip().splitlines()[-1])
    limits = sandbox.limits
    assert seen["shm"] <= limits.shared_memory_mb, "/dev/shm holds its size and no more"
    assert seen["tmp"] <= limits.scratch_mb, "/tmp holds its size and no more"
    assert seen["dev"] is False, "nothing new in /dev"
    assert seen["null"] is True, "its devices still work"


def test_the_sandboxs_first_process_has_an_empty_environment(sandbox: Confinement) -> None:
    said = run_inside(
        sandbox,
        """
        import json
        with open("/proc/1/environ", "rb") as first:
            print(json.dumps(first.read().decode()))
        """,
        env={"SECRET_TOKEN": "grader"},
    )
    assert json.loads(said.strip().splitlines()[-1]) == ""


def test_a_root_grader_starts_learner_code_as_an_unprivileged_host_user(
    sandbox: Confinement, tmp_path: Path
) -> None:
    """Inside, learner code is 65534 either way; a file it makes shows whom it is outside."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    code = f"open({str(shared / 'made')!r}, 'w').close()"
    command, env = sandbox.wrap([sys.executable, "-c", code], {}, (shared,))
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    owner = (shared / "made").stat().st_uid
    assert done.returncode == 0, done.stderr
    if os.geteuid() != 0:
        assert owner == os.geteuid(), "the grader's own unprivileged user"
        return
    host, why = host_user_check()
    limits = " ".join(sandbox.enforced())
    if host is None:
        assert owner == 0 and f"host root outside its namespace: {why}" in limits, "said plainly"
        pytest.skip(f"a root grader cannot start the sandbox as nobody here: {why}")
    # without a pids cgroup each run at a time is a user of its own (``slots.py``)
    assert owner == HOST_UID or (sandbox.own_user and owner in SLOT_UIDS)
    assert f"host user {owner} (not root)" in limits


def test_drop_and_mount_arguments_are_in_the_order_bubblewrap_needs(tmp_path: Path) -> None:
    layout = Layout(system=(), python=(), graded=(tmp_path,), scratch_mb=8, shared_memory_mb=4)
    args = mount_arguments(layout, ())
    shm = args.index("/dev/shm")
    assert args[shm - 3 : shm + 1] == ["--size", str(4 * 1024 * 1024), "--tmpfs", "/dev/shm"]
    assert args.index("/dev") < shm < args.index("--remount-ro")
    tmp = args.index("/tmp")
    assert args[tmp - 3 : tmp + 1] == ["--size", str(8 * 1024 * 1024), "--tmpfs", "/tmp"]
    drop = drop_command("/usr/bin/setpriv")
    assert drop[0] == "/usr/bin/setpriv" and drop[-1] == "--"
    assert {"--reuid=65534", "--regid=65534", "--clear-groups", "--no-new-privs"} <= set(drop)


def test_the_drop_to_nobody_maps_the_sandbox_to_host_nobody(tmp_path: Path) -> None:
    """The command builders alone, with the system's ``cat`` (no Python needed)."""
    if os.geteuid() != 0:
        pytest.skip("only a root grader drops to nobody")
    setpriv, bwrap = shutil.which("setpriv"), shutil.which("bwrap")
    if setpriv is None or bwrap is None:
        pytest.skip("setpriv or bwrap is not installed")
    layout = default_layout([tmp_path], [], 8)
    layout = Layout(layout.system, (), layout.graded, scratch_mb=8)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    let_through([shared], [], HOST_UID)
    command = drop_command(setpriv) + bwrap_command(bwrap, layout, {}, (shared,))
    done = subprocess.run(
        [*command, "/usr/bin/touch", str(shared / "made")],
        env={},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (shared / "made").stat().st_uid == HOST_UID, "nobody on the host, not root"


def test_only_directories_others_cannot_enter_are_staged_and_bound_back(tmp_path: Path) -> None:
    locked, open_ = tmp_path / "locked", tmp_path / "open"
    (locked / "python").mkdir(parents=True)
    (open_ / "python").mkdir(parents=True)
    locked.chmod(0o700)
    open_.chmod(0o755)
    tmp_path.chmod(0o755)
    staged = staging([locked / "python", open_ / "python"], tmp_path / "points")
    assert staged == ((locked / "python", tmp_path / "points" / "0"),)
    layout = Layout(
        system=(), python=(locked / "python", open_ / "python"), graded=(), sources=staged
    )
    args = mount_arguments(layout, ())
    bound = {args[i + 2]: args[i + 1] for i, a in enumerate(args) if a == "--ro-bind"}
    assert bound[str(locked / "python")] == str(tmp_path / "points" / "0")
    assert bound[str(open_ / "python")] == str(open_ / "python")


def test_a_dropped_sandbox_reaches_a_python_inside_a_folder_only_root_may_enter(
    tmp_path: Path,
) -> None:
    """As a pyenv Python under ``/root``: the host user cannot enter, the sandbox still reads."""
    host, why = host_user_check()
    if host is None:
        pytest.skip(f"no drop to an unprivileged host user here: {why}")
    bwrap, reason = sandbox_status(kit_root(), ("course",))
    assert bwrap is not None, reason
    layout, run, private = private_python(tmp_path)
    confinement = Confinement(True, layout, (), SandboxLimits(), run, bwrap, host=host)
    try:
        marker = str(private / "python" / "marker.txt")
        command, env = confinement.wrap(["/usr/bin/cat", marker], {}, ())
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    finally:
        confinement.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout == "reached\n"
    assert private.stat().st_mode & 0o777 == 0o700, "the host folder is left as it was"


def test_a_delegated_cgroup_v2_caps_memory_and_processes_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the host has cgroup v2 with memory and pids delegated to the grader."""
    v1 = cgroups.parent_directories()
    if os.path.isdir("/sys/fs/cgroup/memory") or "memory" in v1:
        monkeypatch.setattr(cgroups, "_create_v1", lambda memory, processes: None)
    found = cgroups.create_v2(200, 16)
    if found is None:
        kind = subprocess.run(
            ["stat", "-fc", "%T", "/sys/fs/cgroup"], capture_output=True, text=True, check=False
        ).stdout.strip()
        pytest.skip(
            f"no cgroup v2 with memory and pids delegated here (/sys/fs/cgroup is {kind}; "
            f"cgroup2fs means v2; set {cgroups.DELEGATED} to a delegated folder)"
        )
    found.remove()
    confinement = empty_run(tmp_path, SandboxLimits(memory_mb=200, processes=16), sandboxed=False)
    try:
        assert confinement.cgroup is not None and confinement.cgroup.version == "v2"
        said = run_inside(
            confinement,
            """
            import os
            pids = []
            for _ in range(4):
                pid = os.fork()
                if pid == 0:
                    block = bytearray(120 * 1024 * 1024)
                    block[::4096] = b"x" * len(block[::4096])
                    os._exit(0)
                pids.append(pid)
            print(sum(os.waitpid(p, 0)[1] != 0 for p in pids), "killed")
            """,
        )
        assert confinement.out_of_memory(), said
        assert any("(memory cgroup v2)" in line for line in confinement.enforced())
    finally:
        confinement.close()


def test_cgroup_v2_is_found_from_mountinfo_and_the_processs_own_cgroup() -> None:
    mountinfo = (
        "30 24 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
        "31 24 0:27 / /proc rw - proc proc rw\n"
    )
    own = "0::/user.slice/user-1000.slice/session-3.scope\n"
    assert cgroups.v2_mount(mountinfo) == Path("/sys/fs/cgroup")
    assert cgroups.v2_parent(mountinfo, own, None) == Path(
        "/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope"
    )
    assert cgroups.v2_parent(mountinfo, own, "/sys/fs/cgroup/grading") == Path(
        "/sys/fs/cgroup/grading"
    )
    assert cgroups.v2_parent("31 24 0:27 / /proc rw - proc proc rw\n", own, None) is None


def test_a_systemd_scope_prefix_caps_memory_and_tasks_and_clears_the_environment() -> None:
    prefix = cgroups.scope_command("/usr/bin/systemd-run", "/usr/bin/env", 512, 32, user=True)
    assert prefix[:3] == ["/usr/bin/systemd-run", "--user", "--scope"]
    assert {"--property=MemoryMax=512M", "--property=MemorySwapMax=0"} <= set(prefix)
    assert "--property=TasksMax=32" in prefix
    assert prefix[-3:] == ["--", "/usr/bin/env", "-i"], "nothing of the grader's past the scope"
    assert "--user" not in cgroups.scope_command("s", "e", 1, 1, user=False)
    environ = {"XDG_RUNTIME_DIR": "/run/user/1000", "SECRET": "x"}
    assert cgroups.scope_environment(environ) == {"XDG_RUNTIME_DIR": "/run/user/1000"}


def systemd_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, held: bool) -> Confinement:
    """A run with no cgroup of its own where systemd makes scopes (skips elsewhere): held in
    one scope, or (``held=False``) a scope for each process it starts."""
    scope, why = cgroups.systemd_scope()
    if scope is None:
        pytest.skip(f"no systemd scope here: {why}")
    monkeypatch.setattr(cgroups, "create", lambda memory, processes: None)
    if not held:
        monkeypatch.setattr(cgroups, "create_scope", lambda *given, **named: None)
    return empty_run(tmp_path, SandboxLimits(memory_mb=200, processes=16))


def test_where_systemd_makes_scopes_a_run_without_cgroups_uses_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    confinement = systemd_run(tmp_path, monkeypatch, held=False)
    try:
        assert any("(systemd scope;" in line for line in confinement.enforced())
        said = run_inside(confinement, "print(open('/proc/1/environ', 'rb').read() == b'')")
        assert said.strip().splitlines()[-1] == "True", said
    finally:
        confinement.close()


def test_a_run_scope_holder_is_a_sleeping_process_in_a_delegated_capped_scope() -> None:
    scope = ("/usr/bin/systemd-run", "/usr/bin/env", True)
    command = cgroups.holder_command(scope, "/usr/bin/sleep", 200, 16)
    assert command[:3] == ["/usr/bin/systemd-run", "--user", "--scope"]
    assert {"--property=Delegate=yes", "--property=MemoryMax=200M"} <= set(command)
    assert "--property=TasksMax=16" in command
    assert command[-4:] == ["/usr/bin/env", "-i", "/usr/bin/sleep", "infinity"]


def test_the_holders_scope_is_found_once_it_has_left_the_graders_cgroup() -> None:
    mount, own = Path("/sys/fs/cgroup"), "/user.slice/user-1000.slice/session-3.scope"
    assert cgroups.scope_folder(mount, own, f"0::{own}\n") is None, "not moved yet"
    moved = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope\n"
    assert cgroups.scope_folder(mount, own, moved) == mount / moved[4:].strip()
    assert cgroups.scope_folder(mount, own, "0::/user.slice/x.service\n") is None


def test_removing_a_held_scope_ends_its_holder_and_leaves_the_folder_to_systemd(
    tmp_path: Path,
) -> None:
    (tmp_path / "cgroup.procs").write_text("", encoding="ascii")
    holder = subprocess.Popen(["sleep", "60"])
    held = cgroups.Cgroups(tmp_path, tmp_path, "v2", holder)
    held.remove(wait=1)
    assert holder.returncode is not None, "the holder ended and was reaped"
    assert tmp_path.is_dir(), "systemd removes its own scope"
    line = " ".join(sandbox_module.enforced(SandboxLimits(memory_mb=200), held, sandboxed=False))
    assert "200 MB for all processes together (systemd scope of the run, cgroup v2)" in line


def test_a_scope_held_for_the_run_caps_its_processes_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes of one run, 120 MB each at once, under a 200 MB cap for the run."""
    confinement = systemd_run(tmp_path, monkeypatch, held=True)
    try:
        if confinement.cgroup is None or confinement.cgroup.holder is None:
            pytest.skip("systemd makes scopes here, but this grader may not join one it made")
        hold = "import time\nblock = bytearray(b'\\x01') * (120 * 1024 * 1024)\ntime.sleep(3)\n"
        started = [
            subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for command, env in (
                confinement.wrap([sys.executable, "-c", hold], {}, ()) for _ in range(2)
            )
        ]
        codes = [process.wait(timeout=60) for process in started]
        assert any(code != 0 for code in codes), "240 MB together is over the run's 200 MB"
        assert confinement.out_of_memory()
    finally:
        confinement.close()


def test_a_cgroup_is_joinable_only_where_the_launcher_can_move_a_process_into_it(
    tmp_path: Path,
) -> None:
    missing = cgroups.Cgroups(tmp_path / "gone", tmp_path / "gone", "v2")
    assert not sandbox_module.joinable(missing)
    made = cgroups.create(64, 8)
    if made is None:
        pytest.skip("no writable cgroup here to join")
    try:
        assert sandbox_module.joinable(made)
    finally:
        made.remove()


@pytest.fixture
def fresh_checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int] | None]]:
    """The two availability checks forgotten, and whom each trial run starts the sandbox as."""
    started: list[tuple[str, int] | None] = []
    trial = sandbox_module._trial_run

    def counted(bwrap: str, host: tuple[str, int] | None, *rest: object) -> object:
        started.append(host)
        return trial(bwrap, host, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(sandbox_module, "_trial_run", counted)
    monkeypatch.setattr(sandbox_module, "_PROVEN_HOSTS", set())
    sandbox_status.cache_clear()
    host_user_check.cache_clear()
    yield started
    sandbox_status.cache_clear()
    host_user_check.cache_clear()


def test_one_trial_run_decides_both_the_confinement_and_the_host_user(
    fresh_checks: list[tuple[str, int] | None],
) -> None:
    """A grading process pays for one trial sandbox, not two: the confinement check, started as
    the host user a root grader drops to, also proves that user can start this Python."""
    bwrap, reason = sandbox_status(kit_root(), ("course",))
    assert bwrap is not None, reason
    host, why = host_user_check()
    if os.geteuid() == 0 and host is None:
        pytest.skip(f"a root grader cannot start the sandbox as nobody here: {why}")
    assert fresh_checks == [host], "one trial, as the user graded runs start as"


def test_when_the_host_user_cannot_start_it_the_check_is_made_again_as_root(
    fresh_checks: list[tuple[str, int] | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where ``nobody`` cannot start the sandbox, host_user_check says why, and the confinement
    is checked again as the grader's own user, which graded runs then start as."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("only a root grader with setpriv drops to a host user")
    counted = sandbox_module._trial_run

    def refused_to_nobody(
        bwrap: str, host: tuple[str, int] | None, *rest: object
    ) -> subprocess.CompletedProcess[str]:
        if host is not None:
            fresh_checks.append(host)
            return subprocess.CompletedProcess([], 1, "", "setpriv: permission denied\n")
        return counted(bwrap, host, *rest)  # type: ignore[no-any-return]

    monkeypatch.setattr(sandbox_module, "_trial_run", refused_to_nobody)
    bwrap, reason = sandbox_status(kit_root(), ("course",))
    assert bwrap is not None, reason
    host, why = host_user_check()
    assert host is None and "setpriv: permission denied" in why, why
    nobody = (shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin"), HOST_UID)
    assert fresh_checks == [nobody, nobody, None], "as nobody, its own check, then as root"


def test_the_container_fallback_runs_learner_code_as_a_user_who_writes_nothing_guarded() -> None:
    """Without bubblewrap (a container that makes no namespaces): learner code runs as an
    unprivileged host user, reaches a Python only root may enter, and writes none of the
    guarded folders; a guarded folder anyone may write makes the fallback refuse."""
    if os.geteuid() != 0:
        pytest.skip("the fallback drops from root to another user")
    with enterable_folder() as folder:  # as /autograder: others may enter it
        container_fallback(folder)


def container_fallback(tmp_path: Path) -> None:
    guarded = tmp_path / "results"
    guarded.mkdir()
    dropped, why = drop_user_check((guarded,))
    assert dropped is not None, why
    layout, run, private = private_python(tmp_path)
    confinement = Confinement(False, layout, (), SandboxLimits(), run, host=dropped, dropped=True)
    code = (
        "import os, pathlib, sys\n"
        "print(os.getuid(), pathlib.Path(sys.argv[1]).read_text().strip())\n"
        "try:\n    open(sys.argv[2], 'w').write('forged')\nexcept OSError as e:\n"
        "    print('refused', e.errno)\n"
    )
    marker, forged = private / "python" / "marker.txt", guarded / "results.json"
    try:
        argv = [sys.executable, "-I", "-S", "-c", code, str(marker), str(forged)]
        command, env = confinement.wrap(argv, {}, ())
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    finally:
        confinement.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["65534", "reached", "refused", "13"], done.stdout
    assert not forged.exists()
    assert private.stat().st_mode & 0o777 == 0o700, "the host folder is left as it was"
    assert "learner code runs as host user 65534 (not root)" in confinement.enforced()[0]
    guarded.chmod(0o777)
    drop_user_check.cache_clear()  # decided once per process; here the folder changed
    refused, why = drop_user_check((guarded,))
    assert refused is None and why == f"user 65534 could write {guarded}", why


def private_python(tmp_path: Path) -> tuple[Layout, Path, Path]:
    """A layout whose Python includes ``private/python``, a folder only its owner may enter
    (holding ``marker.txt``); an empty run folder; and ``private``."""
    private = tmp_path / "private"
    (private / "python").mkdir(parents=True)
    (private / "python" / "marker.txt").write_text("reached\n", encoding="utf-8")
    private.chmod(0o700)
    run = tmp_path / "run"
    run.mkdir()
    layout = default_layout([], [], 8)
    layout = Layout(layout.system, (*layout.python, private / "python"), (), scratch_mb=8)
    return layout, run, private


DAEMON = """\
import os, sys, time

def daemon(pids):
    if os.fork():
        return  # the learner's own process goes on (and ends) as if nothing happened
    os.setsid()  # out of the process group and the session the grader knows
    if os.fork():
        os._exit(0)
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # nothing of the grader's held open
        os.dup2(quiet, fd)
    said = os.path.join(pids, str(os.getpid()))
    with open(said + ".part", "w") as record:
        record.write(str(os.getuid()))
    os.rename(said + ".part", said)  # the test reads it whole, never half written
    while True:  # and keeps starting children of its own
        try:
            if not os.fork():
                time.sleep(600)
                os._exit(0)
        except OSError:  # its user's 64 tasks
            pass
        time.sleep(0.05)

daemon(sys.argv[1])
"""


def fallback_run(folder: Path, dropped: tuple[str, int]) -> Confinement:
    """A run of the container fallback over ``folder`` (its run folder inside it), as a run
    opens it: with cgroups where they can be made, a host user of its own."""
    run = folder / "run"
    run.mkdir()
    return open_confinement(
        sandboxed=False, graded=(folder,), python_path=(), hidden=(), limits=SandboxLimits(),
        run_directory=run, bwrap=None, dropped=dropped,
    )  # fmt: skip


def alive_as(uid: int) -> list[int]:
    """The processes running as ``uid`` but zombies, read from ``/proc`` here."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if str(uid) in fields.get("Uid", "").split()[:3] and "Z" not in fields.get("State", ""):
            found.append(int(entry.name))
    return found


def test_the_container_fallback_ends_every_process_of_its_user_with_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 53: without bubblewrap and without a writable cgroup (Gradescope's fallback), a
    daemon learner code double-forked, in a session of its own, outlived the run and
    ``run_autograder``. A run there has a host user of its own, and when it ends every process
    of that user is ended, scanned for again while one forks."""
    if os.geteuid() != 0:
        pytest.skip("the fallback drops from root to another user")
    monkeypatch.setattr(sandbox_module, "run_cgroups", lambda *_, **__: (None, None))
    with enterable_folder() as folder:
        dropped, why = drop_user_check((folder,))
        assert dropped is not None, why
        pids = folder / "pids"
        pids.mkdir()
        pids.chmod(0o777)  # where the learner's daemon says who it is
        learner = folder / "learner.py"
        learner.write_text(DAEMON, encoding="utf-8")
        learner.chmod(0o644)
        confinement = fallback_run(folder, dropped)
        assert confinement.own_user and confinement.host is not None
        uid = confinement.host[1]
        try:
            learner_code = [sys.executable, "-I", "-S", str(learner), str(pids)]
            command, env = confinement.wrap(learner_code, {}, ())
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            for _ in range(100):  # the daemon has started and said so
                if [path for path in pids.iterdir() if path.suffix != ".part"]:
                    break
                time.sleep(0.05)
            (daemon,) = [path for path in pids.iterdir() if path.suffix != ".part"]
            assert daemon.read_text(encoding="ascii") == str(uid)
            assert alive_as(uid), "the daemon outlived the learner's process"
        finally:
            confinement.close()
        assert alive_as(uid) == [], "no process of the run's user is left"


def test_the_container_fallback_runs_each_run_as_a_user_of_its_own_even_with_a_pids_cgroup() -> (
    None
):
    """Issue 54: one fallback run said learner code ran as host user 65534 (``nobody``, shared),
    where the docs say 65500: a pids cgroup made the grader skip a user of the run's own. Without
    a sandbox every run has one (``slots.SLOT_UIDS``), so that its processes can all be ended."""
    if os.geteuid() != 0:
        pytest.skip("the fallback drops from root to another user")
    with enterable_folder() as folder:
        dropped, why = drop_user_check((folder,))
        assert dropped is not None, why
        confinement = fallback_run(folder, dropped)
        try:
            assert confinement.host is not None and confinement.host[1] in SLOT_UIDS
            uid = confinement.host[1]
            said = f"learner code runs as host user {uid} (not root)"
            assert said in confinement.enforced()[0], confinement.enforced()
        finally:
            confinement.close()
        planned = planned_limits(SandboxLimits(), sandboxed=False, dropped=dropped)
        assert re.search(r"learner code runs as host user 655[0-3]\d \(not root\)", planned[0])
