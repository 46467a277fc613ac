"""Comparing a class's fingerprints: pairs of learners and learners with the reference, flagged.

Under docstrings that pin a function's shape every correct answer resembles the reference, so
each lab is flagged against the class's own spread: a learner whose function streams are the
reference's or whose lab contains its fingerprint almost whole, and two learners alike once what
the reference and many learners share is left out. The kit's own solutions calibrate the floors
(``tests/harness/test_copies.py``); pairs come from an inverted index of hashes, so a class of a
hundred costs little. A flag is for the instructor to look at, never a grade.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

from .copies import WINDOW, Baseline, Cut, K, LabPrint, Prints
from .gradebook import Grade, json_fields

# A score is flagged from the ceiling on, and from the floor on when more than SPREAD scaled
# median absolute deviations above the class's median: the containment of the reference's
# fingerprint, and two learners' shared part without the reference's and the common hashes.
REFERENCE_FLOOR = 0.85
REFERENCE_CEILING = 0.95
PAIR_FLOOR = 0.6
PAIR_CEILING = 0.8
SPREAD = 3.0
# A hash held by at least max(COMMON_AT_LEAST, COMMON_SHARE of the class) learners is common.
COMMON_SHARE = 0.25
COMMON_AT_LEAST = 3
PAIR_SMALLEST = 8  # two learners are compared only when each holds this many hashes of its own


@dataclass(frozen=True)
class Threshold:
    """Where a lab's scores are flagged, from the class's spread."""

    median: float
    mad: float
    at: float

    def to_json(self) -> dict[str, float]:
        return {"median": self.median, "mad": self.mad, "threshold": self.at}


def threshold(scores: Sequence[float], floor: float, ceiling: float) -> Threshold:
    """``min(ceiling, max(floor, median + SPREAD · 1.4826 · MAD))`` of ``scores``."""
    if not scores:
        return Threshold(0.0, 0.0, ceiling)
    median = statistics.median(scores)
    mad = statistics.median(abs(s - median) for s in scores)
    at = min(ceiling, max(floor, median + SPREAD * 1.4826 * mad))
    return Threshold(round(median, 3), round(mad, 3), round(at, 3))


@dataclass(frozen=True)
class CopyFlag:
    """One flagged lab: a learner and the reference, or two learners."""

    kind: str  # reference or pair
    lab: str
    learners: tuple[str, ...]
    score: float
    threshold: float
    identical: tuple[str, ...] = ()  # functions whose whole normalised stream is the reference's

    @property
    def id(self) -> str:
        """Stable across runs: the kind, the lab and the learners in order."""
        return "/".join((self.kind, self.lab, *self.learners))

    def describe(self, learner: str) -> str:
        """The row flag: ``copy of the reference? (Lab 11.3)``, ``like bo (Lab 11.3)``."""
        if self.kind == "reference":
            return f"copy of the reference? (Lab {self.lab} {self.score:.2f})"
        other = next(name for name in self.learners if name != learner)
        return f"like {other}? (Lab {self.lab} {self.score:.2f})"

    def to_json(self) -> dict[str, Any]:
        data = json_fields(self, "id kind lab learners score threshold")
        if self.identical:
            data["identical"] = list(self.identical)
        return data


@dataclass(frozen=True)
class CopyReport:
    """What the class comparison found: flags, each lab's spread, and what was cut."""

    flags: tuple[CopyFlag, ...]
    spread: Mapping[str, Mapping[str, Threshold]]  # lab → reference/pairs → its threshold
    cuts: Mapping[str, tuple[Cut, ...]]

    def row_flags(self, learner: str) -> list[str]:
        """The row's flags: each copy flag it is in, and whether its code was cut."""
        found = [f.describe(learner) for f in self.flags if learner in f.learners]
        if self.cuts.get(learner):
            found.append("copy check cut (see copies.cut)")
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "method": f"winnowed {K}-grams of normalised syntax, window {WINDOW}",
            "flags": [f.to_json() for f in self.flags],
            "labs": {
                lab: {kind: t.to_json() for kind, t in kinds.items()}
                for lab, kinds in self.spread.items()
            },
            "cut": {
                learner: [c.to_json() for c in cuts] for learner, cuts in self.cuts.items() if cuts
            },
        }


