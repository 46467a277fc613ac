"""Copy detection for the roster: each lab's code and each learner file fingerprinted.

As MOSS does: code becomes a stream of syntax tokens without what does not change behaviour
(what a script can change is undone first, ``normalise.py``; then docstrings, comments,
annotations, local names numbered by first use, a function's own name, the learner's own
top-level names as one placeholder); its k-grams are hashed and winnowed, and each statement
is hashed on its own too, so statements put between the copied ones hide nothing. What is
read is what Python runs: a name's last binding (the last ``def``, or an alias
``name = other``). A lab's fingerprint is that of its functions and of the learner's
helpers they call, read before anything is judged short; each file's fingerprint is that of its
whole top level, so renaming, wrapping and appending hide nothing. Every read is bounded and
what is cut is said. Made only for roster rows, never at a learner's door; the comparison lives
in ``classroom.py``.
"""

from __future__ import annotations

import ast
import copy
import zlib
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path

from ...harness.kit import read_source
from ...harness.manifest import Lab, Manifest
from ...harness.pysource import parse
from .normalise import is_no_op, normalised

SOURCE_BYTES = 64 * 1024  # of a learner file read (the reference's are at most 11 KiB)
FUNCTION_TOKENS = 4_000  # of one function (the reference's longest is well under 1,000)
FILE_TOKENS = 10_000  # of one file's top level together (the reference's longest: about 1,000)
# A function (with the helpers it calls) with fewer statements (nested ones counted) or tokens
# than these is short: there is about one way to write it, so it is compared only whole.
SHORT_STATEMENTS = 4
SHORT_TOKENS = 60
K = 12  # tokens per k-gram: about one short statement of syntax
STATEMENT_LEAST = K  # tokens of a statement hashed on its own (shorter ones say little)
STATEMENT_TOKENS = 400  # of one statement hashed on its own (its head, for a block)
WINDOW = 6  # hashes per winnowing window: any match of K + WINDOW - 1 tokens is always seen
# The kit's independent solutions (one folder per author, one file per learner module): what
# at least INDEPENDENT_COMMON of them share is how anyone writes it, never evidence of a copy.
INDEPENDENT_SOLUTIONS = "tests/harness/own_solutions"
INDEPENDENT_AUTHORS = ("first", "second", "third")
"""The solutions written apart (``fourth/`` is ``third/`` with another Lab 11.3 design: read as
a fourth author, all of ``third/`` would count as what anyone writes)."""
INDEPENDENT_COMMON = 2

_SKIPPED_FIELDS = frozenset(
    {"ctx", "type_comment", "kind", "annotation", "returns", "decorator_list", "simple"}
)


@dataclass(frozen=True)
class Cut:
    """Something not fingerprinted whole: which file (and function), the limit, and its size."""

    path: str
    function: str
    limit: str  # bytes, function tokens, file tokens or unparsable
    kept: int  # bytes or tokens fingerprinted
    size: int  # the file's bytes; for tokens, at least this many (the rest is never read)

    def to_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class LabPrint:
    """One lab (or file) of one submission: its winnowed hashes, its functions' whole-stream
    digests, one digest of all its code, to compare it whole (None when something was cut),
    and its statements hashed each on its own (``statement_hashes``)."""

    hashes: frozenset[int]
    digests: Mapping[str, int] = field(default_factory=dict)  # module.function → uncut stream's
    whole: int | None = None
    statements: frozenset[int] = frozenset()


@dataclass(frozen=True)
class Prints:
    """A submission's fingerprints, lab by lab (labs it does not define left out) and file by
    file (workspace path → its whole top level)."""

    labs: Mapping[str, LabPrint]
    cuts: tuple[Cut, ...] = ()
    files: Mapping[str, LabPrint] = field(default_factory=dict)

    def unit(self, key: str) -> LabPrint | None:
        """A lab's print by its id, or a file's by its path."""
        return self.labs.get(key) or self.files.get(key)


