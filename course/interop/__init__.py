"""Sessions from other agents as chapter logs: Pi's session files, read, migrated and mapped."""

from .pi_format import (
    CURRENT_VERSION,
    LineDamage,
    PiFormatError,
    PiLine,
    PiSession,
    migrate,
    read_pi_session,
)
from .pi_import import (
    ImportedSession,
    convert_pi_session,
    import_pi_session,
    write_chapter_log,
)
from .pi_report import (
    KINDS,
    MAPPING_KINDS,
    POLICIES,
    REPAIR_KINDS,
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
    "CURRENT_VERSION",
    "KINDS",
    "MAPPING_KINDS",
    "POLICIES",
    "REPAIR_KINDS",
    "SPLIT_TURNS",
    "ImportReport",
    "ImportedSession",
    "LineDamage",
    "PiFormatError",
    "PiImportError",
    "PiLine",
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
