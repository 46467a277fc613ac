"""A class as Canvas hands its download over, for the whole-term tests and ``bench/term.py``.

27 entries: zips (one wrapped in a folder), a tar.gz and a plain tar, an empty zip, four loose
``.py`` files of one learner, a report without code, a zip of ``pi_course/`` only, a zip a file
manager stripped of hidden files, git clones, an older draft beside the final one, a workspace begun
from an older scaffold, late work, a copier of the reference, a trio handing in the reference in
three disguises, a Chinese-edition workspace and Unicode names; and a class list with one student
who submitted nothing. The honest learners' code is the kit's independent solutions
(``own_solutions/``), each lab of each author handed in by one learner only, so no honest pair
shares code; the copier and the trio hand in the reference; one learner makes an honest mistake.
"""

from __future__ import annotations

import csv
import os
import shutil
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from disguise import commented, reference_sources
from packing import committed, tar_folder, zip_folder, zip_members
from solutions import replace_function, solve_lab
from test_lab_independence import donors
from test_scaffolds import older_scaffold

from course.harness.kit import kit_root
from course.harness.manifest import Manifest
from course.harness.workspace import create_workspace

CANVAS = r"(?P<learner>[^_]+)_(?:late_)?[0-9]+_[0-9]+_"
"""The ``--names`` pattern docs/instructors.md gives for Canvas."""
LAB_FILES = ("summary.py", "groups.py", "context.py", "compaction.py")

# learner: (independent author, the labs they solved) -- each (author, lab) once in the class
SOLVED = {
    "ada": ("first", ("11.1", "11.2")),
    "ben": ("second", ("11.1", "11.2")),
    "cy": ("third", ("11.1",)),
    "fay": ("first", ("11.3", "11.4", "11.5")),
    "gus": ("second", ("11.3", "11.4")),
    "hal": ("third", ("11.3",)),
    "ivy": ("third", ("11.2",)),
    "jon": ("second", ("11.5",)),
    "kim": ("third", ("11.4",)),
    "lee": ("third", ("11.5",)),
}
COPIES = ("ned", "oli", "pam", "quy")  # the reference: a copier and a trio
HASTY = """def parse_summary(value, *, entry_id=None, path=".summary"):
    if isinstance(value, CompactionSummary):
        value = summary_to_json(value)
    lists = {attribute: list(value[key]) for attribute, key in SUMMARY_LIST_FIELDS}
    return CompactionSummary(value["goal"], **lists)
"""
"""tom's honest mistake: Lab 11.1's parse_summary written without a check of its own (started,
and failed: what the summary page ranks)."""
FRESH = ("dee", "max", "ren", "zoë", "lǐléi", "sam", "tom")  # graded, nothing passes
POINTS = 20


@dataclass(frozen=True)
class Student:
    id: str
    name: str
    email: str
    learner: str  # the name Canvas's download gives them


STUDENTS = tuple(
    Student(f"S{n:02d}", name, email, learner)
    for n, (learner, name, email) in enumerate(
        [
            ("ada", "Ada Lovelace", "ada@uni.example"),
            ("ben", "Ben Okafor", "ben@uni.example"),
            ("cy", "Cy Young", "cy@uni.example"),
            ("dee", "Dee Rao", "dee@uni.example"),
            ("eve", "Eve Adams", "eve@uni.example"),
            ("fay", "Fay Wong", "fay@uni.example"),
            ("gus", "Gus Berg", "gus@uni.example"),
            ("hal", "Hal Moss", "hal@uni.example"),
            ("ivy", "Ivy Chen", "ivy@uni.example"),
            ("jon", "Jon Bell", "jon@uni.example"),
            ("kim", "Kim Park", "kim@uni.example"),
            ("lee", "Lee Smith", "lee@uni.example"),
            ("max", "Max Weber", "max@uni.example"),
            ("ned", "Ned Stark", "ned@uni.example"),
            ("oli", "Oli Twist", "oli@uni.example"),
            ("pam", "Pam Beesly", "pam@uni.example"),
            ("quy", "Quy Tran", "quy@uni.example"),
            ("ren", "Ren Wei", "ren@uni.example"),
            ("zoë", "Zoë Blanc", "zoë@uni.example"),
            ("lǐléi", "李雷", "lǐléi@uni.example"),
            ("sam", "Sam Hill", "sam@uni.example"),
            ("tom", "Tom Hardy", "tom@uni.example"),
            ("wes", "Wes Cole", "wes@uni.example"),  # uploaded a report, no code
            ("uma", "Uma Thurman", "uma@uni.example"),  # submitted nothing
        ],
        start=1,
    )
)


def expected_grades() -> dict[str, int | None]:
    """Each learner's grade in every export (None: not graded, a blank cell)."""
    grades: dict[str, int | None] = dict.fromkeys(FRESH, 0)
    grades |= {learner: POINTS * len(labs) for learner, (_author, labs) in SOLVED.items()}
    grades |= dict.fromkeys(COPIES, 100)
    return grades | {"eve": None, "wes": None, "uma": None}


