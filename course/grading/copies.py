"""Copy detection for the roster: each lab's code fingerprinted, then compared across the class.

As MOSS does: each lab function becomes a stream of syntax tokens without what does not change
behaviour (docstrings, comments, annotations, no-op statements, local names numbered by first
use, the learner's own top-level names as one placeholder); its k-grams are hashed and winnowed.
A lab's fingerprint is that of its non-short functions (short ones everyone writes one way) and
the helpers they call. Every read is bounded and what is cut is said. Made only for roster rows,
never at a learner's door; the comparison lives in ``classroom.py``.
"""

from __future__ import annotations

import ast
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path

from ..harness.kit import read_source
from ..harness.manifest import Lab, Manifest
from ..harness.pysource import parse

SOURCE_BYTES = 64 * 1024  # of a learner file read (the reference's are at most 11 KiB)
FUNCTION_TOKENS = 4_000  # of one function (the reference's longest is well under 1,000)
FILE_TOKENS = 20_000  # of all the functions of one file together
# A reference function with fewer statements (nested ones counted) or tokens than these is
# short: there is about one way to write it, so it is never compared.
SHORT_STATEMENTS = 4
SHORT_TOKENS = 60
K = 12  # tokens per k-gram: about one short statement of syntax
WINDOW = 6  # hashes per winnowing window: any match of K + WINDOW - 1 tokens is always seen

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
    """One lab of one submission: its winnowed hashes and its functions' whole-stream digests."""

    hashes: frozenset[int]
    digests: Mapping[str, int] = field(default_factory=dict)  # module.function → uncut stream's


@dataclass(frozen=True)
class Prints:
    """A submission's fingerprints, lab by lab (labs with nothing of their own left out)."""

    labs: Mapping[str, LabPrint]
    cuts: tuple[Cut, ...] = ()


@dataclass(frozen=True)
class Baseline:
    """What every submission is read against: the reference, the starter and the short functions."""

    package: str
    labs: tuple[Lab, ...]
    given: Mapping[str, frozenset[str]]  # workspace path → the starter's top-level names
    short: frozenset[str]  # module.function of the reference's short lab functions
    reference: Prints


def _is_no_op(node: ast.stmt) -> bool:
    match node:
        # pass, a docstring (or any bare constant, ``...``), a bare declaration
        case ast.Pass() | ast.Expr(value=ast.Constant()) | ast.AnnAssign(value=None):
            return True
        case ast.Assign(targets=[ast.Name(id=target)], value=ast.Name(id=value)):
            return target == value
        case ast.If(test=ast.Constant(value=test), orelse=[]):
            return not test
    return False


def _local_names(function: ast.FunctionDef, limit: int) -> set[str]:
    """Parameters and every name the function (or a nested scope) binds, over ``limit`` nodes."""
    names: set[str] = set()
    scopes = ast.FunctionDef | ast.AsyncFunctionDef | ast.ExceptHandler
    for node in islice(ast.walk(function), limit):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, scopes) and node is not function and node.name:
            names.add(node.name)
    return names


_RENAMED = {("Name", "id"), ("arg", "arg"), ("FunctionDef", "name"), ("ExceptHandler", "name")}


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
                items = [s for s in items if not _is_no_op(s)] or [ast.Pass()]
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
    """What a file's top level binds: its names, the learner's own functions, import aliases."""

    top: frozenset[str]
    own: frozenset[str]
    aliases: Mapping[str, str]


def _top_level_names(tree: ast.Module) -> frozenset[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return frozenset(names)


def _module_names(tree: ast.Module, given: frozenset[str], labs: set[str]) -> _Module:
    aliases = {
        a.asname: a.name
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for a in node.names
        if a.asname
    }
    own = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in given}
    top = _top_level_names(tree) | given
    return _Module(frozenset(top - labs), frozenset(own - labs), aliases)


def _renamer(local: set[str], module: _Module, keep: str) -> Callable[[str], str]:
    numbered: dict[str, str] = {}

    def rename(name: str) -> str:
        if name == keep:
            return name
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


@dataclass(frozen=True)
class _Function:
    tokens: list[str]
    cut: bool
    calls: frozenset[str]
    statements: int


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


