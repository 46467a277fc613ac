"""The chapter contract's checks on the kit's files, which the manifest reader leaves out.

The reader (``harness.manifest``) checks a manifest's own text and runs in every command, in
a practice workspace too, where one edition's notebooks and no probe module are present: it
stays cheap and reads no other file. These checks read the kit: every file a manifest names
exists, each lab's notebook is in every edition's folder, the probe module defines the
interface ``grading.probes`` and ``sandboxed.probe_driver`` call. ``course-kit chapters`` and
the suite (``tests/harness/test_chapter_contract.py``) run them.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from ..harness.manifest import Manifest
from ..harness.pysource import parse

PROBE_FUNCTIONS = {"cases": ("seed", "labs"), "evaluate": ("package", "case")}
"""What a probe module must define, with its parameters: ``cases(seed, labs)`` draws the cases
of ``labs`` (every lab when empty) as JSON data; ``evaluate(package, case)`` answers one case
with the package's code."""
OPTIONAL_PROBE_FUNCTIONS = {"summarize": ("package", "case")}
"""What it may define: ``summarize(package, case)``, the lines that describe a case's input."""


def probe_problems(source: str) -> list[str]:
    """What ``source`` (a probe module's text) lacks of the probe interface, or ``[]``."""
    try:
        tree = parse(source)
    except SyntaxError as error:
        return [f"is not valid Python (line {error.lineno}: {error.msg})"]
    defined = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    problems = [
        f"imports {name} at its top level, which the sandbox lacks: only the standard library, "
        f"{' and '.join(IN_THE_SANDBOX)} are there (import it where cases runs)"
        for name in _top_level_imports(tree.body)
        if not _in_the_sandbox(name)
    ]
    for name, parameters in (PROBE_FUNCTIONS | OPTIONAL_PROBE_FUNCTIONS).items():
        wanted = f"{name}({', '.join(parameters)})"
        node = defined.get(name)
        if node is None:
            if name in PROBE_FUNCTIONS:
                problems.append(f"defines no top-level function {wanted}")
            continue
        if not _accepts(node, len(parameters)):
            problems.append(f"{name} must take {len(parameters)} arguments: {wanted}")
    return problems


IN_THE_SANDBOX = ("course.sandboxed", "course.locale")
"""The kit's packages the graded copy carries (``grading.engine.grader_library``): the probe
driver loads the probe module there, so what it imports on loading must be among them."""


def _top_level_imports(body: list[ast.stmt]) -> list[str]:
    """The modules ``body`` imports when it runs (a function's body runs later; a block under
    ``if TYPE_CHECKING:`` never)."""
    found: list[str] = []
    for node in body:
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found += _top_level_imports(node.orelse)
        elif isinstance(node, ast.If | ast.Try | ast.With | ast.ClassDef):
            inner = [*node.body, *getattr(node, "orelse", []), *getattr(node, "finalbody", [])]
            inner += [stmt for handler in getattr(node, "handlers", []) for stmt in handler.body]
            found += _top_level_imports(inner)
    return found


def _in_the_sandbox(module: str) -> bool:
    top = module.partition(".")[0]
    if top in sys.stdlib_module_names or top == "__future__":
        return True
    return any(module == kit or module.startswith(f"{kit}.") for kit in IN_THE_SANDBOX)


def _accepts(node: ast.FunctionDef | ast.AsyncFunctionDef, count: int) -> bool:
    """Whether the function can be called with ``count`` positional arguments alone."""
    if any(default is None for default in node.args.kw_defaults):
        return False  # a keyword-only argument without a default
    positional = len(node.args.posonlyargs) + len(node.args.args)
    required = positional - len(node.args.defaults)
    return required <= count and (count <= positional or node.args.vararg is not None)


def contract_problems(manifest: Manifest, kit: Path) -> list[str]:
    """Every way the kit's files break ``manifest``'s contract, each naming the field."""
    problems: list[str] = []

    def missing(field: str, relative: str, what: str = "file") -> None:
        if not (kit / relative).is_file():
            problems.append(f"{manifest.source}: {field}: no {what} {relative!r} in the kit")

    for file in manifest.files:
        missing(f"workspace {file.path!r} starter", file.starter)
        if file.reference != file.starter:
            missing(f"workspace {file.path!r} reference", file.reference)
    for path in manifest.card.teaching_files:
        missing("card.teaching_files", path)
    notebooks = [(f"labs[{i}].notebook", lab.notebook) for i, lab in enumerate(manifest.labs)]
    notebooks += [
        (f"other_notebooks[{i}]", name) for i, name in enumerate(manifest.other_notebooks)
    ]
    for field, name in notebooks:
        for edition, folder in manifest.notebooks.items():
            missing(field, f"{folder}/{name}", f"{edition} notebook")
    if manifest.probes is not None:
        module = kit / manifest.probes
        if not module.is_file():
            missing("probes", manifest.probes, "probe module")
        else:
            found = probe_problems(module.read_text("utf-8"))
            problems += [f"{manifest.source}: probes: {manifest.probes} {p}" for p in found]
    return problems
