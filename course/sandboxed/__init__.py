"""The code that runs inside the sandbox, beside the learner's; the graded copy carries just this.

The pytest reporter (``plugin.py``), the probe driver, the chapter's ``conftest.py`` and focused
tests run in the graded child with this package, ``course/__init__.py`` and ``course.locale`` as
the only kit code on its path, so nothing here imports the rest of the kit (the ``sandboxed``
contract in ``pyproject.toml``); the grader side imports it freely.
"""
