"""Every command shown in README.md, docs/*.md and docs/zh/*.md runs as shown.

The commands are read from the documents themselves: each line of a fenced ``bash`` block, and
the first cell of each command table (``| `checkpoint 11 --lab 11.3` | …``). Placeholders
(``DIR``, ``N``, ``FILE``…) get real values and an optional ``[--check]`` is run both without
and with. A command runs from the kit's root with the kit's ``.venv/bin`` first on ``PATH``
and ``HOME`` in a temporary directory; the learner's block runs in the workspace it creates.
A few commands run for minutes or are this suite itself: ``FAST`` lists the quicker variant run
instead, and why. A command works when it ends with its expected status and prints no usage
error and no traceback. A script that several lines show (the same command in two documents)
runs once in each place it runs in, its test named by every line that shows it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from solutions import solve_lab

from course.harness.kit import kit_root
from course.harness.manifest import load_manifest
from course.harness.workspace import create_workspace

pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)

KIT = kit_root()
DOCUMENTS = [
    KIT / "README.md",
    *sorted((KIT / "docs").glob("*.md")),
    *sorted((KIT / "docs" / "zh").glob("*.md")),
]
KIT_COMMANDS = ("checkpoint", "practice", "course-kit", "session-log")
TIMEOUT = 600
"""Seconds a command may take (the longest, the reliability tests, take about a minute)."""

FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
TABLE_COMMAND = re.compile(r"^\| `((?:[^`\\]|\\.)+)` \|", re.MULTILINE)
OPTIONAL = re.compile(r" \[([^\]]+)\]")

RELIABILITY_TESTS = (
    "python3 -m pytest tests/test_reliability.py tests/test_session.py"
    " tests/test_store_faults.py tests/test_store_errors.py"
)
FAST = {
    "bash scripts/setup --dev && .venv/bin/python -m pytest": (
        "bash scripts/setup --dev && .venv/bin/python -m pytest --collect-only -q -n 0"
        " --assert=plain",
        "it is the suite this test belongs to: collecting it shows the command works (every module "
        "imported; the suite's own run rewrites their asserts, which collecting does not need)",
    ),
    RELIABILITY_TESTS: (
        f"{RELIABILITY_TESTS} --collect-only -q -n 0 --assert=plain",
        "they are part of this suite, which runs them: collecting them shows the command works",
    ),
    "COURSE_FUZZ_EXAMPLES=10000 python3 -m pytest tests/test_reliability.py -k fuzz": (
        "COURSE_FUZZ_EXAMPLES=10 python3 -m pytest tests/test_reliability.py -k fuzz -n 0",
        "10 000 examples take about eight minutes; this suite runs the fuzz tests at 300 examples, "
        "so ten show the setting is read and the selection runs",
    ),
    "python3 -m course.tools.crashtest --trials 50": (
        "python3 -m course.tools.crashtest --trials 3",
        "fifty trials take about half a minute; test_reliability.py runs the crash trials",
    ),
    ".venv/bin/python bench/run.py": (
        ".venv/bin/python bench/run.py --help",
        "about ten minutes, and it rewrites bench/results.json; test_bench_smoke.py runs it at its "
        "smallest size (--quick --sizes 50,100 --runs 1) and reads the results file it writes",
    ),
    ".venv/bin/python bench/scaling.py": (
        ".venv/bin/python bench/scaling.py --sizes 200,400 --runs 1 --rounds 1",
        "about three minutes",
    ),
    ".venv/bin/python bench/instructions.py": (
        ".venv/bin/python bench/instructions.py --sizes 100,200 --collector on",
        "about five minutes under valgrind at 100 000 messages",
    ),
    ".venv/bin/python bench/memory.py": (
        ".venv/bin/python bench/memory.py --entries 2000",
        "about two minutes; at 2 000 entries the call still trims the path to its small budget",
    ),
    ".venv/bin/python bench/intake.py": (
        ".venv/bin/python bench/intake.py --learners 3",
        "thirty learners are a class; three, a folder, a zip and a tar.gz, time each kind of "
        "submission and the bomb as the thirty do",
    ),
    ".venv/bin/python bench/explorer.py": (
        ".venv/bin/python bench/explorer.py --moves 7",
        "sixty moves give the figures; seven time a move as they do",
    ),
    ".venv/bin/python bench/regrade.py": (
        ".venv/bin/python bench/regrade.py --rosters 1 --mutants strict_less_at_the_edge",
        "one new roster and --practice for one mistake, not 50 for three",
    ),
    ".venv/bin/python bench/term.py": (
        ".venv/bin/python bench/term.py --help",
        "a class of 30 takes about a minute; test_term_class.py grades the same class as the "
        "documented command does",
    ),
    ".venv/bin/python bench/credit.py": (
        ".venv/bin/python bench/credit.py --learners 2 --timeout 2",
        "thirty workspaces take about two minutes; a mistake and a borrowing attack show the "
        "command works",
    ),
    ".venv/bin/python bench/doors.py": (
        ".venv/bin/python bench/doors.py --runs 1",
        "seven timings of each door; one shows the command works",
    ),
    ".venv/bin/python bench/mutation.py": (
        '.venv/bin/python bench/mutation.py --only "summary.py summary_to_json"',
        "480 mutants take twenty minutes and more; the two of one given function show the "
        "command grades and classifies (test_mutation_sample.py grades a dozen)",
    ),
    "course-kit nbrefresh": (
        "course-kit nbrefresh {tmp}/copy.ipynb",
        "re-running every notebook of both editions is what the suite's nbval run does",
    ),
}
"""Documented command → (what runs instead, why)."""

FAILS_BY_DESIGN = {
    "checkpoint 11 --lab 11.1": "in the fresh workspace every test is pending",
    "checkpoint 11": "in the fresh workspace every test is pending",
    "checkpoint 11 --review": "in the fresh workspace the review waits for 14/14",
}
"""Commands of the learner's block that exit 1 in a fresh workspace, as documented."""


