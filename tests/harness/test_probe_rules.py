"""Rules the chapter states are named cases in every draw: no rule's check is left to chance.

A rule's case has an id that names it (``11.3#rule-exact-fit``), no number and no seed, and the
same input under every seed, shipped or audit; a run that answers both sets asks it once.
"""

from __future__ import annotations

from pathlib import Path

from course.curricula.ch11 import probes as ch11
from course.grading.verdict import probes as probing
from course.harness.manifest import Manifest
from course.sandboxed.probecases import answer

SEEDS = (11, 0, 7, 4242, 2**31 - 1)


def rule_cases(seed: int) -> dict[str, dict[str, object]]:
    return {str(c["id"]): c for c in ch11.cases(seed, []) if ch11.RULE in str(c["id"])}


def test_every_draw_holds_every_rule_the_same() -> None:
    named = {f"{lab}#{ch11.RULE}{name}" for lab, names in ch11.RULES.items() for name in names}
    first = rule_cases(SEEDS[0])
    assert set(first) == named
    for seed in SEEDS[1:]:
        assert rule_cases(seed) == first, f"seed {seed} draws another rule case"


def test_the_chapters_rules_are_among_them() -> None:
    ids = set(rule_cases(11))
    for rule in (
        "11.3#rule-exact-fit", "11.3#rule-one-over", "11.3#rule-empty-path",
        "11.3#rule-single-group-overflow", "11.2#rule-empty-path", "11.2#rule-orphan-result",
        "11.2#rule-call-id-reused-later", "11.2#rule-call-id-declared-twice",
        "11.5#rule-resume-compact-1", "11.5#rule-resume-compact-2",
        "11.1#rule-record-negative-tokens-before", "11.1#rule-record-missing-summary",
    ):  # fmt: skip
        assert rule in ids, rule


def test_the_rules_say_what_the_chapter_says() -> None:
    """31 tokens keep groups 2 and 3 exactly; 30 keep group 3; 19 overflow with group 3."""
    cases = rule_cases(11)

    def kept(rule: str) -> tuple[object, object]:
        got = answer(ch11.evaluate, "course", cases[rule])["value"]
        return got["kept_entry_ids"], got["reason"]

    third = ["u3", "calls", "r-test", "r-read", "a3"]
    assert kept("11.3#rule-exact-fit") == (["u2", "a2", *third], "trimmed")
    assert kept("11.3#rule-one-over") == (third, "trimmed")
    assert kept("11.3#rule-single-group-overflow") == (third, "single_group_overflow")
    orphan = answer(ch11.evaluate, "course", cases["11.2#rule-orphan-result"])
    assert "unknown-1" in orphan["message"], orphan
    resumed = answer(ch11.evaluate, "course", cases["11.5#rule-resume-compact-2"])["value"]
    suffix = [*third, "u4", "a4"]
    assert resumed == {"compaction": "compact-2", "suffix": suffix, ch11.THE_PATHS_OWN: True}


def test_a_run_with_audit_cases_asks_a_rule_once(manifest: Manifest, kit: Path) -> None:
    labs = [manifest.lab("11.3")]
    shipped = probing.prepare(manifest, kit, labs, 11)
    audit = probing.prepare(manifest, kit, labs, 4242)
    assert shipped is not None and audit is not None
    asked = [str(c["id"]) for c in probing.with_audit_cases(shipped, audit).cases]
    assert asked.count("11.3#rule-exact-fit") == 1
    assert not any(ch11.RULE in i and "@" in i for i in asked)
    assert sum("@" in i for i in asked) == len(audit.cases) - len(ch11.RULES["11.3"])
