"""The lab harness: curricula as data, practice workspaces and the checkpoint runner."""

# Every door reaches the harness first: from here on, ``ast.parse`` is safe in threads (3.11).
from . import pysource as pysource
