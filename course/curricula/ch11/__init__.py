"""Chapter 11, context compaction: its manifest, probe cases, strategies and notebook views."""

from course.locale import NP_

STUB_TITLES = (NP_("the lab's name in its stub", "compaction entry"),)
"""Lab 11.1's name as its stub says it: the chapter's first red light quotes ``Lab 11.1
compaction entry 尚未实现``, so the zh edition keeps those words there, and names the lab 记录解析
(the chapter's evidence line) everywhere else. The context is ``course.locale.STUB_TITLE``."""
