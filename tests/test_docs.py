"""Every file the code and the docs name is in this repository: docstrings, comments and the
Markdown docs cite documents and modules by path, and a path that moved or never shipped (a
design note kept outside the repository) leaves the reader with nothing to open."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# repository paths: a top-level folder of ours, then a file with an extension or a folder/
REPO_PATH = re.compile(
    r"(?<![\w/.:-])((?:monitor|workers|tests|bench|dashboards|docs|alembic|\.ci)/"
    r"(?:[\w./-]*\.[A-Za-z]\w*\b|[\w./-]*/))"
)
MARKDOWN = re.compile(r"(?<![\w/.:-])([\w./-]*[A-Za-z_]\.md)\b")
OUTSIDE = re.compile(r"\.\./shared|(?<![\w.])shared/")


def tracked() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [ROOT / name for name in listed if (ROOT / name).is_file()]


def readable(files: list[Path]) -> list[Path]:
    return [
        f
        for f in files
        if f.suffix in {".py", ".md", ".toml", ".yml", ".yaml", ".j2", ".ini", ".txt", ""}
        and f.name != Path(__file__).name
        and "fixtures" not in f.parts
    ]


def resolves(name: str, where: Path, files: set[Path], basenames: dict[str, int]) -> bool:
    name = name.rstrip(".")
    candidates = [ROOT / name, where.parent / name]
    if any(c.resolve() in files or c.is_dir() for c in candidates):
        return True
    return "/" not in name and basenames.get(name, 0) == 1  # a unique name, e.g. "DESIGN.md"


def unresolved(paths: list[Path]) -> list[str]:
    files = {p.resolve() for p in tracked()}
    basenames: dict[str, int] = {}
    for f in files:
        basenames[f.name] = basenames.get(f.name, 0) + 1
    found = []
    for path in paths:
        text = path.read_text(errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{number}"
            if OUTSIDE.search(line):
                found.append(f"{where}: names a file outside the repository: {line.strip()}")
            for name in REPO_PATH.findall(line) + MARKDOWN.findall(line):
                if "*" in name or ("<" in line and ">" in line and "<" in name):
                    continue
                if not resolves(name, path, files, basenames):
                    found.append(f"{where}: {name} is not in the repository")
    return found


def test_every_file_named_in_the_code_and_the_docs_is_in_the_repository() -> None:
    assert unresolved(readable(tracked())) == []


def test_the_check_sees_a_missing_document_and_a_file_outside(tmp_path: Path) -> None:
    sample = tmp_path / "notes.md"
    sample.write_text("See STYLE_GUIDE.md, monitor/feeds/_common.py and ../shared/DESIGN.md.\n")
    problems = [line.partition(": ")[2] for line in unresolved([sample])]
    assert problems == [
        "names a file outside the repository: " + sample.read_text().strip(),
        "monitor/feeds/_common.py is not in the repository",
        "STYLE_GUIDE.md is not in the repository",
        "../shared/DESIGN.md is not in the repository",
    ]


def test_every_package_data_glob_ships_a_file() -> None:
    """``[tool.setuptools.package-data]`` globs that match nothing ship nothing, silently."""
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    empty = [
        f"{package}: {glob}"
        for package, globs in data["package-data"].items()
        for glob in globs
        if not list((ROOT / package).glob(glob))
    ]
    assert empty == []
