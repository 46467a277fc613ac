"""``course-kit lite``: the zero-install site (JupyterLite + Pyodide) from the package registries.

Everything the site runs is fetched at build time, from npm (the Pyodide core) and PyPI (the
pure-Python wheels), or built here (the kit's own wheel), and pre-solved into the Pyodide lock,
so the browser fetches nothing from anywhere but the site itself.
"""

from __future__ import annotations

import ast
import base64
import email.parser
import hashlib
import json
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from ..grading.verdict.probes import SHIPPED_SETS, kept_set_names, prepare
from ..harness.kit import kit_cache, kit_root
from ..harness.manifest import BUILT_IN_FOLDER, Manifest, available_chapters, load_manifest
from ..harness.pysource import parse
from ..harness.workspace import create_workspace
from ..locale import EDITIONS, compiled
from ..locale import gettext as _

ABSENT_STDLIB = (
    *("tkinter/", "_tkinter.pyi", "turtle.pyi", "distutils/", "lib2to3/"),
    *("_winapi.pyi", "winreg.pyi", "winsound.pyi", "msvcrt.pyi"),
)
"""Standard modules the browser's Python lacks (removed from 3.12+, or for Tk or Windows)."""
UNREAD_SESSIONS = ("large-session", "before-compaction")
"""The sample Pi sessions (``course.interop.pi_session_files``) the site's notebooks never read."""


@dataclass(frozen=True)
class LiteConfig:
    """What the site is made of: versions, the browser's Python, the wheels it preloads."""

    pyodide: str = "314.0.6"
    """npm ``pyodide``, the version ``jupyterlite-pyodide-kernel`` was made for."""
    python: str = "3.14"
    requirements: tuple[str, ...] = (
        # what the Pyodide kernel installs on start (see its initKernel), now preloaded
        "ipython", "jedi", "comm", "micropip",
        "ipywidgets", "pytest>=8.4", "hypothesis>=6.100",  # what the kit and notebooks import
    )  # fmt: skip
    left_out: tuple[str, ...] = (
        "widgetsnbextension", "jupyterlab-widgets",  # the front end is the site's lab extension
        "pexpect", "ptyprocess",  # a browser has no terminals to drive
        "watchfiles",  # checkpoint --watch: no wasm wheel, and no processes to watch with
        "babel",  # only `course-kit catalogs` compiles catalogs; the wheel ships the .mo files
    )  # fmt: skip
    kernel_wheels: tuple[str, ...] = ("piplite", "pyodide-kernel", "ipykernel")
    """The kernel's own shims, from its lab extension's ``static/pypi``."""
    pyodide_files: tuple[str, ...] = (
        "pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"
    )  # fmt: skip
    apps: tuple[str, ...] = ("lab",)
    trimmed: tuple[tuple[str, tuple[str, ...]], ...] = (
        (
            "jedi",
            (
                # its stubs of third-party libraries (3.5 MB): none of them is in the browser
                "jedi/third_party/typeshed/stubs/",
                "jedi/third_party/django-stubs/",
                # stubs of standard modules the browser's Python (Pyodide 3.14) does not have
                *(f"jedi/third_party/typeshed/stdlib/{name}" for name in ABSENT_STDLIB),
            ),
        ),
        (
            "hypothesis",
            tuple(  # extras for libraries the site does not have (each imports its library)
                f"hypothesis/extra/{name}"
                for name in ("django/", "pandas/", "numpy.py", "dateutil.py", "pytz.py")
                + ("redis.py", "lark.py", "dpcontracts.py", "codemods.py", "cli.py")
            ),
        ),
        # Lexers for 560 languages (1 MB); the browser's Python highlights only Python and what
        # IPython's own lexers and pytest import (``spared``). JupyterLab highlights in the page.
        ("pygments", ("pygments/lexers/",)),
        # per-terminal-emulator width tables (170 KB), loaded only when measuring text for a
        # named terminal program, of which the site has none (wcwidth then uses none)
        ("wcwidth", ("wcwidth/table_grapheme_overrides/_known_",)),
        # two of the kit's three sample Pi sessions (620 KB): no notebook reads them; the
        # importer's notebook reads damaged-line-session, which stays
        ("course", tuple(f"course/data/pi-sessions/{name}.jsonl.gz" for name in UNREAD_SESSIONS)),
    )
    """Files left out of a wheel, by project: the paths starting with one of these."""
    spared: tuple[str, ...] = tuple(
        f"pygments/lexers/{name}.py"
        for name in (
            "__init__",
            "_mapping",  # rewritten to name only the lexers kept (``pruned_lexer_map``)
            "python",  # IPython's tracebacks and ``?``, stack_data, pytest
            "diff",  # pytest imports it at start
            "special",  # ``text``, the lexer of last resort
            # ipython_pygments_lexers' lexers (IPython imports them at start) and theirs
            *("shell", "html", "javascript", "ruby", "perl", "markup", "css", "data", "jvm"),
            *("lisp", "lilypond", "_css_builtins", "_lilypond_builtins", "_scheme_builtins"),
        )
    )
    """Files kept although ``trimmed`` names their folder."""
    dropped: tuple[str, ...] = (
        *(f"build/fa-*.{suffix}" for suffix in ("eot", "svg", "ttf", "woff")),
        # one schema per plugin: the lab reads them all from build/schemas/all*.json
        "build/schemas/@*",
    )
    """What of the built site no current browser asks for: old fonts (each is there as woff2)."""
    unused_loaders: tuple[str, ...] = (
        # the terminal's (xterm.js and its addons, 480 KB): the site has no terminals
        r"Promise\.all\(\[([^\]]*)\]\);\w+=\w+\.Terminal,",
    )
    """The lab's loaders of what the site cannot use: the chunks only they ask for are left out."""
    icon: str = "lab/favicon.ico"
    icon_largest: int = 64
    """The tab's icon keeps its images up to this size (a tab shows 16 or 32 pixels, 64 on a
    dense screen); the 96 to 256 pixel ones are 285 KB."""

    def cache_key(self) -> str:
        """The part of the cache folder's name that changes with what is fetched."""
        text = json.dumps([self.pyodide, self.python, self.requirements, self.left_out])
        return hashlib.sha256(text.encode()).hexdigest()[:12]


