"""A workspace judged against its own scaffold: its shipped files as that scaffold made them, and
what the kit gives now that its lab files lack.

A workspace's marker records the starter fingerprint it began from and a digest of each shipped
file as written (``harness/workspace.py``). A shipped file that differs from the kit's is edited
only on evidence: it differs from its own record, or the workspace began from the kit's own
scaffold. A file its scaffold recorded, or an older scaffold's file with no record, is that
scaffold's: graded with the kit's copy like any other, said plainly, never flagged.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath

from ...harness.carry import bound_names
from ...harness.catalog import CatalogError, test_functions
from ...harness.kit import digest
from ...harness.manifest import Manifest
from ...harness.pysource import parse

Verdict = str  # "kit" (the kit's copy), "own" (its scaffold's), "unknown" or "edited"


def judged(data: bytes, kit_copies: Iterable[str], recorded: str | None, older: bool) -> Verdict:
    """What a shipped file of a workspace is: the kit's copy; its own scaffold's (as its marker
    recorded it); an older scaffold's file with no record (``unknown``); else ``edited``."""
    found = digest(data)
    if found in kit_copies:
        return "kit"
    if recorded is not None:
        return "own" if found == recorded else "edited"
    return "unknown" if older else "edited"


def _test_sources(text: bytes, file: str, labs: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Each focused test of a file: (its lab, its code as the parser reads it)."""
    try:
        source = text.decode("utf-8")
        tests = test_functions(source, file, labs)
        tree = parse(source, filename=file)
    except (UnicodeDecodeError, SyntaxError, CatalogError):
        return {}
    code = {
        node.name: ast.dump(node)
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    return {test.function: (test.lab, code.get(test.function, "")) for test in tests}


def labs_whose_tests_changed(
    kit_text: bytes, theirs: bytes, file: str, labs: Sequence[str]
) -> list[str]:
    """The labs whose focused tests in ``file`` differ between the workspace's copy and the
    kit's (a test changed, added or removed), in the labs' order."""
    mine, kits = _test_sources(theirs, file, labs), _test_sources(kit_text, file, labs)
    changed = {
        lab
        for name in mine.keys() | kits.keys()
        if mine.get(name) != kits.get(name)
        for lab in {mine.get(name, ("", ""))[0], kits.get(name, ("", ""))[0]} - {""}
    }
    return [lab for lab in labs if lab in changed]


def _bound(tree: ast.Module) -> set[str]:
    """The names a module's top level binds: definitions, assignments and imports."""
    return {name for node in tree.body for name in bound_names(node)}


def given_names(manifest: Manifest, path: str, starter: bytes) -> list[str]:
    """What the kit's starter of a learner file gives: its top-level functions and classes that
    are no lab's (``open_context``, ``CompactionSummary``…), in order."""
    module = PurePosixPath(path).stem
    labs = {f.function for lab in manifest.labs for f in lab.functions if f.module == module}
    try:
        tree = parse(starter.decode("utf-8"), filename=path)
    except (UnicodeDecodeError, SyntaxError):
        return []
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.name not in labs
    ]


def missing_given(
    manifest: Manifest, starters: Mapping[str, bytes], learner: Mapping[str, bytes]
) -> dict[str, list[str]]:
    """Per learner file, what the kit's starter gives that the learner's file does not define
    (a file from an older scaffold, moved into a new one); a file that does not parse is left to
    the grade to say."""
    missing: dict[str, list[str]] = {}
    for path, text in learner.items():
        try:
            tree = parse(text.decode("utf-8"), filename=path)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        lacking = [
            name for name in given_names(manifest, path, starters[path]) if name not in _bound(tree)
        ]
        if lacking:
            missing[path] = lacking
    return missing
