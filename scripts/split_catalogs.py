"""Run once (issue 48): split the kit's one zh catalog into the kit's and each chapter's.

Each catalog starts as a copy of today's course.po; `catalogs.update` then keeps only the
messages its babel.cfg finds, each with the msgstr it had. Checks that every message of the old
catalog that some catalog still extracts keeps its msgstr, and prints the counts."""

from __future__ import annotations

import io
import sys

from babel.messages.pofile import read_po

from course.tools.catalogs import TRANSLATED, all_catalogs, kit_catalog, update


def entries(data: bytes, edition: str) -> dict[str, str | tuple[str, ...]]:
    catalog = read_po(io.BytesIO(data), locale=edition)
    return {(m.id if isinstance(m.id, str) else m.id[0]): m.string for m in catalog if m.id}


def main() -> int:
    status = 0
    for edition in TRANSLATED:
        old_bytes = kit_catalog().path(edition).read_bytes()
        old = entries(old_bytes, edition)
        print(f"{edition} before: course.po {len(old)} msgids")
        after: dict[str, str | tuple[str, ...]] = {}
        for catalog in all_catalogs():
            path = catalog.path(edition)
            if catalog.domain != kit_catalog().domain:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(old_bytes)
            update(catalog)
            now = entries(path.read_bytes(), edition)
            print(f"{edition} after: {catalog.owner} {len(now)} msgids ({path})")
            for msgid, msgstr in now.items():
                if msgid in old and old[msgid] != msgstr:
                    print(f"  changed: {msgid[:60]!r}")
                    status = 1
                after.setdefault(msgid, msgstr)
        lost = sorted(set(old) - set(after))
        new = sorted(set(after) - set(old))
        both = len(old) - len(lost)
        print(
            f"{edition}: {both} kept with their msgstr, {len(lost)} no longer extracted, "
            f"{len(new)} new (untranslated)"
        )
        for msgid in lost:
            print(f"  no longer extracted: {msgid[:70]!r}")
        for msgid in new:
            print(f"  new: {msgid[:70]!r}")
    return status


if __name__ == "__main__":
    sys.exit(main())