@dataclass(frozen=True)
class Documented:
    """A document's commands run together (a block in order, in one shell), as it shows them."""

    where: str
    commands: tuple[str, ...]
    block: str
    """``learner`` for a command run inside the learner's workspace, else ``kit``."""

    def __str__(self) -> str:
        return f"{self.where}: {' && '.join(self.commands)}"


def without_comment(command: str) -> str:
    """``command`` without a trailing ``# comment`` (a ``#`` outside quotes, after a space)."""
    quote = ""
    for at, char in enumerate(command):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (at == 0 or command[at - 1].isspace()):
            return command[:at].strip()
    return command.strip()


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, command) for each command of a shell block: continuations and quotes joined."""
    pending, start = "", 0
    for number, line in enumerate(text.splitlines()):
        if not pending:
            start = number
        pending = f"{pending}\n{line}" if pending else line
        if pending.endswith("\\"):
            pending = pending[:-1]
            continue
        try:
            words = shlex.split(pending, comments=True)
        except ValueError:  # an open quote: the command goes on
            continue
        if words:
            yield start, without_comment(pending)
        pending = ""
    assert not pending, f"an unfinished command: {pending!r}"


def documented_commands() -> list[Documented]:
    found = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        name = document.relative_to(KIT).as_posix()
        for fence in FENCE.finditer(text):
            if fence.group(1) not in ("bash", "sh", "shell"):
                continue
            first = text[: fence.start()].count("\n") + 2
            lines = list(logical_lines(fence.group(2)))
            if fence.group(2).startswith("checkpoint 11 "):  # the learner's, one at a time
                found += [
                    Documented(f"{name}:{first + at}", (line,), "learner") for at, line in lines
                ]
            else:
                commands = tuple(line for _, line in lines)
                found.append(Documented(f"{name}:{first}", commands, "kit"))
        for cell in TABLE_COMMAND.finditer(text):
            command = cell.group(1).replace("\\|", "|")
            if command.split()[0].removeprefix(".venv/bin/") in KIT_COMMANDS:
                line = text[: cell.start()].count("\n") + 1
                found.append(Documented(f"{name}:{line}", (command,), "kit"))
    return found


COMMANDS = documented_commands()


def variants(command: str) -> list[str]:
    """The command without, then with, each optional ``[part]``."""
    optional = OPTIONAL.search(command)
    if optional is None:
        return [command]
    without = command[: optional.start()] + command[optional.end() :]
    within = command[: optional.start()] + " " + optional.group(1) + command[optional.end() :]
    return variants(without) + variants(within)


def test_the_documents_show_commands_of_every_kind() -> None:
    shown = {c for d in COMMANDS for c in d.commands}
    assert "bash scripts/setup && .venv/bin/checkpoint 11" in shown
    assert "bash scripts/setup --dev && .venv/bin/python -m pytest" in shown
    assert "course-kit crashtest --trials N" in shown
    assert any(c.startswith(".venv/bin/practice 11 --lang zh ") for c in shown)
    assert sum(d.block == "learner" for d in COMMANDS) >= 4
    every = {v for c in shown for v in variants(c)}
    stale = [c for c in FAST if c not in every]
    assert not stale, f"FAST lists commands no document shows: {stale}"


IN_KIT = {
    "bash scripts/setup && .venv/bin/checkpoint 11": "setup installs the kit where it is",
    "bash scripts/setup --dev && .venv/bin/python -m pytest": "setup installs the kit where it is",
}
"""Commands run in the kit itself; the rest run in a view of it (see ``Places.view``)."""


@dataclass(frozen=True)
class Places:
    """Where the commands run and what their placeholders stand for."""

    view: Path
    """The kit's top-level entries as links: relative paths work, new files stay out of it."""
    home: Path
    tmp: Path
    workspace: Path
    """A workspace with every lab written (for ``--practice DIR``)."""
    roster: Path
    hidden: Path
    classlist: Path
    """A class list naming the roster's learner (``--class-list``)."""


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Places:
    base = tmp_path_factory.mktemp("documented")
    manifest = load_manifest("11")
    roster = base / "roster"
    workspace = roster / "ada"
    create_workspace(manifest, KIT, workspace)
    for lab in manifest.labs:
        solve_lab(manifest, KIT, workspace, lab.id)
    hidden = base / "instructor"
    hidden.mkdir()
    (hidden / "test_extra.py").write_text(
        "import pytest\n\n\n"
        '@pytest.mark.lab("11.1")\n'
        "def test_extra_summary_goal(impl):\n"
        '    assert impl.fixtures.COMPACT_1_SUMMARY["goal"]\n',
        encoding="utf-8",
    )
    tmp = base / "tmp"
    tmp.mkdir()
    shutil.copyfile(KIT / "notebooks" / "11-2-interaction-groups.ipynb", tmp / "copy.ipynb")
    home = base / "home"
    home.mkdir()
    classlist = base / "class-list.csv"
    classlist.write_text("id,name,email\nS1,Ada Lovelace,ada@uni.edu\n", encoding="utf-8")
    view = base / "kit"
    view.mkdir()
    for entry in KIT.iterdir():
        if entry.name != ".git":
            (view / entry.name).symlink_to(entry)
    return Places(view, home, tmp, workspace, roster, hidden, classlist)


