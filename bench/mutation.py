"""The verdict measured by mutation testing: ``python3 bench/mutation.py [--jobs N]``.

cosmic-ray's operators make every single-point change they know to the reference's lab modules
(the files the manifest's ``learner`` role names), one mutant a change. Each mutant is the
reference with that one file changed, graded by the kit's own engine exactly as ``checkpoint
11`` grades a workspace: every lab's focused tests and probe cases, in the sandbox, a failing lab
graded again on its own (``grading/verdict/isolated.py``). A mutant is killed when any lab, the
optional one included, does not pass. A survivor must be listed in ``bench/equivalent_mutants.toml``
with the reason no learner-visible behaviour changed; any other survivor fails the run (exit 1).

Prints the mutants, the killed, the equivalent, the killed share of the non-equivalent, each
unclassified survivor with its change, and the time. ``--only PLACE`` grades the mutants of
the definitions whose ``module definition`` holds PLACE (``--only "context.py open_context"``).
Takes minutes: nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make ``course`` importable
    sys.path.insert(0, str(ROOT))

from cosmic_ray import plugins  # noqa: E402
from cosmic_ray.ast import ast_nodes, get_ast  # noqa: E402
from cosmic_ray.ast.ast_query import ASTQuery  # noqa: E402
from cosmic_ray.mutating import mutate_code  # noqa: E402

from bench.doors import unsandboxed_here  # noqa: E402
from course.grading.intake.snapshot import Snapshot, reference_snapshot  # noqa: E402
from course.grading.verdict import probes as probing  # noqa: E402
from course.grading.verdict.engine import GradingOptions, SandboxMode, grade  # noqa: E402
from course.harness.kit import kit_root, read_source  # noqa: E402
from course.harness.manifest import Manifest, load_manifest  # noqa: E402
from course.harness.runner import Limits  # noqa: E402
from course.sandboxed.status import Status  # noqa: E402

EQUIVALENT = ROOT / "bench" / "equivalent_mutants.toml"
"""The reviewed list of surviving mutants that change no behaviour a contract promises."""


@dataclass(frozen=True)
class Mutant:
    """One single-point change to one lab module, named by what it changes (no line number,
    so an edited docstring elsewhere in the file keeps every name)."""

    file: str
    """The workspace path of the mutated module (``pi_course/context.py``)."""
    where: str
    """The definition holding the change (``select_groups``), or ``<module>``."""
    operator: str
    before: str
    after: str
    nth: int
    """Which of the mutants with the same file, place, operator and change this is (0 first)."""
    source: bytes

    @property
    def id(self) -> str:
        nth = f" #{self.nth}" if self.nth else ""
        return f"{Path(self.file).name} {self.where}: `{self.before}` → `{self.after}`{nth}"


def operators(only: Iterable[str] = ()) -> list[tuple[str, object]]:
    """cosmic-ray's core operators that need no configuration (the variable replacer and
    inserter need arguments naming variables: left out), by name; ``only`` those named."""
    wanted = set(only)
    found = []
    for name in plugins.operator_names():
        kind = plugins.get_operator(name)
        if not kind.arguments() and (not wanted or name in wanted):
            found.append((name, kind()))
    return found


def changed_lines(original: str, mutated: str) -> tuple[str, str]:
    """The lines a mutation changed, before and after, stripped (a few lines joined by ``⏎``)."""
    old, new = original.splitlines(), mutated.splitlines()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            before = " ⏎ ".join(line.strip() for line in old[i1:i2])
            after = " ⏎ ".join(line.strip() for line in new[j1:j2])
            return before, after
    return "", ""


def file_mutants(path: str, source: str, only: Iterable[str] = (), place: str = "") -> list[Mutant]:
    """Every mutant of one module's ``source``, in cosmic-ray's order (operator, position);
    ``only``: of the operators named; ``place``: in the definitions whose ``module
    definition`` holds it (``context.py open_context``). A mutant costs a parse: 16 ms."""
    tree = get_ast(source)
    nodes = list(ast_nodes(tree))
    found: list[Mutant] = []
    seen: Counter[tuple[str, str, str, str]] = Counter()
    for name, operator in operators(only):
        places = [node for node in nodes for _ in operator.mutation_positions(node)]  # type: ignore[attr-defined]
        for occurrence, node in enumerate(places):
            where = ASTQuery(node).get_definition_name() or "<module>"
            if place not in f"{Path(path).name} {where}":
                continue
            mutated = mutate_code(source, operator, occurrence)
            if mutated is None or mutated == source:
                continue
            before, after = changed_lines(source, mutated)
            key = (path, where, before, after)
            found.append(
                Mutant(path, where, name, before, after, seen[key], mutated.encode("utf-8"))
            )
            seen[key] += 1
    return found


def all_mutants(
    manifest: Manifest, kit: Path, only: Iterable[str] = (), place: str = ""
) -> list[Mutant]:
    """Every mutant of every lab module the manifest names (its ``learner`` files)."""
    found: list[Mutant] = []
    for file in manifest.files_with_role("learner"):
        if file.reference is None:
            continue
        source = read_source(kit, file.reference).decode("utf-8")
        found += file_mutants(file.path, source, tuple(only), place)
    return found


@dataclass(frozen=True)
class Equivalent:
    """A listed mutant, or several of one line (``after`` a list): one reason for each."""

    file: str
    where: str
    before: str
    after: str | list[str]
    reason: str
    nth: int = 0

    @property
    def afters(self) -> list[str]:
        return [self.after] if isinstance(self.after, str) else list(self.after)

    def holds(self, mutant: Mutant) -> bool:
        place = (Path(mutant.file).name, mutant.where, mutant.before, mutant.nth)
        return place == (self.file, self.where, self.before, self.nth) and (
            mutant.after in self.afters
        )


def equivalents(path: Path = EQUIVALENT) -> list[Equivalent]:
    """The reviewed equivalent mutants; each entry's ``reason`` names a ``[reasons]`` key."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    reasons: dict[str, str] = data.get("reasons", {})
    listed = []
    for entry in data.get("equivalent", []):
        assert entry["reason"] in reasons, f"{entry}: no such reason in [reasons]"
        listed.append(Equivalent(**entry))
    return listed


