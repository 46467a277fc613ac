"""``course-kit lite``'s parts that need no registry: the lock, the wheels, the settings."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import zipfile
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from children import lab_counts, practice_and_roster

from course.display.transfer import save_workspace
from course.harness.kit import kit_root
from course.harness.manifest import available_chapters, load_manifest
from course.harness.workspace import create_workspace
from course.tools import lite
from course.tools.maintainer import main as course_kit


def make_wheel(
    folder: Path,
    name: str,
    requires: list[str],
    files: list[str],
    texts: Mapping[str, str] = MappingProxyType({}),
) -> Path:
    """A minimal wheel: METADATA, RECORD and ``files`` (each holding its text in ``texts``,
    else its own name)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-1.0-py3-none-any.whl"
    info = f"{name}-1.0.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
    meta += "".join(f"Requires-Dist: {line}\n" for line in requires)
    with zipfile.ZipFile(path, "w") as archive:
        for file in files:
            archive.writestr(file, texts.get(file, file))
        archive.writestr(f"{info}/METADATA", meta)
        archive.writestr(f"{info}/RECORD", "".join(f"{f},,\n" for f in files))
    return path


def test_the_lock_holds_each_wheel_with_the_dependencies_that_apply_in_the_browser(
    tmp_path: Path,
) -> None:
    paths = [
        make_wheel(
            tmp_path,
            "Top_Pkg",
            [
                "helper>=1",
                'pexpect; sys_platform != "emscripten"',  # not in a browser
                'tomli; python_version < "3.11"',  # not on the browser's Python
                'extra-thing; extra == "fancy"',  # only with an extra
                "absent",  # not in the lock (left out), so not a dependency
            ],
            ["top_pkg/__init__.py", "top_pkg/sub/mod.py", "single.py"],
        ),
        make_wheel(tmp_path, "helper", [], ["helper.py"]),
        make_wheel(tmp_path, "pexpect", [], ["pexpect/__init__.py"]),
    ]
    locked = lite.lock({"python": "3.14.2"}, [lite.read_wheel(p) for p in paths])
    assert locked["info"] == {"python": "3.14.2"}
    top = locked["packages"]["top-pkg"]
    assert top["depends"] == ["helper"], top
    assert top["imports"] == ["single", "top_pkg"]
    assert top["file_name"] == "Top_Pkg-1.0-py3-none-any.whl"
    assert len(top["sha256"]) == 64 and top["install_dir"] == "site"
    assert locked["packages"]["helper"]["depends"] == []


def test_the_first_folder_wins_and_left_out_projects_are_not_chosen(tmp_path: Path) -> None:
    kit = make_wheel(tmp_path / "kit", "course", [], ["course/__init__.py"])
    make_wheel(tmp_path / "pypi", "course", [], ["course/__init__.py"])
    kept = make_wheel(tmp_path / "pypi", "pytest", [], ["pytest/__init__.py"])
    make_wheel(tmp_path / "pypi", "widgetsnbextension", [], ["widgetsnbextension/__init__.py"])
    chosen = lite.chosen_wheels([tmp_path / "kit", tmp_path / "pypi"])
    assert sorted(chosen) == sorted([kit, kept])


def test_a_trimmed_wheel_loses_the_folders_and_their_record_lines(tmp_path: Path) -> None:
    files = ["jedi/__init__.py", "jedi/third_party/typeshed/stubs/x.pyi", "jedi/api.py"]
    wheel = make_wheel(tmp_path / "in", "jedi", [], files)
    out = lite.trimmed([wheel], tmp_path / "out")
    assert out == [tmp_path / "out" / wheel.name]
    with zipfile.ZipFile(out[0]) as archive:
        names = archive.namelist()
        record = archive.read("jedi-1.0.dist-info/RECORD").decode()
    assert "jedi/third_party/typeshed/stubs/x.pyi" not in names
    assert "jedi/api.py" in names and "stubs" not in record and "jedi/api.py" in record


def test_a_wheel_without_a_rule_is_not_copied(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "pytest", [], ["pytest/__init__.py"])
    assert lite.trimmed([wheel], tmp_path / "out") == [wheel]


