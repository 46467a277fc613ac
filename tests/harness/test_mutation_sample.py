"""A fixed sample of ``bench/mutation.py``'s mutants, graded as ``checkpoint`` grades a workspace.

The benchmark grades every mutant cosmic-ray makes of the lab modules (minutes); this grades a
dozen: ten the probe cases of issue 55 kill (each survived every case and test before them)
and two listed in ``bench/equivalent_mutants.toml``. A sampled mutant must be killed (some lab
does not pass) unless it is listed, and a listed one must survive: a check that fails on an
unclassified survivor, within the suite's time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from course.harness.manifest import Manifest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # ``bench`` is a directory of the repository, not installed
    sys.path.insert(0, str(ROOT))

from bench import mutation  # noqa: E402

pytestmark = pytest.mark.costly  # handed to a worker first (tests/schedule.py)

SAMPLE: tuple[tuple[str, str, str, str], ...] = (
    # (module, definition, operator, the changed line after the mutation)
    ("summary.py", "summary_to_json", "AddNot", "list(items) if not isinstance(items, list)"),
    ("summary.py", "parse_compaction_entry", "ReplaceTrueWithFalse", '".id", non_empty=False'),
    ("groups.py", "split_interactions", "ReplaceComparisonOperator_Eq_Is", 'if role is "user":'),
    ("context.py", "check_amount", "ExceptionReplacer", "except CosmicRayTestingException:"),
    ("context.py", "build_context", "NumberReplacer", "max( -1, available - opening.tokens)"),
    ("context.py", "select_groups", "ReplaceComparisonOperator_Eq_Is", "len(kept) is len(groups)"),
    ("context.py", "budget_report", "ReplaceComparisonOperator_Eq_Is", "index is len(groups) - 1"),
    ("context.py", "open_context", "ReplaceComparisonOperator_Is_IsNot", "compaction is not None"),
    ("compaction.py", "latest_compaction", "ReplaceUnaryOperator_Delete_USub", "- 1, 1, -1)"),
    ("compaction.py", "resume_suffix", "ReplaceComparisonOperator_Eq_Is", 'get("role") is "user"'),
    # listed as equivalent: they must survive
    ("groups.py", "split_interactions", "ReplaceComparisonOperator_Eq_GtE", 'if role >= "user":'),
    ("groups.py", "check_tool_pairs", "NumberReplacer", "start = entries[ -1].id"),
)


@pytest.fixture(scope="module")
def sample(manifest: Manifest, kit: Path) -> list[mutation.Mutant]:
    operators = {f"core/{operator}" for _, _, operator, _ in SAMPLE}
    made = mutation.all_mutants(manifest, kit, operators)
    found = []
    for module, where, operator, after in SAMPLE:
        matching = [
            m
            for m in made
            if Path(m.file).name == module
            and m.where == where
            and m.operator == f"core/{operator}"
            and after in m.after
        ]
        assert len(matching) == 1, f"{module} {where} {operator} {after!r}: {matching}"
        found += matching
    return found


def test_the_sample_is_killed_or_listed_as_equivalent(
    manifest: Manifest, kit: Path, sample: list[mutation.Mutant]
) -> None:
    listed = mutation.equivalents()
    grade = mutation.Grader(manifest, kit)
    verdicts = [grade(mutant) for mutant in sample]
    unclassified = [
        v.mutant.id for v in verdicts if not v.failed and not mutation.classified(v.mutant, listed)
    ]
    assert not unclassified, "survivors neither killed nor listed as equivalent"
    wrongly_listed = [
        v.mutant.id for v in verdicts if v.failed and mutation.classified(v.mutant, listed)
    ]
    assert not wrongly_listed, "killed, yet listed as equivalent"
    assert sum(bool(mutation.classified(m, listed)) for m in sample) == 2
