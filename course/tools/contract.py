"""The chapter contract's checks on the chapter's files, which the manifest reader leaves out.

The reader (``harness.manifest``) checks a manifest's own text and runs in every command, in
a practice workspace too, where one edition's notebooks and no probe module are present: it
stays cheap and reads no other file. These checks read the files: every file a manifest names
exists and is the chapter's own, each lab's notebook is in every edition's folder, no notebook
source is stray, no stored output predates its catalog, every pattern of its ``babel.cfg``
finds a file, the probe module defines the interface ``grading.verdict.probes`` and
``sandboxed.probe_driver`` call. ``course-kit chapters`` and the suite
(``tests/harness/test_chapter_contract.py``) run them, every problem of every chapter at once.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

from ..harness.manifest import (
    Manifest,
    ManifestError,
    chapter_folders,
    check_chapter,
    parents_resolver,
)
from ..harness.pysource import parse
from ..harness.reference import outside_modules
from ..locale import EDITIONS, SOURCE_EDITION
from .catalogs import (
    Catalog,
    chapter_catalog,
    english_translated,
    kit_catalog,
    translated,
    unmatched_patterns,
)
from .notebooks import outputs_behind, stray_sources

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
"""The kit's packages the graded copy carries (``grading.verdict.engine.grader_library``): the probe
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


def written(manifest: Manifest, path: str) -> str:
    """``path`` (a kit path) as the manifest writes it: from its folder, or from the kit."""
    if manifest.paths == "chapter" and path.startswith(f"{manifest.folder}/"):
        return path.removeprefix(f"{manifest.folder}/")
    return path


def contract_problems(manifest: Manifest, kit: Path) -> list[str]:
    """Every way the files break ``manifest``'s contract, each naming the field."""
    problems: list[str] = []
    where = "the chapter's folder" if manifest.paths == "chapter" and manifest.folder else "the kit"

    def missing(field: str, path: str, what: str = "file") -> None:
        if path and not path.endswith("/") and not (kit / path).is_file():
            said = f"no {what} {written(manifest, path)!r} in {where}"
            problems.append(f"{manifest.source}: {field}: {said}")

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
            missing(field, f"{folder}/{name}" if name else "", f"{edition} notebook")
    if manifest.probes is not None:
        module = kit / manifest.probes
        if not module.is_file():
            missing("probes", manifest.probes, "probe module")
        else:
            found = probe_problems(module.read_text("utf-8"))
            shown = written(manifest, manifest.probes)
            problems += [f"{manifest.source}: probes: {shown} {p}" for p in found]
    return problems


def own_files(manifest: Manifest) -> list[tuple[str, str]]:
    """(field, kit path) of every file and folder the manifest names of its own (its parent's
    are the parent's)."""
    named = [(f"workspace {f.path!r} starter", f.starter) for f in manifest.files]
    named += [(f"workspace {f.path!r} reference", f.reference) for f in manifest.files]
    named += [("card.teaching_files", path) for path in manifest.card.teaching_files]
    named += [(f"notebooks.{e}", folder) for e, folder in manifest.notebooks.items()]
    named += [("notebook_sources", manifest.source_folder)]
    named += [("probes", manifest.probes)] if manifest.probes else []
    return [(field, path) for field, path in named if path]


def outside_problems(manifest: Manifest, kit: Path) -> list[str]:
    """The files a chapter that names its files from its folder (``paths = "chapter"``) names
    but that lie outside it, through a link (into the kit's own files, say): a chapter's files
    are its own, so it travels whole wherever it is."""
    if manifest.paths != "chapter" or not manifest.folder:
        return []
    home = (kit / manifest.folder).resolve()
    problems = []
    for field, path in own_files(manifest):
        target = (kit / path).resolve()
        if (kit / path).exists() and not target.is_relative_to(home):
            said = f"{written(manifest, path)!r} is {target}, outside the chapter's folder"
            problems.append(f"{manifest.source}: {field}: {said} (a link?)")
    return problems