def containment(mine: frozenset[int], theirs: frozenset[int]) -> float:
    """The share of ``theirs`` that ``mine`` holds (0 when ``theirs`` is empty)."""
    return len(mine & theirs) / len(theirs) if theirs else 0.0


def _reference_flags(
    lab: str, reference: LabPrint, prints: Mapping[str, LabPrint]
) -> tuple[list[CopyFlag], Threshold]:
    scores = {name: round(containment(p.hashes, reference.hashes), 3) for name, p in prints.items()}
    limit = threshold(list(scores.values()), REFERENCE_FLOOR, REFERENCE_CEILING)
    flags = []
    for name, p in sorted(prints.items()):
        identical = tuple(sorted(f for f, d in p.digests.items() if reference.digests.get(f) == d))
        if identical or scores[name] >= limit.at:
            flags.append(CopyFlag("reference", lab, (name,), scores[name], limit.at, identical))
    return flags, limit


def _pair_flags(
    lab: str, reference: LabPrint, prints: Mapping[str, LabPrint]
) -> tuple[list[CopyFlag], Threshold]:
    held = Counter(h for p in prints.values() for h in p.hashes)
    common = max(COMMON_AT_LEAST, COMMON_SHARE * len(prints))
    own = {
        name: frozenset(h for h in p.hashes if h not in reference.hashes and held[h] < common)
        for name, p in prints.items()
    }
    compared = sorted(name for name, hashes in own.items() if len(hashes) >= PAIR_SMALLEST)
    holders: dict[int, list[str]] = defaultdict(list)
    for name in compared:
        for h in own[name]:
            holders[h].append(name)
    shared = Counter(pair for names in holders.values() for pair in combinations(names, 2))
    scores = {
        (a, b): round(shared[a, b] / min(len(own[a]), len(own[b])), 3)
        for a, b in combinations(compared, 2)
    }
    limit = threshold(list(scores.values()), PAIR_FLOOR, PAIR_CEILING)
    flags = [
        CopyFlag("pair", lab, pair, score, limit.at)
        for pair, score in sorted(scores.items())
        if score >= limit.at
    ]
    return flags, limit


def compare_class(base: Baseline, submissions: Mapping[str, Prints]) -> CopyReport:
    """Each lab of ``submissions`` (learner → fingerprints) against the reference and each other."""
    flags: list[CopyFlag] = []
    spread: dict[str, dict[str, Threshold]] = {}
    for lab in base.labs:
        reference = base.reference.labs.get(lab.id)
        if reference is None:
            continue
        prints = {name: s.labs[lab.id] for name, s in submissions.items() if lab.id in s.labs}
        found, against_reference = _reference_flags(lab.id, reference, prints)
        paired, pairs = _pair_flags(lab.id, reference, prints)
        flags += found + paired
        spread[lab.id] = {"reference": against_reference, "pairs": pairs}
    cuts = {name: s.cuts for name, s in sorted(submissions.items())}
    return CopyReport(tuple(flags), spread, cuts)


def with_copy_flags(copies: Baseline, grades: list[Grade]) -> tuple[list[Grade], dict[str, Any]]:
    """The rows with the class comparison's flags, and its report for ``gradebook.json`` (a
    learner named twice is told apart by its number, ``ada#2``)."""
    named = Counter(g.learner for g in grades)
    seen: Counter[str] = Counter()
    keys = []
    for row in grades:
        seen[row.learner] += 1
        keys.append(f"{row.learner}#{seen[row.learner]}" if named[row.learner] > 1 else row.learner)
    report = compare_class(
        copies, {key: g.prints for key, g in zip(keys, grades, strict=True) if g.prints}
    )
    flagged = [
        replace(g, flags=tuple(dict.fromkeys((*g.flags, *report.row_flags(key)))))
        for key, g in zip(keys, grades, strict=True)
    ]
    return flagged, report.to_json()
