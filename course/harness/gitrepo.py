"""The commit a submitted git repository has checked out, read from its files without running git.

A repository's ``.git`` is learner-controlled: its config can name programs that git would run
(``core.fsmonitor``, filters, hooks). So git is never run on it and nothing is ever fetched:
``HEAD`` and the branch it names are read as plain files (loose ref, then ``packed-refs``)
through ``safefs.Tree``, which follows no link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from .safefs import Tree, UnsafePath

COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
MAX_REF_BYTES = 4096
MAX_PACKED_REFS_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Checkout:
    """What a repository has checked out: a commit id, or why it could not be read."""

    commit: str = ""
    branch: str = ""
    problem: str = ""

    @property
    def note(self) -> str:
        """A line for the gradebook: the commit graded, or why none is known."""
        if self.problem:
            return f"a git repository whose commit is not known: {self.problem}"
        on = f" on {self.branch}" if self.branch else " (detached HEAD)"
        return f"graded at git commit {self.commit}{on}, as checked out"


def parse_head(text: str) -> tuple[str, str]:
    """``("ref", "refs/heads/main")`` or ``("commit", id)``; ``ValueError`` for anything else."""
    line = text.strip()
    if line.startswith("ref:"):
        ref = line.removeprefix("ref:").strip()
        parts = PurePosixPath(ref).parts
        if not ref.startswith("refs/") or ".." in parts or not ref.isprintable():
            raise ValueError(f"HEAD names an unusual ref {ref!r}")
        return "ref", ref
    if COMMIT_ID.fullmatch(line):
        return "commit", line
    raise ValueError("HEAD is neither a ref nor a commit id")


def packed_ref(text: str, ref: str) -> str:
    """The commit id ``packed-refs`` gives ``ref``, or ``""``."""
    for line in text.splitlines():
        commit, _, name = line.partition(" ")
        if name == ref and COMMIT_ID.fullmatch(commit):
            return commit
    return ""


def _text(tree: Tree, relative: str, limit: int) -> str:
    return tree.read(relative, limit).decode("ascii", "replace")


def checkout(tree: Tree) -> Checkout | None:
    """The commit checked out in the repository at the top of ``tree``; None if it is none."""
    kind = tree.kind(".git")
    if kind == "missing":
        return None
    if kind != "directory":
        return Checkout(problem=f".git is a {kind} (a linked worktree or submodule), not read")
    try:
        how, value = parse_head(_text(tree, ".git/HEAD", MAX_REF_BYTES))
        if how == "commit":
            return Checkout(commit=value)
        branch = value.removeprefix("refs/heads/")
        if tree.kind(f".git/{value}") != "missing":
            commit = _text(tree, f".git/{value}", MAX_REF_BYTES).strip()
        elif tree.kind(".git/packed-refs") != "missing":
            commit = packed_ref(_text(tree, ".git/packed-refs", MAX_PACKED_REFS_BYTES), value)
        else:
            commit = ""
    except (UnsafePath, ValueError) as error:
        return Checkout(problem=str(error))
    if not COMMIT_ID.fullmatch(commit):
        return Checkout(branch=branch, problem=f"{branch} has no commit yet")
    return Checkout(commit=commit, branch=branch)


def nearest_checkout(tree: Tree, top: int) -> Checkout | None:
    """The repository holding ``tree``'s folder or one above it, up to ``top`` parts deep."""
    for depth in range(len(tree.below), top - 1, -1):
        found = checkout(Tree(tree.base, tree.below[:depth]))
        if found is not None:
            return found
    return None
