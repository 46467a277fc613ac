"""The "one X" promises of docs/architecture.md, checked on the kit's source.

Each test names the one module that may do a thing, reads every module of ``course/`` with
the kit's own parser, and fails on a second place that does it. A module is named by what
defines the thing (``Event.__module__``, ``kit_root.__module__``), not by its path.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import course
from course import jsonl, locale
from course.fields import FieldReader
from course.grading.confinement import cgroups, launch
from course.grading.verdict import inprocess, probes
from course.harness import pysource, runner, supervisor
from course.harness.kit import kit_root
from course.harness.manifest import CHAPTER_ROOTS, Manifest, available_chapters, load_manifest
from course.harness.records import RecordReader
from course.locale import EDITIONS, ENVIRONMENT
from course.sandboxed import probe_driver, status, untrusted
from course.sandboxed.marker import speak
from course.sandboxed.records import Event
from course.sandboxed.tables import TableReader

PACKAGE = Path(course.__file__).resolve().parent
CHAPTER_FREE_PACKAGES = ("cli", "grading", "harness", "sandboxed", "display", "tools", "locale")
"""The machinery (docs/chapters.md): it names no chapter."""
Source = tuple[ast.Module, tuple[str, ...]]
"""A module's tree and the folders between ``course/`` and its file."""


@functools.cache
def sources() -> dict[str, Source]:
    """Every module of ``course/`` by its dotted name."""
    found: dict[str, Source] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = (pysource.parse(path.read_bytes(), str(path)), parts[1:-1])
    return found


def where(name: str, node: ast.AST) -> str:
    return f"{name}:{getattr(node, 'lineno', '?')}: {ast.unparse(node)[:120]}"


def found_in(
    check: Callable[[ast.AST], bool], allowed: set[str], skip: tuple[str, ...] = ()
) -> list[str]:
    """``module:line: code`` of every node ``check`` accepts outside the ``allowed`` modules."""
    return [
        where(name, node)
        for name, (tree, _) in sources().items()
        if name not in allowed and not name.startswith(skip)
        for node in ast.walk(tree)
        if check(node)
    ]


def calls(node: ast.AST, *names: str) -> bool:
    """A call of ``name(...)`` or ``anything.name(...)``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id in names) or (
        isinstance(func, ast.Attribute) and func.attr in names
    )


def strings(node: ast.AST | None) -> Iterator[str]:
    """The string constants ``node`` may evaluate to (through ``a if c else b`` and tuples)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.IfExp):
        yield from strings(node.body)
        yield from strings(node.orelse)
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for item in node.elts:
            yield from strings(item)


def reads(node: ast.AST, keys: set[str]) -> bool:
    """``key``, ``x.key``, ``x["key"]`` or ``x.get("key")`` for one of ``keys``."""
    if isinstance(node, ast.Name):
        return node.id in keys
    if isinstance(node, ast.Attribute):
        return node.attr in keys
    if isinstance(node, ast.Subscript):
        return any(key in keys for key in strings(node.slice))
    if isinstance(node, ast.Call) and calls(node, "get") and node.args:
        return any(key in keys for key in strings(node.args[0]))
    return False


def spells(node: ast.AST, keys: set[str], words: set[str]) -> bool:
    """A comparison of one of ``keys`` with a literal of ``words``, or such a literal stored
    under one of ``keys`` in a dict or as a keyword argument."""
    if isinstance(node, ast.Compare):
        sides = [node.left, *node.comparators]
        return any(reads(side, keys) for side in sides) and any(
            word in words for side in sides for word in strings(side)
        )
    if isinstance(node, ast.Dict):
        pairs = zip(node.keys, node.values, strict=True)
        return any(set(strings(key)) & keys and set(strings(value)) & words for key, value in pairs)
    if isinstance(node, ast.keyword):
        return node.arg in keys and bool(set(strings(node.value)) & words)
    return False


def test_only_pysource_calls_ast_parse() -> None:
    """One lock for parsing: every parse goes through ``pysource.parse``."""

    def parses(node: ast.AST) -> bool:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return node.func.id == "compile" and "PyCF_ONLY_AST" in ast.unparse(node)
        return calls(node, "parse") and ast.unparse(node).startswith("ast.parse(")

    assert found_in(parses, {pysource.__name__}) == []


def test_only_status_py_spells_a_verdict() -> None:
    """One status: a verdict is compared with, or stored as, a ``Status``, never its word."""
    keys = {"status", "missing", "raised", "verdict"}
    words = set(status.GRADED)
    assert found_in(lambda node: spells(node, keys, words), {status.__name__}) == []


