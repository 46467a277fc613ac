"""GitHub Classroom: the workflow a template workspace runs on each push, reporting lab points.

``practice CHAPTER DIR --classroom`` writes it to ``.github/workflows/classroom.yml``. On each
push the runner installs the kit from the repository named by the organization's variables
(``COURSE_KIT_REPOSITORY``, ``COURSE_KIT_REF``), runs ``checkpoint CHAPTER --json`` once, and
one step per required lab (Classroom's ``autograding-command-grader``) reads that one report
with ``checkpoint CHAPTER --report FILE --lab ID``, which passes only if the lab passed whole:
the step earns the lab's ``points``. ``autograding-grading-reporter`` sends the points to
Classroom. Every scalar is written as a JSON string, which YAML reads as it is.
"""

from __future__ import annotations

import json

from ..harness.manifest import Manifest

WORKFLOW = ".github/workflows/classroom.yml"
COMMAND_GRADER = "classroom-resources/autograding-command-grader@v1"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"
REPORT = ".checkpoint.json"
"""The one run's report; a dot file, which grading never reads or names."""
INSTALL = (
    ": \"${KIT_REPOSITORY:?set the organization variable COURSE_KIT_REPOSITORY to the kit's "
    'git URL}"\n'
    'git clone --depth 1 --branch "$KIT_REF" "$KIT_REPOSITORY" "$RUNNER_TEMP/kit"\n'
    'bash "$RUNNER_TEMP/kit/scripts/setup"\n'
    'echo "$RUNNER_TEMP/kit/.venv/bin" >> "$GITHUB_PATH"'
)


def step_id(lab_id: str) -> str:
    """``lab-11-3``: a lab's step id (the reporter reads ``LAB-11-3_RESULTS``)."""
    return "lab-" + lab_id.replace(".", "-")


def checkpoint_step(manifest: Manifest) -> str:
    """The one grading run: exit 1 (a lab not passing) is a verdict, anything else fails."""
    return f"checkpoint {manifest.chapter} --no-card --json {REPORT} || [ $? -eq 1 ]"


def result_of(lab_id: str) -> str:
    """The expression the reporter reads a lab's step's result from."""
    return "${{ steps." + step_id(lab_id) + ".outputs.result }}"


def lab_command(manifest: Manifest, lab_id: str) -> str:
    return f"checkpoint {manifest.chapter} --report {REPORT} --lab {lab_id}"


def _key(key: str) -> str:
    """A plain key, but ``on``, which YAML 1.1 reads as true."""
    return json.dumps(key) if key == "on" else key


def _yaml(value: object, indent: int) -> list[str]:
    """Block YAML of nested dicts and lists: keys plain, scalars JSON strings or numbers, a
    text of several lines a literal block."""
    pad = "  " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, dict | list):
                lines += [f"{pad}{_key(key)}:", *_yaml(item, indent + 1)]
            elif isinstance(item, str) and "\n" in item:
                lines += [f"{pad}{_key(key)}: |", *(f"{pad}  {line}" for line in item.split("\n"))]
            else:
                lines.append(f"{pad}{_key(key)}: {json.dumps(item, ensure_ascii=False)}")
    else:
        assert isinstance(value, list)
        for item in value:
            inner = _yaml(item, indent + 1) if isinstance(item, dict | list) else []
            if inner:
                lines += [f"{pad}- {inner[0].lstrip()}", *inner[1:]]
            else:
                lines.append(f"{pad}- {json.dumps(item, ensure_ascii=False)}")
    return lines


def workflow(manifest: Manifest) -> str:
    """The workflow's text (see the module's docstring)."""
    labs = manifest.required_labs
    steps: list[dict[str, object]] = [
        {"name": "Checkout code", "uses": "actions/checkout@v4"},
        {
            "name": "Install the kit",
            "env": {
                "KIT_REPOSITORY": "${{ vars.COURSE_KIT_REPOSITORY }}",
                "KIT_REF": "${{ vars.COURSE_KIT_REF || 'main' }}",
            },
            "run": INSTALL,
        },
        {"name": f"checkpoint {manifest.chapter}", "run": checkpoint_step(manifest)},
    ]
    for lab in labs:
        name = f"Lab {lab.id} · {lab.title}"
        steps.append(
            {
                "name": name,
                "id": step_id(lab.id),
                "uses": COMMAND_GRADER,
                "with": {
                    "test-name": name,
                    "command": lab_command(manifest, lab.id),
                    "timeout": 1,
                    "max-score": lab.points,
                },
            }
        )
    steps.append(
        {
            "name": "Autograding Reporter",
            "uses": REPORTER,
            "env": {f"{step_id(lab.id).upper()}_RESULTS": result_of(lab.id) for lab in labs},
            "with": {"runners": ",".join(step_id(lab.id) for lab in labs)},
        }
    )
    document = {
        "name": "Autograding Tests",
        "on": ["push", "repository_dispatch", "workflow_dispatch"],
        "permissions": {"checks": "write", "actions": "read", "contents": "read"},
        "jobs": {
            "run-autograding-tests": {
                "runs-on": "ubuntu-latest",
                "if": "github.actor != 'github-classroom[bot]'",
                "steps": steps,
            }
        },
    }
    head = [
        f"# GitHub Classroom's autograding of chapter {manifest.chapter}, written by "
        f"`practice {manifest.chapter} DIR --classroom`:",
        f"# one `checkpoint {manifest.chapter} --json` run, and each lab's points from it.",
    ]
    return "\n".join([*head, *_yaml(document, 0)]) + "\n"
