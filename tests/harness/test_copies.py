"""The copy flag: whole-lab matches with the reference are flagged, honest code never is."""

from __future__ import annotations

import ast
import builtins
import keyword
from pathlib import Path

from harness_support import Check, MakeWorkspace
from hypothesis import given, settings
from hypothesis import strategies as st
from solutions import replace_function, solve_lab

from course.grading.copies import (
    FLAG_AT,
    LabSimilarity,
    function_shape,
    lab_similarities,
    similarity,
)
from course.grading.gradebook import graded_row
from course.grading.safefs import Tree
from course.grading.snapshot import workspace_snapshot
from course.harness.kit import read_source
from course.harness.manifest import Manifest

OWN_SOLUTIONS = Path(__file__).parent / "own_solutions"

Sources = dict[str, bytes]


def reference(manifest: Manifest, kit: Path) -> Sources:
    return {f.path: read_source(kit, f.reference) for f in manifest.files_with_role("learner")}


def own(manifest: Manifest, author: str) -> Sources:
    return {
        f.path: (OWN_SOLUTIONS / author / Path(f.path).name).read_bytes()
        for f in manifest.files_with_role("learner")
    }


def figures(found: list[LabSimilarity]) -> dict[str, float]:
    return {lab.lab: lab.similarity for lab in found}


def flagged(found: list[LabSimilarity]) -> list[str]:
    return [lab.lab for lab in found if lab.flagged]


def rewrite(sources: Sources, change: ast.NodeTransformer) -> Sources:
    out = {}
    for path, text in sources.items():
        tree = change.visit(ast.parse(text))
        out[path] = ast.unparse(ast.fix_missing_locations(tree)).encode()
    return out


class RenameLocals(ast.NodeTransformer):
    """Every parameter and local variable of every function gets another name."""

    def __init__(self, prefix: str = "renamed_") -> None:
        self.prefix = prefix
        self.local: set[str] = set()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.local = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        self.local |= {
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        self.local -= {"id"}  # a keyword-only parameter: its name is the signature's
        self.generic_visit(node)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        if node.arg in self.local:
            node.arg = self.prefix + node.arg
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.local:
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


def test_the_reference_matches_itself_and_every_lab_is_compared(
    manifest: Manifest, kit: Path
) -> None:
    found = lab_similarities(manifest, kit, reference(manifest, kit))
    assert figures(found) == {lab.id: 1.0 for lab in manifest.labs}
    assert all(lab.functions for lab in found), "every lab has non-trivial code"
    assert flagged(found) == [lab.id for lab in manifest.labs]


def test_renamed_reordered_and_padded_copies_are_flagged(manifest: Manifest, kit: Path) -> None:
    every = [lab.id for lab in manifest.labs]
    for change in (RenameLocals(), Reorder(), Pad()):
        found = lab_similarities(manifest, kit, rewrite(reference(manifest, kit), change))
        assert flagged(found) == every, (type(change).__name__, figures(found))
    all_three = reference(manifest, kit)
    for change in (RenameLocals("mine_"), Reorder(), Pad()):
        all_three = rewrite(all_three, change)
    assert flagged(lab_similarities(manifest, kit, all_three)) == every


def test_two_independent_solutions_of_every_lab_are_not_flagged(
    manifest: Manifest, kit: Path
) -> None:
    for author in ("first", "second"):
        found = lab_similarities(manifest, kit, own(manifest, author))
        assert flagged(found) == [], (author, figures(found))
        assert all(0.0 < lab.similarity < FLAG_AT for lab in found), figures(found)


def test_short_functions_written_like_the_reference_are_never_compared(
    manifest: Manifest, kit: Path
) -> None:
    """About one way to write ``group_interactions`` or ``latest_compaction``: not a copy."""
    mine = own(manifest, "first")
    for module, name in (("groups", "group_interactions"), ("compaction", "latest_compaction")):
        shape = function_shape(reference(manifest, kit)[f"pi_course/{module}.py"], name)
        assert shape is not None and shape.is_short
        path = f"pi_course/{module}.py"
        mine[path] = replace_function(
            mine[path].decode(), reference(manifest, kit)[path].decode(), name
        ).encode()
    found = lab_similarities(manifest, kit, mine)
    assert flagged(found) == []
    compared = {name for lab in found for name in lab.functions}
    assert not compared & {"groups.group_interactions", "compaction.latest_compaction"}


def test_a_workspace_notes_only_whole_labs(
    manifest: Manifest, kit: Path, make_workspace: MakeWorkspace
) -> None:
    workspace = make_workspace("copies")
    for lab in manifest.labs:
        solve_lab(manifest, kit, workspace, lab.id, donors_of(manifest, "second"))
    solve_lab(manifest, kit, workspace, "11.3")
    snapshot = workspace_snapshot(manifest, kit, Tree(workspace))
    assert [lab.lab for lab in snapshot.similarity if lab.flagged] == ["11.3"]
    assert snapshot.flags == ("copied from the reference (Lab 11.3 1.00)",)
    assert [n for n in snapshot.notes if "reference" in n] == [
        "matches the reference's code as a whole (similarity 0..1): Lab 11.3 1.00 "
        "(context.select_groups, context.build_context)"
    ]
    fresh = workspace_snapshot(manifest, kit, Tree(make_workspace("fresh")))
    assert fresh.flags == () and not [n for n in fresh.notes if "reference" in n]


NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,7}", fullmatch=True).filter(
    lambda name: not keyword.iskeyword(name) and name not in dir(builtins) and name != "f"
)


def donors_of(manifest: Manifest, author: str) -> dict[str, str]:
    return {Path(path).stem: text.decode() for path, text in own(manifest, author).items()}


@settings(max_examples=40, deadline=None)
@given(st.lists(NAMES, min_size=5, max_size=5, unique=True))
def test_local_names_never_change_the_figure(names: list[str]) -> None:
    source = (
        "def f(a, b):\n"
        "    total = 0\n"
        "    for item in a:\n"
        "        if item > b:\n"
        "            total += item\n"
        "        else:\n"
        "            total -= len(item)\n"
        "    return [x for x in range(total)]\n"
    )
    taken = dict(zip(["a", "b", "total", "item", "x"], names, strict=True))
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in taken:
            node.id = taken[node.id]
        elif isinstance(node, ast.arg) and node.arg in taken:
            node.arg = taken[node.arg]
    renamed = function_shape(ast.unparse(tree), "f")
    original = function_shape(source, "f")
    assert renamed is not None and original is not None
    assert similarity(renamed, original) == 1.0


def test_the_gradebook_row_carries_each_labs_figure(
    manifest: Manifest, kit: Path, check: Check
) -> None:
    found = lab_similarities(manifest, kit, own(manifest, "first"))
    row = graded_row("ada", "/class/ada", check(), [], similarity=found).to_json()
    expected = {lab.lab: lab.similarity for lab in found if lab.lab != "11.opt"}
    assert {lab["id"]: lab["similarity"] for lab in row["labs"]} == expected