def test_only_the_records_module_spells_an_event() -> None:
    """One schema for the child's records: readers and writers name events by ``Event``."""
    words = {str(event) for event in Event}
    written = found_in(lambda node: spells(node, {"event"}, words), {Event.__module__})
    assert written == []


def test_only_the_supervisor_starts_a_child() -> None:
    """One supervisor: only it starts a process (the cgroup's scope holder, a ``sleep``, and
    the maintainer's tools aside), and the focused tests and the probes start theirs there."""

    def starts(node: ast.AST) -> bool:
        return calls(node, "Popen") or (
            isinstance(node, ast.keyword) and node.arg == "start_new_session"
        )

    allowed = {supervisor.__name__, cgroups.__name__}
    assert found_in(starts, allowed, skip=("course.tools",)) == []
    starting = {
        name
        for name, (tree, _) in sources().items()
        if any(calls(node, supervisor.start_child.__name__) for node in ast.walk(tree))
    }
    assert {runner.__name__, probes.__name__} <= starting


def test_only_untrusted_cuts_text() -> None:
    """Learner text made safe once: one helper cuts text and marks the cut (``clip``). The
    chapter's probe module, below the harness and loaded alone, keeps its own."""

    def cuts(node: ast.AST) -> bool:
        if calls(node, "shorten"):
            return True
        return (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add)
            and isinstance(node.left, ast.Subscript)
            and isinstance(node.left.slice, ast.Slice)
            and any("…" in text for text in strings(node.right))
        )

    assert found_in(cuts, {untrusted.__name__}, skip=("course.curricula",)) == []


def test_json_and_toml_from_outside_are_read_by_a_strict_reader() -> None:
    """One strict reader pattern: a function that parses JSON or TOML hands it, in the same
    function, to a ``TableReader``, a ``FieldReader`` or a ``from_json`` built on one, or is a
    strict reader itself (the records, the session log). Not checked: the editions' and the
    maintainer's tools' own files, what the grader wrote for its children itself, and the
    probe cache (``probes.prepare``: the grader's own draw, kept in the user's cache)."""
    readers = {RecordReader.__module__, jsonl.__name__}
    own = {launch.__name__, probe_driver.__name__}
    cache = (probes.__name__, probes._read_cached.__name__)

    def names(node: ast.AST) -> set[str]:
        return {
            part.id if isinstance(part, ast.Name) else part.attr
            for part in ast.walk(node)
            if isinstance(part, ast.Name | ast.Attribute)
        }

    def parses(node: ast.AST) -> bool:
        return (
            calls(node, "loads", "load")
            and isinstance(node, ast.Call)
            and ast.unparse(node.func).startswith(("json.", "tomllib."))
            and not (node.args and calls(node.args[0], "dumps"))  # a copy, not a read
        )

    functions = [
        (name, node)
        for name, (tree, _) in sources().items()
        if not name.startswith((locale.__name__, "course.tools")) and name not in readers | own
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
    ]
    strict = {TableReader.__name__, FieldReader.__name__}
    strict |= {  # a reader made on them (the manifest's, which can read on past a bad field)
        node.name
        for tree, _ in sources().values()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and names(ast.Module(node.bases, [])) & strict
    }
    strict |= {
        node.name
        for _, node in functions
        if node.name.endswith("from_json") and names(node) & strict
    }
    unread = [
        where(name, node)
        for name, node in functions
        if (name, node.name) != cache
        and any(map(parses, ast.walk(node)))
        and not names(node) & strict
    ]
    assert unread == []


def test_only_kit_py_knows_the_kit_root() -> None:
    """One place knows the kit root: no other module climbs from its ``__file__`` out of the
    ``course`` package (to the repository, where the starters and tests are)."""

    def levels(node: ast.AST) -> int | None:
        """How many folders above its file the path ``node`` computes from ``__file__`` is
        (``None``: not such a path)."""
        if isinstance(node, ast.Name):
            return 0 if node.id == "__file__" else None
        if isinstance(node, ast.Call):
            if calls(node, "Path", "dirname") and node.args:
                up = levels(node.args[0])
                return None if up is None else up + calls(node, "dirname")
            return levels(node.func)  # x.resolve(), x.with_name(...)
        if isinstance(node, ast.Attribute):
            up = levels(node.value)
            return None if up is None else up + (node.attr in ("parent", "with_name"))
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            index = node.slice.value if isinstance(node.slice, ast.Constant) else None
            if node.value.attr == "parents" and isinstance(index, int):
                up = levels(node.value.value)
                return None if up is None else up + 1 + index
        return None

    climbing = [
        where(name, node)
        for name, (tree, folders) in sources().items()
        if name != kit_root.__module__
        for node in ast.walk(tree)
        if (levels(node) or 0) > len(folders) + 1
    ]
    assert climbing == []


