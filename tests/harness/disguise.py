"""Disguising a copy the way a learner would: renamed names, reordered functions, comments.

Shared by the copy tests and ``bench/copies.py``. Each change keeps what the code does.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from course.harness.kit import read_source
from course.harness.manifest import Manifest

OWN_SOLUTIONS = Path(__file__).parent / "own_solutions"
AUTHORS = ("first", "second", "third")

Sources = dict[str, bytes]


def reference_sources(manifest: Manifest, kit: Path) -> Sources:
    return {f.path: read_source(kit, f.reference) for f in manifest.files_with_role("learner")}


def own_sources(manifest: Manifest, author: str) -> Sources:
    """An independent solution, module by module (``own_solutions/AUTHOR``)."""
    return {
        f.path: (OWN_SOLUTIONS / author / Path(f.path).name).read_bytes()
        for f in manifest.files_with_role("learner")
    }


def lab_function_names(manifest: Manifest) -> set[str]:
    return {f.function for lab in manifest.labs for f in lab.functions}


class RenameLocals(ast.NodeTransformer):
    """Every parameter and local variable of every function gets another name."""

    def __init__(
        self, prefix: str = "renamed_", keep_parameters_of: frozenset[str] = frozenset()
    ) -> None:
        self.prefix = prefix
        self.local: set[str] = set()
        self.keep_parameters_of = keep_parameters_of  # functions called with keywords

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        outer = self.local  # a nested function also sees its enclosing function's names
        parameters = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        self.local = outer | parameters
        self.local |= {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        self.local -= {"id"}  # a keyword-only parameter: its name is the signature's
        if node.name in self.keep_parameters_of:
            self.local -= parameters
        self.generic_visit(node)
        self.local = outer
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        if node.arg in self.local:
            node.arg = self.prefix + node.arg
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.local:
            node.id = self.prefix + node.id
        return node


class RenameHelpers(ast.NodeTransformer):
    """Every top-level function that is no lab's (the file's helpers) gets another name."""

    def __init__(self, keep: set[str], prefix: str = "my_") -> None:
        self.keep = keep
        self.prefix = prefix
        self.helpers: set[str] = set()

    def visit_Module(self, node: ast.Module) -> ast.AST:
        self.helpers = {
            n.name for n in node.body if isinstance(n, ast.FunctionDef) and n.name not in self.keep
        }
        self.generic_visit(node)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if node.name in self.helpers:
            node.name = self.prefix + node.name
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.helpers:
            node.id = self.prefix + node.id
        return node


class Reorder(ast.NodeTransformer):
    """The module's functions in reverse order (everything else where it was)."""

    def visit_Module(self, node: ast.Module) -> ast.AST:
        functions = [n for n in node.body if isinstance(n, ast.FunctionDef)]
        others = [n for n in node.body if not isinstance(n, ast.FunctionDef)]
        node.body = others + functions[::-1]
        return node


