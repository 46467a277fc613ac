"""The code that runs inside the sandbox, beside the learner's; the graded copy carries just this.

The pytest reporter (``plugin.py``, loaded with ``-p course.sandboxed.plugin``), the probe
driver (``python -m course.sandboxed.probe_driver``), the chapter's ``conftest.py`` and focused
tests run in the graded child, with this package, ``course/__init__.py`` and the editions'
catalogs (``course.locale``) as the only kit code on its path (``grading/engine.py``'s
``grader_library``). So nothing here imports the kit outside this package but ``course.locale``
(the ``sandboxed`` contract in ``pyproject.toml``); the grader side imports it freely.
"""
