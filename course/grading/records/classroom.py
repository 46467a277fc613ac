"""Comparing a class's fingerprints: learners with the reference, and pairs and groups of
learners who share code, flagged lab by lab and file by file.

Under docstrings that pin a function's shape every correct answer resembles the reference, so
each lab (and each learner file) is flagged against the class's own spread: a learner whose
function streams are the reference's or whose code contains its fingerprint, or all its
statements, almost whole (``reference``); learners alike once what the scaffold gives
everyone and what the kit's independent solutions share is left out, or whose code is equal
whole (``pair`` for two, ``cluster`` for three or more: a group to show, never noise to drop).
The kit's own solutions calibrate the floors (``tests/harness/test_copies.py``); pairs come
from an inverted index of hashes, so a class of a hundred costs little. A flag is for the
instructor to look at, never a grade.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

from ...locale import gettext as _
from ...locale import tidy_filled
from .copies import WINDOW, Baseline, Cut, K, LabPrint, Prints
from .gradebook import Grade, json_fields

# A score is flagged from the ceiling on, and from the floor on when more than SPREAD scaled
# median absolute deviations above the class's median: the containment of the reference's
# fingerprint, and two learners' shared part of what is their own.
REFERENCE_FLOOR = 0.85
REFERENCE_CEILING = 0.95
PAIR_FLOOR = 0.6
PAIR_CEILING = 0.8
SPREAD = 3.0
PAIR_SMALLEST = 8  # two learners' hashes are compared only when each holds this many of its own
# Statements hashed each on its own (``copies.statement_hashes``) see through anything put
# between them; a lab or file has few, so a learner is flagged by them only for holding all of
# the reference's (the ceiling) when it has this many, and two learners only when each holds
# PAIR_SMALLEST of their own and they share from the pairs' ceiling on.
STATEMENTS_COMPARED = 4
NAMES_SHOWN = 6  # of a group, in a row's flag; the rest counted
LINE_NAMES = 20  # of a group, in a line of the terminal's summary; the rest counted


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


def unit_name(unit: str) -> str:
    """``Lab 11.3`` for a lab, ``context.py`` for a learner file."""
    return unit.rsplit("/", 1)[-1] if unit.endswith(".py") else f"Lab {unit}"


@dataclass(frozen=True)
class CopyFlag:
    """One flagged lab or file: a learner and the reference, two learners, or a group."""

    kind: str  # reference, pair or cluster
    lab: str  # the lab's id, or the learner file's workspace path
    learners: tuple[str, ...]
    score: float
    threshold: float
    identical: tuple[str, ...] = ()  # functions whose whole normalised stream is the reference's
    whole: bool = False  # every learner's code of it is equal whole (normalised)
    reference: bool = False  # a pair or group each of whose code is mostly the reference's

    @property
    def id(self) -> str:
        """Stable across runs: the kind, the lab (or file) and the learners in order."""
        return "/".join((self.kind, self.lab, *self.learners))

    def describe(self, learner: str) -> str:
        """The row flag: ``copy of the reference? (Lab 11.3 100%)``, ``like bo? (Lab 11.3
        97%)``, ``in a group of 3 with bo, cy? (context.py 92%)``: a likeness, asked."""
        where = _("({unit} {percent}%)").format(
            unit=unit_name(self.lab), percent=round(100 * self.score)
        )
        if self.kind == "reference":
            return _("copy of the reference? {where}").format(where=where)
        others = [name for name in self.learners if name != learner]
        if self.kind == "pair":
            return _("like {learner}? {where}").format(learner=others[0], where=where)
        shown = _listed(others[:NAMES_SHOWN])
        if len(others) > NAMES_SHOWN:
            shown = _("{names} and {count} more").format(
                names=shown, count=len(others) - NAMES_SHOWN
            )
        said = _("in a group of {count} with {learners}? {where}")
        return said.format(count=len(self.learners), learners=shown, where=where)

    def to_json(self) -> dict[str, Any]:
        data = json_fields(self, "id kind lab learners score threshold")
        data["scope"] = "file" if self.lab.endswith(".py") else "lab"
        if self.identical:
            data["identical"] = list(self.identical)
        if self.whole:
            data["whole"] = True
        if self.reference:
            data["reference"] = True
        return data


@dataclass(frozen=True)
class CopyReport:
    """What the class comparison found: flags, each lab's spread, and what was cut."""

    flags: tuple[CopyFlag, ...]
    spread: Mapping[str, Mapping[str, Threshold]]  # lab or file → reference/pairs → threshold
    cuts: Mapping[str, tuple[Cut, ...]]

    def row_flags(self, learner: str) -> list[str]:
        """The row's flags: each copy flag it is in, and whether its code was cut."""
        found = [f.describe(learner) for f in self.flags if learner in f.learners]
        if self.cuts.get(learner):
            found.append(_("copy check cut (see copies.cut)"))
        return found

    def summary_lines(self, names: Mapping[str, str] | None = None) -> list[str]:
        """One terminal line per learner or group flagged, naming every lab and file and its
        score: ``copies: ana, ben, cy share Lab 11.3 (92 %)``; ``names``: how to show a learner
        (``Grade.known_as``), else by the row's name."""
        known = names or {}
        units: dict[tuple[bool, tuple[str, ...], bool], list[str]] = {}
        for flag in self.flags:
            key = (flag.kind == "reference", flag.learners, flag.reference)
            said = _("{unit} ({percent} %)").format(
                unit=unit_name(flag.lab), percent=round(100 * flag.score)
            )
            units.setdefault(key, []).append(said)
        lines = []
        for (against_reference, learners, reference), found in units.items():
            if against_reference:
                said = _("copies: {learner} matches the reference in {units}")
            elif reference:
                said = _("copies: {learners} share {units}, all of it the reference's")
            else:
                said = _("copies: {learners} share {units}")
            shown = _listed([known.get(name, name) for name in learners[:LINE_NAMES]])
            if len(learners) > LINE_NAMES:
                more = _("{names} and {count} more")
                shown = more.format(names=shown, count=len(learners) - LINE_NAMES)
            filled = said.format(learner=shown, learners=shown, units=_listed(found))
            lines.append(tidy_filled(filled))  # a name ending in a full-width mark takes no space
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "method": (
                f"winnowed {K}-grams of normalised syntax, window {WINDOW}, and statements "
                "hashed each on its own"
            ),
            "flags": [f.to_json() for f in self.flags],
            "labs": {
                lab: {kind: t.to_json() for kind, t in kinds.items()}
                for lab, kinds in self.spread.items()
            },
            "cut": {
                learner: [c.to_json() for c in cuts] for learner, cuts in self.cuts.items() if cuts
            },
        }