def _functions(
    tree: ast.Module, path: str, given: frozenset[str], wanted: set[str]
) -> tuple[dict[str, _Function], list[Cut]]:
    """The ``wanted`` top-level functions and the learner's helpers they call, normalised
    (the file's token budget is spent in that order; other helpers are never read)."""
    module = _module_names(tree, given, wanted)
    nodes: dict[str, ast.FunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            nodes.setdefault(node.name, node)
    found: dict[str, _Function] = {}
    cuts: list[Cut] = []
    budget = FILE_TOKENS
    todo = deque(name for name in nodes if name in wanted)
    while todo:
        name = todo.popleft()
        if name in found:
            continue
        if budget <= 0:
            cuts.append(Cut(path, name, "file tokens", FILE_TOKENS, FILE_TOKENS + 1))
            break
        node = nodes[name]
        local = _local_names(node, 4 * FUNCTION_TOKENS)
        limit = min(FUNCTION_TOKENS, budget)
        tokens = list(islice(_stream(node, _renamer(local, module, name)), limit + 1))
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
        todo.extend(sorted(c for c in calls if c in nodes and c not in found))
        statements = sum(1 for t in tokens if t in _STATEMENTS) - 1
        found[name] = _Function(tokens, cut, calls, statements)
    return found, cuts


_STATEMENTS = frozenset(kind.__name__ for kind in ast.stmt.__subclasses__())


def _is_short(function: _Function) -> bool:
    return function.statements < SHORT_STATEMENTS or len(function.tokens) < SHORT_TOKENS


def _reachable(start: str, functions: Mapping[str, _Function], wanted: set[str]) -> list[str]:
    """``start`` and the learner's helpers it calls, directly or not (never another lab's)."""
    seen, todo = [start], [start]
    while todo:
        for name in sorted(functions[todo.pop()].calls):
            if name in functions and name not in seen and name not in wanted:
                seen.append(name)
                todo.append(name)
    return seen


def fingerprint(
    sources: Mapping[str, bytes],
    package: str,
    labs: tuple[Lab, ...],
    given: Mapping[str, frozenset[str]],
    short: frozenset[str] = frozenset(),
) -> Prints:
    """A submission's fingerprints; ``sources`` maps workspace paths to source."""
    by_path: dict[str, dict[str, _Function]] = {}
    cuts: list[Cut] = []
    wanted: dict[str, set[str]] = {}
    for lab in labs:
        for function in lab.functions:
            wanted.setdefault(f"{package}/{function.module}.py", set()).add(function.function)
    for path, names in wanted.items():
        tree, file_cuts = _readable(sources.get(path, b""), path)
        cuts += file_cuts
        if tree is not None:
            found, function_cuts = _functions(tree, path, given.get(path, frozenset()), names)
            by_path[path] = found
            cuts += function_cuts
    prints: dict[str, LabPrint] = {}
    for lab in labs:
        hashes: set[int] = set()
        digests: dict[str, int] = {}
        for function in lab.functions:
            path = f"{package}/{function.module}.py"
            functions = by_path.get(path, {})
            mine = functions.get(function.function)
            if function.name in short or mine is None or _is_short(mine):
                continue
            ids = _hash(mine.tokens)
            if not mine.cut:
                digests[function.name] = hash(tuple(ids))
            for name in _reachable(function.function, functions, wanted[path]):
                helper = functions[name]
                hashes |= winnow(ids if name == function.function else _hash(helper.tokens))
        if hashes:
            prints[lab.id] = LabPrint(frozenset(hashes), digests)
    return Prints(prints, tuple(cuts))


def baseline(manifest: Manifest, kit: Path, labs: tuple[Lab, ...] | None = None) -> Baseline:
    """The reference's fingerprints and what the starter gives, read from the kit once."""
    chosen = labs if labs is not None else tuple(manifest.labs)
    files = manifest.files_with_role("learner")
    given = {f.path: _top_level_names(parse(read_source(kit, f.starter))) for f in files}
    reference = {f.path: read_source(kit, f.reference) for f in files}
    short: set[str] = set()
    for lab in chosen:
        for function in lab.functions:
            path = f"{manifest.package}/{function.module}.py"
            tree = parse(reference[path])
            found, _ = _functions(tree, path, given[path], {function.function})
            mine = found.get(function.function)
            if mine is None or _is_short(mine):
                short.add(function.name)
    frozen = frozenset(short)
    prints = fingerprint(reference, manifest.package, chosen, given, frozen)
    return Baseline(manifest.package, chosen, given, frozen, prints)


def learner_prints(base: Baseline, sources: Mapping[str, bytes]) -> Prints:
    """A learner's fingerprints against ``base`` (bounded whatever the files hold)."""
    return fingerprint(sources, base.package, base.labs, base.given, base.short)
