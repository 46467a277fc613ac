"""Differential probes on the grader's side: draw cases, ask the reference, run, compare.

The chapter's probe module draws cases from a seed; the reference answers them here, and
``probe_driver`` on the learner's package in the sandbox. A lab's probes agree only if every
case got the reference's answer, compared as plain data.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from ...harness.kit import digest, fingerprint, kit_cache, read_source
from ...harness.manifest import Lab, Manifest
from ...harness.records import RecordReader
from ...harness.reference import import_reference
from ...harness.results import CheckpointResult, ProbeSummary
from ...harness.roots import carried
from ...harness.supervisor import (
    Limits,
    Wrap,
    after_a_hang,
    kill_group,
    let_exit,
    pause,
    remove_written,
    start_child,
)
from ...locale import ENVIRONMENT, current_edition
from ...locale import gettext as _
from ...sandboxed import probecases
from ...sandboxed.commands import BY_NAME, Commands
from ...sandboxed.frames import Frame, frames_from_json
from ...sandboxed.probe_driver import load_module
from ...sandboxed.probecases import AGAIN, Answer, agreement, answer
from ...sandboxed.records import Event
from ...sandboxed.status import Status, worst
from .kitcache import keep

Case = dict[str, Any]
FAILURES_SHOWN = 3  # disagreeing cases a lab's verdict names (the rest are counted)
FAILING_KEPT = 1000
"""Disagreeing case ids a lab's summary keeps for the gradebook (a lab draws about 50 cases, an
audit as many again): every one in practice, at most about 16 KB of ids per lab and learner."""
NOT_RUN = "not_run"  # marks a case given up with its lab or its process: named last
CASES_FILE = ".probe-cases.json"  # the cases in the graded copy (read-only in the sandbox)


@dataclass(frozen=True)
class ProbeSet:
    """One run's cases, the reference's answers to them, and each case's input described."""

    seed: int
    module: str  # the probe module, relative to the graded copy (``roots.carried``)
    cases: tuple[Case, ...]
    expected: Mapping[str, Answer]
    inputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # ``summarize``'s lines
    chapter: str = ""
    home_seed: int | None = None  # the manifest's: a case of another is replayed with --seed
    # memos: each case's ``size`` by id (a set read from the cache holds all, kept with its
    # cases), and ``with_audit_cases`` of this set by the audit set's id: (that set, the result)
    sizes: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    joined: dict[int, tuple[ProbeSet, ProbeSet]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def labs(self) -> list[str]:
        """The labs with cases, in case order."""
        return list(dict.fromkeys(str(case["lab"]) for case in self.cases))

    def case(self, case_id: str) -> ProbeSet:
        """The one case ``case_id``, to be asked alone (``alone_suspects``)."""
        cases = tuple(case for case in self.cases if str(case["id"]) == case_id)
        expected = {case_id: self.expected[case_id]}
        inputs = {case_id: self.inputs[case_id]} if case_id in self.inputs else {}
        return replace(self, cases=cases, expected=expected, inputs=inputs)

    def only(self, labs: Sequence[str]) -> ProbeSet:
        """The cases of ``labs`` alone (the set itself when that is every case)."""
        cases = tuple(case for case in self.cases if case["lab"] in labs)
        if len(cases) == len(self.cases):
            return self
        kept = {str(case["id"]) for case in cases}
        expected = {i: self.expected[i] for i in kept}
        inputs = {i: lines for i, lines in self.inputs.items() if i in kept}
        return replace(self, cases=cases, expected=expected, inputs=inputs)

    def replay(self, case_id: str, commands: Commands = BY_NAME) -> str:
        """The command that replays one case on a workspace's saved code ('' without a chapter)."""
        if not self.chapter:
            return ""
        seed = None if self.seed == self.home_seed else self.seed
        return probecases.replay_command(self.chapter, case_id, seed, commands)

    @cached_property
    def shared_cases_file(self) -> bytes:
        """What the graded copy's cases file holds: every case but the audit's, which only
        their own driver process is given (``run_probes``)."""
        shared = [case for case in self.cases if not is_audit(str(case["id"]))]
        if len(shared) == len(self.cases):
            return self.cases_file
        return json.dumps(shared, ensure_ascii=False).encode("utf-8")

    @cached_property
    def cases_file(self) -> bytes:
        """The cases file's bytes (``CASES_FILE``), made once per set: a set read from the cache
        holds the very bytes its cases were read from (``_read_cached``)."""
        return json.dumps(list(self.cases), ensure_ascii=False).encode("utf-8")

    def size(self, case: Case) -> int:
        """``probecases.case_size`` of ``case``, one of the set's (measured once)."""
        case_id = str(case["id"])
        if case_id not in self.sizes:
            self.sizes[case_id] = probecases.case_size(case)
        return self.sizes[case_id]

    def to_json(self) -> dict[str, Any]:
        """The set as data (the cache, the workspace's probe-case file)."""
        return {
            "chapter": self.chapter,
            "seed": self.seed,
            "cases": list(self.cases),
            "expected": dict(self.expected),
            "inputs": {i: list(lines) for i, lines in self.inputs.items()},
        }


def draw(manifest: Manifest, kit: Path, seed: int) -> ProbeSet | None:
    """Draw every lab's cases, answer them with the reference and describe their inputs
    (None: no probes)."""
    if manifest.probes is None:
        return None
    labs = [lab.id for lab in manifest.labs]
    try:
        from .draws import caches_kept_in

        module = load_module(kit / manifest.probes, "course_probes_reference")
        import_reference(manifest, kit)
        with caches_kept_in(kit_cache() / "hypothesis"):
            cases = module.cases(seed, labs)
        json.dumps(cases)
        summarize = getattr(module, "summarize", None)
        inputs = {
            str(case["id"]): tuple(str(line) for line in summarize(manifest.reference, case))
            for case in cases
            if summarize is not None
        }
    except Exception as error:  # the kit's own module, not the learner's: report it as such
        raise RuntimeError(f"{manifest.probes}: cannot draw the probe cases ({error})") from error
    expected = {
        str(case["id"]): answer(module.evaluate, manifest.reference, case) for case in cases
    }
    return _probe_set(manifest, seed, cases, expected, inputs)


def _probe_set(
    manifest: Manifest,
    seed: int,
    cases: Sequence[Case],
    expected: Mapping[str, Answer],
    inputs: Mapping[str, tuple[str, ...]],
) -> ProbeSet:
    assert manifest.probes is not None
    chapter, home_seed = manifest.chapter, manifest.probe_seed
    module = carried(manifest.probes)  # its place in the graded copy
    return ProbeSet(seed, module, tuple(cases), expected, inputs, chapter, home_seed)


def _cache_key(manifest: Manifest, kit: Path, seed: int) -> str:
    """What the cases and answers follow from: the probe module and the modules beside it (its
    strategies), the reference, the answers' canonical form (``probecases``), the seed."""
    assert manifest.probes is not None
    folder = (kit / manifest.probes).parent
    files = {path.name: path.read_bytes() for path in sorted(folder.glob("*.py"))}
    files["\0probecases"] = Path(probecases.__file__).read_bytes()
    files |= {  # by workspace path: the same key wherever the chapter's folder is
        f.path: read_source(kit, f.reference) for f in manifest.files if f.role != "test"
    }
    return f"{fingerprint(files)}-{seed}"


SHIPPED_SETS = "probe-sets"
"""Beside the kit's package: sets ``prepare`` kept when the kit was packaged, read where the
cache has none (the zero-install site's wheel carries its chapters' sets for the seed ``check()``
uses: drawing them in a browser takes the first check tens of seconds)."""


def kept_set_names(manifest: Manifest, kit: Path, seed: int) -> tuple[str, str]:
    """The file names ``prepare`` keeps a set under: its answers, then its cases."""
    stem = f"probes-{manifest.chapter}-{_cache_key(manifest, kit, seed)}"
    return f"{stem}.answers.json", f"{stem}.cases.json"


def prepare(manifest: Manifest, kit: Path, labs: Sequence[Lab], seed: int) -> ProbeSet | None:
    """The cases of ``labs`` and the reference's answers, drawn once per kit and seed (drawing
    takes seconds: the set is cached under a key of all it follows from, when it can be: the
    cases as the cases file holds them, and the rest of ``ProbeSet.to_json`` beside them; a set
    shipped with the kit, ``SHIPPED_SETS``, serves where the cache has none)."""
    if manifest.probes is None:
        return None
    answers, cases = kept_set_names(manifest, kit, seed)
    paths = kit_cache() / answers, kit_cache() / cases
    probes = _read_cached(*paths, seed, manifest)
    if probes is None:
        shipped = kit / SHIPPED_SETS
        probes = _read_cached(shipped / answers, shipped / cases, seed, manifest)
    if probes is None:
        probes = draw(manifest, kit, seed)
        assert probes is not None  # the manifest names a probe module
        rest = {key: value for key, value in probes.to_json().items() if key != "cases"}
        rest["sizes"] = {str(case["id"]): probes.size(case) for case in probes.cases}
        rest["cases_sha256"] = digest(probes.cases_file)
        keep(paths[1], probes.cases_file)
        keep(paths[0], json.dumps(rest, ensure_ascii=False).encode("utf-8"))
    return probes.only([lab.id for lab in labs])


def _read_cached(path: Path, cases_path: Path, seed: int, manifest: Manifest) -> ProbeSet | None:
    """The set ``prepare`` kept at ``path`` and ``cases_path`` (None: none, not one, of another
    seed, or of other cases); it writes its cases file with the bytes they were read from."""
    try:
        data = json.loads(path.read_bytes())
        cases_file = cases_path.read_bytes()
        if data["cases_sha256"] != digest(cases_file):
            return None
        cases = json.loads(cases_file)
        expected, inputs, sizes = data["expected"], data["inputs"], data["sizes"]
        tables = (expected, inputs, sizes)
        typed = isinstance(cases, list) and all(isinstance(table, dict) for table in tables)
        ids = {str(c["id"]) for c in cases} if typed else set()
        if not typed or data["seed"] != seed or ids != set(expected) or ids != set(sizes):
            return None
        lines = {str(i): tuple(str(line) for line in value) for i, value in inputs.items()}
        counts = {str(i): int(size) for i, size in sizes.items()}
    except (OSError, ValueError, KeyError, TypeError):
        return None
    probes = _probe_set(manifest, seed, cases, expected, lines)
    probes.sizes.update(counts)
    vars(probes)["cases_file"] = cases_file  # the cached property: the bytes it would make
    return probes


def write_cases(probes: ProbeSet, root: Path) -> Path:
    """The graded copy's cases file (``CASES_FILE``): every case of ``probes`` but the audit's."""
    path = root / CASES_FILE
    path.write_bytes(probes.shared_cases_file)
    return path


@dataclass(frozen=True)
class ProbeTarget:
    """Where and how to run the probe driver on a learner's package."""

    root: Path  # the graded copy (holding the probe module and the cases file)
    package: str
    modules: tuple[str, ...]  # the lab modules, imported before any case
    python_path: tuple[Path, ...]
    wrap: Wrap | None = None
    environment: tuple[tuple[str, str], ...] = ()  # more for the driver (an isolated run's)


def _still(seconds: float) -> str:
    return _("still running after {seconds:g}s").format(seconds=seconds)


class Answers:
    """Answers gathered across driver processes, and what is still to ask."""

    def __init__(self, probes: ProbeSet, frames: bool = False, again: bool = False) -> None:
        self.answers: dict[str, Answer] = {}
        self.again: dict[str, Answer] | None = {} if again else None
        """The second answers (``probecases.AGAIN``), when the cases are asked twice."""
        self.frames: dict[str, tuple[Frame, ...]] | None = {} if frames else None
        self.lab_of = {str(case["id"]): str(case["lab"]) for case in probes.cases}
        self.written = 0  # bytes the driver processes wrote, counted against the run's cap

    def unanswered(self, lab: str) -> list[str]:
        return [i for i, of in self.lab_of.items() if of == lab and i not in self.answers]

    def give_up(self, labs: Sequence[str], status: Status, message: str) -> None:
        """Every unanswered case of ``labs`` gets ``status`` with ``message``."""
        for lab in labs:
            for case_id in self.unanswered(lab):
                self.answers[case_id] = {"missing": status, "message": message, NOT_RUN: True}

    def import_hung(self, labs: Sequence[str], seconds: float) -> None:
        said = _("importing the package did not finish within {seconds:g}s")
        self.give_up(labs, Status.TIMEOUT, said.format(seconds=seconds))

    def answered_again(self, case_id: str, answer: Answer) -> None:
        """``case_id``'s second answer, kept when the cases are asked twice."""
        if self.again is not None:
            self.again.setdefault(case_id, answer)

    def hung_again(self, case_id: str, seconds: float) -> None:
        """``case_id`` ran past ``seconds`` when asked again (every case has its first answer)."""
        self.answered_again(case_id, {"missing": Status.TIMEOUT, "message": _still(seconds)})

    def merged(self) -> dict[str, Answer]:
        """Each case's answer, carrying its second answer where the two differ."""
        for case_id, second in (self.again or {}).items():
            first = self.answers.get(case_id)
            if first is not None and second != first and "missing" not in first:
                self.answers[case_id] = first | {AGAIN: second}
        return self.answers

    def case_hung(self, case_id: str, lab: str, seconds: float) -> None:
        """``case_id`` ran past ``seconds``: the later cases of its ``lab`` are not run."""
        self.answers.setdefault(case_id, {"missing": Status.TIMEOUT, "message": _still(seconds)})
        self.give_up([lab], Status.TIMEOUT, _("not run: an earlier case of this lab hung"))


def apart(probes: ProbeSet) -> tuple[ProbeSet, ProbeSet | None]:
    """``probes`` without the audit's cases, and the audit's (None: it holds none), for a run
    that asks them later (``engine``: without a sandbox, after every other process of the run
    has ended)."""
    audit = tuple(case for case in probes.cases if is_audit(str(case["id"])))
    if not audit:
        return probes, None
    shared = tuple(case for case in probes.cases if not is_audit(str(case["id"])))
    return replace(probes, cases=shared), replace(probes, cases=audit)


def run_probes(probes: ProbeSet, target: ProbeTarget, limits: Limits) -> dict[str, Answer]:
    """The learner package's answer to every case (a ``missing`` one when none came), each case
    asked in draw order and again in reverse (``probecases.ONCE``, ``probecases.AGAIN``). The
    audit's cases (``with_audit_cases``) are asked after the others, in driver processes of
    their own that read them on their standard input: no other process of the run, a test's
    or another case's, ever holds them, and nothing their process says but its answers is
    kept."""
    shared, audit = apart(probes)
    answers: dict[str, Answer] = {}
    for part, private in ((shared, False), (audit, True)):
        if part is None or not part.cases:
            continue
        gathered = _gather(part, target, limits, frames=False, again=True, private=private)
        answers |= gathered.merged()
        limits = replace(limits, written_bytes=max(0, limits.written_bytes - gathered.written))
    return answers


def run_alone(probes: ProbeSet, target: ProbeTarget, limits: Limits) -> dict[str, Answer]:
    """``probes``' cases asked in a driver process of their own that reads them on its standard
    input (the graded copy's cases file would ask their lab's every case): a case asked alone,
    to tell a bug in it from state kept between calls (``alone_suspects``)."""
    return _gather(probes, target, limits, frames=False, again=True, private=True).merged()


def answers_and_frames(
    probes: ProbeSet, target: ProbeTarget, limits: Limits
) -> tuple[dict[str, Answer], dict[str, tuple[Frame, ...]]]:
    """``run_probes``'s answers, and the package's frames of each case that raised (what
    ``checkpoint 11 --replay`` shows of a learner's code run in the sandbox)."""
    gathered = _gather(probes, target, limits, frames=True)
    return gathered.answers, gathered.frames or {}


def _gather(
    probes: ProbeSet,
    target: ProbeTarget,
    limits: Limits,
    *,
    frames: bool,
    again: bool = False,
    private: bool = False,
) -> Answers:
    """``probes``' answers, a driver process at a time (a new one after a hang); ``private``:
    the cases are given on each driver's standard input, and its output is never kept."""
    gathered = Answers(probes, frames=frames, again=again)
    labs = probes.labs()
    shorter = after_a_hang(limits)
    budget, written = limits.written_bytes, 0  # the learner's disk cap, for the whole run
    with tempfile.TemporaryDirectory(prefix="probes-") as scratch:
        attempt = 0
        while labs:
            attempt += 1
            results = Path(scratch) / f"answers-{attempt}.jsonl"
            results.touch()
            try:
                stopped_in = _run_driver(probes, target, labs, results, limits, gathered, private)
            finally:
                written += remove_written(results)
                gathered.written = written
            labs = labs[labs.index(stopped_in) + 1 :] if stopped_in is not None else []
            limits = shorter
            if labs and written > budget:
                said = _(
                    "not run: the probe processes wrote {size} MB of records, past the run's "
                    "{limit} MB"
                )
                mb = 1024 * 1024
                gathered.give_up(
                    labs, Status.ERROR, said.format(size=written // mb, limit=budget // mb)
                )
                break
    return gathered


def _run_driver(
    probes: ProbeSet,
    target: ProbeTarget,
    labs: Sequence[str],
    results: Path,
    limits: Limits,
    gathered: Answers,
    private: bool = False,
) -> str | None:
    """One driver process; returns the lab it stopped in (None: it answered everything).
    ``private``: the cases go on its standard input, and what it prints is never kept."""
    command = [sys.executable, "-m", "course.sandboxed.probe_driver"]
    command += ["--chapter-probes", probes.module, "--package", target.package]
    command += ["--cases", "-" if private else CASES_FILE, "--results", str(results)]
    command += [option for module in target.modules for option in ("--import", module)]
    command += [option for lab in labs for option in ("--lab", lab)]
    command += ["--frames"] if gathered.frames is not None else []
    command += ["--again"] if gathered.again is not None else []
    env = dict(os.environ) | {
        "PYTHONPATH": os.pathsep.join(str(p) for p in target.python_path),
        "PYTHONDONTWRITEBYTECODE": "1",
        ENVIRONMENT: current_edition(),
    }
    env.update(target.environment)
    given = probes.cases_file if private else None
    process, output = start_child(command, env, target.root, target.wrap, results, limits, given)
    records = RecordReader(results, limits.deadline)
    since = time.monotonic()
    started: float | None = None
    imported, current, done, second = False, None, False, False
    try:
        while True:
            exited = process.poll() is not None
            for item in records.new():
                since = time.monotonic()
                event = item.get("event")
                if event == Event.STARTED:
                    started = since
                elif event == Event.IMPORTED:
                    imported = True
                elif event == Event.START:
                    current, second = str(item.get("id")), item.get(AGAIN) is True
                elif event == Event.DONE:
                    done = True
                elif event == Event.ANSWER and item.get("id") in gathered.lab_of:
                    case_id = str(item["id"])
                    if item.get(AGAIN) is True:
                        gathered.answered_again(case_id, _answer(item))
                        current = None
                        continue
                    gathered.answers.setdefault(case_id, _answer(item))
                    if gathered.frames is not None:
                        gathered.frames.setdefault(case_id, frames_from_json(item.get("frames")))
                    current = None
            if exited or done:
                break
            now = time.monotonic()
            if started is None and now - since > limits.startup_seconds:
                said = _("the probes did not start within {seconds:g}s")
                gathered.give_up(labs, Status.ERROR, said.format(seconds=limits.startup_seconds))
                return None
            if started is not None and not imported and now - started > limits.test_seconds:
                gathered.import_hung(labs, limits.test_seconds)
                return None
            if current is not None and now - since > limits.test_seconds:
                if second:  # every case has its first answer: stop here
                    gathered.hung_again(current, limits.test_seconds)
                    return None
                lab = gathered.lab_of.get(current, labs[0])
                gathered.case_hung(current, lab, limits.test_seconds)
                return lab
            pause(process)
    finally:
        if done and not exited:
            let_exit(process)
        kill_group(process)
        said_lines = [] if private else output.text().splitlines()
        tail = [line for line in said_lines if line.strip()][-1:]
    if records.dropped or records.cut:
        # an answer past the caps is no answer: its case says what the caps left out
        said = _(
            "the probe process's records went past their caps: {dropped} record(s) "
            "dropped, {cut} item(s) of lists and objects cut"
        )
        gathered.give_up(labs, Status.ERROR, said.format(dropped=records.dropped, cut=records.cut))
    stopped = None if done else next((lab for lab in labs if gathered.unanswered(lab)), None)
    if not done and second and current is not None:
        said = _("the probe process exited with code {code} while this case was asked again")
        lost = {"missing": Status.ERROR, "message": said.format(code=process.returncode)}
        gathered.answered_again(current, lost)
    if stopped is not None:
        if tail:
            said = _("the probe process exited with code {code}: {output}")
        else:
            said = _("the probe process exited with code {code}")
        message = said.format(code=process.returncode, output=tail[0].strip()[:200] if tail else "")
        gathered.give_up([stopped], Status.ERROR, message)
    return stopped


def _answer(item: Mapping[str, Any]) -> Answer:
    """A driver record as an answer, keeping only the fields an answer has."""
    if "value" in item:
        return {"value": item["value"]}
    return {"raised": str(item.get("raised", "")), "message": str(item.get("message", ""))}


# --------------------------------------------------------------------------- comparing


def describe_case(
    probes: ProbeSet,
    case: Mapping[str, Any],
    actual: Answer,
    commands: Commands = BY_NAME,
    agrees_alone: bool = False,
) -> str:
    """One disagreement as every door shows it: the case, its input, where the answers part
    and the command that replays it, in the door's ``commands`` (``probecases.describe``);
    ``agrees_alone``: asked alone, the case agrees (state kept between calls)."""
    case_id = str(case["id"])
    expected, inputs = probes.expected[case_id], probes.inputs.get(case_id, ())
    replay = probes.replay(case_id, commands)
    return probecases.describe(case, expected, actual, inputs, replay, agrees_alone)


def _agrees_alone(probes: ProbeSet, case: Case, alone: Mapping[str, Answer]) -> bool:
    """Whether ``case``, asked alone (its first answer there), agrees with the reference."""
    case_id = str(case["id"])
    answer = alone.get(case_id)
    if answer is None:
        return False
    return agreement(probes.expected[case_id], {**answer, AGAIN: None}) == Status.PASSED


AUDIT_MARK = "@audit"
"""After an audit case's id in a run that answers both sets: ``11.3#007@audit``. Nothing of the
seed: learner code that read an id would learn no more than that the case is the audit's."""

RULE_MARK = "#rule-"
"""In a case's id, a rule the chapter states (``11.3#rule-exact-fit``): the same in every draw."""
KEYED_SHARE = 0.25
"""Keyed answers: at least this share of a lab's audit cases of functions whose every shipped
case agrees disagree (``docs/grading.md``; ``bench/audit.py`` measures honest mistakes)."""
KEYED_LEAST = 3
"""... and at least this many of them."""


def own_cases(audit: ProbeSet, probes: ProbeSet) -> ProbeSet:
    """``audit`` without the cases ``probes`` holds already: a rule's case (its id names the
    rule, not a number) is the same in every draw, so it is asked and answered once."""
    cases = tuple(
        case
        for case in audit.cases
        if RULE_MARK not in str(case["id"]) or str(case["id"]) not in probes.expected
    )
    if len(cases) == len(audit.cases):
        return audit
    kept = {str(case["id"]) for case in cases}
    expected = {i: a for i, a in audit.expected.items() if i in kept}
    inputs = {i: lines for i, lines in audit.inputs.items() if i in kept}
    return replace(audit, cases=cases, expected=expected, inputs=inputs)


def with_audit_cases(probes: ProbeSet, audit: ProbeSet) -> ProbeSet:
    """One set for one run: each lab's cases, then its audit cases, these with ``AUDIT_MARK``
    after their id (two seeds draw the same ids). The audit cases are asked in a driver process
    of their own (``run_probes``) and are not in the graded copy's cases file
    (``write_cases``). Made once per pair of sets (a roster asks for it, and for its cases
    file, at every workspace)."""
    made = probes.joined.get(id(audit))
    if made is not None and made[0] is audit:
        return made[1]
    mark = AUDIT_MARK
    own = own_cases(audit, probes)
    renamed = [{**case, "id": f"{case['id']}{mark}"} for case in own.cases]
    order = {lab: index for index, lab in enumerate(dict.fromkeys([*probes.labs(), *audit.labs()]))}
    cases = tuple(sorted([*probes.cases, *renamed], key=lambda case: order[case["lab"]]))
    expected = dict(probes.expected) | {f"{i}{mark}": a for i, a in own.expected.items()}
    joined = replace(probes, cases=cases, expected=expected)
    probes.joined[id(audit)] = (audit, joined)  # the audit set kept: its id stays its own
    return joined


def audit_answers(audit: ProbeSet, answers: Mapping[str, Answer]) -> dict[str, Answer]:
    """The answers to ``audit``'s cases in a run of ``with_audit_cases``, by their own ids."""
    return {i.removesuffix(AUDIT_MARK): a for i, a in answers.items() if is_audit(i)}


def is_audit(case_id: str) -> bool:
    """Whether ``case_id`` is an audit case's in a run of ``with_audit_cases``."""
    return case_id.endswith(AUDIT_MARK)


@dataclass(frozen=True)
class AuditFinding:
    """What a lab's audit cases showed that no honest mistake shows: ``keyed`` (they fail, by
    ``KEYED_SHARE``, where the shipped cases of the same functions pass) or ``pending`` (they
    answer 'not implemented' where every shipped case agrees)."""

    lab: str
    kind: str  # "keyed" or "pending"
    count: int  # the audit cases that show it
    cases: int  # the audit cases weighed
    seed: int


def _statuses(
    probes: ProbeSet, answers: Mapping[str, Answer], lab: str
) -> list[tuple[str, Status]]:
    """Each case of ``lab``: its function and how its answer compares."""
    missing: Answer = {"missing": Status.ERROR, "message": ""}
    return [
        (str(case["function"]), agreement(probes.expected[i], answers.get(i, missing)))
        for case in probes.cases
        if case["lab"] == lab
        for i in [str(case["id"])]
    ]


def audit_finding(
    lab: str, shipped: Sequence[tuple[str, Status]], audit: Sequence[tuple[str, Status]], seed: int
) -> AuditFinding | None:
    """What ``lab``'s cases (function and status, shipped and audit) show, if anything."""
    if not audit or any(status != Status.PASSED for _, status in shipped):
        return None  # the shipped cases show a mistake already: the audit adds no evidence
    pending = sum(status == Status.PENDING for _, status in audit)
    if pending:
        return AuditFinding(lab, "pending", pending, len(audit), seed)
    # answers that came and differ: a case that hung, or a process that died, answered nothing
    passing = {function for function, _ in shipped}
    answered = (Status.PASSED, Status.FAILED)
    weighed = [s for function, s in audit if function in passing and s in answered]
    failing = sum(status == Status.FAILED for status in weighed)
    if failing >= KEYED_LEAST and failing >= KEYED_SHARE * len(weighed):
        return AuditFinding(lab, "keyed", failing, len(weighed), seed)
    return None


def audited(
    summaries: Mapping[str, ProbeSummary],
    probes: ProbeSet,
    audit: ProbeSet,
    answers: Mapping[str, Answer],
    commands: Commands = BY_NAME,
) -> tuple[dict[str, ProbeSummary], list[AuditFinding]]:
    """Each lab's summary made worse by its audit cases (of the assignment's seed, which no
    workspace holds), answered in ``answers`` of a ``with_audit_cases`` run: a lab passes only
    when every case drawn for it agrees, a 'pending' audit answer included. Counts stay the
    shipped cases', the same at every door. The findings are what no honest mistake shows."""
    own = own_cases(audit, probes)
    mine = audit_answers(audit, answers)
    found = dict(summaries)
    findings: list[AuditFinding] = []
    for lab, other in compare(own, mine, commands, hide_inputs=True).items():
        summary = summaries.get(lab)
        if summary is None or other.agree:
            continue
        finding = audit_finding(
            lab, _statuses(probes, answers, lab), _statuses(own, mine, lab), audit.seed
        )
        findings += [finding] if finding is not None else []
        status = worst([summary.status, other.status])
        if finding is not None and finding.kind == "pending":
            status = worst([summary.status, Status.FAILED])  # a contradiction, not a lab to do
        failures = (summary.failures + other.failures)[:FAILURES_SHOWN]
        marked = tuple(f"{case_id}{AUDIT_MARK}" for case_id in other.failing)
        failing = (summary.failing + marked)[:FAILING_KEPT]
        found[lab] = replace(summary, status=status, failures=failures, failing=failing)
    return found, findings


def audit_flags(findings: Sequence[AuditFinding], result: CheckpointResult) -> tuple[str, ...]:
    """The instructor's flags for ``findings``: keyed answers; and 'pending' audit answers
    from a lab whose focused tests report passing, which no report of real code can be."""
    tests = {lab.lab.id: lab.tests_status for lab in result.labs}
    flags: list[str] = []
    for finding in findings:
        values = asdict(finding)
        if finding.kind == "keyed":
            said = _(
                "Lab {lab}: answers keyed to the shipped cases: every shipped case of its "
                "functions agrees, but {count} of {cases} of the assignment's own cases "
                "(seed {seed}) do not"
            )
            flags.append(said.format(**values))
        elif tests.get(finding.lab) == Status.PASSED:
            said = _(
                "Lab {lab}: impossible answers: its tests report passing and every shipped case "
                "agrees, but {count} of {cases} of the assignment's own cases (seed {seed}) "
                "answer 'not implemented' (a forged report, or code that tells the grader's "
                "cases apart)"
            )
            flags.append(said.format(**values))
    return tuple(flags)


def withheld(case: Mapping[str, Any], status: Status) -> str:
    """An audit case's disagreement as every door shows it: its name and how it went wrong,
    never its input, its answer or its seed (kept for the whole assignment: a case shown would
    be a case a learner could key the next submission to). The instructor replays it with the
    seed gradebook.json records."""
    said = _(
        "{label} ({case}, one of the assignment's own cases): {status}; its input stays with "
        "the instructor"
    )
    return said.format(label=probecases.case_label(dict(case)), case=case["id"], status=status)


def _first_failing(
    probes: ProbeSet, mine: Sequence[Case], actual: Mapping[str, Answer]
) -> tuple[list[Status], list[tuple[Case, Answer]]]:
    """Each case's status, and the disagreeing cases in the order a verdict names them: the
    smallest by ``probecases.case_size`` first (the first drawn among equals, cases never run
    last)."""
    statuses: list[Status] = []
    failing: list[tuple[bool, int, int, Case, Answer]] = []
    for order, case in enumerate(mine):
        case_id = str(case["id"])
        given = actual.get(case_id, {"missing": Status.ERROR, "message": _("no answer")})
        status = agreement(probes.expected[case_id], given)
        statuses.append(status)
        if status != Status.PASSED:
            failing.append((bool(given.get(NOT_RUN)), probes.size(case), order, case, given))
    return statuses, [(case, given) for *_, case, given in sorted(failing, key=lambda i: i[:3])]


def alone_suspects(probes: ProbeSet, actual: Mapping[str, Answer]) -> list[str]:
    """The case each lab's verdict names first, where its answer, asked in turn, is a wrong
    value or error (not a stub's, a time limit's or a missing one): asked again alone, in a
    process of its own (``compare``'s ``alone``), it tells a bug in the case from state kept
    between calls."""
    suspects: list[str] = []
    for lab in probes.labs():
        mine = [case for case in probes.cases if case["lab"] == lab]
        _statuses, failing = _first_failing(probes, mine, actual)
        if not failing:
            continue
        case, given = failing[0]
        case_id = str(case["id"])
        in_turn = {**given, AGAIN: None}
        if "missing" not in given and agreement(probes.expected[case_id], in_turn) in (
            Status.FAILED,
            Status.ERROR,
        ):
            suspects.append(case_id)
    return suspects


def compare(
    probes: ProbeSet,
    actual: Mapping[str, Answer],
    commands: Commands = BY_NAME,
    *,
    hide_inputs: bool = False,
    alone: Mapping[str, Answer] | None = None,
) -> dict[str, ProbeSummary]:
    """Each lab's probe summary: how many cases agreed, and its smallest disagreements by
    ``probecases.case_size`` (the first drawn among equals, cases never run last; not shrunk);
    ``hide_inputs``: each named as ``withheld`` does; ``alone``: answers of cases asked alone
    (``alone_suspects``): one that agrees there is named as state kept between calls."""
    summaries: dict[str, ProbeSummary] = {}
    alone = alone or {}
    for lab in probes.labs():
        mine = [case for case in probes.cases if case["lab"] == lab]
        statuses, failing = _first_failing(probes, mine, actual)
        named = failing[:FAILURES_SHOWN]
        failures = tuple(
            withheld(case, agreement(probes.expected[str(case["id"])], given))
            if hide_inputs
            else describe_case(probes, case, given, commands, _agrees_alone(probes, case, alone))
            for case, given in named
        )
        agreed = statuses.count(Status.PASSED)
        failing_ids = tuple(str(case["id"]) for case, _given in failing)[:FAILING_KEPT]
        summaries[lab] = ProbeSummary(len(mine), agreed, worst(statuses), failures, failing_ids)
    return summaries
