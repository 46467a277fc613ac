"""What the grader keeps between runs in the kit's cache (``kit_cache()``), and its catalog.

Everything kept is named by a digest of the exact bytes it was made from and checked when read
back; ``keep`` writes it whole or not at all. A kept catalog of focused tests is named by the
test files, the labs, the catalog reader's own source and this Python's version (whose parser it
uses) and is read back strictly: a changed kit never reads an old one, and a file that is not
right is read again from the test files.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...harness import catalog as reader
from ...harness.catalog import Catalog, CatalogTest, read_catalog
from ...harness.kit import fingerprint, kit_cache
from ...sandboxed.tables import TableReader
from ..intake.safefs import atomic_write


def keep(path: Path, data: bytes) -> None:
    """Keep ``data`` at ``path`` in the kit's cache, whole; a cache that cannot be written is
    passed by (what it would hold is made again next time)."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, data)


def kept_catalog(files: Mapping[str, bytes], labs: Sequence[str]) -> Catalog:
    """``read_catalog(files, labs)``, parsed once per kit and kept (``kit_catalog``'s reader on
    the grader's side: parsing the test files at every grading costs more than the run)."""
    made_from = dict(files) | {
        "\0reader": Path(reader.__file__).read_bytes(),
        "\0labs": "\n".join(labs).encode("utf-8"),
        "\0python": sys.version.encode("utf-8"),
    }
    key = fingerprint(made_from)
    path = kit_cache() / f"catalog-{key}.json"
    with contextlib.suppress(OSError, ValueError):  # none kept, or not right: read again
        table = TableReader(json.loads(path.read_bytes()), "", str(path))
        if table.text("key") == key:
            kept = []
            for each in table.tables("tests", allow_empty=True):
                f = TableReader(each, "tests", str(path))
                names = f.text("file"), f.text("function"), f.text("lab")
                kept.append(CatalogTest(*names, f.count("cases")))
                f.finish()
            table.finish()
            return Catalog(tuple(kept))
    catalog = read_catalog(files, labs)
    tests = [dataclasses.asdict(test) for test in catalog.tests]
    keep(path, json.dumps({"key": key, "tests": tests}).encode("utf-8"))
    return catalog
