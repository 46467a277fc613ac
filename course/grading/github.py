"""Grading on GitHub after Classroom: a plain Actions workflow, and a Classroom 50 autograder.py.

GitHub Classroom is sunset. ``practice CHAPTER DIR --actions`` writes a workflow into a
workspace: a job per required lab (so a check run per lab), each grading the whole chapter with
``checkpoint CHAPTER --json`` (a lab may lose its points through another lab's failing test,
``grading/isolated.py``) and writing its lab, as a terminal shows it, to the job's summary.
``course-kit classroom50 CHAPTER`` writes ``autograder.py`` for Classroom 50, which its runner
runs once per submission in the learner's checkout: it grades the checkout with
``checkpoint CHAPTER --practice . --json`` and writes ``result.json`` (``classroom50/result/v1``,
a test per lab worth its points when it passes whole). Both let bubblewrap make namespaces on
``ubuntu-latest`` (24.04), whose AppArmor otherwise refuses them to unprivileged users.
Scalars are written as JSON strings, which YAML reads as they are.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..harness.kit import kit_root
from ..harness.manifest import Manifest
from ..harness.roots import VARIABLE, chapters_root

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
    'echo "$RUNNER_TEMP/kit/.venv/bin" >> "$GITHUB_PATH"'
)


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


def workflow(manifest: Manifest, kit: Path | None = None) -> str:
    """The Actions workflow's text (see the module's docstring)."""
    chapter = manifest.chapter
    root = chapters_root(manifest, kit or kit_root())  # a chapter not built in: name its folder
    named = f'\necho "{VARIABLE}=$RUNNER_TEMP/kit/{root}" >> "$GITHUB_ENV"'
    install = INSTALL + (named if root else "")
    labs = [{"id": lab.id, "title": lab.title} for lab in manifest.required_labs]
    # every lab: one may be charged with another lab's failing test (``isolated.py``); exit 1
    # (a lab not passing) is a verdict, which the next step reports; else a failure
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
    steps: list[dict[str, object]] = [
        {"name": "Checkout code", "uses": "actions/checkout@v4"},
        {"name": "Let bubblewrap make namespaces", "run": ALLOW_NAMESPACES},
        {
            "name": "Install the kit",
            "env": {
                "KIT_REPOSITORY": "${{ vars.COURSE_KIT_REPOSITORY }}",
                "KIT_REF": "${{ vars.COURSE_KIT_REF || 'main' }}",
            },
            "run": install,
        },
        {"name": f"checkpoint {chapter}", "run": grading},
        {"name": "Report the lab", "env": lab_env, "run": summary},
    ]
    document = {
        "name": f"Checkpoint {chapter}",
        "on": ["push", "workflow_dispatch"],
        "permissions": {"contents": "read"},
        "jobs": {
            "lab": {
                "name": "Lab ${{ matrix.lab.id }} · ${{ matrix.lab.title }}",
                "runs-on": "ubuntu-latest",
                "strategy": {"fail-fast": False, "matrix": {"lab": labs}},
                "steps": steps,
            }
        },
    }
    head = [
        f"# Chapter {chapter}'s labs graded on each push, written by "
        f"`practice {chapter} DIR --actions`:",
        "# a job per lab, so a check run per lab, its summary the lab as a terminal shows it.",
    ]
    return "\n".join([*head, *_yaml(document, 0)]) + "\n"


AUTOGRADER = '''\
"""Classroom 50's autograder for chapter {chapter} of the course kit (`course-kit classroom50`).

The runner runs it once per submission, in the learner's checkout (a practice workspace). It
installs the kit (COURSE_KIT_BIN=/path/to/bin uses one already installed), lets bubblewrap make
namespaces on ubuntu-latest, grades the checkout with `checkpoint {chapter} --practice . --json`
(in the sandbox: the learner's code never runs unconfined) and writes ./result.json, a test per
lab worth its points when it passes whole. It exits non-zero only when it could not grade (the
runner then records an error, never a zero).
"""

import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHAPTER = {chapter_json}
KIT_REPOSITORY = {repository_json}  # COURSE_KIT_REPOSITORY overrides it
KIT_REF = {ref_json}  # COURSE_KIT_REF overrides it
CHAPTERS = {chapters_json}  # the kit's folder of chapters holding this one, if not built in
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


def main():
    with tempfile.TemporaryDirectory(prefix="autograder-") as folder:
        scratch = Path(folder)
        commands = kit_bin(scratch)
        if CHAPTERS and "{variable}" not in os.environ:  # the kit is the one of its .venv/bin
            os.environ["{variable}"] = str(commands.resolve().parents[1] / CHAPTERS)
        allow_namespaces()
        report = scratch / "report.json"
        graded = run(
            [str(commands / "checkpoint"), CHAPTER, "--practice", ".", "--no-card", "--json",
             str(report)]
        )
        if graded.returncode not in (0, 1) or not report.is_file():
            sys.exit(f"autograder: checkpoint could not grade (exit code {{graded.returncode}})")
        verdict = json.loads(report.read_text(encoding="utf-8"))
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


def autograder(
    manifest: Manifest, repository: str = "", ref: str = "main", kit: Path | None = None
) -> str:
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
        chapters_json=repr(chapters_root(manifest, kit or kit_root())),  # a Python literal
        variable=VARIABLE,
        labs_json=json.dumps(labs, ensure_ascii=False, indent=4),
    )