CONFIG = LiteConfig()

EMSCRIPTEN = {
    "python_version": CONFIG.python,
    "python_full_version": f"{CONFIG.python}.2",
    "sys_platform": "emscripten",
    "platform_system": "Emscripten",
    "os_name": "posix",
    "platform_machine": "wasm32",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "extra": "",
}
"""The environment Pyodide's wheels are chosen for, to read each wheel's requirements."""


class LiteError(RuntimeError):
    """The site could not be built; the message says which step and why."""


@dataclass(frozen=True)
class Wheel:
    """One wheel's identity as the Pyodide lock states it."""

    name: str
    version: str
    file_name: str
    sha256: str
    imports: tuple[str, ...]
    requires: tuple[str, ...]


def read_wheel(path: Path) -> Wheel:
    """A wheel's name, version, hash, top-level imports and requirements (for Emscripten)."""
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = email.parser.BytesParser().parsebytes(archive.read(meta_name), headersonly=True)
    return Wheel(
        name=canonicalize_name(str(meta["Name"])),
        version=str(meta["Version"]),
        file_name=path.name,
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        imports=top_level_imports(names),
        requires=tuple(meta.get_all("Requires-Dist") or ()),
    )


def top_level_imports(names: Iterable[str]) -> tuple[str, ...]:
    """The importable top-level names of a wheel's files."""
    found = set()
    for name in names:
        head, _sep, rest = name.partition("/")
        if head.endswith((".dist-info", ".data")):
            continue
        if rest and rest.endswith(".py"):
            found.add(head)
        elif not rest and head.endswith(".py"):
            found.add(head.removesuffix(".py"))
    return tuple(sorted(found))


def depends(wheel: Wheel, present: set[str]) -> list[str]:
    """The wheel's requirements that apply in the browser and that the lock holds."""
    requirements = [Requirement(text) for text in wheel.requires]
    applying = [r for r in requirements if r.marker is None or r.marker.evaluate(EMSCRIPTEN)]
    return sorted({canonicalize_name(r.name) for r in applying} & present)


def lock(info: Mapping[str, Any], wheels: Sequence[Wheel]) -> dict[str, Any]:
    """A Pyodide lock holding exactly ``wheels``, each with its dependencies pre-solved."""
    present = {wheel.name for wheel in wheels}
    packages = {
        wheel.name: {
            "name": wheel.name,
            "version": wheel.version,
            "file_name": wheel.file_name,
            "install_dir": "site",
            "sha256": wheel.sha256,
            "package_type": "package",
            "imports": list(wheel.imports),
            "depends": depends(wheel, present),
            "unvendored_tests": False,
        }
        for wheel in sorted(wheels, key=lambda w: w.name)
    }
    return {"info": dict(info), "packages": packages}


