"""slamon's dependencies coexist with the user's own tools, and every third-party module slamon
imports is declared. The environment the tests run in is the fresh one `.ci/run` installs
(`pip install -e '.[dev]'`), so what is true here is what `pip install slamon` leaves."""

from __future__ import annotations

import ast
import importlib.metadata as md
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from monitor.account.kinds import KINDS as ACCOUNT_KINDS
from monitor.discovery.kinds import KINDS
from tests.support import FeedServer

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# Packages that replace another distribution's files in place (urllib3-future writes into the
# ``urllib3`` package itself, and requests-based tools then fail on every request).
SQUATTERS = {"urllib3-future", "niquests"}
FIRST_PARTY = {"monitor", "workers", "dashboards", "tests"}
# frameworks imported only by the callback that needs them, behind an ImportError with advice:
# module -> the optional extra that installs it
OPTIONAL = {
    "lightning": "lightning",
    "pytorch_lightning": "lightning",
    "transformers": "transformers",
}
# each discovery kind's SDK, installed by the kind's extra and imported only by its module:
# module -> (extra, the one module that imports it)
DISCOVERY_SDKS = {
    module.split(".")[0]: (kind.extra, f"monitor/discovery/kinds/{kind.name}.py")
    for kind in KINDS.values()
    for module in kind.requires
}
# the account event kinds' SDKs, the same way: module -> (extra, the account kinds importing it)
ACCOUNT_SDKS: dict[str, tuple[str | None, set[str]]] = {}
for _kind in ACCOUNT_KINDS.values():
    for _module in _kind.requires:
        _extra, _importers = ACCOUNT_SDKS.setdefault(_module.split(".")[0], (_kind.extra, set()))
        _importers.add(f"monitor/account/kinds/{_kind.name}.py")


def names(requirements: list[str]) -> set[str]:
    return {md.distribution(Requirement(r).name).name.lower() for r in requirements}


def closure(requirements: list[str]) -> set[str]:
    """Every distribution ``requirements`` pull in, as installed here (markers honoured)."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        requirement = todo.pop()
        if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = requirement.name.lower()
        if name in seen:
            continue
        seen.add(name)
        try:
            todo += [Requirement(r) for r in md.requires(name) or []]
        except md.PackageNotFoundError:
            seen.discard(name)  # an optional dependency that is not installed
    return seen


def test_nothing_slamon_pulls_in_replaces_another_package() -> None:
    pulled = closure(PROJECT["dependencies"]) | closure(PROJECT["optional-dependencies"]["dev"])
    assert pulled & SQUATTERS == set()


def test_urllib3_is_the_real_one_and_requests_works() -> None:
    import requests
    import urllib3

    owner = md.distribution("urllib3")
    assert owner.metadata["Name"].lower() == "urllib3"
    assert urllib3.__version__ == owner.version  # its files are urllib3's own, not overwritten
    for squatter in SQUATTERS:
        with pytest.raises(md.PackageNotFoundError):
            md.distribution(squatter)
    server = FeedServer()
    server.routes["/ping"] = (200, b"pong")
    try:
        answer = requests.get(f"{server.url}/ping", timeout=5)
    finally:
        server.close()
    assert (answer.status_code, answer.text) == (200, "pong")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_every_third_party_module_slamon_imports_is_declared() -> None:
    shipped = sorted(p for d in ("monitor", "workers") for p in (ROOT / d).rglob("*.py"))
    modules = set().union(*(imported_modules(p) for p in shipped))
    third_party = modules - set(sys.stdlib_module_names) - FIRST_PARTY - OPTIONAL.keys()
    third_party -= DISCOVERY_SDKS.keys() | ACCOUNT_SDKS.keys()
    providers = md.packages_distributions()
    declared = names(PROJECT["dependencies"])
    undeclared = {
        module: providers.get(module)
        for module in third_party
        if not {d.lower() for d in providers.get(module, [])} & declared
    }
    assert undeclared == {}


def test_each_optional_framework_is_an_extra_and_imported_only_by_the_callbacks() -> None:
    extras = PROJECT["optional-dependencies"]
    assert {extra for extra in OPTIONAL.values() if extra in extras} == set(OPTIONAL.values())
    importers = {
        p.relative_to(ROOT).as_posix()
        for d in ("monitor", "workers")
        for p in (ROOT / d).rglob("*.py")
        if imported_modules(p) & OPTIONAL.keys()
    }
    assert importers == {"monitor/training_callbacks.py"}


def test_each_discovery_sdk_is_an_extra_and_imported_only_by_its_kind() -> None:
    extras = PROJECT["optional-dependencies"]
    assert DISCOVERY_SDKS  # the kubernetes kind's client at least
    for module, (extra, importer) in DISCOVERY_SDKS.items():
        assert extra in extras, module
        account = ACCOUNT_SDKS.get(module, (None, set()))[1]
        assert importers_of(module) == {importer} | account


def test_each_account_event_sdk_is_an_extra_and_imported_only_by_its_kinds() -> None:
    extras = PROJECT["optional-dependencies"]
    assert ACCOUNT_SDKS  # boto3 at least
    for module, (extra, importers) in ACCOUNT_SDKS.items():
        assert extra in extras, module
        discovery = {DISCOVERY_SDKS[module][1]} if module in DISCOVERY_SDKS else set()
        assert importers_of(module) == importers | discovery


def importers_of(module: str) -> set[str]:
    return {
        p.relative_to(ROOT).as_posix()
        for d in ("monitor", "workers")
        for p in (ROOT / d).rglob("*.py")
        if module in imported_modules(p)
    }


def test_the_undeclared_import_check_sees_a_transitive_only_module(tmp_path: Path) -> None:
    # vine comes with celery but is not declared: importing it directly would be caught
    module = tmp_path / "example.py"
    module.write_text("import vine\nfrom celery import Celery\n")
    providers = md.packages_distributions()
    declared = names(PROJECT["dependencies"])
    caught = {m for m in imported_modules(module) if not set(providers[m]) & declared}
    assert caught == {"vine"}
