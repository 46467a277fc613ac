"""How much a grade depends on the audit's draw: ``python3 bench/audit.py [--seeds N]``.

The curated wrong versions (``tests/harness/mutants.py``, honest single mistakes) answer every
probe case of the chapter's seed (what a workspace ships) and of N audit seeds (default 30), in
this process, outside any sandbox: the reference's answers against each version's, compared as
the grader compares them. For each version it prints how many distinct grades (each lab passed
or failed, shipped and audit cases alike) the N seeds give, and whether any seed raised the
keyed-answers finding; then the same with each lab's numbered audit cases cut to the first K
(the rules always kept), so a draw's size can be chosen: the smallest K at which no version's
grade depends on the seed. A keyed solution (right on the shipped inputs only) is measured too.
Takes minutes; nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``course`` and the test helpers importable
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "harness"))

from inprocess_probes import (  # noqa: E402
    Case,
    answers,
    drawn,
    findings,
    install,
    install_keyed,
    lab_grade,
    own,
    statuses,
)
from mutants import MUTANTS  # noqa: E402

from course.curricula.ch11 import probes as ch11  # noqa: E402
from course.grading.verdict.probes import KEYED_LEAST, KEYED_SHARE  # noqa: E402
from course.harness.kit import kit_root  # noqa: E402
from course.harness.manifest import load_manifest  # noqa: E402

SIZES = (0, 2, 5, 10, 20)
"""Numbered audit cases kept per lab (besides the rules); ``all`` is measured as well."""


def cut(cases: list[Case], size: int | None) -> list[Case]:
    """The first ``size`` numbered cases of each lab (every one when None)."""
    if size is None:
        return cases
    seen: dict[str, int] = defaultdict(int)
    kept = []
    for case in cases:
        seen[str(case["lab"])] += 1
        if seen[str(case["lab"])] <= size:
            kept.append(case)
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--mutants", type=int, default=len(MUTANTS), help="the first N only")
    args = parser.parse_args()
    manifest, kit = load_manifest("11"), kit_root()
    labs = [lab.id for lab in manifest.required_labs]
    started = time.perf_counter()
    shipped = drawn(manifest.probe_seed, labs)
    seeds = [1000 + n for n in range(args.seeds)]
    audits = {seed: own(drawn(seed, labs)) for seed in seeds}
    every = shipped + [case for seed in seeds for case in audits[seed]]
    print(f"drew {len(shipped)} shipped cases and {args.seeds} audit draws", end=" ")
    print(f"({len(every) - len(shipped)} cases), {time.perf_counter() - started:.1f}s")
    rules = sum(ch11.RULE in str(c["id"]) for c in shipped)
    numbered = {lab: sum(c["lab"] == lab for c in own(shipped)) for lab in labs}
    print(f"rules in every draw: {rules}; numbered cases a draw holds per lab: {numbered}")
    expected_shipped = answers(manifest.reference, shipped)
    expected = {seed: answers(manifest.reference, audits[seed]) for seed in seeds}
    print(f"the reference's answers: {time.perf_counter() - started:.1f}s")
    sizes: list[int | None] = [*SIZES, None]
    varying: dict[int | None, list[str]] = {size: [] for size in sizes}
    flagged: list[str] = []
    worst_share = (0.0, "")
    with tempfile.TemporaryDirectory(prefix="audit-bench-") as scratch:
        versions = [(m.name, m) for m in MUTANTS[: args.mutants]]
        print(
            f"\n{'version':<44} {'grades':>6} {'keyed':>5}  grade (11.1 … 11.5, under most seeds)"
        )
        for name, mutant in [*versions, ("keyed-solution", None)]:
            into = Path(scratch) / name
            into.mkdir()
            if mutant is None:
                package = install_keyed(manifest, kit, into, shipped)
            else:
                package = install(manifest, kit, into, mutant)
            mine = statuses(shipped, expected_shipped, answers(package, shipped))
            grades: dict[int | None, set[tuple[str, ...]]] = {size: set() for size in sizes}
            keyed = 0
            tally: dict[tuple[str, ...], int] = defaultdict(int)
            for seed in seeds:
                got = answers(package, audits[seed])
                for size in sizes:
                    part = cut(audits[seed], size)
                    theirs = statuses(part, expected[seed], got)
                    grade = tuple(lab_grade(mine, theirs, lab) for lab in labs)
                    grades[size].add(grade)
                    if size is None:
                        tally[grade] += 1
                        found = findings(mine, theirs, seed)
                        keyed += any(f.kind == "keyed" for f in found)
                        for lab, cases in theirs.items():
                            passing = {f for f, s in mine.get(lab, []) if s == "passed"}
                            weighed = [s for f, s in cases if f in passing]
                            if (
                                mutant is not None
                                and weighed
                                and all(s == "passed" for _, s in mine.get(lab, []))
                            ):
                                share = sum(s != "passed" for s in weighed) / len(weighed)
                                worst_share = max(worst_share, (share, f"{name} {lab}"))
            for size in sizes:
                if len(grades[size]) > 1 and mutant is not None:
                    varying[size].append(name)
            if keyed and mutant is not None:
                flagged.append(name)
            usual = max(tally, key=tally.__getitem__)
            shown = " ".join("P" if g == "passed" else "F" for g in usual)
            print(f"{name:<44} {len(grades[None]):>6} {keyed:>5}  {shown}")
    print("\nversions whose grade depends on the audit seed, by numbered cases per lab kept:")
    for size in sizes:
        names = ", ".join(varying[size]) or "none"
        print(f"  {'all' if size is None else size:>4}: {len(varying[size])} ({names})")
    print(f"honest versions flagged as keyed under any seed: {len(flagged)} {flagged or ''}")
    print(f"the keyed finding: at least {KEYED_LEAST} and {KEYED_SHARE:.0%} of the audit cases")
    share, where = worst_share
    said = f"{share:.1%} ({where})" if share else "0 (no honest version fails an audit case there)"
    print(f"  of functions whose shipped cases all agree; worst honest share: {said}")
    print(f"total: {time.perf_counter() - started:.1f}s")


if __name__ == "__main__":
    main()
