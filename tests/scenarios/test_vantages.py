"""A blind vantage, end to end: ``slamon run`` probes from vantage ``east`` while a second
worker, vantage ``west``, runs in a network namespace of its own with no network at all (as a
worker whose host lost its uplink). Every probe from ``west`` fails; the quorum of two must
open no outage and send no ``target_down``, and ``vantage_blind`` must fire once about
``west`` — then resolve once when ``west`` probes from the real network again. The API's
vantages, /metrics and the status page must tell the same.

Embedded only: a worker cut off from the network still reaches SQLite and the filesystem
broker, where on PostgreSQL + Redis it would reach nothing and simply stop probing.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.faults.servers import write_config
from tests.scenarios import surfaces
from tests.scenarios.checks import (
    ALERT_S,
    Live,
    World,
    alerting_config,
    await_webhook,
    eventually,
    no_second_messages,
    once_each,
)
from tests.scenarios.deployments import START_S, embedded
from tests.support import REQUIRE_SERVICES, slamon_command, unavailable, wait_for

pytestmark = pytest.mark.slow

TARGETS = ("fleet-a", "fleet-b", "fleet-c")
BLIND_AFTER_S = 4


def _unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Live]:
    if not _unshare_works():
        if REQUIRE_SERVICES:
            pytest.fail("`unshare -n` is needed to cut one worker off the network (run as root)")
        unavailable("network namespaces (`unshare -n`)", "not permitted here")
    root = tmp_path_factory.mktemp("vantages")
    world = World()
    for name in TARGETS:
        world.http.up(name)
    body = alerting_config(world.receiver.url, f"vantage_blind_after: {BLIND_AFTER_S}s")
    body = body.replace(
        "probes: {retry_interval: 0.2}", "probes: {retry_interval: 0.2, vantages: [east, west]}"
    )
    body += "targets:\n" + "".join(
        f"  - {{name: {n}, kind: http, url: '{world.http.url(n)}', interval: 1s}}\n"
        for n in TARGETS
    )
    write_config(root / "slamon.yaml", body)
    deployment = embedded(root)
    blind: list[subprocess.Popen[bytes]] = []
    try:
        deployment.prepare()
        deployment.processes.start(
            "slamon-run", "run", f"--port={deployment.port}", "--vantage=east"
        )
        wait_for(
            lambda: deployment.crashed() or _answers(f"{deployment.base_url}/healthz"),
            timeout=START_S,
        )
        assert not deployment.crashed(), deployment.log_tail()
        running = Live(deployment, world, browser)
        running.blind = blind  # type: ignore[attr-defined]
        yield running
        if running.reader is not None:
            running.reader.close()
    finally:
        for process in blind:
            _stop(process)
        deployment.stop()
        world.close()


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _west(live: Live, *, cut_off: bool) -> subprocess.Popen[bytes]:
    """The ``west`` probe worker; with ``cut_off``, in a network namespace with no network."""
    root: Path = live.deployment.root
    argv = [*slamon_command(), "worker", "--vantage=west", "--queues=probes"]
    with (root / f"west-{'blind' if cut_off else 'seeing'}.log").open("ab") as log:
        process = subprocess.Popen(
            ["unshare", "-n", *argv] if cut_off else argv,
            cwd=root,
            env=live.deployment.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    live.blind.append(process)  # type: ignore[attr-defined]
    return process


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _vantages(live: Live) -> dict[str, dict[str, Any]]:
    reply = httpx.get(
        f"{live.base}/api/v1/vantages",
        headers={"Authorization": f"Bearer {live.deployment.read_token}"},
        timeout=10,
    )
    reply.raise_for_status()
    return {v["vantage"]: v for v in reply.json()}


def _blind_metric(live: Live) -> dict[str, float]:
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"{live.base}/metrics", timeout=10).raise_for_status().text
    return {
        s.labels["vantage"]: s.value
        for family in text_string_to_metric_families(text)
        if family.name == "slamon_vantage_blind"
        for s in family.samples
    }


def _page_vantages(live: Live) -> str:
    """The status page's text as Chromium renders it (its vantages section among it)."""
    page = live.browser.new_page()
    try:
        page.goto(live.base + "/", wait_until="load")
        return str(page.inner_text("body"))
    finally:
        page.close()


def test_a_vantage_without_network_is_called_blind_once_and_the_fleet_stays_up(
    live: Live,
) -> None:
    eventually(
        lambda: _vantages(live).get("east", {}).get("targets") == len(TARGETS),
        "east probes every target",
    )
    blind = _west(live, cut_off=True)
    await_webhook(live, "vantage_blind", "west", "firing", timeout=ALERT_S + 30)

    seen = _vantages(live)
    assert (seen["west"]["state"], seen["east"]["state"]) == ("blind", "agrees")
    assert seen["west"]["disagreeing"] == len(TARGETS)
    assert _blind_metric(live) == {"east": 0.0, "west": 1.0}
    text = _page_vantages(live)
    assert "west" in text
    assert "blind" in text.lower()
    targets = surfaces.targets(live.base, live.deployment.read_token)
    assert {n: targets[n]["state"] for n in TARGETS} == dict.fromkeys(TARGETS, "up")
    assert not [h for h in surfaces.webhooks(live.world.receiver) if h.rule == "target_down"]
    for name in TARGETS:
        assert live.outages(name) == [], f"{name}: a blind vantage opened an outage"

    _stop(blind)
    _west(live, cut_off=False)  # west probes from the real network again
    await_webhook(live, "vantage_blind", "west", "resolved", timeout=ALERT_S + 30)
    eventually(lambda: _vantages(live)["west"]["state"] == "agrees", "west agrees again")
    assert _blind_metric(live)["west"] == 0.0
    once_each(live, "vantage_blind", "west")
    assert no_second_messages(live) == []
