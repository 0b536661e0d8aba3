"""Fixtures for the scenarios: one Chromium per test module, and per test module one running slamon
per deployment shape (``embedded``, ``production``) with its own local world; the module says
what slamon is configured with (``scenario_config(world) -> (providers, body)``), how the
world starts (``prepare_world(world)``) and, if it needs any, which ``SLAMON_*`` variables every
process gets (``scenario_environment(deployment) -> dict``, given the deployment before it
starts: its address is known). A failing scenario's report carries the process logs."""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import pytest

from tests.faults.servers import write_config
from tests.scenarios.checks import Live, World
from tests.scenarios.deployments import Deployment, embedded, production
from tests.support import CHROMIUM, CHROMIUM_ARGS, PG_TEST_DB, REQUIRE_SERVICES, unavailable

DEPLOYMENTS = [
    pytest.param("embedded"),
    pytest.param("production", marks=[pytest.mark.postgres, pytest.mark.redis]),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by playwright (one per scenario module: playwright's
    sync API keeps an event loop running in this thread while it is open, and the tests after
    the scenarios call ``asyncio.run``)."""
    if not CHROMIUM.exists():
        if REQUIRE_SERVICES:
            pytest.fail("Debian's chromium is required: apt-get install -y chromium")
        unavailable("Chromium (/usr/bin/chromium)", "not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module", params=DEPLOYMENTS)
def live(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, browser: Any
) -> Iterator[Live]:
    """slamon running in one deployment shape, configured by the test module, shared by the
    module's scenarios (each drives targets and providers of its own)."""
    module = request.module
    name = module.__name__.rsplit(".", 1)[-1].removeprefix("test_")
    root = tmp_path_factory.mktemp(f"{name}-{request.param}")
    world = World()
    deployment: Deployment | None = None
    try:
        module.prepare_world(world)
        providers, body = module.scenario_config(world)
        write_config(root / "slamon.yaml", body, providers)
        if request.param == "embedded":
            deployment = embedded(root)
        else:
            deployment = production(root, f"{PG_TEST_DB}_{name}"[:63])
        environment = getattr(module, "scenario_environment", None)
        if environment is not None:
            deployment.env.update(environment(deployment))
        deployment.prepare()
        deployment.start()
        running = Live(deployment, world, browser)
        yield running
        if running.reader is not None:
            running.reader.close()
    finally:
        if deployment is not None:
            deployment.stop()
        world.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    """A failed scenario's report ends with the evidence: the webhooks received, the alerts
    firing on the API and the tail of every slamon process's log."""
    outcome = yield
    report = outcome.get_result()
    running = getattr(item, "funcargs", {}).get("live")
    if report.when == "call" and report.failed and isinstance(running, Live):
        report.sections.append(("webhooks and firing alerts", running.diagnostics()))
        report.sections.append(("slamon logs", running.deployment.log_tail()))
