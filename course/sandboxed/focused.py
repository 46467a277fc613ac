"""The focused tests' wiring, for every chapter's conftest: which package's modules they exercise.

The tests never import an implementation directly; they ask the ``impl`` fixture, whose
attributes are the chapter's modules of one package. ``COURSE_LAB_PACKAGE`` names that
package. Without it the default is the reference, ``course``, in the kit; in a practice
workspace (a directory holding ``.course-workspace.toml``) it is the learner's package named
there, and the reference package cannot be imported at all, so a workspace run only ever
grades the learner's code. A chapter's conftest is two lines::

    from course.sandboxed.focused import focused_tests

    impl = focused_tests(__file__, ("session", "context", "fixtures"))
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from types import ModuleType

from ..locale import unquoted
from .marker import find_workspace, read_workspace, speak

PACKAGE_VARIABLE = "COURSE_LAB_PACKAGE"
"""Names the package under test; the reporter (``plugin.py``) and the runner set it."""
REFERENCE_PACKAGE = "course"

ALLOWED_KIT_PACKAGES = ("curricula", "harness", "locale", "sandboxed")
"""The kit's own packages a workspace may import: the harness, the code that runs beside the
learner's (``course.sandboxed``: the marker's reader, the reporter, the diffs), the editions'
gettext (the given modules speak the learner's edition through ``course.locale``) and the
chapters' code, whose probe module calls the package under test by name and holds no answer."""


class Implementation:
    """The modules under test of one package, by name (``impl.context``)."""

    def __init__(self, package: str, modules: dict[str, ModuleType]) -> None:
        self.package = package
        self.modules = modules

    def __getattr__(self, name: str) -> ModuleType:
        try:
            return self.__dict__["modules"][name]  # type: ignore[no-any-return]
        except KeyError:
            raise AttributeError(name) from None


class _NoReference(importlib.abc.MetaPathFinder):
    """Refuses the reference package's lab modules inside a workspace."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        top, _, rest = fullname.partition(".")
        if top == REFERENCE_PACKAGE and rest.split(".")[0] not in ALLOWED_KIT_PACKAGES:
            raise ImportError(
                f"{fullname}: a practice workspace grades its own code; import the "
                "workspace's package instead of the reference"
            )
        return None


def enter_workspace(conftest: str) -> Path | None:
    """The workspace holding ``conftest`` (None: the kit); inside one, only its package imports,
    from it, and the tests speak its edition whatever ``LANG`` says, as every door chooses."""
    workspace = find_workspace(Path(conftest).resolve().parent)
    if workspace is not None:
        if not any(isinstance(finder, _NoReference) for finder in sys.meta_path):
            sys.meta_path.insert(0, _NoReference())
        if str(workspace) not in sys.path:
            sys.path.insert(0, str(workspace))
        speak(None, workspace)
    return workspace


def mount(package: str, name: str, path: Path) -> ModuleType:
    """Load the file ``path`` as ``package.name`` (a chapter's reference module kept beside its
    tests, outside the reference package): its relative imports resolve in ``package``."""
    importlib.import_module(package)
    qualified = f"{package}.{name}"
    spec = importlib.util.spec_from_file_location(qualified, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[qualified]
        raise
    return module


def import_module(package: str, name: str, workspace: Path | None, beside: Path) -> ModuleType:
    """``package.name``; in the kit, a module the reference package lacks is the chapter's
    ``beside/name.py``; in a workspace, it must come from the workspace."""
    qualified = f"{package}.{name}"
    reference_file = beside / f"{name}.py"
    kit_run = workspace is None and package == REFERENCE_PACKAGE and reference_file.is_file()
    if kit_run and qualified not in sys.modules and importlib.util.find_spec(qualified) is None:
        return mount(package, name, reference_file)
    loaded = importlib.import_module(qualified)
    if workspace is not None:
        where = Path(loaded.__file__ or "").resolve()
        if not where.is_relative_to(workspace):
            import pytest  # only a test run fails here; the grader's own imports skip pytest

            pytest.fail(f"{qualified} was imported from {where}, outside the workspace")
    return loaded


def focused_tests(
    conftest: str, modules: Sequence[str], reference: str = ".."
) -> Callable[[], Implementation]:
    """The ``impl`` fixture of the chapter whose conftest is ``conftest``: ``modules`` of the
    package under test. In the kit, a module the reference package lacks is loaded from the
    chapter's folder (``reference``, relative to the conftest's folder)."""
    workspace = enter_workspace(conftest)
    beside = (Path(conftest).resolve().parent / reference).resolve()

    import pytest

    def impl(request: pytest.FixtureRequest) -> Implementation:
        plugins = request.config.pluginmanager
        if plugins.get_plugin(REPORTER) is None and plugins.get_plugin(PLAIN) is None:
            plugins.register(plain_failures(), PLAIN)
        default = REFERENCE_PACKAGE if workspace is None else read_workspace(workspace).package
        package = os.environ.get(PACKAGE_VARIABLE) or default
        found = {name: import_module(package, name, workspace, beside) for name in modules}
        return Implementation(package, found)

    return pytest.fixture(scope="session", name="impl")(impl)


REPORTER = "course-reporter"
"""The checkpoint's reporter plugin (``plugin.py``): its report takes the backticks off itself."""
PLAIN = "course-plain-failures"


def plain_failures() -> object:
    """A plugin for plain pytest on a terminal, as the checkpoint's report: a failure's message
    without Markdown backticks (a zh message marks its code spans: ``记录 `calls```)."""
    import pytest

    class PlainFailures:
        @pytest.hookimpl(wrapper=True)
        def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object, object]:
            try:
                return (yield)
            except pytest.fail.Exception as failed:
                if failed.msg:
                    failed.msg = unquoted(failed.msg)
                raise

    return PlainFailures()
