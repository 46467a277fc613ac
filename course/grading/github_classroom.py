"""GitHub Classroom: the workflow a template workspace runs on each push, reporting lab points.

``practice CHAPTER DIR --classroom`` writes it. On each push the runner installs the kit named
by the organization's variables (``COURSE_KIT_REPOSITORY``, ``COURSE_KIT_REF``), runs
``checkpoint CHAPTER --json`` once, and a step per required lab earns its ``points`` when
``checkpoint CHAPTER --report FILE --lab ID`` says it passed whole: the lab's ``score`` in that
report, the grade every other door shows. Scalars are written as JSON
strings, which YAML reads as they are.
"""

from __future__ import annotations

import json

from ..harness.manifest import Manifest

WORKFLOW = ".github/workflows/classroom.yml"
COMMAND_GRADER = "classroom-resources/autograding-command-grader@v1"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"
REPORT = ".checkpoint.json"  # the one run's report: a dot file, which grading never reads
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


def workflow(manifest: Manifest) -> str:
    """The workflow's text (see the module's docstring)."""
    labs, chapter = manifest.required_labs, manifest.chapter
    ids = [step_id(lab.id) for lab in labs]
    # exit 1 (a lab not passing) is a verdict; anything else fails the run
    grading_run = f"checkpoint {chapter} --no-card --json {REPORT} || [ $? -eq 1 ]"
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
        {"name": f"checkpoint {chapter}", "run": grading_run},
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
                    "command": f"checkpoint {chapter} --report {REPORT} --lab {lab.id}",
                    "timeout": 1,
                    "max-score": lab.points,
                },
            }
        )
    steps.append(
        {
            "name": "Autograding Reporter",
            "uses": REPORTER,
            "env": {f"{i.upper()}_RESULTS": "${{ steps." + i + ".outputs.result }}" for i in ids},
            "with": {"runners": ",".join(ids)},
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
        f"# GitHub Classroom's autograding of chapter {chapter}, written by "
        f"`practice {chapter} DIR --classroom`:",
        f"# one `checkpoint {chapter} --json` run, and each lab's points from it.",
    ]
    return "\n".join([*head, *_yaml(document, 0)]) + "\n"
