"""``course-kit lite``'s parts that need no registry: the lock, the wheels, the settings."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from course.harness.kit import kit_root
from course.tools import lite
from course.tools.maintainer import main as course_kit


def make_wheel(folder: Path, name: str, requires: list[str], files: list[str]) -> Path:
    """A minimal wheel: METADATA, RECORD and ``files`` (each holding its own name)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-1.0-py3-none-any.whl"
    info = f"{name}-1.0.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
    meta += "".join(f"Requires-Dist: {line}\n" for line in requires)
    with zipfile.ZipFile(path, "w") as archive:
        for file in files:
            archive.writestr(file, file)
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

    locale = tmp_path / "locale"
    shutil.copytree(kit_root() / "course" / "locale", locale)
    po = locale / "zh" / "LC_MESSAGES" / "course.po"
    source = po.read_bytes()
    (locale / "zh" / "LC_MESSAGES" / "course.mo").unlink(missing_ok=True)  # stale or absent
    lite.ship_compiled_catalogs(locale)
    assert not list(locale.rglob("*.po"))
    assert (locale / "zh" / "LC_MESSAGES" / "course.mo").read_bytes() == compile_catalog(source)


def test_the_kit_wheel_carries_what_grading_reads_beside_the_package(tmp_path: Path) -> None:
    """In the browser ``kit_root()`` is the installed package's parent: the starters and the
    focused tests must lie there, recorded in the wheel, for ``check()`` to grade."""
    sources = lite.kit_sources(kit_root())
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
