"""Alerts that link back, end to end: slamon runs with ``SLAMON_PUBLIC_URL`` set to its own
address (``slamon run``; and worker + beat + api on PostgreSQL + Redis); a target goes down; the
signed ``target_down`` webhook carries ``alert.url``; Chromium opens that link and the page shows
that target's outage, open, from the moment the webhook says it began. The status page's row
for the target links to the same page. When the target is back, the resolved webhook links
there too and the page shows the outage closed."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from tests.scenarios.checks import (
    ALERT_S,
    Live,
    World,
    alerting_config,
    await_webhook,
    eventually,
    once_each,
)
from tests.scenarios.deployments import Deployment

pytestmark = pytest.mark.slow

TARGET = "linked-web"

# Read in the target's page: its header's state and every outage row, as the page draws them.
_READ_TARGET_PAGE = """() => {
  const header = document.querySelector('[data-target]');
  return {
    target: header?.dataset.target ?? null,
    state: header?.dataset.state ?? null,
    outages: [...document.querySelectorAll('#outages tr.outage')].map(tr => ({
      series: tr.dataset.series,
      open: tr.dataset.open,
      start: tr.dataset.start,
      text: tr.innerText,
    })),
  };
}"""


def prepare_world(world: World) -> None:
    world.http.up(TARGET)


def scenario_config(world: World) -> tuple[str, str]:
    body = alerting_config(world.receiver.url) + "targets:\n"
    body += f"  - {{name: {TARGET}, kind: http, url: '{world.http.url(TARGET)}', interval: 1s}}\n"
    return "", body


def scenario_environment(deployment: Deployment) -> dict[str, str]:
    """Every process links under the address the scenario reaches the API at (with a trailing
    slash, as people paste it)."""
    return {"SLAMON_PUBLIC_URL": deployment.base_url + "/"}


def read_target_page(tab: Any, url: str) -> dict[str, Any]:
    reply = tab.goto(url, wait_until="load")
    assert reply is not None, f"GET {url}: no answer"
    assert reply.status == 200, f"GET {url}: {reply.status}"
    shown: dict[str, Any] = tab.evaluate(_READ_TARGET_PAGE)
    return shown


def test_the_target_down_webhook_links_to_a_page_showing_that_targets_open_outage(
    live: Live,
) -> None:
    expected = f"{live.base}/targets/{TARGET}"
    tab = live.browser.new_page()
    problems: list[str] = []
    tab.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: problems.append(str(e)))
    try:
        eventually(
            lambda: read_target_page(tab, expected)["state"] == "up",
            f"{TARGET} shown up on its own page",
            timeout=ALERT_S,
        )

        live.world.http.down(TARGET)
        firing = await_webhook(live, "target_down", TARGET, "firing")

        assert firing.verified
        assert firing.url == expected
        shown = eventually(
            lambda: _with_open_outage(read_target_page(tab, firing.url or "")),
            f"an open outage on {firing.url}",
        )
        assert shown["target"] == TARGET
        assert shown["state"] == "down"
        [outage] = shown["outages"]
        assert outage["series"] == "reachable"
        assert datetime.fromisoformat(outage["start"]) == firing.started_at
        assert "open" in outage["text"].split()
        assert f"{firing.started_at:%Y-%m-%d %H:%M} UTC" in outage["text"]

        status = tab.goto(f"{live.base}/", wait_until="load")
        assert status is not None
        assert status.status == 200
        tab.get_by_role("link", name=TARGET, exact=True).click()
        tab.wait_for_load_state("load")
        assert tab.url == expected  # the status page's row links to the alert's page

        live.world.http.up(TARGET)
        resolved = await_webhook(live, "target_down", TARGET, "resolved")
        assert resolved.url == expected
        closed = eventually(
            lambda: _closed(read_target_page(tab, expected)),
            f"the outage shown closed on {expected}",
        )
        assert [o["open"] for o in closed["outages"]] == ["false"]
        once_each(live, "target_down", TARGET)
        assert problems == []
    finally:
        tab.close()


def _with_open_outage(shown: dict[str, Any]) -> dict[str, Any] | None:
    return shown if any(o["open"] == "true" for o in shown["outages"]) else None


def _closed(shown: dict[str, Any]) -> dict[str, Any] | None:
    outages = shown["outages"]
    return shown if outages and all(o["open"] == "false" for o in outages) else None