def concrete(command: str) -> str:
    """The command with its placeholders filled in: ``{tmp}``, ``{workspace}``, ``{roster}`` and
    ``{hidden}`` stand for the places of ``Places`` until ``fill``."""
    command = command.replace("--practice DIR", "--practice {workspace}")
    command = command.replace("--roster DIR", "--roster {roster}")
    # the README's three intakes name their folders: the roster stands in for each
    command = re.sub(r"--roster (submissions|downloads|classroom)\b", "--roster {roster}", command)
    command = command.replace("--names PATTERN", "--names '(?P<learner>.+)'")
    command = command.replace("--hidden TESTS", "--hidden {hidden}")
    # the class list and the learner regraded: the roster's own (ada, on the class list as S1)
    command = re.sub(r"--class-list (FILE|class-list\.csv)", "--class-list {classlist}", command)
    command = re.sub(r"--only (LEARNER|\w+)", "--only ada", command)
    command = command.replace("--json FILE", "--json {tmp}/result.json")
    command = command.replace("--trials N", "--trials 3")
    command = command.replace("--audit-seed N", "--audit-seed 7")
    command = command.replace("--jobs N", "--jobs 1")
    command = command.replace("--assignment FILE", "--assignment {tmp}/assignment-11.toml")
    command = command.replace("NOTEBOOK …", "{tmp}/copy.ipynb")
    # a chapter of its own, in a folder of chapters no other command names
    command = command.replace("new-chapter N DIR", "new-chapter 97 {tmp}/chapters/ch97")
    command = command.replace("--from OLD", "--from {workspace}")
    return re.sub(r" DIR\b", " {tmp}/new-workspace", command)


