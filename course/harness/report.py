"""Text a checkpoint prints: the card, one line per lab, the evidence line and the next step."""

from __future__ import annotations

from collections.abc import Sequence

from ..locale import current_edition, ngettext, tidy
from ..locale import gettext as _
from ..sandboxed.columns import columns, pad, terminal_width, wrap
from ..sandboxed.commands import BY_NAME, Commands, in_shell
from ..sandboxed.status import Status
from ..sandboxed.verdicts import NOT_RUN, readable
from .hints import NONE_OPENED, Opened, hint_pointer
from .kit import Fingerprints, short
from .learning import checkpoint_command, lab_command
from .manifest import Lab, Manifest
from .results import CheckpointResult, LabResult, TestOutcome, lab_to_work_on
from .style import PLAIN, Style, status_label

WIDTH = 100
LABEL_WIDTH = 17
DETAIL_INDENT = 13  # where a test's detail starts (after four spaces and the status column)
HANGING = " " * (DETAIL_INDENT - 4)  # a detail's later lines, under its first line's text


def _label(label: str) -> str:
    """``label`` padded to the label column (and a space after one that fills it)."""
    return pad(label, LABEL_WIDTH - 1) + " "


def _field(label: str, text: str) -> list[str]:
    indent = " " * (LABEL_WIDTH + 2)
    wrapped = wrap(
        " ".join(text.split()),
        width=terminal_width(widest=WIDTH),
        initial_indent=f"  {_label(label)}",
        subsequent_indent=indent,
    )
    return wrapped or [f"  {label}"]


def _command(label: str, command: str) -> list[str]:
    """A command stays on one line however long, so it can be copied as printed."""
    return [f"  {_label(label)}{command}"]


def workspace_paths(manifest: Manifest, reference_paths: Sequence[str]) -> list[str]:
    """Where each reference file lives in a workspace (``course/context.py`` → ``pi_course/…``)."""
    by_target = {file.reference: file.path for file in manifest.files}
    return [by_target.get(path, path) for path in reference_paths]


def render_card(
    manifest: Manifest,
    fingerprints: Fingerprints,
    *,
    in_workspace: bool = False,
    commands: Commands = BY_NAME,
) -> str:
    """The chapter's full card (in a workspace, with its files), its commands as ``commands``."""
    card = manifest.card
    teaching = card.teaching_files
    if in_workspace:
        teaching = tuple(workspace_paths(manifest, teaching))
    lines = [card.title]
    lines += _field(_("mode"), card.mode)
    lines += _field(_("parent"), f"{short(fingerprints.starter)} · {card.parent}")
    lines += _field(_("target"), f"{short(fingerprints.reference)} · {card.target}")
    lines += _field(_("teaching files"), _(", ").join(teaching))
    lines += _field(_("scaffold"), card.scaffold)
    lines += _field(_("know before"), card.know_before)
    lines += _field(_("first step"), card.first_step)
    lines += _field(_("first red light"), card.first_red_light)
    lines += _field(_("focused tests"), manifest.focused_tests)
    lines += _command(_("locate"), in_shell(card.locate, commands))
    lines += _command(_("practice"), in_shell(_practice_line(manifest), commands))
    lines += _command(_("focused run"), in_shell(card.focused_run, commands))
    lines += _field("", _("({note})").format(note=card.focused_run_note))
    lines += _field(_("evidence"), card.evidence)
    return "\n".join(lines)


def _practice_line(manifest: Manifest) -> str:
    """The card's practice command, carrying the edition it is read in when that is not the
    chapter's first: run as printed, it makes a workspace in the reader's edition."""
    edition = current_edition()
    if edition == manifest.default_edition or edition not in manifest.notebooks:
        return manifest.card.practice
    return f"{manifest.card.practice} --lang {edition}"


def expected_evidence(manifest: Manifest) -> str:
    """The evidence line of a run where every required lab passes."""
    return " → ".join(f"{lab.tests}/{lab.tests}" for lab in manifest.required_labs)


