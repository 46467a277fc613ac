"""Grading on GitHub after Classroom: a plain Actions workflow, and a Classroom 50 autograder.py.

GitHub Classroom is sunset. ``practice CHAPTER DIR --actions`` writes a workflow into a workspace:
one job installs the kit and grades the whole chapter once per push (``checkpoint CHAPTER
--json``: a lab may lose its points through another lab's failing test,
``grading/verdict/isolated.py``) and hands both on as an artifact; then a job per required lab (so a
check run per lab) writes its lab, as a terminal shows it, to the job's summary and passes where the
lab passed. ``course-kit classroom50 CHAPTER`` writes ``autograder.py`` for Classroom 50, which its
runner runs once per submission in the learner's checkout: it grades the checkout with ``checkpoint
CHAPTER --practice . --json`` and writes ``result.json`` (``classroom50/result/v1``, a test per
lab worth its points when it passes whole). Both let bubblewrap make namespaces on
``ubuntu-latest`` (24.04), whose AppArmor otherwise refuses them to unprivileged users. Scalars
are written as JSON strings, which YAML reads as they are.
"""

from __future__ import annotations

import base64
import json

from ...harness.manifest import Manifest
from ...harness.roots import CARRIED, VARIABLE, chapter_bundle, chapters_root
from ...locale import gettext as _
from ...sandboxed.columns import wrap

WORKFLOW = ".github/workflows/checkpoint.yml"
REPORT = "$RUNNER_TEMP/checkpoint.json"  # outside the checkout: grading never reads it
USERNS = "kernel.apparmor_restrict_unprivileged_userns"
ALLOW_NAMESPACES = (
    "# ubuntu-latest (24.04): AppArmor refuses unprivileged user namespaces, which bubblewrap\n"
    "# needs; without this the sandbox cannot start and the lab is graded unsandboxed, saying so\n"
    f'if [ "$(sysctl -n {USERNS} 2>/dev/null)" = 1 ]; then\n'
    f"  sudo sysctl -w {USERNS}=0\n"
    "fi\n"
    "command -v bwrap >/dev/null || "
    "{ sudo apt-get update -qq && sudo apt-get install -y -qq bubblewrap; }"
)
INSTALL = (
    ': "${KIT_REPOSITORY:?set the variable COURSE_KIT_REPOSITORY to the kit\'s git URL}"\n'
    'git clone --depth 1 --branch "$KIT_REF" "$KIT_REPOSITORY" "$RUNNER_TEMP/kit"\n'
    'bash "$RUNNER_TEMP/kit/scripts/setup" --grading\n'
    "# every job of a push runs on the same image at the same path: the venv moves as it is\n"
    'tar -czf "$RUNNER_TEMP/kit.tgz" -C "$RUNNER_TEMP" kit\n'
    'echo "$RUNNER_TEMP/kit/.venv/bin" >> "$GITHUB_PATH"'
)
UNPACK = (
    'tar -xzf "$RUNNER_TEMP/kit.tgz" -C "$RUNNER_TEMP"\n'
    'echo "$RUNNER_TEMP/kit/.venv/bin" >> "$GITHUB_PATH"'
)
ARTIFACT = "course-kit"


def _yaml(value: object, indent: int) -> list[str]:
    """Block YAML of nested dicts and lists: keys plain, scalars JSON strings or numbers, a
    text of several lines a literal block."""
    pad = "  " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            name = json.dumps(key) if key == "on" else key  # YAML 1.1 reads a plain on as true
            if isinstance(item, dict | list):
                lines += [f"{pad}{name}:", *_yaml(item, indent + 1)]
            elif isinstance(item, str) and "\n" in item:
                lines += [f"{pad}{name}: |", *(f"{pad}  {line}" for line in item.split("\n"))]
            else:
                lines.append(f"{pad}{name}: {json.dumps(item, ensure_ascii=False)}")
    else:
        assert isinstance(value, list)
        for item in value:
            inner = _yaml(item, indent + 1) if isinstance(item, dict | list) else []
            if inner:
                lines += [f"{pad}- {inner[0].lstrip()}", *inner[1:]]
            else:
                lines.append(f"{pad}- {json.dumps(item, ensure_ascii=False)}")
    return lines