@dataclass(frozen=True)
class Baseline:
    """What every submission is read against: the reference, the scaffold (the starter) and
    what the kit's independent solutions share, lab by lab and file by file."""

    package: str
    labs: tuple[Lab, ...]
    given: Mapping[str, frozenset[str]]  # workspace path → the starter's top-level names
    short: frozenset[str]  # module.function of the reference's short lab functions
    reference: Prints
    scaffold: Prints = field(default_factory=lambda: Prints({}))
    independent: Mapping[str, LabPrint] = field(default_factory=dict)  # unit → what they share
    solutions: tuple[Prints, ...] = ()  # the kit's independent solutions, as read

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(sorted(self.given))

    def everyones(self, unit: str) -> LabPrint:
        """What of ``unit`` is no evidence between learners: the scaffold's hashes and
        statements, and those at least ``INDEPENDENT_COMMON`` independent solutions hold."""
        given = self.scaffold.unit(unit) or LabPrint(frozenset())
        shared = self.independent.get(unit) or LabPrint(frozenset())
        return LabPrint(
            given.hashes | shared.hashes, statements=given.statements | shared.statements
        )

    def given_whole(self, unit: str) -> int | None:
        """The starter's whole digest of ``unit``: equal to it, a learner has not started it."""
        given = self.scaffold.unit(unit)
        return given.whole if given is not None else None


def _local_names(root: ast.AST, limit: int) -> set[str]:
    """Parameters and every name ``root`` (or a nested scope) binds, over ``limit`` nodes."""
    names: set[str] = set()
    scopes = ast.FunctionDef | ast.AsyncFunctionDef | ast.ExceptHandler | ast.ClassDef
    for node in islice(ast.walk(root), limit):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, scopes) and node is not root and node.name:
            names.add(node.name)
    return names


_RENAMED = {
    ("Name", "id"),
    ("arg", "arg"),
    ("FunctionDef", "name"),
    ("ClassDef", "name"),
    ("ExceptHandler", "name"),
}


def _stream(node: ast.AST, rename: Callable[[str], str]) -> Iterator[str]:
    """The tree in pre-order, normalised: each node's type and the values that shape it;
    iterative (a learner's deep nesting never recurses) and lazy (the caller cuts it)."""
    stack: list[ast.AST | str] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
            continue
        kind = "Assign" if isinstance(item, ast.AnnAssign) else type(item).__name__
        yield kind
        children: list[ast.AST | str] = []
        for name, value in ast.iter_fields(item):
            if name in _SKIPPED_FIELDS:
                continue
            items = value if isinstance(value, list) else [value]
            if items and isinstance(items[0], ast.stmt):
                items = [s for s in items if not is_no_op(s)] or [ast.Pass()]
            for child in items:
                if isinstance(child, ast.AST):
                    children.append(child)
                elif isinstance(child, str) and (kind, name) in _RENAMED:
                    children.append(f"{name}={rename(child)}")
                elif child is not None:
                    children.append(f"{name}={child!r}")
        stack.extend(reversed(children))


@dataclass(frozen=True)
class _Module:
    """What a file's top level binds: its names, the learner's own functions, import aliases,
    and the function each name is bound to last (a ``def``, or an alias of one)."""

    top: frozenset[str]
    own: frozenset[str]
    aliases: Mapping[str, str]
    bound: Mapping[str, ast.FunctionDef]