def render_short_card(manifest: Manifest, commands: Commands = BY_NAME) -> str:
    """The card a learner sees in a workspace: the title, their files, the goal, the full card."""
    files = [file.path for file in manifest.files_with_role("learner")]
    goal = ngettext(
        "{counts}: {total} focused test passes",
        "{counts}: {total} focused tests pass",
        manifest.total_tests,
    ).format(counts=expected_evidence(manifest), total=manifest.total_tests)
    lines = [manifest.card.title]
    lines += _field(_("your code"), _(", ").join(files))
    lines += _field(_("to reach"), goal)
    lines += _command(_("the full card"), checkpoint_command(manifest, "--card", commands=commands))
    return "\n".join(lines)


def counts(passed: int, total: int, agreed: int = 0, cases: int | None = None) -> str:
    """``3/3 tests · 51/53 cases`` (``cases`` None, no probes: ``3/3 tests``)."""
    tests = ngettext("{passed}/{total} test", "{passed}/{total} tests", total)
    tests = tests.format(passed=passed, total=total)
    if cases is None:
        return tests
    drawn = ngettext("{agreed}/{cases} case", "{agreed}/{cases} cases", cases)
    return _("{tests} · {cases}").format(
        tests=tests, cases=drawn.format(agreed=agreed, cases=cases)
    )


def lab_counts(result: LabResult) -> str:
    """A lab's ``counts``: its tests, and its probe cases when it has probes."""
    cases = result.cases if result.probes is not None else None
    return counts(result.passed, result.total, result.agreed, cases)


def lab_line(
    result: LabResult,
    title: str | None = None,
    title_width: int = 24,
    counts_width: int = 0,
    style: Style = PLAIN,
) -> str:
    """``Lab 11.3  budget projection  3/3 tests · 51/53 cases  failed`` (``title``: the
    reader's edition's, the result's own by default): one lab, every door."""
    lab = result.lab
    status = status_label(result.status)
    if lab.optional:
        status = _("{status} (optional, not counted)").format(status=status)
    # an id longer than five (11.opt) takes a column of the title's: the counts still line up
    name = pad(lab.title if title is None else title, title_width - max(0, len(lab.id) - 5))
    counts = pad(lab_counts(result), counts_width)
    return f"Lab {lab.id:<5} {name}  {counts}  {style.status(result.status, status)}".rstrip()


def counts_width(results: Sequence[LabResult]) -> int:
    """The columns the widest of the labs' counts takes, so their statuses line up."""
    return max((columns(lab_counts(result)) for result in results), default=0)


def render_lab(
    result: LabResult,
    title_width: int = 24,
    style: Style = PLAIN,
    counts_width: int = 0,
    title: str | None = None,
) -> str:
    """The lab's line and what did not pass: what a terminal and a notebook show of a lab."""
    lines = [lab_line(result, title, title_width, counts_width, style)]
    lines += [f"    {line}" for line in lab_details(result)]
    return "\n".join(lines)


def lab_details(result: LabResult) -> list[str]:
    """What did not pass in a lab: its tests (folded by message), its disagreeing cases, and
    instructor tests this view withholds, named only when nothing else fails the lab; then what
    per-lab credit decided of it."""
    details = _test_details(result) + probe_details(result) + _withheld_details(result)
    return details + credit_details(result)


def credit_details(result: LabResult) -> list[str]:
    """What per-lab credit decided of a lab (``LabResult.credit``): the other labs' tests its
    code makes fail, for which it loses its points, and the labs its own failures are charged
    to, which let it keep them."""
    credit = result.credit
    if credit is None:
        return []
    lines: list[str] = []
    for charge in credit.charged:
        said = _(
            "Lab {lab}'s {test} fails with your code for this lab and passes with the "
            "reference's in its place: this lab loses its points"
        )
        lines += _detail(pad(_("charged"), 8), said.format(lab=charge.lab, test=charge.name))
    if credit.through:
        labs = _(", ").join(f"Lab {lab}" for lab in credit.through)
        if credit.unwritten:
            said = _(
                "what fails above passes with the reference's code for {labs} (not written "
                "yet) in place of the starter's: this lab keeps its points"
            )
        else:
            said = _(
                "what fails above passes with the reference's {labs} in place of yours: this "
                "lab keeps its points, and {labs} is charged with it"
            )
        lines += _detail(pad(_("credited"), 8), said.format(labs=labs))
    return lines