def fill(script: str, places: Places) -> str:
    """The script with the places its placeholders stand for."""
    for name in ("tmp", "workspace", "roster", "hidden", "classlist"):
        script = script.replace(f"{{{name}}}", str(getattr(places, name)))
    return script


def environment(home: Path, cache: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{KIT / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(home)
    env["XDG_CACHE_HOME"] = str(cache or home / ".cache")
    env.pop("COURSE_LAB_PACKAGE", None)
    return env


def run(
    script: str, cwd: Path, home: Path, cache: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", f"set -e\n{script}"],
        cwd=cwd,
        env=environment(home, cache),
        input="q\n",  # `checkpoint 11 --watch` quits on q, as it says
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def learner_workspace(places: Places) -> Path:
    """The workspace the README's learner block makes with ``practice`` (made once)."""
    made = next(c for d in COMMANDS for c in d.commands if c.startswith(".venv/bin/practice 11 ~/"))
    folder = Path(made.split()[2].replace("~", str(places.home)))
    if not folder.exists():
        assert run(made, places.view, places.home).returncode == 0
    return folder


def scripts(documented: Documented) -> list[str]:
    """What runs: a block's commands in one script, a single command once per optional part;
    placeholders marked and fast variants swapped in, each distinct script once (a fast variant
    may stand for both forms of an optional part)."""

    def line(command: str) -> str:
        return concrete(FAST[command][0] if command in FAST else command)

    if len(documented.commands) == 1:
        return list(dict.fromkeys(line(variant) for variant in variants(documented.commands[0])))
    return ["\n".join(line(command) for command in documented.commands)]


def place(documented: Documented) -> str:
    """``learner`` (the learner's workspace), ``kit`` (the kit itself) or ``view`` (its view)."""
    if documented.block == "learner":
        return "learner"
    return "kit" if documented.commands[0] in IN_KIT else "view"


ON_PATH = re.compile(rf"^\.venv/bin/(?=(?:{'|'.join(KIT_COMMANDS)}) )")
"""A kit command named by its path in ``.venv/bin``: the one first on ``PATH`` where it runs."""


@dataclass(frozen=True)
class Run:
    """One distinct script in one place, and every document line that shows it."""

    script: str
    place: str
    shown: tuple[Documented, ...]

    def __str__(self) -> str:
        return f"{' + '.join(d.where for d in self.shown)}: {self.script}"

    @property
    def status(self) -> int:
        """1 for a learner's command that fails in a fresh workspace, as documented, else 0."""
        fails = self.place == "learner" and self.shown[0].commands[0] in FAILS_BY_DESIGN
        return 1 if fails else 0


def distinct_runs(commands: list[Documented]) -> list[Run]:
    """Each distinct (script, place) once, as its first document shows it, naming every line
    that shows it: ``.venv/bin/course-kit X`` and ``course-kit X`` in the kit are one script."""
    shown: dict[tuple[str, str], tuple[str, list[Documented]]] = {}
    for documented in commands:
        for script in scripts(documented):
            key = (ON_PATH.sub("", script), place(documented))
            shown.setdefault(key, (script, []))[1].append(documented)
    return [Run(script, where, tuple(by)) for (_, where), (script, by) in shown.items()]


RUNS = distinct_runs(COMMANDS)


def test_every_documented_line_runs_each_of_its_scripts() -> None:
    """No document line is lost in sharing: each of its scripts runs, in its place, in a run
    that names the line."""
    for documented in COMMANDS:
        for script in scripts(documented):
            ran = [r for r in RUNS if documented in r.shown and r.place == place(documented)]
            assert any(ON_PATH.sub("", r.script) == ON_PATH.sub("", script) for r in ran), (
                f"{documented}: {script!r} runs nowhere; runs naming it: {[str(r) for r in ran]}"
            )


def test_a_kit_command_in_dot_venv_bin_is_the_one_first_on_path(places: Places) -> None:
    """Why ``.venv/bin/course-kit X`` and ``course-kit X`` share a run: in the kit and its view,
    ``.venv/bin`` is the directory ``PATH`` finds the kit's commands in first."""
    first_on_path = Path(environment(places.home)["PATH"].split(os.pathsep)[0])
    for where in (KIT, places.view):
        for name in KIT_COMMANDS:
            assert (where / ".venv" / "bin" / name).resolve() == (first_on_path / name).resolve(), (
                f"{where}: .venv/bin/{name} is not {first_on_path / name}"
            )


def works(ran: Run, script: str, result: subprocess.CompletedProcess[str]) -> None:
    output = result.stdout + result.stderr
    shown = f"shown at {ran}\nran: {script}\n{output[-3000:]}"
    assert "Traceback (most recent call last)" not in output, shown
    assert "unrecognized arguments" not in output and "error: argument" not in output, shown
    assert result.returncode == ran.status, f"exit {result.returncode}: {shown}"


def runs_as_documented(ran: Run, places: Places) -> None:
    """Run as its reader would: each command in a home of its own (two pages may
    both make ``~/my-practice-zh``), every one with the kit's one cache, as one instructor's
    commands share theirs (it knows the assignment file the first roster run made)."""
    where = {"kit": KIT, "view": places.view}.get(ran.place) or learner_workspace(places)
    script = fill(ran.script, places)
    home = Path(tempfile.mkdtemp(prefix="home-", dir=places.home.parent))
    works(ran, script, run(script, where, home, cache=places.home / ".cache"))


def document_tests(document: str) -> type:
    """A class of the runs a document shows first. pytest-xdist (``--dist loadscope``) keeps a
    class on one worker, so the documents' commands, each long, share the workers between them."""
    runs = [r for r in RUNS if r.shown[0].where.rsplit(":", 1)[0] == document]

    @pytest.mark.parametrize("ran", runs, ids=str)
    def test_the_documented_command_works(self: object, ran: Run, places: Places) -> None:
        runs_as_documented(ran, places)

    name = "Test" + re.sub(r"\W+", "_", document.title())
    return type(name, (), {"test_the_documented_command_works": test_the_documented_command_works})


for _document in sorted({r.shown[0].where.rsplit(":", 1)[0] for r in RUNS}):
    _tests = document_tests(_document)
    globals()[_tests.__name__] = _tests


EXAMPLE = re.compile(r"^```python\n(.*?)^```\n\n```text\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_examples() -> list[tuple[str, str, str]]:
    """(where, code, shown output) for each ``python`` block followed by a ``text`` block."""
    found = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for example in EXAMPLE.finditer(text):
            line = text[: example.start()].count("\n") + 1
            found.append((f"{document.relative_to(KIT).as_posix()}:{line}", *example.groups()))
    return found


def test_the_readme_shows_the_chapters_own_call() -> None:
    assert any(where.startswith("README.md:") for where, _, _ in python_examples())


@pytest.mark.parametrize(("where", "code", "shown"), python_examples(), ids=lambda v: v[:40])
def test_a_documented_example_prints_what_it_shows(where: str, code: str, shown: str) -> None:
    result = subprocess.run(
        [str(KIT / ".venv" / "bin" / "python"), "-c", code],
        cwd=KIT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, f"{where}: {result.stderr}"
    assert result.stdout == shown, f"{where}: shown {shown!r}, printed {result.stdout!r}"
