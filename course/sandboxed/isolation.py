"""A run of per-lab credit: the reference's functions for the labs it holds, the learner's for
every other lab; it decides only labs whose reference it does not hold.

Per-lab credit (``grading/verdict/isolated.py``) asks for runs in which some labs (the ones a run
*holds*) are the reference's and the rest the learner's. The grader writes, into the run's
graded copy, the reference's lab modules cut to the labs held (``grading/verdict/cut.py``: no
function of any other lab, nor a private helper only those reach) and a spec (``SPEC_VARIABLE``
names it). The invariant: a run decides only labs whose reference it does not hold, and holds
nothing of their reference, in memory or on disk, so learner code that looks for it finds none.

The reporter and the probe driver call ``Isolation.activate(lab)`` before each test or case of a
lab the run decides. The first call binds, once, in every module of the package (the learner's,
the given ones and the reference's), each name bound to a lab function: the reference's for a
lab held, the learner's for every other. Classes stay the learner's everywhere (a refusal is the
exception class the tests expect). Nothing this run prints reaches a learner: the grader keeps
only its statuses.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from .tables import TableReader

SPEC_VARIABLE = "COURSE_ISOLATION"
"""The spec file's path, relative to the run's working directory (the graded copy)."""
REFERENCE_PREFIX = "_course_reference_"
"""A reference module in the learner's package: ``<package>._course_reference_groups``."""


class Isolation:
    """The learner's package with the functions of the labs ``held`` bound to the reference's."""

    def __init__(
        self,
        package: str,
        reference: Path,
        labs: Mapping[str, Sequence[str]],
        held: Collection[str],
        decided: Collection[str],
    ) -> None:
        self.package = package
        self.reference = reference  # the folder holding the reference's lab modules, cut
        self.labs = {lab: tuple(names) for lab, names in labs.items()}
        self.held, self.decided = frozenset(held), frozenset(decided)
        if self.held & self.decided:
            raise ValueError(f"a run deciding {sorted(self.held & self.decided)} holds them")
        names = [name for functions in self.labs.values() for name in functions]
        self.modules = list(dict.fromkeys(name.partition(".")[0] for name in names))
        self.owner = {name: lab for lab, functions in self.labs.items() for name in functions}
        self.broken: dict[str, str] = {}  # a learner module that failed to import: the error
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
        held, decided = spec.texts("held", allow_empty=True), spec.texts("decides")
        spec.finish()
        return cls(package, reference, functions, held, decided)

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
        """Import the learner's lab modules, then the cut reference modules of the labs held
        beside them, and bind every lab function once. A learner module that fails to import
        is replaced by its cut reference where the run holds a lab of it (only the labs it holds
        the functions of fail); elsewhere it fails as it does in the learner's own run."""
        package = importlib.import_module(self.package)
        folder = Path(next(iter(getattr(package, "__path__", [])), ".")).resolve()
        holding = {name.partition(".")[0] for name, lab in self.owner.items() if lab in self.held}
        references: dict[str, ModuleType] = {}

        def stand_in(module: str, error: BaseException) -> None:
            why = self.broken.setdefault(module, f"{type(error).__name__}: {error}")
            references[module] = settled(module, lambda: self._load_reference(module))
            for name, lab in self.owner.items():  # what is cut raises the module's error
                if name.partition(".")[0] == module and lab not in self.held:
                    setattr(references[module], name.partition(".")[2], _unimportable(module, why))
            sys.modules[f"{self.package}.{module}"] = references[module]
            setattr(package, module, references[module])

        def settled(module: str, load: Callable[[], ModuleType]) -> ModuleType:
            """``load()``, standing in the reference for each learner module it fails in."""
            for _ in range(len(self.modules) + 1):
                try:
                    return load()
                except Exception as error:
                    culprit = _failing_module(error, folder)
                    if culprit == module or culprit not in holding or culprit in references:
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
                if module in holding:
                    stand_in(module, error)
                else:
                    self.broken.setdefault(module, f"{type(error).__name__}: {error}")
        for module in self.modules:
            if module in holding and module not in references:
                references[module] = self._load_reference(module)
        for module, reference in references.items():
            learner = sys.modules[f"{self.package}.{module}"]
            if learner is not reference:
                _share_classes(reference, learner)
        self._bind(references)
        self.ready = True

    def _bind(self, references: Mapping[str, ModuleType]) -> None:
        """Each lab function's name, in every module of the package, bound to the reference's
        (a lab held) or the learner's (any other; in a module that did not import and that the
        reference stands in for, a function that raises its import error)."""
        chosen: dict[str, object] = {}
        replaced: dict[int, object] = {}  # a learner's function of a lab held → the reference's
        for name, lab in self.owner.items():
            module_name, _, function = name.partition(".")
            learner = self._module(module_name)
            own = getattr(learner, function, None) if learner is not None else None
            if lab not in self.held:
                chosen[name] = own
                continue
            chosen[name] = getattr(references[module_name], function, None)
            if own is not None and module_name not in self.broken:
                replaced[id(own)] = chosen[name]
        prefix = f"{self.package}."
        for module_name, module in list(sys.modules.items()):
            if module_name != self.package and not module_name.startswith(prefix):
                continue
            namespace = vars(module)
            for key, value in list(namespace.items()):
                replacement = replaced.get(id(value))
                if replacement is not None and callable(value):
                    namespace[key] = replacement
        for name, found in chosen.items():
            module_name, _, function = name.partition(".")
            holders = (self._module(module_name), references.get(module_name))
            for holder in {id(h): h for h in holders if h is not None}.values():
                if found is not None:
                    setattr(holder, function, found)
                elif hasattr(holder, function):
                    delattr(holder, function)

    def _module(self, module: str) -> ModuleType | None:
        """The package's ``module`` as it is now (the learner's, or the reference standing in
        for it; None: it did not import)."""
        return sys.modules.get(f"{self.package}.{module}")

    def activate(self, lab: str | None) -> None:
        """Make ready for a test or case of ``lab``: the first call binds every lab function;
        raises the import error of a learner module that holds one of ``lab``'s functions, and
        refuses a lab the run holds (it decides only the others)."""
        if lab is not None and lab not in self.decided:
            raise RuntimeError(f"this run holds the reference of Lab {lab}: it does not decide it")
        if not self.ready:
            self._prepare()
        for name, owner in self.owner.items():
            module_name = name.partition(".")[0]
            if owner == lab and module_name in self.broken:
                raise ImportError(self.broken[module_name])


def _unimportable(module: str, error: str) -> Callable[..., Any]:
    """A stand-in for a lab function whose learner module does not import: it raises that."""

    def unavailable(*args: object, **kwargs: object) -> Any:
        raise ImportError(f"{module}: {error}")

    return unavailable


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