def _withheld_details(result: LabResult) -> list[str]:
    withheld = result.withheld
    if withheld is None or withheld == Status.PASSED:
        return []
    probes = Status.PASSED if result.probes is None else result.probes.status
    if {result.tests_status, probes} != {Status.PASSED}:
        return []
    said = _("the instructor's own tests of this lab did not all pass (they are not shown here)")
    return _detail(pad(status_label(withheld), 8), said)


def render_probes(result: CheckpointResult) -> list[str]:
    """How many probe cases of each lab agree with the reference, and the seed they came from."""
    labs = [lab for lab in result.labs if lab.probes is not None]
    if not labs:
        return []
    counts = [f"{lab.lab.id} {lab.probes.agreed}/{lab.probes.cases}" for lab in labs if lab.probes]
    pieces = [*counts, _("agree with the reference (seed {seed})").format(seed=result.seed)]
    width, lines = terminal_width(widest=WIDTH), [pad(_("probes"), 8)]
    for index, piece in enumerate(pieces):  # a line breaks between labs, never inside one
        gap = " · " if 0 < index < len(counts) else " "
        if index and columns(lines[-1] + gap + piece) > width:
            lines[-1] += " ·" if index < len(counts) else ""
            lines.append(" " * 8)
            gap = " "
        lines[-1] += gap + piece
    return lines


def probe_details(result: LabResult) -> list[str]:
    """Each disagreeing probe case the grader kept, named, as a failing case of the lab."""
    probes = result.probes
    if probes is None or probes.agree or probes.status == Status.PENDING:
        return []
    lines: list[str] = []
    for failure in probes.failures:
        lines += _detail(pad(_("probe"), 8), failure)
    left = probes.cases - probes.agreed - len(probes.failures)
    if left > 0:
        more = ngettext(
            "and {count} more probe case like these",
            "and {count} more probe cases like these",
            left,
        )
        lines.append(HANGING + more.format(count=left))
    return lines


def render_first_failure(result: LabResult) -> list[str]:
    """The first line of the lab's first failing test or probe case (none if nothing broke)."""
    for test in result.tests:
        if test.status.broken and not test.not_run:
            said = (readable(test.message).splitlines() or [""])[0]
            head = pad(status_label(test.status), 8)
            named = _("{test}: {message}").format(test=test.name, message=said)
            return [f"    {line}" for line in _detail(head, named)]
    probes = result.probes
    if probes is not None and probes.status.broken and probes.failures:
        said = probes.failures[0].splitlines()[0]
        return [f"    {line}" for line in _detail(pad(_("probe"), 8), said)]
    return []


def _detail(head: str, text: str) -> list[str]:
    """The message's first line wrapped after ``head``; later lines (code, diffs) kept as is."""
    first, *rest = text.splitlines() or [""]
    lines = wrap(
        f"{head} {' '.join(first.split())}",
        width=terminal_width(widest=WIDTH) - 4,
        subsequent_indent=HANGING,
    )
    return lines + [HANGING + line for line in rest]


def render_printed(test: TestOutcome) -> list[str]:
    """What a test that broke printed (``output``): a head line, the lines, how many more."""
    if not test.output or not test.status.broken:
        return []
    lines = [_("{test} printed:").format(test=test.name)]
    lines += [f"  {line}" for line in test.output]
    if test.output_more:
        more = ngettext("… {count} more line", "… {count} more lines", test.output_more)
        lines.append("  " + more.format(count=test.output_more))
    return lines


def _grouped(tests: Sequence[TestOutcome]) -> list[list[TestOutcome]]:
    """Tests with the same status and message together, in order of their first appearance."""
    groups: dict[tuple[str, str], list[TestOutcome]] = {}
    for test in tests:
        groups.setdefault((test.status, test.message), []).append(test)
    return list(groups.values())


