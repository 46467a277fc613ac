"""The benchmarks' smoke test: workload, both trimmers and the results file; no timing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langchain_core", reason="the benchmarks need the 'bench' extra")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # ``bench`` is a directory of the repository, not installed
    sys.path.insert(0, str(ROOT))


def test_both_trimmers_keep_the_same_messages_on_a_small_history() -> None:
    from bench import compare
    from bench.budgets import budgets_for, kit_estimator, run_kit
    from bench.workload import history_json
    from course.session import parse_entries

    entries = history_json(50)
    assert len(entries) == 50 and history_json(50) == entries  # deterministic
    path = parse_entries(entries)
    lc_messages = compare.to_langchain(entries)
    assert [kit_estimator(e["message"]) for e in entries] == [
        compare.langchain_estimator(m) for m in lc_messages[1:]
    ]
    for budget in budgets_for(entries, ["10%", "50%", "90%", "all"]):
        kit = run_kit(path, budget)
        assert kit.tokens.available_for_messages == budget.available
        assert kit.kept_entry_ids == compare.trimmed_ids(compare.run_trim(lc_messages, budget))
        memoized = compare.run_trim_memoized(lc_messages, budget)
        assert kit.kept_entry_ids == compare.trimmed_ids(memoized)
    overflow = budgets_for(entries, ["overflow"])[0]
    kit = run_kit(path, overflow)
    assert (kit.reason, len(kit.kept_entry_ids)) == ("single_group_overflow", 5)
    assert compare.trimmed_ids(compare.run_trim(lc_messages, overflow)) == []


def test_the_results_file_has_the_keys_tooling_reads(tmp_path: Path) -> None:
    """docs/performance.md's ``bench/run.py`` as a script, at its smallest size (the
    documented-commands test runs it with ``--help`` only, and leaves the run to this test). In a
    process of its own: the collections it makes before each timing scan that process's heap."""
    out = tmp_path / "results.json"
    command = [sys.executable, "bench/run.py", "--quick", "--sizes", "50,100", "--runs", "1"]
    ran = subprocess.run(
        [*command, "--out", str(out)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    results = json.loads(out.read_text(encoding="utf-8"))
    comparison = results["build_context_vs_trim_messages"]
    assert {"messages", "ratio", "mismatches"} <= set(comparison)
    assert comparison["messages"] == 100 and comparison["mismatches"] == 0
    assert {"entries", "ratio"} <= set(results["jsonl_open_vs_json_loads"])
    assert results["jsonl_open_vs_json_loads"]["entries"] == 100
    assert isinstance(results["scaling_100k_over_10k"], float)
    settings = {
        "scaling": ("tool-pairs", "comparison", "cold"),
        "scaling_warm": ("tool-pairs", "comparison", "warm"),
        "scaling_paths_only": ("tool-pairs", "paths only", "cold"),
        "scaling_second_workload": ("long-outputs", "comparison", "cold"),
    }
    for key, setting in settings.items():
        scaling = results[key]
        assert (scaling["workload"], scaling["heap"], scaling["regime"]) == setting
        assert (scaling["sizes"], scaling["runs"], scaling["linear_ratio"]) == ([50, 100], 3, 2)
        assert len(scaling["full_collections"]) == 2
    second = results["second_workload"]
    assert {"workload", "messages", "ratio", "ratio_gc_paused", "mismatches"} <= set(second)
    assert second["workload"] == "long-outputs" and second["mismatches"] == 0


def test_scaling_names_the_heaps_and_regimes_it_knows() -> None:
    from bench.scaling import measure_scaling

    with pytest.raises(ValueError, match="heap: one of comparison, paths only"):
        measure_scaling("tool-pairs", [10, 20], 1, heap="fresh")
    with pytest.raises(ValueError, match="regime: one of cold, warm"):
        measure_scaling("tool-pairs", [10, 20], 1, regime="hot")


def test_the_second_workload_is_deterministic_and_keeps_its_calls_paired() -> None:
    from bench.workload import long_outputs_json
    from course.groups import group_interactions
    from course.session import parse_entries

    entries = long_outputs_json(200)
    assert len(entries) >= 200 and long_outputs_json(200) == entries
    groups = group_interactions(parse_entries(entries))
    assert sum(len(group.entries) for group in groups) == len(entries)


def test_the_memory_benchmark_reports_the_call_s_peak() -> None:
    from bench import memory

    figures = memory.measure(2_000, 500)
    assert figures["entries"] == 2_000 and figures["reason"] == "trimmed"
    assert 0 < figures["call_peak_mb"] < figures["path_mb"]


def test_the_explorer_benchmark_moves_the_slider_on_the_real_session(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bench import explorer

    explorer.main()
    out = capsys.readouterr().out
    assert "entries on the path: 1019, groups: 88, moves: 60" in out
    assert "slider move: median" in out and "ms" in out


def test_the_audit_bench_grades_the_mistakes_and_the_keyed_solution() -> None:
    """``bench/audit.py`` at its smallest: two curated mistakes and the keyed solution under one
    audit seed; the figures it prints are read, never timed."""
    command = [sys.executable, "bench/audit.py", "--seeds", "1", "--mutants", "2"]
    ran = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    rows = {line.split()[0]: line.split()[1:3] for line in ran.stdout.splitlines() if line.strip()}
    assert rows["slice_last_three_messages"] == ["1", "0"], ran.stdout
    assert rows["keyed-solution"] == ["1", "1"], ran.stdout
    assert "honest versions flagged as keyed under any seed: 0" in ran.stdout