def _top_level_names(tree: ast.Module) -> frozenset[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return frozenset(names)


def _bindings(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """Each top-level name bound to a function when the module has run: the last ``def`` of
    it, or ``name = other`` after ``other``'s; bound to anything else, it is no function."""
    bound: dict[str, ast.FunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            bound[node.name] = node
        elif isinstance(node, ast.AsyncFunctionDef | ast.ClassDef):
            bound.pop(node.name, None)
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            alias = bound.get(value.id) if isinstance(value, ast.Name) else None
            for target in targets:
                if isinstance(target, ast.Name):
                    if alias is not None:
                        bound[target.id] = alias
                    else:
                        bound.pop(target.id, None)
    return bound


def _module_names(tree: ast.Module, given: frozenset[str], labs: set[str]) -> _Module:
    aliases = {
        a.asname: a.name
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for a in node.names
        if a.asname
    }
    own = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in given}
    own |= {
        n.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for n in node.targets
        if isinstance(n, ast.Name) and n.id not in given
    }
    top = _top_level_names(tree) | given
    return _Module(frozenset(top - labs), frozenset(own - labs), aliases, _bindings(tree))


def _renamer(local: set[str], module: _Module, itself: str) -> Callable[[str], str]:
    numbered: dict[str, str] = {}

    def rename(name: str) -> str:
        if name == itself:
            return "f"  # a function's own name, whatever it is called
        if name in local:
            return numbered.setdefault(name, f"v{len(numbered)}")
        if name in module.top:
            return "g"  # a helper, a class or a constant of the file, whatever it is called
        return module.aliases.get(name, name)  # imported or builtin: what the code does

    return rename


def _hash(tokens: list[str]) -> list[int]:
    return [zlib.crc32(t.encode("utf-8", "backslashreplace")) for t in tokens]


def winnow(ids: list[int]) -> set[int]:
    """The ``K``-gram hashes of ``ids`` kept by winnowing (deterministic across processes)."""
    grams = [hash(tuple(ids[i : i + K])) for i in range(len(ids) - K + 1)]
    if len(grams) <= WINDOW:
        return {min(grams)} if grams else set()
    return {min(grams[i : i + WINDOW]) for i in range(len(grams) - WINDOW + 1)}


_STATEMENTS = frozenset(kind.__name__ for kind in ast.stmt.__subclasses__())
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def statement_hashes(
    root: ast.AST, local: set[str], module: _Module, itself: str, budget: int
) -> frozenset[int]:
    """Each statement under ``root`` hashed on its own (a block by its head: the loop's
    target and iterable, the test), its names numbered within it, when it has at least
    ``STATEMENT_LEAST`` tokens: what statements put between, before or around it, and the
    names they bind, never change it. ``budget`` tokens are read in all."""
    found: set[int] = set()
    for node in islice(ast.walk(root), 4 * FUNCTION_TOKENS):
        if budget <= 0:
            break
        if not isinstance(node, ast.stmt) or isinstance(node, ast.FunctionDef | ast.ClassDef):
            continue
        head = copy.copy(node)
        for name in _BODIES:
            if isinstance(getattr(head, name, None), list):
                setattr(head, name, [])
        limit = min(STATEMENT_TOKENS, budget)
        tokens = list(islice(_stream(head, _renamer(local, module, itself)), limit))
        budget -= len(tokens)
        if len(tokens) >= STATEMENT_LEAST:
            found.add(hash(tuple(_hash(tokens))))
    return frozenset(found)


@dataclass(frozen=True)
class _Function:
    """One top-level statement read: its normalised tokens, hashed, what it calls, and its
    statements hashed each on its own (``statement_hashes``)."""

    ids: list[int]
    cut: bool
    calls: frozenset[str]
    statements: int
    each: frozenset[int] = frozenset()

    @property
    def digest(self) -> int:
        return hash(tuple(self.ids))


@dataclass(frozen=True)
class _File:
    """A file read: the lab functions and the helpers they call by name, every top-level
    statement (the lab functions' included) in the order read, and what was cut."""

    functions: Mapping[str, _Function]
    statements: tuple[_Function, ...]
    cuts: tuple[Cut, ...]


def _readable(source: bytes, path: str) -> tuple[ast.Module | None, list[Cut]]:
    """The file parsed, cut before a top-level statement when it is too long."""
    cuts = []
    if len(source) > SOURCE_BYTES:
        head = source[:SOURCE_BYTES]
        end = max(head.rfind(b"\ndef "), head.rfind(b"\nclass "), head.rfind(b"\n@"))
        cuts.append(Cut(path, "", "bytes", max(end + 1, 0), len(source)))
        source = head[: end + 1] if end >= 0 else b""
    try:
        return parse(source), cuts
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, [*cuts, Cut(path, "", "unparsable", 0, len(source))]


def _read(
    tree: ast.Module,
    path: str,
    given: frozenset[str],
    wanted: set[str],
    cut: Sequence[Cut] = (),
    labs: frozenset[str] = frozenset(),
) -> _File:
    """The ``wanted`` functions as bound and the learner's helpers they call, then the rest of
    the top level, normalised (``normalise.py``: every function but ``wanted`` and ``labs``, the
    file's lab functions, may be put back where it is called once; the file's token budget is
    spent in that order); ``cut`` says what of the file was cut before it was parsed."""
    tree = normalised(tree, labs | wanted)
    module = _module_names(tree, given, wanted)
    read: dict[int, _Function] = {}  # id(node) → what it gave, each node read once
    found: dict[str, _Function] = {}
    order: list[_Function] = []
    cuts: list[Cut] = list(cut)
    budget = FILE_TOKENS

    def take(node: ast.stmt, name: str) -> _Function | None:
        nonlocal budget
        if id(node) in read:
            return read[id(node)]
        if budget <= 0:
            cuts.append(Cut(path, name, "file tokens", FILE_TOKENS, FILE_TOKENS + 1))
            return None
        local = _local_names(node, 4 * FUNCTION_TOKENS)
        itself = node.name if isinstance(node, ast.FunctionDef) else ""
        limit = min(FUNCTION_TOKENS, budget)
        tokens = list(islice(_stream(node, _renamer(local, module, itself)), limit + 1))
        cut = len(tokens) > limit
        if cut:
            tokens = tokens[:limit]
            which = "function tokens" if limit == FUNCTION_TOKENS else "file tokens"
            cuts.append(Cut(path, name, which, limit, limit + 1))
        budget -= len(tokens)
        calls = frozenset(
            n.id
            for n in islice(ast.walk(node), 4 * FUNCTION_TOKENS)
            if isinstance(n, ast.Name) and n.id in module.own and n.id not in local
        )
        statements = sum(1 for t in tokens if t in _STATEMENTS) - 1
        each = statement_hashes(node, local, module, itself, FUNCTION_TOKENS)
        read[id(node)] = done = _Function(_hash(tokens), cut, calls, statements, each)
        order.append(done)
        return done

    todo = deque(name for name in sorted(module.bound) if name in wanted)
    while todo:
        name = todo.popleft()
        if name in found:
            continue
        taken = take(module.bound[name], name)
        if taken is None:
            break
        found[name] = taken
        todo.extend(sorted(c for c in taken.calls if c in module.bound and c not in found))
    for node in tree.body:
        if not isinstance(node, ast.Import | ast.ImportFrom) and not is_no_op(node):
            named = node.name if isinstance(node, ast.FunctionDef | ast.ClassDef) else ""
            if take(node, named) is None:
                break
    return _File(found, tuple(order), tuple(cuts))


def _reachable(start: str, functions: Mapping[str, _Function], wanted: set[str]) -> list[str]:
    """``start`` and the learner's helpers it calls, directly or not (never another lab's)."""
    seen, todo = [start], [start]
    while todo:
        for name in sorted(functions[todo.pop()].calls):
            if name in functions and name not in seen and name not in wanted:
                seen.append(name)
                todo.append(name)
    return seen


def _is_short(parts: list[_Function]) -> bool:
    statements = sum(part.statements for part in parts) + len(parts) - 1
    return statements < SHORT_STATEMENTS or sum(len(p.ids) for p in parts) < SHORT_TOKENS


def _whole(parts: list[_Function]) -> int | None:
    """One digest of ``parts`` whatever their order (None when any was cut)."""
    if not parts or any(part.cut for part in parts):
        return None
    return hash(tuple(sorted(part.digest for part in parts)))


def _lab_print(
    lab: Lab,
    package: str,
    files: Mapping[str, _File],
    wanted: Mapping[str, set[str]],
    short: frozenset[str],
) -> LabPrint | None:
    hashes: set[int] = set()
    each: set[int] = set()
    digests: dict[str, int] = {}
    parts: dict[int, _Function] = {}
    for function in lab.functions:
        path = f"{package}/{function.module}.py"
        read = files.get(path)
        if read is None or function.function not in read.functions:
            continue
        names = _reachable(function.function, read.functions, wanted[path])
        closure = [read.functions[name] for name in names]
        parts |= {id(part): part for part in closure}
        if function.name in short or _is_short(closure):
            continue
        for name, part in zip(names, closure, strict=True):
            hashes |= winnow(part.ids)
            each |= part.each
            if not part.cut and not _is_short([part]):
                digests[f"{function.module}.{name}"] = part.digest
    if not parts:
        return None
    paths = {f"{package}/{function.module}.py" for function in lab.functions}
    cut = any(files[path].cuts for path in paths if path in files)
    whole = None if cut else _whole(list(parts.values()))
    return LabPrint(frozenset(hashes), digests, whole, frozenset(each))


def _file_print(read: _File) -> LabPrint:
    hashes: set[int] = set()
    each: set[int] = set()
    for part in read.statements:
        hashes |= winnow(part.ids)
        each |= part.each
    whole = None if read.cuts else _whole(list(read.statements))
    return LabPrint(frozenset(hashes), {}, whole, frozenset(each))


def fingerprint(
    sources: Mapping[str, bytes],
    package: str,
    labs: tuple[Lab, ...],
    given: Mapping[str, frozenset[str]],
    short: frozenset[str] = frozenset(),
) -> Prints:
    """A submission's fingerprints; ``sources`` maps workspace paths to source (the learner
    files of ``given``, each read whole, whether a lab of ``labs`` is in it or not)."""
    files: dict[str, _File] = {}
    cuts: list[Cut] = []
    wanted: dict[str, set[str]] = {path: set() for path in given}
    for lab in labs:
        for function in lab.functions:
            wanted.setdefault(f"{package}/{function.module}.py", set()).add(function.function)
    for path, names in wanted.items():
        if path not in sources:
            continue
        tree, file_cuts = _readable(sources[path], path)
        if tree is None:
            cuts += file_cuts
        else:
            files[path] = _read(tree, path, given.get(path, frozenset()), names, file_cuts)
            cuts += files[path].cuts
    prints = {lab.id: _lab_print(lab, package, files, wanted, short) for lab in labs}
    return Prints(
        {lab: p for lab, p in prints.items() if p is not None},
        tuple(cuts),
        {path: _file_print(read) for path, read in files.items() if read.statements},
    )


def _independent_solutions(kit: Path, files: Mapping[str, bytes]) -> list[dict[str, bytes]]:
    """The kit's independent solutions, each as a workspace's learner files (none when the kit
    has none, as an installed copy may not)."""
    root = kit / INDEPENDENT_SOLUTIONS
    authors = [root / name for name in INDEPENDENT_AUTHORS if (root / name).is_dir()]
    return [
        {path: (author / Path(path).name).read_bytes() for path in files}
        for author in authors
        if all((author / Path(path).name).is_file() for path in files)
    ]


def _held(sets: list[frozenset[int]]) -> frozenset[int]:
    """What at least ``INDEPENDENT_COMMON`` of ``sets`` hold."""
    held = Counter(h for found in sets for h in found)
    return frozenset(h for h, n in held.items() if n >= INDEPENDENT_COMMON)


def _shared(solutions: tuple[Prints, ...], units: list[str]) -> dict[str, LabPrint]:
    shared: dict[str, LabPrint] = {}
    for unit in units:
        found = [p for solution in solutions if (p := solution.unit(unit)) is not None]
        hashes = _held([p.hashes for p in found])
        shared[unit] = LabPrint(hashes, statements=_held([p.statements for p in found]))
    return shared


def baseline(manifest: Manifest, kit: Path, labs: tuple[Lab, ...] | None = None) -> Baseline:
    """The reference's, the starter's and the independent solutions' fingerprints, read from
    the kit once."""
    chosen = labs if labs is not None else tuple(manifest.labs)
    files = manifest.files_with_role("learner")
    starter = {f.path: read_source(kit, f.starter) for f in files}
    given = {path: _top_level_names(parse(source)) for path, source in starter.items()}
    reference = {f.path: read_source(kit, f.reference) for f in files}
    short: set[str] = set()
    labs_in: dict[str, set[str]] = defaultdict(set)
    for lab in chosen:
        for function in lab.functions:
            labs_in[f"{manifest.package}/{function.module}.py"].add(function.function)
    for lab in chosen:
        for function in lab.functions:
            path = f"{manifest.package}/{function.module}.py"
            every = frozenset(labs_in[path])
            read = _read(parse(reference[path]), path, given[path], {function.function}, (), every)
            mine = read.functions.get(function.function)
            if mine is None or _is_short([mine]):
                short.add(function.name)
    frozen = frozenset(short)

    def prints(sources: Mapping[str, bytes]) -> Prints:
        return fingerprint(sources, manifest.package, chosen, given, frozen)

    solutions = tuple(prints(s) for s in _independent_solutions(kit, reference))
    units = [lab.id for lab in chosen] + sorted(given)
    return Baseline(
        manifest.package,
        chosen,
        given,
        frozen,
        prints(reference),
        prints(starter),
        _shared(solutions, units),
        solutions,
    )


def learner_prints(base: Baseline, sources: Mapping[str, bytes]) -> Prints:
    """A learner's fingerprints against ``base`` (bounded whatever the files hold)."""
    return fingerprint(sources, base.package, base.labs, base.given, base.short)