class Pad(ast.NodeTransformer):
    """A no-op statement or two at the top of every function and block."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        padding = ast.parse("pass\n'a note'\nif False:\n    print('never')\n").body
        node.body = [*node.body[:1], *padding, *node.body[1:]]
        return node


def rewrite(sources: Mapping[str, bytes], *changes: ast.NodeTransformer) -> Sources:
    """Each module parsed, changed, unparsed (its comments and layout gone)."""
    out = {}
    for path, text in sources.items():
        tree = ast.parse(text)
        for change in changes:
            tree = change.visit(tree)
        out[path] = ast.unparse(ast.fix_missing_locations(tree)).encode()
    return out


def commented(sources: Mapping[str, bytes]) -> Sources:
    """A comment above every function and statement line that opens a block."""
    out = {}
    for path, text in sources.items():
        lines = []
        for line in text.decode().splitlines():
            stripped = line.lstrip()
            if stripped.startswith(("def ", "for ", "if ", "while ", "return ")):
                indent = line[: len(line) - len(stripped)]
                lines.append(f"{indent}# my own step: {stripped.split()[0]}")
            lines.append(line)
        out[path] = ("\n".join(lines) + "\n").encode()
    return out


def disguised(manifest: Manifest, sources: Mapping[str, bytes], prefix: str = "mine_") -> Sources:
    """``sources`` with locals and helpers renamed, functions reversed, padding and comments."""
    keep = lab_function_names(manifest)
    changes = (RenameLocals(prefix), RenameHelpers(keep, prefix), Reorder(), Pad())
    return commented(rewrite(sources, *changes))


class Wrap(ast.NodeTransformer):
    """Each lab function renamed and called from a one-line wrapper under its own name."""

    def __init__(self, keep: set[str], prefix: str = "impl_") -> None:
        self.keep = keep
        self.prefix = prefix

    def visit_Module(self, node: ast.Module) -> ast.AST:
        wrappers = []
        for function in node.body:
            if isinstance(function, ast.FunctionDef) and function.name in self.keep:
                name = function.name
                function.name = self.prefix + name
                line = f"def {name}(*args, **kwargs):\n    return {function.name}(*args, **kwargs)"
                wrappers.append(ast.parse(line).body[0])
        node.body += wrappers
        return node


def wrapped(manifest: Manifest, sources: Mapping[str, bytes], prefix: str = "impl_") -> Sources:
    """``sources`` with every lab function renamed and wrapped (``Wrap``)."""
    return rewrite(sources, Wrap(lab_function_names(manifest), prefix))


def starter_sources(manifest: Manifest, kit: Path) -> Sources:
    return {f.path: read_source(kit, f.starter) for f in manifest.files_with_role("learner")}


def appended(manifest: Manifest, kit: Path, sources: Mapping[str, bytes]) -> Sources:
    """Each starter file kept whole with ``sources``' module appended below it (its
    ``__future__`` import dropped, as Python wants it first): Python runs the last ``def``."""
    out = {}
    for path, starter in starter_sources(manifest, kit).items():
        lines = sources[path].decode().splitlines(keepends=True)
        tail = "".join(line for line in lines if not line.startswith("from __future__"))
        out[path] = starter + b"\n\n" + tail.encode()
    return out


# --------------------------------------------------------------------------- scripted disguise
# What a learner's script does to code it did not write, keeping what the code does: padding
# with dead stores, reordering independent statements, splitting functions into helpers.

_BLOCKS = ("body", "orelse", "finalbody")


def _each_block(
    function: ast.FunctionDef, change: Callable[[list[ast.stmt]], list[ast.stmt]]
) -> None:
    """Every statement list of ``function`` (a class's body excepted) replaced by ``change``'s."""
    for node in ast.walk(function):
        if isinstance(node, ast.ClassDef):
            continue
        for name in _BLOCKS:
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                setattr(node, name, change(block))
        for handler in getattr(node, "handlers", ()):
            handler.body = change(handler.body)


class PadDeadStores(ast.NodeTransformer):
    """A dead assignment after every statement of every function, nested blocks included:
    a name nobody reads, bound to a constant expression (the issue's fifty-line script)."""

    def __init__(self, prefix: str = "unused_") -> None:
        self.prefix = prefix
        self.count = 0

    def _padded(self, block: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for statement in block:
            out.append(statement)
            self.count += 1
            n = self.count
            value = f"{n} * 7 + 1" if n % 2 else f"'step {n}'.upper()"
            out.append(ast.parse(f"{self.prefix}{n} = {value}").body[0])
        return out

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        _each_block(node, self._padded)  # nested functions included: not visited again
        return node


class PadCalls(ast.NodeTransformer):
    """After every statement of every function, a call that writes nothing but is given one
    of the function's own names (``sys.stderr.write(object.__repr__(x)[:0])``): no store to
    take out, and nothing a checker can know is idle without knowing ``sys.stderr``."""

    def visit_Module(self, node: ast.Module) -> ast.AST:
        self.generic_visit(node)
        after = next(
            (i + 1 for i, s in enumerate(node.body) if isinstance(s, ast.ImportFrom)), 0
        )  # after ``from __future__ import annotations``, the first import
        node.body.insert(after, ast.parse("import sys").body[0])
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        arguments = node.args
        first = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs][:1]
        if not first:
            return node
        name = first[0].arg  # a parameter: bound everywhere in the function

        def padded(block: list[ast.stmt]) -> list[ast.stmt]:
            out: list[ast.stmt] = []
            for statement in block:
                out.append(statement)
                out.append(ast.parse(f"sys.stderr.write(object.__repr__({name})[:0])").body[0])
            return out

        _each_block(node, padded)
        return node


SAFE_BUILTINS = frozenset({
    "len", "str", "repr", "int", "float", "bool", "tuple", "list", "dict", "set", "frozenset",
    "sorted", "min", "max", "sum", "abs", "isinstance", "type", "range", "enumerate", "zip",
    "reversed", "any", "all", "round",
})  # fmt: skip
"""What the reordering script trusts to change nothing (its own list, not the checker's)."""


def _reads_and_writes(statement: ast.stmt) -> tuple[set[str], set[str], bool]:
    """The names a simple statement reads and writes, and whether it calls anything but a pure
    builtin (then it may change any object it names: it writes every name it reads)."""
    reads = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
    writes = {
        n.id
        for n in ast.walk(statement)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del)
    }
    for target in getattr(statement, "targets", [getattr(statement, "target", None)]):
        while isinstance(target, ast.Attribute | ast.Subscript):
            target = target.value
        if isinstance(target, ast.Name):
            writes.add(target.id)
    calls = any(
        isinstance(n, ast.Call)
        and not (isinstance(n.func, ast.Name) and n.func.id in SAFE_BUILTINS)
        for n in ast.walk(statement)
    )
    if calls:
        writes |= reads
    return reads, writes, calls


def _independent(one: ast.stmt, other: ast.stmt) -> bool:
    simple = ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Expr
    if not (isinstance(one, simple) and isinstance(other, simple)):
        return False
    if any(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) for s in (one, other)):
        return False  # a docstring stays first
    if any(
        isinstance(n, ast.NamedExpr | ast.Yield | ast.Await)
        for s in (one, other)
        for n in ast.walk(s)
    ):
        return False
    reads, writes, calls = _reads_and_writes(one)
    reads_2, writes_2, calls_2 = _reads_and_writes(other)
    if calls and calls_2:
        return False
    return not (writes & (reads_2 | writes_2)) and not (writes_2 & reads)