def shadowed_problems(manifest: Manifest, kit: Path) -> list[str]:
    """The chapter's modules kept outside the reference package whose name the package already
    has, with other code: the kit's own process would import the package's module instead of the
    chapter's (``harness/reference.py``), and grade against it."""
    home = kit.joinpath(*manifest.reference.split("."))
    outside = outside_modules(manifest)
    problems = []
    for file in manifest.files:
        name = Path(file.path).stem
        inside, path = home / f"{name}.py", kit / file.reference
        if outside.get(name) != file.reference or not inside.is_file() or not path.is_file():
            continue
        if inside.read_bytes() != path.read_bytes():
            said = (
                f"{written(manifest, file.reference)!r} is imported as {manifest.reference}.{name}"
            )
            problems.append(
                f"{manifest.source}: workspace {file.path!r} reference: {said}, which the kit's "
                f"{inside.relative_to(kit)} already is: name the module otherwise"
            )
    return problems


Translated = dict[str, tuple[frozenset[str], dict[str, str]]]
"""By edition: the English texts its catalogs translate (``english_translated``), and each
message's translation (``translated``)."""


def notebook_problems(manifest: Manifest, kit: Path, catalogs: Translated) -> list[str]:
    """Stray notebook sources, and the built notebooks of an edition whose stored outputs still
    show English its catalogs now translate (a long message's text, or a lab's line with its
    English title): ``course-kit nbrefresh`` stores them again."""
    problems = [
        f"{manifest.source}: notebook_sources: {said}" for said in stray_sources(kit, manifest)
    ]
    for edition, folder in manifest.notebooks.items():
        if edition not in catalogs:
            continue
        english, titles = catalogs[edition]
        lab_lines = [
            rf"Lab {re.escape(lab.id)}\s+{re.escape(lab.title)}\b"
            for lab in manifest.labs
            if titles.get(lab.title, lab.title) != lab.title
        ]
        for name in manifest.notebook_names:
            path = kit / folder / name
            behind = outputs_behind(path, english, lab_lines) if path.is_file() else []
            if behind:
                shown = written(manifest, f"{folder}/{name}")
                problems.append(
                    f"{manifest.source}: notebooks.{edition}: {shown}'s stored outputs show "
                    f"{behind[0]!r} in English, which its catalog translates: run "
                    f"`course-kit nbrefresh {kit / folder / name}`"
                )
    return problems


def catalog_problems(manifest: Manifest, catalog: Catalog) -> list[str]:
    """The chapter's ``babel.cfg``: missing, or with a pattern that finds no file."""
    if not catalog.config.is_file():
        return [f"{manifest.source}: no babel.cfg beside it: its catalog would hold no message"]
    base = "the chapter's folder" if manifest.paths == "chapter" else "the kit"
    return [
        f"{catalog.config}: [{pattern}] finds no file in {base}: its messages would be missing"
        for pattern in unmatched_patterns(catalog)
    ]


def every_problem(kit: Path) -> tuple[list[Manifest], list[str]]:
    """Every chapter found, and every problem of each at once: its manifest's text (each bad
    field), its parent, its files, its notebooks and its catalog's patterns."""
    problems: list[str] = []
    read: list[tuple[Manifest, Catalog]] = []
    seen: dict[str, str] = {}
    for path, name in chapter_folders():
        manifest, found = check_chapter(path, name)
        problems += found
        if manifest is None:
            continue
        if manifest.chapter in seen:
            other = seen[manifest.chapter]
            problems.append(
                f"{manifest.source}: chapter {manifest.chapter!r} is already defined by {other}"
            )
            continue
        seen[manifest.chapter] = manifest.source
        read.append((manifest, chapter_catalog(manifest, path)))
    catalogs = [kit_catalog(), *(catalog for _manifest, catalog in read)]
    texts = {
        edition: (english_translated(edition, catalogs), translated(edition, catalogs))
        for edition in EDITIONS
        if edition != SOURCE_EDITION
    }
    resolve = parents_resolver([manifest for manifest, _catalog in read])
    checked = []
    for manifest, catalog in read:
        problems += outside_problems(manifest, kit) + catalog_problems(manifest, catalog)
        problems += notebook_problems(manifest, kit, texts)
        try:
            whole = resolve(manifest)
        except ManifestError as error:
            problems.append(str(error))
            continue
        problems += contract_problems(whole, kit) + shadowed_problems(manifest, kit)
        checked.append(whole)
    return checked, list(dict.fromkeys(problems))
