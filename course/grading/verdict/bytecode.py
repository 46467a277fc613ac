"""Bytecode shipped beside the graded copy's kit modules, so its processes compile none again.

The children run with ``PYTHONDONTWRITEBYTECODE`` in a read-only copy, so without this every
module of the copy and the library is compiled from source on every run. Each ``.pyc`` is
checked-hash (PEP 552): the child's import system (or pytest's assertion rewriter, for the test
modules and the reporter) hashes the source it sits beside and ignores a ``.pyc`` made from
other bytes. Made once per source, Python and pytest, and kept in ``kit_cache()/bytecode``.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import marshal
import sys
import types
from collections.abc import Collection, Mapping
from pathlib import PurePosixPath

from ...harness import pysource
from ...harness.kit import digest, kit_cache
from .kitcache import keep

REWRITTEN_BY_PYTEST = ("tests/", "course/sandboxed/plugin.py")
"""Modules pytest imports through its assertion rewriter: it reads its own ``.pyc`` of them."""
PYTEST_READS_OURS = (9, 2)
"""The first pytest whose rewriter reads checked-hash ``.pyc`` and points their code at the
file it finds them beside, as the import system does (earlier ones ignore them, or would keep
the name of the file they were compiled from)."""
CHECKED_HASH = (3).to_bytes(4, "little")  # PEP 552 flags: hash-based, always checked
_made: dict[str, bytes] = {}  # this process's, by cache key


def bytecode(files: Mapping[str, bytes], skip: Collection[str] = ()) -> dict[str, bytes]:
    """A ``__pycache__`` file for each Python file of ``files`` not in ``skip``, by path
    ({} when this Python writes no plain ``__pycache__``: a prefix, an optimisation level)."""
    tag = sys.implementation.cache_tag
    if tag is None or sys.pycache_prefix or sys.flags.optimize:
        return {}
    pytest_tag = _pytest_tag(tag)
    shipped = {}
    for path, source in files.items():
        if not path.endswith(".py") or path in skip:
            continue
        rewritten = path.startswith(REWRITTEN_BY_PYTEST)
        if rewritten and pytest_tag is None:
            continue
        pyc = _compiled(path, source, rewritten, pytest_tag)
        if pyc is not None:
            where = PurePosixPath(path)
            name = f"{where.stem}.{pytest_tag if rewritten else tag}.pyc"
            shipped[(where.parent / "__pycache__" / name).as_posix()] = pyc
    return shipped


def _pytest_tag(tag: str) -> str | None:
    """The tag pytest's rewriter names its ``.pyc`` with (None: no pytest that reads ours)."""
    try:  # a small module: pytest itself stays unimported
        from _pytest._version import version, version_tuple
    except ImportError:
        return None
    return f"{tag}-pytest-{version}" if version_tuple[:2] >= PYTEST_READS_OURS else None


def _compiled(path: str, source: bytes, rewritten: bool, pytest_tag: str | None) -> bytes | None:
    """The checked-hash ``.pyc`` of ``source`` (None if it does not compile)."""
    kind = pytest_tag if rewritten else "plain"
    key = f"{kind}-{importlib.util.MAGIC_NUMBER.hex()}-{digest(source)}"
    if (pyc := _made.get(key)) is not None:
        return pyc
    stored = kit_cache() / "bytecode" / f"{key}.pyc"
    header = importlib.util.MAGIC_NUMBER + CHECKED_HASH + importlib.util.source_hash(source)
    with contextlib.suppress(OSError, EOFError, ValueError, TypeError):
        kept = stored.read_bytes()  # used only when whole and checked-hash for this source
        code = marshal.loads(kept[len(header) :]) if kept.startswith(header) else None
        pyc = kept if isinstance(code, types.CodeType) else None
    if pyc is None:
        try:  # the child's import system names the file where it finds the ``.pyc``
            tree = _rewritten(path, source) if rewritten else source
            code = compile(tree, path, "exec", dont_inherit=True)
        except Exception:  # a module that does not compile is compiled (and fails) in the child
            return None
        pyc = header + marshal.dumps(code)
        keep(stored, pyc)
    _made[key] = pyc
    return pyc


def _rewritten(path: str, source: bytes) -> ast.Module:
    """What pytest's assertion rewriter makes (with no ``enable_assertion_pass_hook``)."""
    from _pytest.assertion.rewrite import rewrite_asserts  # only when not yet cached

    tree = pysource.parse(source, path)
    rewrite_asserts(tree, source, path, None)
    return tree