def _listed(items: Sequence[str]) -> str:
    """``a, b, c`` in the edition's way of listing (``a、b、c``)."""
    said = items[0] if items else ""
    for item in items[1:]:
        said = _("{list}, {item}").format(list=said, item=item)
    return said


def containment(mine: frozenset[int], theirs: frozenset[int]) -> float:
    """The share of ``theirs`` that ``mine`` holds (0 when ``theirs`` is empty)."""
    return len(mine & theirs) / len(theirs) if theirs else 0.0


def _reference_flags(
    unit: str, reference: LabPrint, given: LabPrint, prints: Mapping[str, LabPrint]
) -> tuple[list[CopyFlag], Threshold]:
    target = reference.hashes - given.hashes
    statements = reference.statements - given.statements
    if len(statements) < STATEMENTS_COMPARED:
        statements = frozenset()
    scores = {name: round(containment(p.hashes, target), 3) for name, p in prints.items()}
    limit = threshold(list(scores.values()), REFERENCE_FLOOR, REFERENCE_CEILING)
    flags = []
    for name, p in sorted(prints.items()):
        mine = set(p.digests.values())
        identical = tuple(sorted(f for f, d in reference.digests.items() if d in mine))
        each = round(containment(p.statements, statements), 3)
        if identical or (target and scores[name] >= limit.at) or each >= REFERENCE_CEILING:
            score = max(scores[name], each)
            flags.append(CopyFlag("reference", unit, (name,), score, limit.at, identical))
    return flags, limit


