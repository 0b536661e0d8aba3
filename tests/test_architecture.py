"""The layer order docs/architecture.md documents is the one the code keeps.

The order is read from the document itself (its ``layers`` block), so the prose and the check
cannot drift apart. Every import counts, including those inside functions and under
``TYPE_CHECKING``: a lazy import still makes the importer depend on what it imports.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("monitor", "workers")


def documented_layers(text: str) -> list[tuple[str, ...]]:
    """The ``layers`` fenced block, top layer first; ``|`` separates independent peers."""
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    assert block, f"{DOC.name} has no ```layers block"
    rows = [line.split("#")[0].strip() for line in block.group(1).splitlines()]
    return [tuple(part.strip() for part in row.split("|")) for row in rows if row]


def as_grimp(layers: Iterable[tuple[str, ...]]) -> list[grimp.Layer]:
    return [grimp.Layer(*modules, independent=True) for modules in layers]


def cycles(imports: Mapping[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in imports.get(module, ()):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for module in sorted(imports):
            if module not in index:
                visit(module)
    finally:  # the API's "nested too deeply" check relies on the default limit
        sys.setrecursionlimit(limit)
    return found


def upward_imports(graph: grimp.ImportGraph, layers: list[tuple[str, ...]]) -> list[str]:
    """One line per import that runs from a lower layer (or a peer) to a higher one."""
    illegal = graph.find_illegal_dependencies_for_layers(layers=as_grimp(layers))
    lines = []
    for dependency in sorted(illegal, key=lambda d: (d.importer, d.imported)):
        for route in dependency.routes:
            chain = " -> ".join([*route.heads, *route.middle, *route.tails])
            lines.append(f"{dependency.importer} -> {dependency.imported}: {chain}")
    return lines


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, cache_dir=None)


@pytest.fixture(scope="module")
def layers() -> list[tuple[str, ...]]:
    return documented_layers(DOC.read_text())


def module_imports(graph: grimp.ImportGraph) -> dict[str, set[str]]:
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def test_no_import_runs_upward(graph: grimp.ImportGraph, layers: list[tuple[str, ...]]) -> None:
    assert upward_imports(graph, layers) == []


def test_no_modules_import_each_other_in_a_cycle(graph: grimp.ImportGraph) -> None:
    assert cycles(module_imports(graph)) == []


def test_every_package_has_its_place_in_the_order(
    graph: grimp.ImportGraph, layers: list[tuple[str, ...]]
) -> None:
    """A new top-level module or package must be placed, or it escapes the check."""
    placed = {m for layer in layers for m in layer}
    top = {m for m in graph.modules if m.startswith("monitor.") and m.count(".") == 1}
    unplaced = sorted(top - placed) + sorted(set(PACKAGES[1:]) - placed)
    assert unplaced == []


def test_the_check_sees_an_upward_import_and_a_cycle(
    graph: grimp.ImportGraph, layers: list[tuple[str, ...]]
) -> None:
    """The checks above can fail: the SLA floor importing the API is reported, and so are
    two SLA modules importing each other."""
    copy = grimp.build_graph(*PACKAGES, cache_dir=None)
    copy.add_import(importer="monitor.sla.math", imported="monitor.api.app")
    assert any(
        line.startswith("monitor.sla -> monitor.api") for line in upward_imports(copy, layers)
    )
    copy = grimp.build_graph(*PACKAGES, cache_dir=None)
    copy.add_import(importer="monitor.sla.intervals", imported="monitor.sla.math")
    [cycle] = cycles(module_imports(copy))
    assert {"monitor.sla.intervals", "monitor.sla.math"} <= set(cycle)


def test_peers_in_one_layer_are_independent(layers: list[tuple[str, ...]]) -> None:
    """Feeds and probes are peers: neither may import the other."""
    copy = grimp.build_graph(*PACKAGES, cache_dir=None)
    copy.add_import(importer="monitor.probes.rollup", imported="monitor.feeds.store")
    assert any("monitor.probes -> monitor.feeds" in line for line in upward_imports(copy, layers))


def python_modules(root: Path, package: str) -> set[str]:
    """The dotted name of every Python file under ``package``'s folder."""
    names = set()
    for path in (root / package).rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_the_check_sees_every_python_file(graph: grimp.ImportGraph) -> None:
    """A folder without ``__init__.py`` is invisible to grimp, and its imports escape the layer
    check (as Alembic's migrations once did: Alembic loads them by path, not as modules)."""
    files = set().union(*(python_modules(ROOT, package) for package in PACKAGES))
    assert sorted(files - set(graph.modules)) == []