def bundle_lines(manifest: Manifest) -> list[str]:
    """The folders that travel with the chapter (``roots.chapter_bundle``) in base64, a line of
    76 characters at a time ([] for a built-in chapter of built-in parents)."""
    if chapters_root(manifest) is None:
        return []
    return base64.encodebytes(chapter_bundle(manifest)).decode("ascii").split()


def unpack_script(lines: list[str]) -> str:
    """The step that unpacks the chapter's folders into ``$RUNNER_TEMP/chapters`` and names
    that folder in ``COURSE_CHAPTERS`` for the steps after."""
    into = f'"$RUNNER_TEMP/{CARRIED}"'
    return "\n".join(
        [
            "# the chapter's folder travels in this file: the kit's clone does not hold it",
            f"mkdir -p {into}",
            f"base64 -d <<'BUNDLE' | tar -xz -C {into}",
            *lines,
            "BUNDLE",
            f'echo "{VARIABLE}=$RUNNER_TEMP/{CARRIED}" >> "$GITHUB_ENV"',
        ]
    )


def workflow(manifest: Manifest) -> str:
    """The Actions workflow's text (see the module's docstring): its labs' titles, its steps'
    names and its comments in the edition of ``manifest`` (``editions.in_edition``) and of this
    process, as the workspace it is written into speaks."""
    chapter = manifest.chapter
    bundle = bundle_lines(manifest)
    labs = [{"id": lab.id, "title": lab.title} for lab in manifest.required_labs]
    # every lab at once: one may be charged with another lab's failing test (``isolated.py``);
    # exit 1 (a lab not passing) is a verdict, which each lab's job reports; else a failure
    grading = f'checkpoint {chapter} --no-card --json "{REPORT}" || [ $? -eq 1 ]'
    summary = (
        "status=0\n"
        f'shown="$(checkpoint {chapter} --report "{REPORT}" --lab "$LAB")" || status=$?\n'
        "{ echo \"### Lab $LAB · $TITLE\"; echo; echo '```text'; echo \"$shown\"; echo '```'; }"
        ' >> "$GITHUB_STEP_SUMMARY"\n'
        'echo "$shown"\n'
        'exit "$status"'
    )
    lab_env = {"LAB": "${{ matrix.lab.id }}", "TITLE": "${{ matrix.lab.title }}"}
    temp = "${{ runner.temp }}"
    kept = {"name": ARTIFACT, "path": f"{temp}/kit.tgz\n{temp}/checkpoint.json"}
    unpack: list[dict[str, object]] = (
        [{"name": _("Unpack the chapter"), "run": unpack_script(bundle)}] if bundle else []
    )
    checkout: dict[str, object] = {"name": _("Checkout code"), "uses": "actions/checkout@v4"}
    grade_steps: list[dict[str, object]] = [
        checkout,
        {"name": _("Let bubblewrap make namespaces"), "run": ALLOW_NAMESPACES},
        {
            "name": _("Install the kit"),
            "env": {
                "KIT_REPOSITORY": "${{ vars.COURSE_KIT_REPOSITORY }}",
                "KIT_REF": "${{ vars.COURSE_KIT_REF || 'main' }}",
            },
            "run": INSTALL,
        },
        *unpack,
        {"name": f"checkpoint {chapter}", "run": grading},
        {
            "name": _("Keep the kit and the verdict for the labs' jobs"),
            "uses": "actions/upload-artifact@v4",
            "with": kept | {"retention-days": 1},
        },
    ]
    lab_steps: list[dict[str, object]] = [
        checkout,  # the workspace's marker: its edition speaks
        {
            "name": _("Fetch the kit and the verdict of this push"),
            "uses": "actions/download-artifact@v4",
            "with": {"name": ARTIFACT, "path": temp},
        },
        {"name": _("Unpack the kit"), "run": UNPACK},
        *unpack,
        {"name": _("Report the lab"), "env": lab_env, "run": summary},
    ]
    document = {
        "name": f"Checkpoint {chapter}",
        "on": ["push", "workflow_dispatch"],
        "permissions": {"contents": "read"},
        "jobs": {
            "grade": {
                "name": f"Checkpoint {chapter}",
                "runs-on": "ubuntu-latest",
                "steps": grade_steps,
            },
            "lab": {
                "name": "Lab ${{ matrix.lab.id }} · ${{ matrix.lab.title }}",
                "needs": "grade",
                "runs-on": "ubuntu-latest",
                "strategy": {"fail-fast": False, "matrix": {"lab": labs}},
                "steps": lab_steps,
            },
        },
    }
    said = _(
        "Chapter {chapter}'s labs graded on each push, written by practice {chapter} DIR "
        "--actions: the kit installed and the chapter graded once, then a job per lab, so a "
        "check run per lab, its summary the lab as a terminal shows it."
    )
    head = [f"# {line}" for line in wrap(said.format(chapter=chapter), 98)]
    return "\n".join([*head, *_yaml(document, 0)]) + "\n"