def _groups(edges: Sequence[tuple[str, str]]) -> list[list[str]]:
    """The connected learners of ``edges``, each group sorted, in order of its first name."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for a, b in edges:
        parent[root(a)] = root(b)
    members: dict[str, list[str]] = defaultdict(list)
    for name in sorted(parent):
        members[root(name)].append(name)
    return sorted(members.values())


def _shares(own: Mapping[str, frozenset[int]], least: int) -> dict[tuple[str, str], float]:
    """Each pair of learners holding ``least`` of ``own`` each: the share of the smaller's
    that the other holds (an inverted index: pairs sharing nothing cost no set operation)."""
    compared = sorted(name for name, hashes in own.items() if len(hashes) >= least)
    holders: dict[int, list[str]] = defaultdict(list)
    for name in compared:
        for h in own[name]:
            holders[h].append(name)
    shared = Counter(pair for names in holders.values() for pair in combinations(names, 2))
    return {
        (a, b): round(shared[a, b] / min(len(own[a]), len(own[b])), 3)
        for a, b in combinations(compared, 2)
    }


def _shared_flags(
    unit: str,
    prints: Mapping[str, LabPrint],
    everyones: LabPrint,
    given: int | None,
    matching: set[str],
) -> tuple[list[CopyFlag], Threshold]:
    """Pairs and groups of learners: alike once ``everyones`` hashes are left out (or all
    but ``everyones`` statements of the smaller held by the other), or equal whole (but for
    ``given``, the starter's whole: labs not started)."""
    own = {name: p.hashes - everyones.hashes for name, p in prints.items()}
    scores = _shares(own, PAIR_SMALLEST)
    own_statements = {name: p.statements - everyones.statements for name, p in prints.items()}
    statements = _shares(own_statements, STATEMENTS_COMPARED)
    limit = threshold(list(scores.values()), PAIR_FLOOR, PAIR_CEILING)
    wholes: dict[int, list[str]] = defaultdict(list)
    for name, p in sorted(prints.items()):
        if p.whole is not None and p.whole != given:
            wholes[p.whole].append(name)
    equal = {pair for names in wholes.values() for pair in combinations(names, 2)}
    alike = {pair for pair, score in scores.items() if score >= limit.at}
    alike |= {pair for pair, score in statements.items() if score >= PAIR_CEILING}
    flags = []
    for group in _groups(sorted(equal | alike)):
        wholes_held = {prints[name].whole for name in group}
        whole = len(wholes_held) == 1 and None not in wholes_held
        if whole:
            score = 1.0
        elif len(group) == 2:
            pair = (group[0], group[1])
            score = max(scores.get(pair, 0.0), statements.get(pair, 0.0)) or 1.0
        else:
            score = round(min(_cover(name, group, own, own_statements) for name in group), 3)
        kind = "pair" if len(group) == 2 else "cluster"
        of_reference = all(name in matching for name in group)
        flags.append(CopyFlag(kind, unit, tuple(group), score, limit.at, (), whole, of_reference))
    return flags, limit


def _cover(
    name: str,
    group: Sequence[str],
    own: Mapping[str, frozenset[int]],
    own_statements: Mapping[str, frozenset[int]],
) -> float:
    """The share of ``name``'s own hashes (or statements, if more) the rest of ``group`` holds."""
    found = []
    for held in (own, own_statements):
        others = frozenset().union(*(held[o] for o in group if o != name))
        found.append(containment(others, held[name]) if held[name] else 0.0)
    return max(found) if own[name] or own_statements[name] else 1.0


def compare_class(base: Baseline, submissions: Mapping[str, Prints]) -> CopyReport:
    """Each lab and learner file of ``submissions`` (learner → fingerprints) against the
    reference and each other."""
    flags: list[CopyFlag] = []
    spread: dict[str, dict[str, Threshold]] = {}
    for unit in [lab.id for lab in base.labs] + list(base.files):
        reference = base.reference.unit(unit)
        if reference is None:
            continue
        prints = {name: p for name, s in submissions.items() if (p := s.unit(unit)) is not None}
        given = base.scaffold.unit(unit) or LabPrint(frozenset())
        found, against_reference = _reference_flags(unit, reference, given, prints)
        matching = {flag.learners[0] for flag in found} | {
            name
            for name, p in prints.items()
            if containment(reference.hashes, p.hashes) >= REFERENCE_FLOOR
        }
        # what the reference holds is judged against it above: between learners it would
        # pair any copy of the reference with an honest learner close to it
        everyones = base.everyones(unit)
        explained = LabPrint(
            everyones.hashes | reference.hashes,
            statements=everyones.statements | reference.statements,
        )
        paired, pairs = _shared_flags(unit, prints, explained, base.given_whole(unit), matching)
        flags += found + paired
        spread[unit] = {"reference": against_reference, "pairs": pairs}
    cuts = {name: s.cuts for name, s in sorted(submissions.items())}
    return CopyReport(tuple(flags), spread, cuts)


def with_copy_flags(copies: Baseline, grades: list[Grade]) -> tuple[list[Grade], CopyReport]:
    """The rows with the class comparison's flags, and the comparison (its ``to_json`` is
    ``gradebook.json``'s ``copies``; a learner named twice is told apart by its number,
    ``ada#2``)."""
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
    return flagged, report
