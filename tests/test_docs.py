"""Every file the code and the docs name is in this repository: docstrings, comments and the
Markdown docs cite documents and modules by path, and a path that moved or never shipped (a
design note kept outside the repository) leaves the reader with nothing to open."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import click

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


# ---------------------------------------------------------------------- the command line

COMMAND_LINE = "## Command line (a contract: tests and outside checks drive it)"


def documented_commands(design: str) -> list[str]:
    """docs/DESIGN.md's command list: one entry per ``slamon …`` (a line may hold several,
    ``slamon token list | slamon token revoke NAME``; an indented line that is not a comment
    continues the one above), comments dropped."""
    block = design.split(COMMAND_LINE, 1)[1].split("```\n", 2)[1]
    entries: list[str] = []
    for line in block.splitlines():
        code = re.sub(r"\s+#\s.*$", "", line)
        if not code.strip():
            continue
        if code.startswith("slamon "):
            entries += re.split(r"\s\|\s(?=slamon )", code)
        else:
            assert entries, f"a continuation with nothing to continue: {line!r}"
            entries[-1] += " " + code.strip()
    return entries


def cli_commands() -> dict[str, click.Command]:
    """Every command a user can run, by its words (``feeds parse``): the leaves of slamon's
    command groups, hidden ones (``preflight``, the supervisor's own) left out."""
    from monitor.cli import cli

    found: dict[str, click.Command] = {}

    def walk(group: click.Group, words: list[str]) -> None:
        with click.Context(group) as ctx:
            for name in group.list_commands(ctx):
                command = group.get_command(ctx, name)
                assert command is not None, name
                if command.hidden:
                    continue
                if isinstance(command, click.Group):
                    walk(command, [*words, name])
                else:
                    found[" ".join([*words, name])] = command

    walk(cli, [])
    return found


def resolve(entry: str, commands: dict[str, click.Command]) -> tuple[str, list[str]]:
    """The command an entry names (its longest run of leading words that is a command) and
    the options it names."""
    words = entry.split()[1:]
    names = [" ".join(words[:n]) for n in range(len(words), 0, -1)]
    name = next((n for n in names if n in commands), "")
    return name, re.findall(r"(?<![\w-])--[a-z][\w-]*", entry)


def command_line_problems(design: str) -> list[str]:
    commands = cli_commands()
    problems = []
    listed = set()
    for entry in documented_commands(design):
        name, options = resolve(entry, commands)
        if not name:
            problems.append(f"DESIGN.md lists a command the CLI does not have: {entry}")
            continue
        listed.add(name)
        known = {o for p in commands[name].params for o in getattr(p, "opts", [])}
        problems += [
            f"slamon {name} has no {o} (DESIGN.md: {entry})" for o in options if o not in known
        ]
    problems += [f"DESIGN.md does not list slamon {n}" for n in sorted(set(commands) - listed)]
    return problems


def test_design_lists_every_command_of_the_cli_and_only_those() -> None:
    assert command_line_problems((ROOT / "docs" / "DESIGN.md").read_text()) == []


def test_the_command_line_check_sees_a_missing_a_made_up_and_a_wrong_option() -> None:
    design = (ROOT / "docs" / "DESIGN.md").read_text()
    block = design.split(COMMAND_LINE, 1)[1].split("```\n", 2)[1]
    changed = [line for line in block.splitlines() if not line.startswith("slamon migrate")]
    changed.append("slamon feeds purge --all")
    changed = [line.replace("--path .env", "--env-file .env") for line in changed]
    edited = design.replace(block, "\n".join(changed) + "\n")
    assert command_line_problems(edited) == [
        "slamon secrets init has no --env-file (DESIGN.md: slamon secrets init [--env-file .env])",
        "DESIGN.md lists a command the CLI does not have: slamon feeds purge --all",
        "DESIGN.md does not list slamon migrate",
    ]


# ---------------------------------------------------------------------- links to sections

LINK = re.compile(r"\]\(([\w./-]*\.md)?#([\w-]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def broken_anchors(paths: list[Path]) -> list[str]:
    found = []
    for path in paths:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for target, anchor in LINK.findall(line):
                page = (path.parent / target) if target else path
                headings = re.findall(r"^#+ (.+)$", page.read_text(), re.M) if page.exists() else []
                if anchor not in {slug(h) for h in headings}:
                    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                    found.append(f"{where}:{number}: no #{anchor} in {page.name}")
    return found


def test_every_link_to_a_section_finds_its_heading() -> None:
    markdown = [f for f in readable(tracked()) if f.suffix == ".md"]
    assert broken_anchors(markdown) == []


def test_the_anchor_check_sees_a_heading_that_moved(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\n## What `slamon run` prints\n")
    (tmp_path / "b.md").write_text(
        "[ok](a.md#what-slamon-run-prints) [moved](a.md#alerts-and-webhooks) [self](#b)\n\n# B\n"
    )
    assert [p.split(": ", 1)[1] for p in broken_anchors([tmp_path / "b.md"])] == [
        "no #alerts-and-webhooks in a.md"
    ]


# ---------------------------------------------------------------------- the YAML reference


def reference_fields(reference: str) -> dict[str, set[str]]:
    """docs/configuration.md's YAML table: section -> the fields its row names (what is in
    parentheses or braces, the defaults and the nested fields, left out)."""
    table = reference.split("## The YAML file", 1)[1]
    rows: dict[str, set[str]] = {}
    for row in table.splitlines():
        cells = row.split(" | ")
        if not row.startswith("| `") or len(cells) != 2:
            continue
        section = cells[0].strip("| `").removesuffix("[]")
        cell = re.sub(r"\{[^}]*\}", "", re.sub(r"\([^()]*\)", "", cells[1]))
        rows[section] = set(re.findall(r"`(\w+)(?:\[\])? ?`", cell))
    return rows


def config_fields() -> dict[str, set[str]]:
    """Every field of every section the config takes, from its models."""
    from pydantic import BaseModel

    from monitor.config.models import Config
    from monitor.sla.policy_config import _DEFAULTS, _REQUIRED

    fields: dict[str, set[str]] = {}
    for name, field in Config.model_fields.items():
        annotation = field.annotation
        model = getattr(annotation, "__args__", (annotation,))[0]
        if isinstance(model, type) and issubclass(model, BaseModel):
            fields[name] = {f.alias or n for n, f in model.model_fields.items()}
    fields["sla_policies"] = {*_REQUIRED, *_DEFAULTS}
    return fields


def test_the_configuration_reference_lists_every_field_of_the_config() -> None:
    reference = (ROOT / "docs" / "configuration.md").read_text()
    assert reference_fields(reference) == config_fields()


# ---------------------------------------------------------------------- the REST API


PARAMETER = re.compile(r"\{\w+\}")


def documented_routes(reference: str) -> set[str]:
    """docs/api.md's route table as ``METHOD /path`` (``{name}`` as ``{}``, queries dropped):
    ``GET/POST /api/v1/silences`` is two, and ``/incidents`` after ``GET /api/v1/providers``
    is ``GET /api/v1/incidents``."""
    routes = set()
    for row in reference.split("| route | scope | what |", 1)[1].splitlines()[2:]:
        if not row.startswith("| `"):
            break
        methods, prefix = [], ""
        for piece in re.findall(r"`([^`]+)`", row.split(" | ")[0]):
            if " " in piece:
                verbs, path = piece.split(" ", 1)
                methods = verbs.split("/")
                prefix = path.rsplit("/", 1)[0]
            else:
                path = prefix + piece
            path = PARAMETER.sub("{}", path.split("?", 1)[0])
            routes |= {f"{method} {path}" for method in methods}
    return routes


def served_routes() -> set[str]:
    """Every route under /api/v1 that the API's OpenAPI schema declares."""
    from monitor.api.app import create_app
    from monitor.settings import Settings

    schema = create_app(Settings(database_url="sqlite://")).openapi()
    return {
        f"{method.upper()} {PARAMETER.sub('{}', path)}"
        for path, operations in schema["paths"].items()
        if path.startswith("/api/v1/")
        for method in operations
    }


def test_the_api_reference_lists_every_route_the_api_serves() -> None:
    assert documented_routes((ROOT / "docs" / "api.md").read_text()) == served_routes()


def test_the_api_reference_names_every_metric_slamon_serves(tmp_path: Path) -> None:
    """What ``GET /metrics`` serves on a fresh database (every family is there, without
    samples) is what docs/api.md names (a counter by its sample's name, with ``_total``)."""
    from monitor.api.app import create_app
    from monitor.db.engine import make_engine
    from monitor.db.migrate import upgrade
    from monitor.settings import Settings
    from tests.support import ApiClient

    url = f"sqlite:///{tmp_path / 'slamon.db'}"
    engine = make_engine(url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    settings = Settings(database_url=url, config=tmp_path / "none.yaml", state_dir=tmp_path)
    with ApiClient(create_app(settings)) as client:
        text = client.get("/metrics").text
    served = set(re.findall(r"^# TYPE (slamon_\w+) \w+$", text, re.M))
    documented = set(re.findall(r"`(slamon_\w+)`", (ROOT / "docs" / "api.md").read_text()))
    assert served
    assert documented == served


def test_the_operations_guide_names_every_console_event_word() -> None:
    from monitor.events.words import WORDS

    guide = (ROOT / "docs" / "operations.md").read_text()
    words = re.split(r"\sA feed,\s", guide.split("The words: ", 1)[1], maxsplit=1)[0]
    named = {" ".join(w.split()) for w in re.findall(r"`([a-z]+(?:\s+[a-z]+)+)`", words)}
    assert named == set(WORDS)