def _test_details(result: LabResult) -> list[str]:
    """Tests ending the same way, folded into one line (those not run: ``render_not_run``)."""
    lines: list[str] = []
    shown = [t for t in result.tests if t.status != Status.PASSED and not t.not_run]
    for group in _grouped(shown):
        first, count = group[0], len(group)
        message = readable(first.message)
        head = pad(status_label(first.status), 8)
        if first.status == Status.PENDING:
            stub = _stub_lab(message)
            if stub is not None and stub != result.lab.id:  # reached through another lab's code
                stop = ngettext(
                    "{count} test needs Lab {lab} first and stops at: {message}",
                    "{count} tests need Lab {lab} first and stop at: {message}",
                    count,
                )
            else:
                stop = ngettext(
                    "{count} test stops at: {message}", "{count} tests stop at: {message}", count
                )
            lines += _detail(head, stop.format(count=count, lab=stub, message=message))
            continue
        if count == 1:
            lines += _detail(head, _("{test}: {message}").format(test=first.name, message=message))
        else:
            many = ngettext("{count} test: {message}", "{count} tests: {message}", count)
            lines += _detail(head, many.format(count=count, message=message))
        where = first.culprit_frame
        if first.culprit is not None and first.culprit != result.lab.id and where is not None:
            blame = _("that is Lab {lab}'s code ({function} in {path}): see Next below")
            said = blame.format(lab=first.culprit, function=where.function, path=where.path)
            lines.append(HANGING + said)
        lines += [HANGING + line for line in render_printed(first)]
    return lines


def _stub_lab(message: str) -> str | None:
    """The lab a stub's message names (``Lab 11.3 …``: its second word), if it names one."""
    words = message.split(maxsplit=2)
    return words[1] if len(words) > 1 and words[0] == "Lab" else None


def _tests(counted: int, optional: int) -> str:
    """``3 tests``, ``1 optional test`` or ``3 tests and 1 optional test``."""
    tests = ngettext("{count} test", "{count} tests", counted).format(count=counted)
    extra = ngettext("{count} optional test", "{count} optional tests", optional)
    extra = extra.format(count=optional)
    if counted and optional:
        return _("{tests} and {optional}").format(tests=tests, optional=extra)
    return tests if counted else extra


def render_not_run(result: CheckpointResult) -> list[str]:
    """One line per cause for the tests that never ran, however many labs they span."""
    lines: list[str] = []
    optional = {test.nodeid for lab in result.optional for test in lab.tests}
    not_run = [test for test in result.tests if test.not_run]
    for group in _grouped(not_run):
        extra = sum(test.nodeid in optional for test in group)
        who = _tests(len(group) - extra, extra)
        why = group[0].message.removeprefix(NOT_RUN)
        head = _("{status}:").format(status=status_label(group[0].status))
        said = tidy(f"{head} " + _("{tests} not run: {reason}").format(tests=who, reason=why))
        hanging = " " * columns(head if head.endswith("\uff1a") else f"{head} ")
        lines += wrap(said, terminal_width(widest=WIDTH) - 4, subsequent_indent=hanging)
    return lines


def render_summary(
    manifest: Manifest,
    result: CheckpointResult,
    practice: str | None = None,
    commands: Commands = BY_NAME,
    opened: Opened = NONE_OPENED,
) -> str:
    """Evidence line, total, problems, and what to do next: the open lab, or the next step."""
    lines = [
        _("optional: Lab {lab} {title} {counts} {status} (not counted)").format(
            lab=extra.lab.id,
            title=extra.lab.title,
            counts=lab_counts(extra),
            status=status_label(extra.status),
        )
        for extra in result.optional
    ]
    lines += render_not_run(result)
    if result.required:
        lines.append(result.evidence)
    if len(result.required) > 1:
        lines.append(f"{result.passed}/{result.total}")
    if result.required:
        lines.append(grade_line(result.required))
    lines += [_("problem: {problem}").format(problem=problem) for problem in result.problems]
    lines += ["", *_next_step(manifest, result, practice, commands, opened)]
    return "\n".join(lines).rstrip()


def grade_line(labs: Sequence[LabResult]) -> str:
    """``grade 80/100``: the points of ``labs`` that passed whole (``LabResult.score``), as
    every door (the gradebook, Gradescope, Classroom) counts them."""
    score, worth = sum(lab.score for lab in labs), sum(lab.points for lab in labs)
    return _("grade {score}/{max_score}").format(score=score, max_score=worth)