def test_the_check_sees_the_migrations_and_their_imports(
    graph: grimp.ImportGraph, layers: list[tuple[str, ...]]
) -> None:
    """The migrations are part of ``monitor.db``: Alembic's env.py and every revision are in the
    graph, and env.py reading the settings (a peer of ``monitor.db``) would be reported."""
    versions = ROOT / "monitor" / "db" / "migrations" / "versions"
    revisions = {p.stem for p in versions.glob("*.py") if p.stem != "__init__"}
    assert len(revisions) >= 8
    expected = {"monitor.db.migrations.env"} | {
        f"monitor.db.migrations.versions.{name}" for name in revisions
    }
    assert sorted(expected - set(graph.modules)) == []
    copy = grimp.build_graph(*PACKAGES, cache_dir=None)
    copy.add_import(importer="monitor.db.migrations.env", imported="monitor.settings")
    assert any(
        line.startswith("monitor.db -> monitor.settings") for line in upward_imports(copy, layers)
    )


# --------------------------------------------------------------------------- the read model

# The tables that hold what happened: only monitor/history reads them for a surface; the
# modules below write them (and read what they are about to change), each for its one reason.
TIMELINE_MODELS = frozenset(
    {
        "Outage",
        "ObservedWindow",
        "Heartbeat",
        "Incident",
        "IncidentUpdate",
        "AccountEventRecord",
        "Notice",
    }
)
TIMELINE_WRITERS = {
    "monitor.db.models": "defines them",
    "monitor.probes.quorum": "opens and closes outages from the quorum's verdicts",
    "monitor.probes.record": "grows the observed windows each known result vouches for",
    "monitor.probes.kinds.heartbeat": "judges what a training job pushed into a probe result",
    "monitor.probes.gpus.pushed": "judges an agent's pushed GPU readings into a probe result",
    "monitor.feeds.store": "upserts the incidents a feed lists",
    "monitor.api.heartbeats": "stores what a job or an agent pushes",
    "monitor.reports.backfill": "imports outages and observed windows from another monitor",
    "monitor.fleet.account_store": "stores what a provider tells the account, polled or pushed",
    "monitor.notices": "posts and ends an operator's notices (and the windows they hold)",
    "monitor.fleet.sweep": (
        "ends a life: drops the outage the end itself opened, closes one the cloud saw running"
    ),
}


def timeline_readers(modules: Mapping[str, str]) -> dict[str, set[str]]:
    """Each module (outside monitor.history and the writers) that imports a timeline model from
    monitor.db.models, and which ones; ``modules`` maps module names to their source."""
    import ast

    found: dict[str, set[str]] = {}
    for name, source in modules.items():
        if name.startswith("monitor.history") or name in TIMELINE_WRITERS:
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.module == "monitor.db.models":
                used = {alias.name for alias in node.names} & TIMELINE_MODELS
                if used:
                    found.setdefault(name, set()).update(used)
            elif (
                isinstance(node, ast.Attribute)
                and node.attr in TIMELINE_MODELS
                and isinstance(node.value, ast.Name)
                and node.value.id in {"models", "m"}
            ):
                found.setdefault(name, set()).add(node.attr)
    return found


def package_sources() -> dict[str, str]:
    sources = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            sources[name] = path.read_text(encoding="utf-8")
    return sources


def test_only_the_history_read_model_reads_the_timeline_tables() -> None:
    """The surfaces read outages, observed windows, heartbeats and incidents only through
    monitor.history, so they cannot drift apart again."""
    assert timeline_readers(package_sources()) == {}


def test_the_timeline_check_sees_a_surface_reading_the_tables_itself() -> None:
    sources = package_sources()
    sources["monitor.metrics"] += "\nfrom monitor.db.models import Outage\n"
    sources["monitor.status.view"] += "\nfrom monitor.db import models\nmodels.Heartbeat\n"
    found = timeline_readers(sources)
    assert (found["monitor.metrics"], found["monitor.status.view"]) == ({"Outage"}, {"Heartbeat"})


def test_every_timeline_writer_still_exists() -> None:
    assert set(TIMELINE_WRITERS) <= set(package_sources())
