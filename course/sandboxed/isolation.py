"""One lab at a time in a run of its own: the learner's functions of that lab, the reference's of
every other lab, so a lab's grade depends on that lab's code alone.

The grader writes the reference's lab modules and a spec (``SPEC_VARIABLE`` names it) into an
isolated graded copy; the reporter and the probe driver call ``Isolation.activate(lab)`` before
each test or case. Activation rebinds, in every module of the package (the learner's, the given
ones and the reference's), each name bound to a lab function: the learner's object for the
active lab, the reference's for the others. Classes stay the learner's everywhere (a refusal is
the exception class the tests expect). Nothing this run prints reaches a learner: the grader
keeps only its statuses.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType

from .tables import TableReader

SPEC_VARIABLE = "COURSE_ISOLATION"
"""The spec file's path, relative to the run's working directory (the graded copy)."""
REFERENCE_PREFIX = "_course_reference_"
"""A reference module in the learner's package: ``<package>._course_reference_groups``."""


class Isolation:
    """The learner's package with each lab's functions switchable to the reference's."""

    def __init__(self, package: str, reference: Path, labs: Mapping[str, Sequence[str]]) -> None:
        self.package = package
        self.reference = reference  # the folder holding the reference's lab modules
        self.labs = {lab: tuple(names) for lab, names in labs.items()}
        names = [name for functions in self.labs.values() for name in functions]
        self.modules = list(dict.fromkeys(name.partition(".")[0] for name in names))
        self.owner = {name: lab for lab, functions in self.labs.items() for name in functions}
        self.broken: dict[str, str] = {}  # a learner module that failed to import: the error
        self.learner: dict[str, object] = {}
        self.referenced: dict[str, object] = {}
        self.active: str | None = None
        self.ready = False

    @classmethod
    def from_environment(cls) -> Isolation | None:
        """The run's isolation, when the grader asked for one (``SPEC_VARIABLE``)."""
        where = os.environ.get(SPEC_VARIABLE, "")
        if not where:
            return None
        spec = TableReader(json.loads(Path(where).read_text(encoding="utf-8")), "", where)
        package, reference = spec.text("package"), Path(spec.text("reference")).resolve()
        table = spec.raw("labs")
        labs = TableReader(table, "labs", where)
        functions = {str(lab): labs.texts(str(lab)) for lab in table}
        labs.finish()
        spec.finish()
        return cls(package, reference, functions)

    def _load_reference(self, module: str) -> ModuleType:
        name = f"{self.package}.{REFERENCE_PREFIX}{module}"
        spec = importlib.util.spec_from_file_location(name, self.reference / f"{module}.py")
        if spec is None or spec.loader is None:
            raise ImportError(f"{module}: the reference module cannot be loaded")
        loaded = importlib.util.module_from_spec(spec)
        loaded.__package__ = self.package  # its relative imports find the learner's modules
        sys.modules[name] = loaded
        spec.loader.exec_module(loaded)
        return loaded

    def _prepare(self) -> None:
        """Import the learner's lab modules (a module that fails to import is replaced by the
        reference's, and only its own labs fail), then the reference's beside them."""
        package = importlib.import_module(self.package)
        folder = Path(next(iter(getattr(package, "__path__", [])), ".")).resolve()
        references: dict[str, ModuleType] = {}

        def stand_in(module: str, error: BaseException) -> None:
            self.broken.setdefault(module, f"{type(error).__name__}: {error}")
            references[module] = settled(module, lambda: self._load_reference(module))
            sys.modules[f"{self.package}.{module}"] = references[module]
            setattr(package, module, references[module])

        def settled(module: str, load: Callable[[], ModuleType]) -> ModuleType:
            """``load()``, standing in the reference for each learner module it fails in."""
            for _ in range(len(self.modules) + 1):
                try:
                    return load()
                except Exception as error:
                    culprit = _failing_module(error, folder)
                    if culprit == module or culprit not in self.modules or culprit in references:
                        raise
                    stand_in(culprit, error)
            return load()

        for module in self.modules:
            if module in references:
                continue
            try:
                name = f"{self.package}.{module}"
                settled(module, lambda name=name: importlib.import_module(name))  # type: ignore[misc]
            except Exception as error:
                stand_in(module, error)
        for module in self.modules:
            if module not in references:
                references[module] = self._load_reference(module)
        for module, reference in references.items():
            learner = sys.modules[f"{self.package}.{module}"]
            if learner is not reference:
                _share_classes(reference, learner)
        for name in self.owner:
            module_name, _, function = name.partition(".")
            self.referenced[name] = getattr(references[module_name], function)
            own = (
                None if module_name in self.broken else sys.modules[f"{self.package}.{module_name}"]
            )
            self.learner[name] = getattr(own, function, None)
        self.ready = True

    def activate(self, lab: str | None) -> None:
        """Bind ``lab``'s functions to the learner's and every other lab's to the reference's;
        raises the import error of a learner module that holds one of ``lab``'s functions."""
        if not self.ready:
            self._prepare()
        if lab != self.active:
            chosen = {
                name: self.learner[name] if self.owner[name] == lab else self.referenced[name]
                for name in self.owner
            }
            swap = {
                id(found): chosen[name]
                for table in (self.learner, self.referenced)
                for name, found in table.items()
                if found is not None
            }
            prefix = f"{self.package}."
            for module_name, module in list(sys.modules.items()):
                if module_name != self.package and not module_name.startswith(prefix):
                    continue
                namespace = vars(module)
                for key, value in list(namespace.items()):
                    replacement = swap.get(id(value))
                    if replacement is not None and callable(value):
                        namespace[key] = replacement
            for name, found in chosen.items():  # a lab function the learner's module lacks
                module_name, _, function = name.partition(".")
                holder = sys.modules[f"{self.package}.{module_name}"]
                if found is not None:
                    setattr(holder, function, found)
                elif hasattr(holder, function):
                    delattr(holder, function)
            self.active = lab
        for name, owner in self.owner.items():
            module_name = name.partition(".")[0]
            if owner == lab and module_name in self.broken:
                raise ImportError(self.broken[module_name])


def _failing_module(error: BaseException, folder: Path) -> str | None:
    """The package's module ``error`` came from: the file of a syntax error, else the innermost
    frame in the package's folder (None: none of the package's)."""
    files = [getattr(error, "filename", None) if isinstance(error, SyntaxError) else None]
    tb = error.__traceback__
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    for name in filter(None, [*files, *reversed(frames)]):
        path = Path(name).resolve()
        if path.parent == folder and path.suffix == ".py":
            return path.stem
    return None


def _share_classes(reference: ModuleType, learner: ModuleType) -> None:
    """The reference module's own classes replaced by the learner's of the same name, so what a
    reference function raises or returns is of the type the tests and the other modules know."""
    for key, value in list(vars(reference).items()):
        theirs = getattr(learner, key, None)
        if (
            isinstance(value, type)
            and value.__module__ == reference.__name__
            and isinstance(theirs, type)
        ):
            setattr(reference, key, theirs)