def test_the_kernel_settings_fetch_nothing_from_elsewhere() -> None:
    settings = lite.site_config(["pytest", "course"])["jupyter-config-data"]
    kernel = settings["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert kernel["disablePyPIFallback"] is True
    assert kernel["pyodideUrl"].startswith("./")
    assert kernel["pipliteUrls"] == []
    assert kernel["loadPyodideOptions"]["packages"] == ["course", "pytest"]


def test_the_cache_key_changes_with_what_is_fetched() -> None:
    newer = lite.LiteConfig(pyodide="315.0.0")
    assert newer.cache_key() != lite.CONFIG.cache_key()
    assert lite.LiteConfig().cache_key() == lite.CONFIG.cache_key()


def test_a_folder_with_files_is_never_built_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("mine")
    assert course_kit(["lite", str(tmp_path / "site"), "--cache", str(tmp_path / "c")]) == 1
    assert "site: exists and is not empty" in capsys.readouterr().err
    assert (tmp_path / "site" / "index.html").read_text() == "mine"


def test_the_wheel_ships_each_catalog_compiled_and_no_po(tmp_path: Path) -> None:
    from course.harness.kit import kit_root
    from course.locale import compile_catalog

    package = tmp_path / "course"
    shutil.copytree(kit_root() / "course", package, ignore=shutil.ignore_patterns("*.mo"))
    catalogs = sorted(package.rglob("*.po"))
    assert len(catalogs) > 1, "the kit's catalog and each chapter's"
    sources = {po: po.read_bytes() for po in catalogs}
    lite.ship_compiled_catalogs(package)
    assert not list(package.rglob("*.po"))
    for po, source in sources.items():
        assert po.with_suffix(".mo").read_bytes() == compile_catalog(source), po


def test_the_kit_wheel_carries_what_grading_reads_beside_the_package(tmp_path: Path) -> None:
    """In the browser ``kit_root()`` is the installed package's parent: the starters and the
    focused tests must lie there, recorded in the wheel, for ``check()`` to grade."""
    sources = lite.kit_sources(kit_root(), [load_manifest("11")])
    wheel = make_wheel(tmp_path, "course", [], ["course/__init__.py"])
    lite.add_to_wheel(wheel, sources)
    installed = tmp_path / "site-packages"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(installed)
        record = archive.read("course-1.0.dist-info/RECORD").decode()
    assert "starters/11-summary.py" in sources
    assert "tests/chapter11/test_11_context_compaction.py" in sources
    assert not [path for path in sources if path.startswith("course/")]
    for path, data in sources.items():
        assert (installed / path).read_bytes() == data, path
        assert f"\n{path},sha256=" in record, f"{path} not in RECORD:\n{record}"


# ------------------------------------------------------------------------ what the site leaves out


def test_a_trimmed_wheel_keeps_the_spared_files_and_records_the_rewritten_lexer_map(
    tmp_path: Path,
) -> None:
    mapping = (
        "LEXERS = {\n"
        "    'PythonLexer': ('pygments.lexers.python', 'Python', ('python',), ('*.py',), ()),\n"
        "    'RustLexer': ('pygments.lexers.rust', 'Rust', ('rust',), ('*.rs',), ()),\n"
        "}\n"
    )
    files = ["pygments/lexers/python.py", "pygments/lexers/rust.py", "pygments/lexer.py"]
    files.append(lite.LEXER_MAP)
    wheel = make_wheel(tmp_path / "in", "pygments", [], files, {lite.LEXER_MAP: mapping})
    config = lite.LiteConfig(
        trimmed=(("pygments", ("pygments/lexers/",)),),
        spared=("pygments/lexers/python.py", lite.LEXER_MAP),
    )
    [out] = lite.trimmed([wheel], tmp_path / "out", config)
    with zipfile.ZipFile(out) as archive:
        names = set(archive.namelist())
        record = archive.read("pygments-1.0.dist-info/RECORD").decode().splitlines()
        pruned = archive.read(lite.LEXER_MAP)
    assert "pygments/lexers/rust.py" not in names, names
    assert {"pygments/lexers/python.py", "pygments/lexer.py", lite.LEXER_MAP} <= names
    assert b"PythonLexer" in pruned and b"RustLexer" not in pruned, pruned
    assert lite.record_line(lite.LEXER_MAP, pruned) in record, record
    assert not [line for line in record if line.startswith("pygments/lexers/rust.py")]


def test_the_pruned_lexer_map_names_exactly_the_lexers_of_the_kept_modules() -> None:
    from pygments.lexers import _mapping

    text = Path(_mapping.__file__).read_text(encoding="utf-8")
    namespace: dict[str, Any] = {}
    exec(lite.pruned_lexer_map(text, lite.CONFIG.spared), namespace)
    kept_modules = {path.removesuffix(".py").replace("/", ".") for path in lite.CONFIG.spared}
    expected = {name for name, entry in _mapping.LEXERS.items() if entry[0] in kept_modules}
    assert set(namespace["LEXERS"]) == expected
    assert {"PythonLexer", "PythonTracebackLexer", "DiffLexer", "TextLexer"} <= expected


TRIMMED_PYGMENTS_AT_WORK = """
import IPython, ipython_pygments_lexers, stack_data, pygments
import _pytest._io.terminalwriter  # imports the diff and Python lexers
from IPython.core.interactiveshell import InteractiveShell
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound
assert pygments.__file__.startswith(TRIMMED), pygments.__file__
shell = InteractiveShell.instance()
for cell in ("def f():\\n    1/0\\nf()", "%xmode Verbose\\nf()", "f??", "x = (1,"):
    shell.run_cell(cell)
from pygments.lexers import _iter_lexerclasses
print(len(list(_iter_lexerclasses())))  # imports every lexer the map names
try:
    get_lexer_by_name("rust")
except ClassNotFound:
    print("unknown: rust")
"""


def test_ipython_and_pytest_highlight_with_the_trimmed_pygments(tmp_path: Path) -> None:
    """The lexers the site keeps are all that IPython (tracebacks, ``?``), its lexers, stack_data
    and pytest import; a dropped language is unknown, as a misspelt one is."""
    import pygments

    installed = Path(pygments.__file__).parent
    files = [p.relative_to(installed.parent).as_posix() for p in installed.rglob("*.py")]
    wheel = tmp_path / "in" / "pygments-1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    with zipfile.ZipFile(wheel, "w") as archive:
        for name in files:
            archive.write(installed.parent / name, name)
        archive.writestr("pygments-1.0.dist-info/RECORD", "")
    [out] = lite.trimmed([wheel], tmp_path / "out")
    site = tmp_path / "site"
    with zipfile.ZipFile(out) as archive:
        archive.extractall(site)
    assert len(list((site / "pygments" / "lexers").glob("*.py"))) == len(lite.CONFIG.spared)
    code = f"TRIMMED = {str(site)!r}\n" + TRIMMED_PYGMENTS_AT_WORK
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(site)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ZeroDivisionError" in done.stdout and "unknown: rust" in done.stdout, done.stdout


def ico(sizes: list[int]) -> bytes:
    """An ``.ico`` file whose image of each size (0 meaning 256) is its size byte repeated."""
    header = struct.pack("<HHH", 0, 1, len(sizes))
    offset, table, images = 6 + 16 * len(sizes), b"", b""
    for size in sizes:
        image = bytes([size]) * (size + 10)
        table += struct.pack("<BBBBHHII", size, size, 0, 0, 1, 32, len(image), offset)
        offset += len(image)
        images += image
    return header + table + images


def icon_images(data: bytes) -> dict[int, bytes]:
    count = struct.unpack_from("<HHH", data)[2]
    entries = [struct.unpack_from("<BBBBHHII", data, 6 + 16 * n) for n in range(count)]
    return {width: data[start : start + size] for width, *_, size, start in entries}


def test_the_tab_icon_keeps_only_its_small_images() -> None:
    big = ico([0, 128, 64, 32, 16])
    small = lite.small_icon(big, 64)
    assert icon_images(small) == {k: v for k, v in icon_images(big).items() if 0 < k <= 64}
    assert len(small) == 6 + 3 * 16 + sum(n + 10 for n in (64, 32, 16))


def test_only_chunks_that_the_unused_loaders_alone_ask_for_are_dropped() -> None:
    loader = r"load\(\[([^\]]*)\]\)"
    scripts = {
        "main.1a.js": "load([o.e(11),o.e(12)]);other([o.e(13)])",
        "11.2b.js": "terminal",
        "12.3c.js": "shared",
        "13.4d.js": "more",
        "side.5e.js": "o.e(12)",  # a second door to chunk 12
    }
    assert lite.unused_chunks(scripts, [loader]) == ["11.2b.js"]
    assert lite.unused_chunks(scripts, []) == []


def test_the_built_site_loses_what_no_browser_asks_for(tmp_path: Path) -> None:
    out = tmp_path / "site"
    files = {
        "build/schemas/all.json": "[]",
        "build/schemas/@jupyterlab/notebook-extension/tracker.json": "{}",
        "build/fa-solid-900.woff": "old",
        "build/fa-solid-900.woff2": "new",
        "build/jlab_core.1a.js": "x=Promise.all([o.e(11)]);r=n.Terminal,s=h.FitAddon",
        "build/11.2b.js": "xterm",
        "build/12.3c.js": "other",
    }
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    (out / "lab").mkdir()
    (out / "lab" / "favicon.ico").write_bytes(ico([0, 32]))
    lite.drop_unused(out)
    left = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert left == [
        "build/12.3c.js",
        "build/fa-solid-900.woff2",
        "build/jlab_core.1a.js",
        "build/schemas/all.json",
        "lab/favicon.ico",
    ]
    assert list(icon_images((out / "lab" / "favicon.ico").read_bytes())) == [32]


def test_the_sessions_left_out_are_read_by_no_notebook_and_the_one_kept_is() -> None:
    from course.interop.samples import PI_SESSION_NAMES

    texts = [p.read_text("utf-8") for p in (kit_root() / "notebooks").rglob("*.ipynb")]
    kept = set(PI_SESSION_NAMES) - set(lite.UNREAD_SESSIONS)
    assert kept and set(lite.UNREAD_SESSIONS) < set(PI_SESSION_NAMES)
    for name in lite.UNREAD_SESSIONS:
        assert not [t for t in texts if name in t], f"a notebook reads {name}"
    for name in kept:
        assert [t for t in texts if name in t], f"no notebook reads {name}: leave it out too"


@pytest.fixture(scope="module")
def site_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    contents = tmp_path_factory.mktemp("contents")
    lite.lay_workspaces(contents, ["en"], [load_manifest("11")])
    return contents / "ch11" / "en"


def pytest_in(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "tests/chapter11/test_11_probe_cases.py", *args]
    return subprocess.run(
        command, cwd=workspace, capture_output=True, text=True, timeout=300, check=False
    )


def test_the_site_workspace_runs_the_kit_s_probe_cases_without_its_own_copy(
    site_workspace: Path, tmp_path: Path
) -> None:
    """The site's workspace has no ``probe_cases.json``: ``test_11_probe_cases.py`` collects
    the same cases from the kit's copy as a workspace made by ``practice`` does from its own."""
    assert not (site_workspace / "tests" / "chapter11" / "probe_cases.json").exists()
    practice = tmp_path / "practice"
    create_workspace(load_manifest("11"), kit_root(), practice)
    assert (practice / "tests" / "chapter11" / "probe_cases.json").is_file()
    ours, theirs = (pytest_in(folder, "--co", "-q").stdout for folder in (site_workspace, practice))
    cases = [line for line in ours.splitlines() if "_probe[" in line]
    assert cases == [line for line in theirs.splitlines() if "_probe[" in line], ours
    assert "test_lab_11_1_probe[" in ours, ours


def test_a_roster_grades_a_site_workspace_s_zip_to_its_own_counts(
    site_workspace: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "en"
    shutil.copytree(site_workspace, workspace)
    shutil.copyfile(kit_root() / "course" / "summary.py", workspace / "pi_course" / "summary.py")
    saved = save_workspace(workspace)
    assert saved.unread == ()
    expected, row = practice_and_roster(workspace, saved.archive, tmp_path)
    assert lab_counts(row["labs"]) == expected
    assert expected["11.1"][0] == "passed"
    assert not [f for f in row["flags"] if "edited" in f], "an optional file left out is no edit"


ABSENT_IN_PYODIDE = ("pwd",)
"""Standard modules the browser's Python does not have, which a module imported on the path of
``check()`` must therefore import only where it uses them (a root grader's host users, say)."""


def test_check_imports_without_the_modules_the_browser_lacks() -> None:
    blocked = "".join(f"sys.modules[{name!r}] = None\n" for name in ABSENT_IN_PYODIDE)
    script = f"import sys\n{blocked}import course.display.notebook, course.grading.verdict.engine\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_site_holds_a_folder_per_chapter_and_edition(tmp_path: Path) -> None:
    chapters = lite.site_chapters()
    assert [m.chapter for m in chapters] == available_chapters()
    lite.lay_workspaces(tmp_path, ["en", "zh"], chapters)
    folders = sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.glob("*/*"))
    expected = [f"ch{m.chapter}/{e}" for m in chapters for e in ("en", "zh") if e in m.notebooks]
    assert folders == sorted(expected)
    config = lite.site_config([], lite.site_title(chapters))["jupyter-config-data"]
    assert config["appName"] == " · ".join(m.title for m in chapters)


def test_a_probe_set_shipped_with_the_kit_spares_the_first_check_its_draw(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The site's wheel carries each chapter's probe set beside the package: ``prepare`` reads
    it where the cache has none, instead of drawing it (tens of seconds in a browser)."""
    from course.grading.verdict import probes

    manifest, kit = load_manifest("11"), kit_root()
    shipped = lite.drawn_probe_sets(kit, [manifest])
    installed = tmp_path / "site-packages"
    installed.mkdir()
    (installed / "course").symlink_to(kit / "course", target_is_directory=True)
    for path, data in shipped.items():
        (installed / path).parent.mkdir(parents=True, exist_ok=True)
        (installed / path).write_bytes(data)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty-cache"))

    def no_draw(*args: object) -> None:
        raise AssertionError("the probe cases were drawn again")

    monkeypatch.setattr(probes, "draw", no_draw)
    got = probes.prepare(manifest, installed, manifest.labs, manifest.probe_seed)
    monkeypatch.undo()
    assert got is not None
    expected = probes.prepare(manifest, kit, manifest.labs, manifest.probe_seed)
    assert got.to_json() == expected.to_json()


PO = b"""msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"

msgid "Lab 13.1"
msgstr "\xe5\xae\x9e\xe9\xaa\x8c 13.1"
"""


def test_a_chapter_that_course_chapters_adds_is_in_the_site_and_its_wheel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Built with ``COURSE_CHAPTERS`` set, the site holds that root's chapters too, wherever
    their folders are, and the wheel carries each one's folder once, among the built-in
    chapters, where the browser finds it (its paths are written from its folder)."""
    from course.locale import compile_catalog

    folder = tmp_path / "chapters" / "ch13"  # the test chapter 12, outside the kit, renumbered
    shutil.copytree(kit_root() / "tests" / "chapters" / "ch12", folder)
    manifest = (folder / "chapter.toml").read_text("utf-8")
    (folder / "chapter.toml").write_text(manifest.replace('chapter = "12"', 'chapter = "13"', 1))
    (folder / "locale" / "zh" / "LC_MESSAGES" / "chapter.po").write_bytes(PO)
    built_in = available_chapters()
    monkeypatch.setenv("COURSE_CHAPTERS", str(folder.parent))
    chapters = lite.site_chapters()
    assert [m.chapter for m in chapters] == [*built_in, "13"]
    lite.lay_workspaces(tmp_path / "contents", ["en"], chapters)
    assert (tmp_path / "contents" / "ch13" / "en" / "pi_course" / "tokens.py").is_file()
    carried = lite.added_chapters(kit_root(), chapters)
    assert all(path.startswith("course/curricula/ch13/") for path in carried)
    for name in ("chapter.toml", "tokens.py", "starters/12-tokens.py", "probes.py"):
        assert carried[f"course/curricula/ch13/{name}"] == (folder / name).read_bytes(), name
    mo = carried["course/curricula/ch13/locale/zh/LC_MESSAGES/chapter.mo"]
    assert mo == compile_catalog(PO)
    assert not [path for path in lite.kit_sources(kit_root(), chapters) if "ch13" in path]


def test_a_chapter_the_kit_does_not_have_is_named_before_anything_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = tmp_path / "site"
    assert course_kit(["lite", str(site), "--chapter", "99", "--cache", str(tmp_path / "c")]) == 2
    assert "chapter 99" in capsys.readouterr().err
    assert not site.exists() and not (tmp_path / "c").exists()
