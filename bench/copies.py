"""What the roster's copy check costs: ``python3 bench/copies.py [--learners N]``.

Builds a class of N submissions (default 100) in memory: the kit's independent solutions and
disguised copies of them and of the reference (renamed, reordered, padded, commented; lab
functions renamed behind one-line wrappers; appended below the starter), one with a 240 KiB
tuple inside a lab function and one whose every module is 1 MiB. It fingerprints
each submission the way ``checkpoint 11 --roster`` does for a row (``copies.learner_prints``)
and compares the class (``classroom.compare_class``), printing the slowest fingerprint, the
total, the comparison's time and the flags by kind. The goals: any one submission well under a
second whatever its size, the class of a hundred in seconds. Nothing here is a timed test.

Then the table ``docs/grading.md`` quotes: each scripted disguise (``disguise.SCRIPTED``)
applied to the reference, and by two learners to a classmate's code (the first independent
solution), in a class with the kit's independent solutions: in how many of the roster's units
(labs and learner files) the copy is flagged against the reference, and the three are one
group; and how many flags land on honest code (the independent solutions, each also disguised
in turn).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``course`` and the test helpers importable
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "harness"))

from disguise import (  # noqa: E402
    AUTHORS,
    SCRIPTED,
    appended,
    disguised,
    own_sources,
    reference_sources,
    scripted,
    wrapped,
)

from course.grading.records.classroom import compare_class  # noqa: E402
from course.grading.records.copies import Baseline, Prints, baseline, learner_prints  # noqa: E402
from course.harness.kit import kit_root  # noqa: E402
from course.harness.manifest import Manifest, load_manifest  # noqa: E402

Sources = dict[str, bytes]


def huge_tuple(sources: Sources) -> Sources:
    """A 240 KiB tuple literal inside ``select_groups``."""
    path = "pi_course/context.py"
    literal = "(" + ", ".join(str(n) for n in range(40_000)) + ",)"
    text = sources[path].decode()
    head = "def select_groups(\n"
    at = text.index(head)
    body = text.index(":\n", text.index(")", at)) + 2
    changed = text[:body] + f"    table = {literal}\n" + text[body:]
    return {**sources, path: changed.encode()}


def megabyte(sources: Sources) -> Sources:
    """Every module padded to 1 MiB with helper functions after its own code."""
    out = {}
    for path, text in sources.items():
        helpers, n = [text], 0
        while sum(map(len, helpers)) < 1 << 20:
            helpers.append(
                f"\n\ndef helper_{n}(x):\n    return [x + {n} for _ in range(3)]\n".encode()
            )
            n += 1
        out[path] = b"".join(helpers)
    return out


def classroom(manifest: Manifest, kit: Path, learners: int) -> dict[str, Sources]:
    reference = reference_sources(manifest, kit)
    honest = {author: own_sources(manifest, author) for author in AUTHORS}
    made: dict[str, Sources] = {
        "tuple-240k": huge_tuple(honest["first"]),
        "megabyte": megabyte(honest["second"]),
    }
    for n in range(learners - len(made)):
        author = AUTHORS[n % len(AUTHORS)]
        if n % 10 == 0:
            made[f"copy-of-reference-{n:03d}"] = disguised(manifest, reference, f"r{n}_")
        elif n % 10 == 1:
            made[f"copy-of-{author}-{n:03d}"] = disguised(manifest, honest[author], f"c{n}_")
        elif n % 10 == 2:
            made[f"copy-of-reference-wrapped-{n:03d}"] = wrapped(manifest, reference, f"w{n}_")
        elif n % 10 == 3:
            made[f"copy-of-reference-appended-{n:03d}"] = appended(manifest, kit, reference)
        else:
            made[f"{author}-{n:03d}"] = honest[author]
    return made


def disguise_table(manifest: Manifest, kit: Path, base: Baseline) -> None:
    """Each scripted disguise: units flagged against the reference, units where two learners
    disguising a classmate's code are one group with her, and flags on honest code."""
    units = len(base.labs) + len(base.files)
    honest = {author: own_sources(manifest, author) for author in AUTHORS}

    def compared(sources: dict[str, Sources]) -> list[tuple[str, tuple[str, ...], str]]:
        prints = {name: learner_prints(base, files) for name, files in sources.items()}
        return [(f.kind, f.learners, f.lab) for f in compare_class(base, prints).flags]

    reference = reference_sources(manifest, kit)
    print(f"disguise → units flagged (of {units}): the reference copied; a classmate's code")
    for disguise in SCRIPTED:
        copy = scripted(manifest, kit, reference, disguise)
        found = compared({"copy": copy, **honest})
        caught = sum(kind == "reference" and names == ("copy",) for kind, names, _ in found)
        honest_flags = [f for f in found if "copy" not in f[1]]
        ann = scripted(manifest, kit, honest["first"], disguise, "ann")
        bea = scripted(manifest, kit, honest["first"], disguise, "bea")
        found = compared({"ann": ann, "bea": bea, **honest})
        group = sum(names == ("ann", "bea", "first") for _, names, _ in found)
        honest_flags += [f for f in found if not {"ann", "bea"} & set(f[1])]
        for author in AUTHORS:
            changed = honest | {author: scripted(manifest, kit, honest[author], disguise)}
            honest_flags += compared(changed)
        print(
            f"  {disguise:<38} reference {caught}/{units} · classmate {group}/{units} · "
            f"honest flagged {len(honest_flags)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", type=int, default=100)
    args = parser.parse_args()
    manifest, kit = load_manifest("11"), kit_root()
    started = time.perf_counter()
    base = baseline(manifest, kit, tuple(manifest.required_labs))
    took_base = time.perf_counter() - started
    print(f"baseline (the reference, the starter, the independent solutions): {took_base:.3f}s")
    sources = classroom(manifest, kit, args.learners)
    prints: dict[str, Prints] = {}
    took: dict[str, float] = {}
    for name, files in sources.items():
        started = time.perf_counter()
        prints[name] = learner_prints(base, files)
        took[name] = time.perf_counter() - started
    slowest = max(took, key=took.__getitem__)
    size = max(len(text) for text in sources[slowest].values())
    print(f"fingerprints of {len(sources)} submissions: {sum(took.values()):.3f}s in all")
    print(f"  slowest: {slowest} ({size:,} bytes in one file) {took[slowest]:.3f}s")
    for name in ("tuple-240k", "megabyte"):
        cuts = ", ".join(f"{c.path} {c.function} {c.limit}" for c in prints[name].cuts)
        print(f"  {name}: {took[name]:.3f}s; cut: {cuts or 'nothing'}")
    started = time.perf_counter()
    report = compare_class(base, prints)
    print(f"class comparison: {time.perf_counter() - started:.3f}s")
    kinds = Counter((flag.kind, flag.lab) for flag in report.flags)
    for (kind, lab), count in sorted(kinds.items()):
        print(f"  {kind} flags in lab {lab}: {count}")
    honest = [
        f.id
        for f in report.flags
        if f.kind == "reference" and not any("copy" in name for name in f.learners)
    ]
    print(f"  honest submissions flagged against the reference: {len(honest)}")
    copies = [name for name in sources if name.startswith("copy-of-reference")]
    missed = [name for name in copies if not any(name in f.learners for f in report.flags)]
    print(f"  copies of the reference not flagged: {len(missed)} of {len(copies)}")
    for line in report.summary_lines()[-3:]:
        print(f"  {line[:150]}")
    disguise_table(manifest, kit, base)


if __name__ == "__main__":
    main()