def site_chapters() -> list[Manifest]:
    """The chapters the site holds: every chapter the kit has (its own, then those
    ``COURSE_CHAPTERS`` adds), in order."""
    return [load_manifest(chapter) for chapter in available_chapters()]


def chapter_folder(manifest: Manifest) -> str:
    """The site's folder of a chapter's workspaces (``chNN``), one per edition inside it."""
    return f"ch{manifest.chapter}"


def site_title(chapters: Sequence[Manifest]) -> str:
    """The lab's name: its chapters' titles."""
    return " · ".join(manifest.title for manifest in chapters)


def site_config(package_names: Iterable[str], title: str = "") -> dict[str, Any]:
    """``jupyter-lite.json`` for the site: the kernel loads the local Pyodide, every package
    preloaded, nothing from PyPI."""
    kernel_settings = {
        "pyodideUrl": "./static/pyodide/pyodide.mjs",
        "disablePyPIFallback": True,
        "pipliteUrls": [],
        "loadPyodideOptions": {"packages": sorted(package_names)},
    }
    return {
        "jupyter-lite-schema-version": 0,
        "jupyter-config-data": {
            "appName": title or "JupyterLite",
            "exposeAppInBrowser": "true",  # window.jupyterapp, for the browser test and bench
            "litePluginSettings": {"@jupyterlite/pyodide-kernel-extension:kernel": kernel_settings},
            "disabledExtensions": ["@jupyterlab/apputils-extension:announcements"],
        },
    }


def run(command: Sequence[str], step: str, cwd: Path | None = None) -> None:
    """Run a build step's command; a failure is a ``LiteError`` ending with its output."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise LiteError(_("{step} failed:\n{output}").format(step=step, output=tail))


def fetch_pyodide(cache: Path, config: LiteConfig = CONFIG) -> Path:
    """The Pyodide core from npm, unpacked once into ``cache``; returns its folder."""
    folder = cache / f"pyodide-{config.pyodide}"
    if (folder / "pyodide-lock.json").is_file():
        return folder
    with tempfile.TemporaryDirectory(dir=cache) as scratch:
        npm = ["npm", "pack", f"pyodide@{config.pyodide}", "--pack-destination", scratch]
        run(npm, _("npm pack pyodide"))
        tarball = next(Path(scratch).glob("pyodide-*.tgz"))
        unpacked = Path(scratch) / "unpacked"
        with tarfile.open(tarball) as archive:
            archive.extractall(unpacked, filter="data")
        unpacked.joinpath("package").rename(folder)
    return folder


def fetch_wheels(cache: Path, config: LiteConfig = CONFIG) -> Path:
    """The pure-Python wheels the kernel and the kit need, downloaded once into ``cache``."""
    folder = cache / "wheels"
    if (folder / ".complete").is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(folder)]
    pure = ["--python-version", config.python, "--only-binary=:all:", "--platform", "any"]
    run([*pip, *pure, "--implementation", "py", *config.requirements], _("pip download"))
    (folder / ".complete").touch()
    return folder


def build_kit_wheel(kit: Path, into: Path, chapters: Sequence[Manifest]) -> Path:
    """The kit's own wheel, built from a copy of its package (the source tree stays clean),
    with what grading reads beside the package for ``chapters``."""
    source = into / "source"
    shutil.copytree(kit / "course", source / "course", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(kit / name, source / name)
    ship_compiled_catalogs(source / "course")
    pip = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"]
    run([*pip, "--wheel-dir", str(into), str(source)], _("building the kit's wheel"))
    wheel = next(into.glob("course-*.whl"))
    carried = kit_sources(kit, chapters) | added_chapters(kit, chapters)
    add_to_wheel(wheel, carried | drawn_probe_sets(kit, chapters))
    return wheel


BUILT_IN = f"{BUILT_IN_FOLDER}/"
"""Where the kit's own chapters are (``Manifest.folder``), and where the browser finds one."""