def classified(mutant: Mutant, listed: Iterable[Equivalent]) -> Equivalent | None:
    return next((entry for entry in listed if entry.holds(mutant)), None)


def stale(listed: Iterable[Equivalent], mutants: Sequence[Mutant]) -> list[str]:
    """The listed changes no mutant makes any more (the code they named has changed)."""
    made = {(Path(m.file).name, m.where, m.before, m.after, m.nth) for m in mutants}
    return [
        f"{entry.file} {entry.where}: `{entry.before}` → `{after}`"
        for entry in listed
        for after in entry.afters
        if (entry.file, entry.where, entry.before, after, entry.nth) not in made
    ]


@dataclass(frozen=True)
class Verdict:
    mutant: Mutant
    failed: tuple[str, ...]
    """The labs that did not pass (none: the mutant survived)."""
    seconds: float


class Grader:
    """Grades mutants as ``checkpoint 11`` grades a workspace: the manifest's seed's probe
    cases, drawn once; the sandbox when it starts; a failing lab graded again on its own."""

    def __init__(self, manifest: Manifest, kit: Path) -> None:
        self.manifest, self.kit = manifest, kit
        drawn = probing.prepare(manifest, kit, list(manifest.labs), manifest.probe_seed)
        # where a root grader's sandbox cannot start (a kit reached through links), as a door
        # is told to then: --unsandboxed (unsandboxed_here says so once)
        sandbox: SandboxMode = "off" if unsandboxed_here() else "auto"
        self.options = GradingOptions(sandbox=sandbox, probes=drawn)
        self.reference = reference_snapshot(manifest, kit)

    def snapshot(self, mutant: Mutant) -> Snapshot:
        learner = dict(self.reference.learner) | {mutant.file: mutant.source}
        label = f"mutant {mutant.id}"
        return dataclasses.replace(self.reference, label=label, learner=learner, isolate=True)

    def __call__(self, mutant: Mutant) -> Verdict:
        started = time.monotonic()
        labs = list(self.manifest.labs)
        graded = grade(
            self.manifest,
            self.kit,
            self.snapshot(mutant),
            labs,
            Limits(),
            self.options,
            selected=False,
        )
        failed = tuple(lab.lab.id for lab in graded.result.labs if lab.status != Status.PASSED)
        return Verdict(mutant, failed, time.monotonic() - started)


def graded(mutants: Sequence[Mutant], jobs: int = 1) -> list[Verdict]:
    grader = Grader(load_manifest("11"), kit_root())
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(grader, mutants))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=1, help="mutants graded at once (default 1)")
    p.add_argument(
        "--only",
        default="",
        metavar="PLACE",
        help="grade only the mutants of the definitions whose 'module definition' holds PLACE",
    )
    args = p.parse_args(argv)
    started = time.monotonic()
    manifest, kit = load_manifest("11"), kit_root()
    mutants = all_mutants(manifest, kit, place=args.only)
    listed = equivalents()
    verdicts = graded(mutants, args.jobs)
    gone = stale(listed, mutants) if not args.only else []
    survivors = [v.mutant for v in verdicts if not v.failed]
    equivalent = [m for m in survivors if classified(m, listed)]
    unclassified = [m for m in survivors if not classified(m, listed)]
    killed_but_listed = [v.mutant for v in verdicts if v.failed and classified(v.mutant, listed)]
    killed = len(verdicts) - len(survivors)
    meaningful = len(verdicts) - len(equivalent)
    first_failed = Counter(v.failed[0] for v in verdicts if v.failed)
    modules = len(manifest.files_with_role("learner"))
    print(f"mutants: {len(verdicts)} of {modules} lab modules ({len(operators())} operators)")
    print(f"killed: {killed}, by the first lab that failed: {dict(sorted(first_failed.items()))}")
    print(f"equivalent: {len(equivalent)} (bench/equivalent_mutants.toml)")
    share = killed / max(meaningful, 1)
    print(f"killed / non-equivalent: {killed} / {meaningful} ({share:.1%})")
    print(f"survivors not classified: {len(unclassified)}")
    for mutant in unclassified:
        print(f"  SURVIVED {mutant.id} ({mutant.operator})")
    for mutant in killed_but_listed:
        print(f"  KILLED, YET LISTED AS EQUIVALENT {mutant.id}")
    for change in gone:
        print(f"  LISTED, NO SUCH MUTANT: {change}")
    wall = time.monotonic() - started
    each = sum(v.seconds for v in verdicts) / max(len(verdicts), 1)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"time: {wall:.0f} s, {each:.2f} s a mutant, {args.jobs} at once (load {load})")
    return 1 if unclassified or killed_but_listed or gone else 0


if __name__ == "__main__":
    raise SystemExit(main())