def test_only_the_locale_package_spells_an_edition() -> None:
    """One edition per process: ``"en"``, ``"zh"`` and ``COURSE_LANG`` are spelled once."""
    spelled = {*EDITIONS, ENVIRONMENT}

    def spells_edition(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and node.value in spelled

    assert found_in(spells_edition, {locale.__name__}) == []


def test_only_editions_py_chooses_the_edition() -> None:
    """One edition per process: a door chooses it through ``speak``; the in-kernel run only
    puts back the edition the graded copy's conftest changed."""

    def chooses(node: ast.AST) -> bool:
        return calls(node, "set_edition")

    assert found_in(chooses, {speak.__module__, inprocess.__name__, locale.__name__}) == []


# ------------------------------------------------------------------ no chapter in the machinery

MACHINERY = tuple(f"course.{package}" for package in CHAPTER_FREE_PACKAGES)
TEST_CHAPTERS = PACKAGE.parent / "tests" / "chapters"
"""The chapters kept with the suite: the machinery must not name them either."""


@dataclass(frozen=True)
class ChapterWords:
    """How a chapter can be named: its id, its labs' ids and its chapter-only names (the
    functions its labs write, its fixture data's names)."""

    chapter: str
    labs: frozenset[str]
    names: frozenset[str]

    def in_code(self, text: str) -> bool:
        """A string or a name of code naming the chapter: ``"11"``, ``"11.3"``, ``ch11``,
        ``practice-11``, ``CHAPTER_11`` (never Python's version, ``3.11`` or ``(3, 11)``)."""
        number = re.escape(self.chapter)
        return text in self.names or bool(
            re.search(rf"(?<![\w.])(?<!\d, ){number}(?![\w])|(?i:chapter|ch)_?{number}(?!\d)", text)
        )

    def in_prose(self, text: str) -> bool:
        """Prose (a docstring) naming the chapter beyond an example of the kit's own: a lab id,
        ``ch12``, ``chapter 12``, ``checkpoint 12``, ``practice-12``."""
        number = re.escape(self.chapter)
        labs = "|".join(re.escape(lab) for lab in sorted(self.labs))
        return bool(
            re.search(rf"(?<![\w.])({labs})(?![\w])", text)
            or re.search(rf"(?i:chapter|ch|checkpoint|practice)[ _-]?{number}(?!\d)", text)
        )


def chapter_words(manifest: Manifest) -> ChapterWords:
    names = {function.function for lab in manifest.labs for function in lab.functions}
    for file in manifest.files:
        if Path(file.path).name == "fixtures.py":  # the chapter's data: its names are its own
            tree = ast.parse((kit_root() / file.reference).read_text("utf-8"))
            names |= {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
            names |= {
                target.id
                for node in tree.body
                if isinstance(node, ast.Assign)
                for target in node.targets
                if isinstance(target, ast.Name) and target.id.isupper()
            }
    labs = frozenset(lab.id for lab in manifest.labs)
    public = frozenset(name for name in names if not name.startswith("_"))
    return ChapterWords(manifest.chapter, labs, public)


def every_chapter(monkeypatch: pytest.MonkeyPatch) -> list[tuple[ChapterWords, bool]]:
    """Each chapter the kit ships or the suite keeps, and whether it is built in."""
    if TEST_CHAPTERS.is_dir():
        roots = [os.environ.get(CHAPTER_ROOTS, ""), str(TEST_CHAPTERS)]
        monkeypatch.setenv(CHAPTER_ROOTS, os.pathsep.join(root for root in roots if root))
    found = [load_manifest(chapter) for chapter in available_chapters()]
    return [(chapter_words(m), m.folder.startswith("course/curricula/")) for m in found]


def docstrings_of(tree: ast.AST) -> set[int]:
    """The ids of the string statements of ``tree``: docstrings, of modules, classes,
    functions and attributes (prose, not code)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }


def names_a_chapter(
    name: str, tree: ast.Module, folders: tuple[str, ...], words: ChapterWords, built_in: bool
) -> list[str]:
    """``module:line: code`` of each place in ``tree`` that names the chapter or imports a
    chapter's module. Prose may take a built-in chapter as its example; code never does."""
    prose = docstrings_of(tree)
    found = []
    for node in ast.walk(tree):
        texts: list[str] = []
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in prose:
                if not built_in and words.in_prose(node.value):
                    found.append(f"{name}:{node.lineno}: {node.value[:120]!r}")
                continue
            texts.append(node.value)
        elif isinstance(node, ast.Name):
            texts.append(node.id)
        elif isinstance(node, ast.Attribute):
            texts.append(node.attr)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            texts.append(node.name)
        elif isinstance(node, ast.arg | ast.keyword) and node.arg:
            texts.append(node.arg)
        elif isinstance(node, ast.alias):
            texts += [node.name, node.asname or ""]
        if isinstance(node, ast.Import | ast.ImportFrom) and imports_a_chapter(node, folders):
            found.append(where(name, node))
        elif any(words.in_code(text) for text in texts if text):
            found.append(where(name, node) if hasattr(node, "lineno") else f"{name}: {texts}")
    return found


def imports_a_chapter(node: ast.Import | ast.ImportFrom, folders: tuple[str, ...]) -> bool:
    """Whether ``node`` imports a module of ``course.curricula`` (a chapter's code)."""
    if isinstance(node, ast.Import):
        modules = [alias.name for alias in node.names]
    else:
        base = ["course", *folders][: len(folders) + 1 - node.level + 1] if node.level else []
        module = ".".join([*base, *([node.module] if node.module else [])])
        modules = [module] + [f"{module}.{alias.name}" for alias in node.names]
    return any(m == "course.curricula" or m.startswith("course.curricula.") for m in modules)


def machinery_naming_chapters(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    chapters = every_chapter(monkeypatch)
    return [
        found
        for name, (tree, folders) in sources().items()
        if name.startswith(MACHINERY)
        for words, built_in in chapters
        for found in names_a_chapter(name, tree, folders, words, built_in)
    ]


def test_the_machinery_names_no_chapter(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/chapters.md: the machinery finds a chapter through its manifest; no machinery
    module names one (its id, its labs, its lab functions or its fixture data), imports one's
    code, or, for a chapter kept with the suite, mentions it even in prose."""
    assert [name for name in sources() if name.startswith(MACHINERY)], "no machinery found"
    found = machinery_naming_chapters(monkeypatch)
    assert found == []


PLANTED = {
    'LOCATE = "checkpoint 11"': True,
    'FOLDER = "practice-11"': True,
    'CASE = "11.3#007"': True,
    "def ch11_view() -> None: ...": True,
    "result = build_context(path)": True,
    "budget = fixtures.CHAPTER_BUDGET": True,
    "from course.curricula.ch11 import show": True,
    "from ..curricula import ch11": True,
    "import course.curricula.ch11.probes": True,
    'WANTED = (3, 11)  # "python3.11", not a chapter': False,
    '"""Prose may cite ``checkpoint 11 --lab 11.3`` as its example."""': False,
    "def every_chapter() -> None: ...": False,
}


@pytest.mark.parametrize(("code", "named"), list(PLANTED.items()), ids=list(PLANTED))
def test_a_planted_mention_of_a_chapter_is_found(code: str, named: bool) -> None:
    """The check above finds a chapter planted in a machinery module, and only that."""
    manifest = load_manifest("11")
    tree = ast.parse(code)
    found = names_a_chapter(
        "course.grading.planted", tree, ("grading",), chapter_words(manifest), True
    )
    assert bool(found) is named, found


def test_a_test_chapter_is_not_named_even_in_prose() -> None:
    twelve = ChapterWords("12", frozenset({"12.1", "12.2"}), frozenset({"estimate_tokens"}))
    prose = ast.parse('"""As ``checkpoint 12 --lab 12.1`` shows."""')
    assert names_a_chapter("course.harness.planted", prose, ("harness",), twelve, False)
    assert not names_a_chapter("course.harness.planted", prose, ("harness",), twelve, True)
    short = ast.parse('"""The 12-character form printed on cards."""')
    assert not names_a_chapter("course.harness.planted", short, ("harness",), twelve, False)


GRADER_MODULES = (
    "course.cli.checkpoint",
    "course.grading.verdict.engine",
    "course.grading.verdict.probes",
)
"""What ``checkpoint`` loads before it grades: the grader itself runs no test, so it needs no
pytest (only its sandboxed children do, and they start their own)."""


def test_the_grader_imports_no_pytest() -> None:
    """pytest costs every check's grader process 0.06 to 0.08 s of CPU to import
    (docs/performance.md); a module it loads asks for it only where a test runs."""
    shown = (
        f"import sys\nimport {', '.join(GRADER_MODULES)}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest')))"
    )
    ran = subprocess.run(
        [sys.executable, "-c", shown], capture_output=True, text=True, check=True, timeout=60
    )
    assert ran.stdout.strip() == "[]", ran.stdout