def added_chapters(kit: Path, chapters: Sequence[Manifest]) -> dict[str, bytes]:
    """The folders of the chapters ``COURSE_CHAPTERS`` adds, wherever they are, for the wheel:
    among the built-in chapters, where the browser's kernel finds them (a browser has no
    environment to name a folder in; their paths are written from their folders), their
    catalogs compiled as the package's are (``ship_compiled_catalogs``)."""
    files: dict[str, bytes] = {}
    for manifest in chapters:
        if manifest.folder.startswith(BUILT_IN):
            continue
        folder = Path(manifest.folder)
        for path in sorted(folder.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".mo":
                continue
            inside = path.relative_to(folder).as_posix()
            data = compiled(path, path.with_suffix(".mo")) if path.suffix == ".po" else None
            if data is not None:
                files[f"{BUILT_IN}{folder.name}/{inside[: -len('.po')]}.mo"] = data
            elif path.suffix != ".po":
                files[f"{BUILT_IN}{folder.name}/{inside}"] = path.read_bytes()
    return files


def kit_sources(kit: Path, chapters: Sequence[Manifest]) -> dict[str, bytes]:
    """The kit's files outside the package that grading reads (each chapter's starters, focused
    tests and their data): in the browser they lie beside the installed package, where
    ``kit_root`` looks, so ``check()`` grades there as on a computer. A chapter's own folder
    outside the package travels with ``added_chapters``."""
    paths = {
        path for manifest in chapters for f in manifest.files for path in (f.starter, f.reference)
    }
    return {
        path: (kit / path).read_bytes()
        for path in sorted(paths)
        if path.split("/")[0] != "course" and not Path(path).is_absolute()
    }


def drawn_probe_sets(kit: Path, chapters: Sequence[Manifest]) -> dict[str, bytes]:
    """Each chapter's probe set for the seed ``check()`` draws with, as ``prepare`` keeps it,
    for the wheel to carry beside the package (``SHIPPED_SETS``): drawn here once, so that no
    learner's first check in the browser draws it (tens of seconds there)."""
    files = {}
    for manifest in chapters:
        if manifest.probes is None:
            continue
        prepare(manifest, kit, manifest.labs, manifest.probe_seed)
        for name in kept_set_names(manifest, kit, manifest.probe_seed):
            kept = kit_cache() / name
            if not kept.is_file():
                raise LiteError(_("{path}: the probe set drawn is not there").format(path=kept))
            files[f"{SHIPPED_SETS}/{name}"] = kept.read_bytes()
    return files


def record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def add_to_wheel(wheel: Path, files: Mapping[str, bytes]) -> None:
    """Add ``files`` at the root of ``wheel``, each recorded in its ``RECORD``."""
    with zipfile.ZipFile(wheel) as archive:
        entries = {info.filename: archive.read(info) for info in archive.infolist()}
    record = next(name for name in entries if name.endswith(".dist-info/RECORD"))
    lines = entries[record].decode("utf-8").splitlines()
    for path, data in files.items():
        lines.append(record_line(path, data))
        entries[path] = data
    entries[record] = ("\n".join(lines) + "\n").encode("utf-8")
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)


def ship_compiled_catalogs(package: Path) -> None:
    """Leave each catalog's compiled ``.mo`` in the copy of the package (the kit's and each
    chapter's) and take its ``.po`` out: in the browser the kit must not compile a catalog (that
    needs Babel), and a wheel's unpacked files keep no order of modification times to say the
    ``.mo`` is current."""
    for po in sorted(package.glob("**/locale/*/LC_MESSAGES/*.po")):
        data = compiled(po, po.with_suffix(".mo"))
        if data is not None:
            po.with_suffix(".mo").write_bytes(data)
            po.unlink()


def chosen_wheels(folders: Iterable[Path], config: LiteConfig = CONFIG) -> list[Path]:
    """One wheel per project from ``folders`` (the first found wins), minus ``left_out``."""
    chosen: dict[str, Path] = {}
    skip = {canonicalize_name(name) for name in config.left_out}
    for folder in folders:
        for path in sorted(folder.glob("*.whl")):
            name = wheel_project(path)
            if name not in skip and name not in chosen:
                chosen[name] = path
    return list(chosen.values())


LEXER_MAP = "pygments/lexers/_mapping.py"


def pruned_lexer_map(text: str, kept: Iterable[str]) -> str:
    """Pygments' lexer map naming only the lexers whose modules are among the ``kept`` files:
    looking up any other then says ``ClassNotFound``, as for an unknown language, rather than
    failing to import its module."""
    [table] = [
        node.value
        for node in parse(text).body
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "LEXERS"
    ]
    files = set(kept)
    lexers = {
        name: entry
        for name, entry in ast.literal_eval(table).items()
        if entry[0].replace(".", "/") + ".py" in files
    }
    lines = "".join(f"    {name!r}: {entry!r},\n" for name, entry in lexers.items())
    return f"# The lexers course-kit lite keeps.\n\nLEXERS = {{\n{lines}}}\n"