AUTOGRADER = '''\
"""Classroom 50's autograder for chapter {chapter} of the course kit (`course-kit classroom50`).

The runner runs it once per submission, in the learner's checkout (a practice workspace). It
installs the kit (COURSE_KIT_BIN=/path/to/bin uses one already installed), lets bubblewrap make
namespaces on ubuntu-latest, grades the checkout with `checkpoint {chapter} --practice . --json`
(in the sandbox: the learner's code never runs unconfined) and writes ./result.json, a test per
lab worth its points when it passes whole, and ./release-body.md, the submission's Release: each
lab as the learner's terminal shows it, with why it did not pass. It exits non-zero only when it
could not grade (the runner then records an error, never a zero).
"""

import base64
import datetime
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

CHAPTER = {chapter_json}
KIT_REPOSITORY = {repository_json}  # COURSE_KIT_REPOSITORY overrides it
KIT_REF = {ref_json}  # COURSE_KIT_REF overrides it
BUNDLE = {bundle}  # the chapter's folder (a tar.gz in base64), if it is not built in
LABS = {labs_json}
USERNS = Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")


def run(command, **options):
    print("autograder: " + " ".join(map(str, command)), file=sys.stderr)
    return subprocess.run(command, check=False, **options)


def kit_bin(scratch):
    """The kit's commands: COURSE_KIT_BIN, else the kit cloned and set up for grading."""
    if os.environ.get("COURSE_KIT_BIN"):
        return Path(os.environ["COURSE_KIT_BIN"])
    repository = os.environ.get("COURSE_KIT_REPOSITORY") or KIT_REPOSITORY
    ref = os.environ.get("COURSE_KIT_REF") or KIT_REF
    if not repository:
        sys.exit("autograder: set COURSE_KIT_REPOSITORY (or write the autograder with --kit)")
    kit = scratch / "kit"
    cloned = run(["git", "clone", "--depth", "1", "--branch", ref, repository, str(kit)])
    if cloned.returncode != 0:
        sys.exit(f"autograder: the kit could not be cloned from {{repository}}")
    if run(["bash", str(kit / "scripts" / "setup"), "--grading"]).returncode != 0:
        sys.exit("autograder: the kit could not be installed")
    return kit / ".venv" / "bin"


def unpack(scratch):
    """The chapter's folder, carried in BUNDLE, unpacked where the kit finds it."""
    folder = scratch / "chapters"
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(BUNDLE)), mode="r:gz") as archive:
        archive.extractall(folder, filter="data")
    return folder


def allow_namespaces():
    """ubuntu-latest (24.04): AppArmor refuses bubblewrap's user namespaces unless told not to."""
    try:
        restricted = USERNS.read_text().strip() == "1"
    except OSError:
        restricted = False
    if restricted:
        run(["sudo", "-n", "sysctl", "-w", "kernel.apparmor_restrict_unprivileged_userns=0"])


def submitted_at():
    """The graded commit's committer date in UTC (invariant across regrades), else now."""
    done = subprocess.run(
        ["git", "log", "-1", "--format=%ct"], capture_output=True, text=True, check=False
    )
    stamp = done.stdout.strip()
    when = (
        datetime.datetime.fromtimestamp(int(stamp), datetime.timezone.utc)
        if done.returncode == 0 and stamp.isdigit()
        else datetime.datetime.now(datetime.timezone.utc)
    )
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def write_release_body(shown):
    """./release-body.md, the Release the learner opens: each lab as their terminal shows it (its
    failing tests and probe cases, with the command that replays each), in a fence no text of
    theirs can close."""
    longest = max((len(found) for found in re.findall("`+", shown)), default=0)
    fence = "`" * max(3, longest + 1)
    body = f"{{fence}}text\\n{{shown.rstrip()}}\\n{{fence}}\\n"
    Path("release-body.md").write_text(body, encoding="utf-8")


def main():
    with tempfile.TemporaryDirectory(prefix="autograder-") as folder:
        scratch = Path(folder)
        commands = kit_bin(scratch)
        if BUNDLE and "{variable}" not in os.environ:
            os.environ["{variable}"] = str(unpack(scratch))
        allow_namespaces()
        report = scratch / "report.json"
        graded = run(
            [str(commands / "checkpoint"), CHAPTER, "--practice", ".", "--no-card", "--json",
             str(report)]
        )
        if graded.returncode not in (0, 1) or not report.is_file():
            sys.exit(f"autograder: checkpoint could not grade (exit code {{graded.returncode}})")
        verdict = json.loads(report.read_text(encoding="utf-8"))
        shown = run(
            [str(commands / "checkpoint"), CHAPTER, "--report", str(report)],
            capture_output=True, text=True,
        ).stdout
    write_release_body(shown)
    by_id = {{lab["id"]: lab for lab in verdict["labs"]}}
    tests = []
    for lab in LABS:
        found = by_id.get(lab["id"], {{}})
        status = found.get("status", "error")
        tests.append(
            {{
                "test-name": lab["name"],
                "passed": status == "passed",
                "score": found.get("score", 0),
                "max-score": lab["points"],
                "status": status,
                "tests": f"{{found.get('passed', 0)}}/{{found.get('total', 0)}}",
                "cases": f"{{found.get('agreed', 0)}}/{{found.get('cases', 0)}}",
                # what per-lab credit decided: the tests it is charged with, the labs charged
                "credit": found.get("credit"),
            }}
        )
    environ = os.environ
    result = {{
        "schema": "classroom50/result/v1",
        "classroom": environ.get("CLASSROOM", ""),
        "assignment": environ.get("ASSIGNMENT", ""),
        "submission": environ.get("SUBMISSION_TAG", ""),
        "commit": environ.get("COMMIT_URL", ""),
        "release": environ.get("RELEASE_URL", ""),
        "review": environ.get("REVIEW_URL") or environ.get("COMMIT_URL", ""),
        "datetime": submitted_at(),
        "graded_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "score": sum(test["score"] for test in tests),
        "max-score": sum(test["max-score"] for test in tests),
        "tests": tests,
    }}
    text = json.dumps(result, indent=2, ensure_ascii=False) + "\\n"
    Path("result.json").write_text(text, encoding="utf-8")
    print(f"autograder: {{result['score']}}/{{result['max-score']}}", file=sys.stderr)


if __name__ == "__main__":
    main()
'''


def python_text(lines: list[str]) -> str:
    """A Python literal of the joined ``lines``, one line of source each."""
    if not lines:
        return '""'
    return "(\n" + "".join(f"    {json.dumps(line)}\n" for line in lines) + ")"


def autograder(manifest: Manifest, repository: str = "", ref: str = "main") -> str:
    """Classroom 50's ``autograder.py`` for the chapter (``repository``: the kit's git URL)."""
    labs = [
        {"id": lab.id, "name": f"Lab {lab.id} · {lab.title}", "points": lab.points}
        for lab in manifest.required_labs
    ]
    return AUTOGRADER.format(
        chapter=manifest.chapter,
        chapter_json=json.dumps(manifest.chapter),
        repository_json=json.dumps(repository),
        ref_json=json.dumps(ref),
        bundle=python_text(bundle_lines(manifest)),
        variable=VARIABLE,
        labs_json=json.dumps(labs, ensure_ascii=False, indent=4),
    )