class ReorderIndependent(ast.NodeTransformer):
    """In every block of every function, each pair of adjacent simple statements that neither
    reads nor writes what the other writes swapped (two that call anything but a builtin keep
    their order)."""

    def __init__(self) -> None:
        self.swapped = 0

    def _reordered(self, block: list[ast.stmt]) -> list[ast.stmt]:
        out, i = list(block), 0
        while i + 1 < len(out):
            if _independent(out[i], out[i + 1]):
                out[i], out[i + 1] = out[i + 1], out[i]
                self.swapped += 1
                i += 2
            else:
                i += 1
        return out

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        _each_block(node, self._reordered)
        return node


_OWN_SCOPES = ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp | ast.Lambda


def _in_scope(nodes: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of ``nodes`` outside comprehensions and lambdas (scopes of their own)."""
    todo: list[ast.AST] = list(nodes)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _OWN_SCOPES):
            todo += ast.iter_child_nodes(node)


def _stored(nodes: list[ast.stmt]) -> set[str]:
    """Every name ``nodes`` bind in the function's own scope."""
    names = set()
    for n in _in_scope(nodes):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
            names.add(n.id)
        elif isinstance(n, ast.FunctionDef | ast.ClassDef) or (
            isinstance(n, ast.ExceptHandler) and n.name
        ):
            names.add(str(n.name))
    return names


def _loaded(nodes: list[ast.stmt]) -> set[str]:
    return {
        n.id
        for statement in nodes
        for n in ast.walk(statement)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


_NOT_MOVED = (
    ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Global, ast.Nonlocal, ast.Break,
    ast.Continue, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
)  # fmt: skip


class SplitIntoHelpers(ast.NodeTransformer):
    """Every compound statement at the top of a module function's body (a loop, an ``if``, a
    ``with``, a ``try``) moved into a new module function of its own, called in its place:
    the names it uses that are bound before it are its parameters, and those it binds that
    are read after it are what it returns."""

    def __init__(self, prefix: str = "step_") -> None:
        self.prefix = prefix
        self.made = 0

    def visit_Module(self, node: ast.Module) -> ast.AST:
        body: list[ast.stmt] = []
        for statement in node.body:
            if isinstance(statement, ast.FunctionDef):
                body += self._split(statement)
            body.append(statement)
        node.body = body
        return node

    def _split(self, function: ast.FunctionDef) -> list[ast.stmt]:
        arguments = function.args
        params = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
        params |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
        local = params | _stored(function.body)
        helpers: list[ast.stmt] = []
        body: list[ast.stmt] = []
        for index, statement in enumerate(function.body):
            compound = isinstance(statement, ast.For | ast.While | ast.If | ast.With | ast.Try)
            if not compound or any(isinstance(n, _NOT_MOVED) for n in ast.walk(statement)):
                body.append(statement)
                continue
            earlier = function.body[:index]
            bound = params | _stored([s for s in earlier if isinstance(s, ast.Assign)])
            maybe = _stored(earlier) - bound  # bound on some paths only: left where it is
            used = (_loaded([statement]) | _stored([statement])) & local
            given = sorted(used & bound)
            returned = sorted(_stored([statement]) & local & _loaded(function.body[index + 1 :]))
            if used & maybe or not set(returned) <= bound:
                body.append(statement)
                continue
            self.made += 1
            name = f"{self.prefix}{function.name}_{self.made}"
            back = ", ".join(returned)
            lines = f"def {name}({', '.join(given)}):\n    pass\n"
            helper = ast.parse(lines).body[0]
            assert isinstance(helper, ast.FunctionDef)
            helper.body = [statement]
            if returned:
                helper.body += ast.parse(f"return {back}").body
            helpers.append(helper)
            call = f"{name}({', '.join(given)})"
            body += ast.parse(f"{back} = {call}" if returned else call).body
        function.body = body
        return helpers


def padded(sources: Mapping[str, bytes], prefix: str = "unused_") -> Sources:
    """``sources`` with a dead store after every statement of every function."""
    return rewrite(sources, PadDeadStores(prefix))


def reordered(sources: Mapping[str, bytes]) -> Sources:
    """``sources`` with adjacent independent statements swapped (``ReorderIndependent``)."""
    return rewrite(sources, ReorderIndependent())


def split(sources: Mapping[str, bytes], prefix: str = "step_") -> Sources:
    """``sources`` with every function's compound statements moved into helpers."""
    return rewrite(sources, SplitIntoHelpers(prefix))


def renamed(
    manifest: Manifest, kit: Path, sources: Mapping[str, bytes], prefix: str = "mine_"
) -> Sources:
    """``sources`` with every local and every helper renamed (but what the starter defines:
    other modules import it)."""
    keep = lab_function_names(manifest) | {
        node.name
        for text in starter_sources(manifest, kit).values()
        for node in ast.parse(text).body
        if isinstance(node, ast.FunctionDef)
    }
    locals_ = RenameLocals(prefix, frozenset(keep))
    return rewrite(sources, locals_, RenameHelpers(keep, prefix))


SCRIPTED = (
    "dead stores",
    "padded with calls",
    "reordered",
    "renamed",
    "split into helpers",
    "split and renamed",
    "reordered and padded",
    "split, reordered, padded and renamed",
)
"""The scripted disguises the copy check is measured on (``scripted``), one at a time and
combined; ``docs/grading.md`` says how many units each is caught in."""


def scripted(
    manifest: Manifest, kit: Path, sources: Mapping[str, bytes], disguise: str, tag: str = ""
) -> Sources:
    """``sources`` under one of ``SCRIPTED`` (``tag`` makes the names it invents its own)."""
    if disguise == "dead stores":
        return padded(sources, f"unused{tag}_")
    if disguise == "padded with calls":
        return rewrite(sources, PadCalls())
    if disguise == "reordered":
        return reordered(sources)
    if disguise == "renamed":
        return renamed(manifest, kit, sources, f"mine{tag}_")
    if disguise == "split into helpers":
        return split(sources, f"step{tag}_")
    if disguise == "split and renamed":
        return renamed(manifest, kit, split(sources, f"step{tag}_"), f"mine{tag}_")
    if disguise == "reordered and padded":
        return padded(reordered(sources), f"unused{tag}_")
    if disguise == "split, reordered, padded and renamed":
        moved = reordered(split(sources, f"step{tag}_"))
        return renamed(manifest, kit, padded(moved, f"unused{tag}_"), f"mine{tag}_")
    raise ValueError(f"no disguise {disguise!r}")