def _next_step(
    manifest: Manifest,
    result: CheckpointResult,
    practice: str | None,
    commands: Commands,
    opened: Opened,
) -> list[str]:
    if result.tests and all(test.not_run for test in result.tests):
        again = checkpoint_command(manifest, practice=practice, commands=commands)
        fix = _("Next: fix what stops the tests from running (above), then run {command}")
        return [fix.format(command=again)]
    lab = lab_to_work_on(manifest, result)
    if lab is not None:
        return render_open_lab(manifest, lab, result, practice, commands, opened)
    if result.problems or not result.ok:
        return []
    if len(result.required) == len(manifest.required_labs):
        return render_after_green(manifest, practice, commands)
    ran = [lab.lab for lab in result.labs]
    last = max(manifest.labs.index(lab) for lab in ran)
    later = [lab for lab in manifest.required_labs if manifest.labs.index(lab) > last]
    if later:  # where a learner goes after a green lab: the next lab, its notebook, its command
        lines = [_("Lab {lab} is done.").format(lab=ran[-1].id)]
        lines.append(_("Next: Lab {lab} {title}").format(lab=later[0].id, title=later[0].title))
        lines += _notebook(later[0])
        return lines + _command(_("run it"), lab_command(manifest, later[0].id, practice, commands))
    everything = checkpoint_command(manifest, practice=practice, commands=commands)
    done = _("Lab {lab} is done. Next: every lab at once: {command}")
    return [done.format(lab=ran[-1].id, command=everything)]


def render_open_lab(
    manifest: Manifest,
    lab: Lab,
    result: CheckpointResult | None,
    practice: str | None = None,
    commands: Commands = BY_NAME,
    opened: Opened = NONE_OPENED,
) -> list[str]:
    """``Next: Lab …`` with its files, notebook and the command that re-runs it, and a last
    line saying where its next hint is (``opened``: the levels the workspace has opened);
    never the hint itself."""
    counts = next((r for r in result.labs if r.lab == lab), None) if result else None
    if counts is None:
        head = _("Next: Lab {lab} {title}").format(lab=lab.id, title=lab.title)
    else:
        said, status = _("Next: Lab {lab} {title} ({counts}, {status})"), counts.status
        head = said.format(
            lab=lab.id, title=lab.title, counts=lab_counts(counts), status=status_label(status)
        )
    lines = [head, *_field(_("your file"), _(", ").join(lab.files)), *_notebook(lab)]
    rerun = lab_command(manifest, lab.id, practice, commands)
    if counts is not None and counts.credit is not None and counts.credit.charged:
        # its own tests pass: the labs whose tests it is charged with run beside it
        charging = dict.fromkeys([lab.id, *(charge.lab for charge in counts.credit.charged)])
        options = [part for lab_id in charging for part in ("--lab", lab_id)]
        rerun = checkpoint_command(manifest, *options, practice=practice, commands=commands)
    lines += _command(_("re-run just it"), rerun)
    # the lab at hand of a run of every lab is what a plain --hint opens; else name the lab
    every_lab = result is not None and len(result.required) == len(manifest.required_labs)
    asking = ["--hint"] if every_lab else ["--lab", lab.id, "--hint"]
    ask = checkpoint_command(manifest, *asking, practice=practice, commands=commands)
    return [*lines, hint_pointer(lab, opened, ask)]


def _notebook(lab: Lab) -> list[str]:
    return _field(_("notebook"), f"notebooks/{lab.notebook} · {lab.heading}")


def render_after_green(
    manifest: Manifest, practice: str | None = None, commands: Commands = BY_NAME
) -> list[str]:
    """What follows the last required lab: the closing review, when the chapter has one."""
    total = manifest.total_tests
    if manifest.review is None:
        done = ngettext(
            "The {total} focused test passes.", "All {total} focused tests pass.", total
        )
        return [done.format(total=total)]
    review = checkpoint_command(manifest, "--review", practice=practice, commands=commands)
    done = ngettext(
        "The {total} focused test passes. Next: the chapter's closing review",
        "All {total} focused tests pass. Next: the chapter's closing review",
        total,
    )
    return [done.format(total=total), *_command(_("run it"), review)]