def _canvas(roster: Path, learner: str, number: int, name: str, late: bool = False) -> Path:
    return roster / f"{learner}_{'late_' if late else ''}{number}_{1000 + number}_{name}"


class Term:
    """Lays out the class in ``base``: ``downloads/`` (the roster) and ``class-list.csv``."""

    def __init__(self, manifest: Manifest, base: Path) -> None:
        self.manifest, self.base = manifest, base
        self.roster, self.work = base / "downloads", base / "work"
        self.roster.mkdir(parents=True)
        self.work.mkdir()

    def workspace(self, learner: str, edition: str | None = None) -> Path:
        folder = self.work / learner / "practice-11"
        create_workspace(self.manifest, kit_root(), folder, edition=edition)
        if learner in SOLVED:
            author, labs = SOLVED[learner]
            for lab in labs:
                solve_lab(self.manifest, kit_root(), folder, lab, donors=donors(author))
        return folder

    def number(self, learner: str) -> int:
        return next(int(s.id[1:]) for s in STUDENTS if s.learner == learner)

    def canvas(self, learner: str, name: str, late: bool = False) -> Path:
        return _canvas(self.roster, learner, self.number(learner), name, late)

    def lay_out(self) -> Term:
        zip_folder(self.workspace("ada"), self.canvas("ada", "practice-11.zip"))
        zip_folder(self.workspace("ben").parent, self.canvas("ben", "practice-11.zip"))
        tar_folder(self.workspace("cy"), self.canvas("cy", "practice-11.tar.gz"))
        dee = self.workspace("dee")
        with tarfile.open(self.canvas("dee", "practice-11.tar"), "w") as plain:
            for path in sorted(dee.rglob("*")):
                plain.add(path, path.relative_to(dee).as_posix(), recursive=False)
        zip_members(self.canvas("eve", "practice-11.zip"), {})
        fay = self.workspace("fay")
        for name in LAB_FILES:  # Canvas's multi-file upload: each file on its own
            shutil.copy(fay / "pi_course" / name, self.canvas("fay", name))
        gus = self.workspace("gus")
        zip_folder(gus / "pi_course", self.canvas("gus", "pi_course.zip"), "pi_course/")
        hal = self.workspace("hal")
        with zipfile.ZipFile(self.canvas("hal", "practice-11.zip"), "w") as stripped:
            for path in sorted(hal.rglob("*")):  # a file manager leaves hidden files out
                inside = path.relative_to(hal).as_posix()
                if path.is_file() and not any(p.startswith(".") for p in inside.split("/")):
                    stripped.write(path, inside)
        for learner in ("ivy", "jon"):  # git clones, laid beside the downloads
            committed(self.workspace(learner))
            shutil.copytree(self.work / learner / "practice-11", self.canvas(learner, "repo"))
        draft = zip_folder(self.workspace("kim-draft"), self.canvas("kim", "practice-11.zip"))
        os.utime(draft, (1_700_000_000, 1_700_000_000))
        zip_folder(self.workspace("kim"), self.canvas("kim", "practice-11-1.zip"))
        lee = older_scaffold(self.manifest, self.work / "lee" / "practice-11")
        author, labs = SOLVED["lee"]
        for lab in labs:
            solve_lab(self.manifest, kit_root(), lee, lab, donors=donors(author))
        zip_folder(lee, self.canvas("lee", "practice-11.zip"))
        zip_folder(self.workspace("max"), self.canvas("max", "practice-11.zip", late=True))
        reference = reference_sources(self.manifest, kit_root())
        for learner, sources in (
            ("ned", reference),
            ("oli", commented(reference)),
            ("pam", commented(commented(reference))),
            ("quy", reference),
        ):
            copy = self.workspace(learner)
            for path, data in sources.items():
                (copy / path).write_bytes(data)
            zip_folder(copy, self.canvas(learner, "practice-11.zip"))
        zip_folder(self.workspace("ren", edition="zh"), self.canvas("ren", "practice-11.zip"))
        zip_folder(self.workspace("zoë"), self.canvas("zoë", "practice-11.zip"))
        zip_folder(self.workspace("lǐléi"), self.canvas("lǐléi", "练习-11.zip"))
        zip_folder(self.workspace("sam"), self.canvas("sam", "practice-11.zip"))
        tom = self.workspace("tom") / "pi_course" / "summary.py"
        tom.write_text(replace_function(tom.read_text("utf-8"), HASTY, "parse_summary"), "utf-8")
        zip_folder(tom.parent.parent, self.canvas("tom", "practice-11.zip"))
        self.canvas("wes", "report.pdf").write_bytes(b"%PDF-1.4\n")
        shutil.rmtree(self.work)
        with (self.base / "class-list.csv").open("w", newline="", encoding="utf-8") as out:
            writer = csv.writer(out)
            writer.writerow(["id", "name", "email"])
            writer.writerows((s.id, s.name, s.email) for s in STUDENTS)
        return self

    @property
    def class_list(self) -> Path:
        return self.base / "class-list.csv"
