"""Disguising a copy the way a learner would: renamed names, reordered functions, comments.

Shared by the copy tests and ``bench/copies.py``. Each change keeps what the code does.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
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

    def __init__(self, prefix: str = "renamed_") -> None:
        self.prefix = prefix
        self.local: set[str] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        outer = self.local  # a nested function also sees its enclosing function's names
        self.local = outer | {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        self.local |= {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        self.local -= {"id"}  # a keyword-only parameter: its name is the signature's
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
