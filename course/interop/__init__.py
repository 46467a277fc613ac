"""Sessions from other agents as chapter logs: Pi's session files, read, migrated and mapped."""

from .pi_format import LineDamage, PiFormatError, PiSession, migrate, read_pi_session
from .pi_import import ImportedSession, convert_pi_session, import_pi_session, write_chapter_log
from .pi_report import (
    KINDS,
    SPLIT_TURNS,
    ImportReport,
    PiImportError,
    Policy,
    ReportItem,
    SplitTurn,
)
from .pi_summary import SummaryMapping, summary_from_markdown
from .samples import pi_session_files

__all__ = [
    "KINDS",
    "SPLIT_TURNS",
    "ImportReport",
    "ImportedSession",
    "LineDamage",
    "PiFormatError",
    "PiImportError",
    "PiSession",
    "Policy",
    "ReportItem",
    "SplitTurn",
    "SummaryMapping",
    "convert_pi_session",
    "import_pi_session",
    "migrate",
    "pi_session_files",
    "read_pi_session",
    "summary_from_markdown",
    "write_chapter_log",
]
