"""Files generated from the reference: the starters (each lab function keeps its signature and
docstring) and the probe cases of the manifest's seed with the reference's answers."""

from __future__ import annotations

import ast
import functools
import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..grading.verdict.probes import draw
from ..harness.manifest import Lab, LabFunction, Manifest, WorkspaceFile
from ..harness.pysource import parse

STUB_EXCEPTION = "LabNotImplemented"
STUB_IMPORT = f"from .labs import {STUB_EXCEPTION}\n"


class StarterError(ValueError):
    """The reference and the manifest do not make a starter (the message names the function)."""


@dataclass(frozen=True)
class Stub:
    """One lab function to replace: which lab it belongs to and what its stub says."""

    lab: Lab
    function: LabFunction


def stubs_for(manifest: Manifest, file: WorkspaceFile) -> dict[str, Stub]:
    """The lab functions of one learner file, by function name."""
    module = Path(file.path).stem
    functions = [(lab, f) for lab in manifest.labs for f in lab.functions if f.module == module]
    return {f.function: Stub(lab, f) for lab, f in functions}


def _start(node: ast.FunctionDef) -> int:
    """The index of a function's first line, its decorators' included."""
    return min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1


def _stub_lines(
    source_lines: list[str], node: ast.FunctionDef, stub: Stub, where: str
) -> list[str]:
    """The function's signature and docstring, then one ``raise`` naming its lab."""
    body = node.body[0]
    if not (
        isinstance(body, ast.Expr)
        and isinstance(body.value, ast.Constant)
        and isinstance(body.value.value, str)
    ):
        raise StarterError(f"{where}: {node.name} needs a docstring that says what to build")
    assert body.end_lineno is not None
    indent = " " * body.col_offset
    args = [json.dumps(a, ensure_ascii=False) for a in (stub.lab.id, stub.lab.title, node.name)]
    args.append(json.dumps(stub.function.todo, ensure_ascii=False))
    raise_line = f"{indent}raise {STUB_EXCEPTION}({', '.join(args)})\n"
    if len(raise_line) > 100:
        raise_line = f"{indent}raise {STUB_EXCEPTION}(\n"
        raise_line += "".join(f"{indent}    {arg},\n" for arg in args) + f"{indent})\n"
    return source_lines[_start(node) : body.end_lineno] + [raise_line]


def generate_starter(reference: str, stubs: dict[str, Stub], where: str) -> str:
    """``reference`` with every function in ``stubs`` replaced by its stub."""
    tree = parse(reference)
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    missing = sorted(set(stubs) - set(functions))
    if missing:
        raise StarterError(f"{where}: no top-level function {', '.join(missing)}")
    lines = reference.splitlines(keepends=True)
    out: list[str] = []
    cursor = 0
    for node in sorted((functions[name] for name in stubs), key=lambda n: n.lineno):
        assert node.end_lineno is not None
        out += lines[cursor : _start(node)]
        out += _stub_lines(lines, node, stubs[node.name], where)
        cursor = node.end_lineno
    out += lines[cursor:]
    return _with_stub_import("".join(out), tree)


def _with_stub_import(source: str, tree: ast.Module) -> str:
    """Import the stub exception after the reference's last top-level import."""
    imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    if not imports:
        raise StarterError("a learner module needs at least one import to place the stub's after")
    last = max(node.end_lineno or node.lineno for node in imports)
    lines = source.splitlines(keepends=True)
    return "".join(lines[:last] + [STUB_IMPORT] + lines[last:])


PROBE_DATA = "probe_cases.json"
"""The workspace file the probe cases' plain pytest run reads, where a chapter ships one."""


def probe_data_path(manifest: Manifest) -> str | None:
    """Where the kit keeps the probe cases a workspace's plain pytest runs (kit-relative: the
    starter of ``probe_cases.json`` beside the focused tests; None: the chapter ships none)."""
    beside = PurePosixPath(manifest.focused_tests).with_name(PROBE_DATA).as_posix()
    return next((f.starter for f in manifest.files if f.path == beside), None)


def probe_data(manifest: Manifest, kit: Path) -> str | None:
    """The manifest's seed's probe cases, the reference's answers and each case's input
    described, as JSON text with a line per case (None: the chapter has no probes)."""
    probes = draw(manifest, kit, manifest.probe_seed)
    if probes is None:
        return None
    dump = functools.partial(json.dumps, ensure_ascii=False, sort_keys=True)
    fields = []
    for key, value in probes.to_json().items():
        if isinstance(value, list) and value:
            rows, brackets = [dump(item) for item in value], "[]"
        elif isinstance(value, dict) and value:
            rows, brackets = [f"{dump(k)}: {dump(v)}" for k, v in value.items()], "{}"
        else:
            fields.append(f" {dump(key)}: {dump(value)}")
            continue
        body = ",\n".join(f"  {row}" for row in rows)
        fields.append(f" {dump(key)}: {brackets[0]}\n{body}\n {brackets[1]}")
    return "{\n" + ",\n".join(fields) + "\n}\n"


def generated_starters(manifest: Manifest, kit: Path) -> dict[str, str]:
    """Every learner file's starter text and the probe data, by kit path (``starters/…``)."""
    out = {}
    for file in manifest.files_with_role("learner"):
        reference = (kit / file.reference).read_text(encoding="utf-8")
        out[file.starter] = generate_starter(reference, stubs_for(manifest, file), file.reference)
    path = probe_data_path(manifest)
    data = None if path is None else probe_data(manifest, kit)
    if path is not None and data is not None:
        out[path] = data
    return out


def _changed(manifest: Manifest, kit: Path) -> dict[str, str]:
    """The generated files that differ from the committed ones (or are missing), by kit path."""
    return {
        path: text
        for path, text in generated_starters(manifest, kit).items()
        if not (kit / path).is_file() or (kit / path).read_text(encoding="utf-8") != text
    }


def stale_starters(manifest: Manifest, kit: Path) -> list[str]:
    """Committed starters that differ from what generation gives (or are missing)."""
    return list(_changed(manifest, kit))


def write_starters(manifest: Manifest, kit: Path) -> list[str]:
    changed = _changed(manifest, kit)
    for path, text in changed.items():
        (kit / path).parent.mkdir(parents=True, exist_ok=True)
        (kit / path).write_text(text, encoding="utf-8")
    return list(changed)
