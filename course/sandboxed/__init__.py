"""The code that runs inside the sandbox, beside the learner's; the graded copy carries just this.

With ``course.locale`` it is the only kit code on the child's path, so it imports nothing else
of the kit (the ``sandboxed`` contract in ``pyproject.toml``); the grader imports it freely.
"""