def trim_wheel(path: Path, prefixes: Sequence[str], into: Path, spared: Sequence[str] = ()) -> Path:
    """A copy of the wheel at ``path`` in ``into`` without the files under ``prefixes`` (but
    with those in ``spared``); Pygments' lexer map names only the lexers kept."""
    target = into / path.name
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(target, "w") as copy:
        kept = [
            item
            for item in source.infolist()
            if item.filename in spared or not item.filename.startswith(tuple(prefixes))
        ]
        names = {item.filename for item in kept}
        edited = {}
        if LEXER_MAP in names:
            text = source.read(LEXER_MAP).decode("utf-8")
            edited[LEXER_MAP] = pruned_lexer_map(text, names).encode("utf-8")
        for item in kept:
            data = edited.get(item.filename) or source.read(item)
            if item.filename.endswith(".dist-info/RECORD"):
                lines = data.decode("utf-8").splitlines()
                data = "".join(
                    (record_line(name, edited[name]) if name in edited else line) + "\n"
                    for line in lines
                    if (name := line.rpartition(",")[0].rpartition(",")[0]) in names
                    or not name.startswith(tuple(prefixes))
                ).encode()
            copy.writestr(item, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    return target


def trimmed(wheels: Sequence[Path], into: Path, config: LiteConfig = CONFIG) -> list[Path]:
    """``wheels``, with the ones ``config.trimmed`` names replaced by trimmed copies."""
    rules = dict(config.trimmed)
    into.mkdir(parents=True, exist_ok=True)
    return [
        trim_wheel(path, rules[name], into, config.spared)
        if (name := wheel_project(path)) in rules
        else path
        for path in wheels
    ]


def wheel_project(path: Path) -> str:
    return canonicalize_name(path.name.split("-")[0])


def kernel_shims(into: Path, config: LiteConfig = CONFIG) -> Path:
    """The kernel's own wheels (piplite, pyodide-kernel, the ipykernel shim), copied ``into``
    from its lab extension, as installed beside this Python."""
    found = Path(sys.prefix, "share/jupyter/labextensions/@jupyterlite/pyodide-kernel-extension")
    if not found.is_dir():
        missing = _("{path} is missing: install the lite tools with `pip install -e .[lite]`")
        raise LiteError(missing.format(path=found))
    pypi = found / "static" / "pypi"
    wanted = {canonicalize_name(name) for name in config.kernel_wheels}
    into.mkdir(parents=True, exist_ok=True)
    for path in pypi.glob("*.whl"):
        if wheel_project(path) in wanted:
            shutil.copy2(path, into / path.name)
    return into


def lay_workspaces(contents: Path, editions: Sequence[str], chapters: Sequence[Manifest]) -> None:
    """A fresh practice workspace per chapter and edition (``chNN/en/``, ``chNN/zh/``…) of the
    editions the chapter has, without the files its manifest calls ``optional`` (a large probe
    case file, say, whose copy the wheel carries among the kit's files and which the focused
    tests read when the workspace has none: the lab serves a ``.json`` file parsed, so the
    kernel could not read it anyway); ``checkpoint --roster`` takes no note of a saved zip
    lacking it."""
    kit = kit_root()
    for manifest in chapters:
        for edition in [edition for edition in editions if edition in manifest.notebooks]:
            workspace = contents / chapter_folder(manifest) / edition
            create_workspace(manifest, kit, workspace, edition)
            for file in manifest.files:
                if file.optional:
                    (workspace / file.path).unlink(missing_ok=True)


def stage_pyodide(lite_dir: Path, core: Path, wheels: Sequence[Path]) -> list[str]:
    """Lay the Pyodide core, the wheels and their lock where the build copies them from."""
    target = lite_dir / "static" / "pyodide"
    target.mkdir(parents=True)
    for name in CONFIG.pyodide_files:
        shutil.copy2(core / name, target / name)
    for wheel in wheels:
        shutil.copy2(wheel, target / wheel.name)
    info = json.loads((core / "pyodide-lock.json").read_text(encoding="utf-8"))["info"]
    the_lock = lock(info, [read_wheel(path) for path in wheels])
    (target / "pyodide-lock.json").write_text(json.dumps(the_lock, indent=1), encoding="utf-8")
    return list(the_lock["packages"])


def build(
    out: Path, editions: Sequence[str], cache: Path, chapters: Sequence[Manifest] | None = None
) -> Path:
    """Build the site of ``chapters`` (default: every chapter the kit has) into ``out`` (which
    must not exist yet, or be empty)."""
    chapters = site_chapters() if chapters is None else chapters
    if out.exists() and any(out.iterdir()):
        raise LiteError(_("{path}: exists and is not empty").format(path=out))
    cache = cache / f"lite-{CONFIG.cache_key()}"
    cache.mkdir(parents=True, exist_ok=True)
    core = fetch_pyodide(cache)
    downloaded = fetch_wheels(cache)
    with tempfile.TemporaryDirectory(prefix="course-lite-") as scratch:
        base = Path(scratch)
        kit_wheel = build_kit_wheel(kit_root(), base / "kit", chapters)
        wheels = chosen_wheels([kit_wheel.parent, kernel_shims(base / "shims"), downloaded])
        wheels = trimmed(wheels, base / "trimmed")
        lite_dir, contents = base / "lite", base / "contents"
        names = stage_pyodide(lite_dir, core, wheels)
        config = json.dumps(site_config(names, site_title(chapters)), indent=1)
        (lite_dir / "jupyter-lite.json").write_text(config, "utf-8")
        lay_workspaces(contents, editions, chapters)
        command = [sys.executable, "-m", "jupyterlite_core", "build"]
        options = [
            "--lite-dir", str(lite_dir),
            "--output-dir", str(out.resolve()),
            "--contents", str(contents),
            "--no-sourcemaps",
            "--no-unused-shared-packages",
            "--ContentsManager.allow_hidden=True",
            *[f"--apps={app}" for app in CONFIG.apps],
        ]  # fmt: skip
        run([*command, *options], _("jupyter lite build"), cwd=lite_dir)
    drop_unused(out)
    return out


def drop_unused(out: Path, config: LiteConfig = CONFIG) -> None:
    """Take out of the built site what ``config.dropped`` names; shrink its tab icon."""
    for pattern in config.dropped:
        for path in out.glob(pattern):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    build = {path.name: path.read_text("utf-8") for path in (out / "build").glob("*.js")}
    for name in unused_chunks(build, config.unused_loaders):
        (out / "build" / name).unlink()
    icon = out / config.icon
    icon.write_bytes(small_icon(icon.read_bytes(), config.icon_largest))


CHUNK_ASKED = re.compile(r"\.e\((\d+)\)")
"""How the lab's scripts ask for a chunk by its id (``<id>.<hash>.js``)."""


def unused_chunks(scripts: Mapping[str, str], loaders: Sequence[str]) -> list[str]:
    """The chunk files among ``scripts`` (the lab's, text by file name) that only the
    ``loaders`` (patterns whose first group lists the chunks they load) ask for."""
    asked = Counter(id for text in scripts.values() for id in CHUNK_ASKED.findall(text))
    loaded = {
        id
        for text in scripts.values()
        for pattern in loaders
        for match in re.finditer(pattern, text)
        for id in CHUNK_ASKED.findall(match[1])
    }
    return sorted(
        name for name in scripts if (id := name.split(".")[0]) in loaded and asked[id] == 1
    )


def small_icon(data: bytes, largest: int) -> bytes:
    """An ``.ico`` file's bytes with only its images of at most ``largest`` pixels."""
    _reserved, kind, count = struct.unpack_from("<HHH", data)
    entries = [struct.unpack_from("<BBBBHHII", data, 6 + 16 * n) for n in range(count)]
    kept = [entry for entry in entries if 0 < entry[0] <= largest]  # a width of 0 is 256
    header = struct.pack("<HHH", 0, kind, len(kept))
    offset = len(header) + 16 * len(kept)
    table, images = b"", b""
    for *head, size, start in kept:
        table += struct.pack("<BBBBHHII", *head, size, offset + len(images))
        images += data[start : start + size]
    return header + table + images


def site_size(out: Path) -> int:
    return sum(path.stat().st_size for path in out.rglob("*") if path.is_file())


def main(out: Path, edition: str, cache: Path | None, chapters: Sequence[str] | None = None) -> int:
    editions = EDITIONS if edition == "both" else (edition,)
    chosen = [load_manifest(chapter) for chapter in chapters] if chapters else site_chapters()
    build(out, editions, cache or kit_cache(), chosen)
    built = _("built the site in {path} ({size:.1f} MB); serve it with any static web server")
    print(built.format(path=out, size=site_size(out) / 1e6))
    return 0
