"""Discovery end to end: an ``ec2`` source sweeping a real moto server registers three tagged
instances, which are then probed; one is reclaimed by the spot market, one terminated by the
user, one goes down while it runs. The preempted and the terminated instance end their lives
without a ``target_down``, an outage or a credit; the one that went down pages, opens an
outage and owes a credit — and the webhooks, the API, /metrics, the status page and the
monthly report (its interruption ledger computed here by hand) tell the same story, on both
deployments.

moto cannot reclaim spot capacity through EC2's API (only AWS can), so the reclaim is written
into the fake cloud itself: the instance's state and state reason in moto's own backend, as
DescribeInstances then reports them. slamon's code is never touched.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from html.parser import HTMLParser
from typing import Any

import httpx
import pytest

from tests.scenarios import surfaces
from tests.scenarios.checks import (
    ALERT_S,
    Expect,
    Live,
    World,
    alerting_config,
    await_webhook,
    eventually,
    month_of,
    no_second_messages,
    once_each,
    quiet_period,
    report_counts,
    surfaces_agree,
)
from tests.scenarios.clouds import AWS_ENVIRONMENT, CREDIT_POLICY, TYPES, Cloud, ec2_source
from tests.scenarios.deployments import Deployment

pytestmark = pytest.mark.slow

SPOT, STOPPED, DOWN = "disc-spot", "disc-user", "disc-down"
NAMES = (SPOT, STOPPED, DOWN)
TYPES.update({SPOT: "g5.xlarge", STOPPED: "g5.xlarge", DOWN: "p5.48xlarge"})
FAILING_AFTER_S = 3


CLOUD: Cloud | None = None


@pytest.fixture(scope="module", autouse=True)
def cloud() -> Iterator[Cloud]:
    global CLOUD
    CLOUD = Cloud()
    try:
        yield CLOUD
    finally:
        CLOUD.close()
        CLOUD = None


def _cloud() -> Cloud:
    assert CLOUD is not None, "the moto server starts before the deployment"
    return CLOUD


def prepare_world(world: World) -> None:
    """A fresh account: the three team instances (one spot) up, and one of another team that
    the source's tag filter must leave out."""
    cloud = _cloud()
    cloud.reset()
    for name in (*NAMES, "other-team"):
        world.http.up(name)
    for name in NAMES:
        cloud.launch(name, spot=name == SPOT, team="ml", health=world.http.url(name))
    cloud.launch("other-team", spot=False, team="web", health=world.http.url("other-team"))


def scenario_config(world: World) -> tuple[str, str]:
    body = (
        alerting_config(world.receiver.url, f"discovery_failing_after: {FAILING_AFTER_S}s")
        + CREDIT_POLICY
        + ec2_source(_cloud().url)
    )
    return "", body  # aws is among the providers every scenario config lists


def scenario_environment(deployment: Deployment) -> dict[str, str]:
    return dict(AWS_ENVIRONMENT)


def _targets(live: Live) -> dict[str, dict[str, Any]]:
    return surfaces.targets(live.base, live.deployment.read_token, include_retired=True)


def _all_registered(live: Live) -> dict[str, dict[str, Any]] | None:
    found = _targets(live)
    return found if all(name in found for name in NAMES) else None


def _retired(live: Live, name: str) -> dict[str, Any] | None:
    target = _targets(live).get(name)
    return target if target is not None and target["retired_at"] else None


def _when(text: str | None) -> datetime:
    moment = surfaces.when(text)
    assert moment is not None, text
    return moment


# --------------------------------------------------------------------------- the story


def test_the_source_registers_its_running_instances_and_they_are_probed(live: Live) -> None:
    targets = eventually(lambda: _all_registered(live), "the three tagged instances", ALERT_S)
    assert "other-team" not in targets, "the tag filter let another team's instance in"
    for name in NAMES:
        target = targets[name]
        assert target["discovered_by"] == "aws", target
        assert target["instance_id"] == _cloud().instance_id(name), target
        assert target["provider"] == "aws", target
        assert target["instance_type"] == TYPES[name], target
        assert target["url"] == live.world.http.url(name), target
    assert targets[SPOT]["capacity"] == "spot"
    assert targets[DOWN]["capacity"] == "on-demand"
    assert targets[DOWN]["gpus"] == 8, "p5.48xlarge is 8 x H100 in the GPU type table"
    surfaces_agree(live, Expect(targets=dict.fromkeys(NAMES, "up")))
    assert live.metrics().discovery_up.get("aws") == 1, "/metrics: the aws source is not up"


def test_a_spot_reclaim_ends_a_life_without_downtime_or_page(live: Live) -> None:
    live.world.http.down(SPOT)  # the box goes dark first, then the API says why
    _cloud().reclaim_spot(_cloud().instance_id(SPOT))
    ended = eventually(lambda: _retired(live, SPOT), f"{SPOT} retired by a sweep")
    assert ended["ended_by"] == "preempted", ended
    assert "SpotInstanceTermination" in (ended["end_detail"] or ""), ended
    quiet_period()
    assert not live.hooks("target_down", SPOT)["firing"], "a preemption paged someone"
    assert live.outages(SPOT) == [], "a preemption left an outage"
    surfaces_agree(live, Expect(gone=(SPOT,), quiet=(("target_down", SPOT),)))


def test_a_user_termination_ends_a_life_without_downtime_or_page(live: Live) -> None:
    live.world.http.down(STOPPED)
    _cloud().client().terminate_instances(InstanceIds=[_cloud().instance_id(STOPPED)])
    ended = eventually(lambda: _retired(live, STOPPED), f"{STOPPED} retired by a sweep")
    assert ended["ended_by"] == "user", ended
    quiet_period()
    assert not live.hooks("target_down", STOPPED)["firing"], "a user's terminate paged someone"
    assert live.outages(STOPPED) == [], "a user's terminate left an outage"
    surfaces_agree(live, Expect(gone=(STOPPED,), quiet=(("target_down", STOPPED),)))


def test_an_instance_down_while_it_runs_pages_and_owes_a_credit(live: Live) -> None:
    live.world.http.down(DOWN)
    await_webhook(live, "target_down", DOWN, "firing")
    surfaces_agree(live, Expect(targets={DOWN: "down"}, firing=(("target_down", DOWN),)))
    live.world.http.up(DOWN)
    await_webhook(live, "target_down", DOWN, "resolved")
    surfaces_agree(live, Expect(targets={DOWN: "up"}, quiet=(("target_down", DOWN),)))
    firing, resolved = once_each(live, "target_down", DOWN)
    assert _targets(live)[DOWN]["retired_at"] is None, "a running instance was retired"

    assert firing.started_at is not None, firing
    month = month_of(firing.started_at)
    report = live.report(month)
    report_counts(live, report, DOWN, "reachable", [(firing, resolved)])
    down = surfaces.report_target(report, DOWN)
    assert down is not None, f"the {month} report does not list {DOWN}"
    assert down["credit_pct"] == 25, down
    for name in (SPOT, STOPPED):
        ended = surfaces.report_target(report, name)
        assert ended is not None, f"the report leaves out {name}, which lived this month"
        assert ended["credit_pct"] == 0, ended
        assert surfaces.report_outages(report, name, "reachable") == [], ended
    ledger_by_hand(report, _targets(live))
    page_shows_the_ledger(live, report)
    metrics_show_the_ledger(live, report)


class _LedgerTable(HTMLParser):
    """The rows of the status page's ``table#ledger``, as the cells' texts."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = False
        self.rows: list[list[str]] = []
        self.cell: str | None = None  # the text of the cell being read

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("id", "ledger") in attrs:
            self.inside = True
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag == "td":
            self.cell = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.inside = False
        elif tag == "td" and self.cell is not None:
            self.rows[-1].append(self.cell.strip())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell += data


def page_shows_the_ledger(live: Live, report: dict[str, Any]) -> None:
    """The status page's ledger (month to date) holds the report's rows: each one's
    preemptions, and its rate to the page's three decimals."""
    table = _LedgerTable()
    table.feed(httpx.get(f"{live.base}/", timeout=10).raise_for_status().text)
    shown = {(row[1], row[2]): row for row in table.rows if row}
    for row in report["ledger"]:
        cells = shown.get((row["instance_type"], row["capacity"]))
        assert cells is not None, f"the status page's ledger lacks {row}: {shown}"
        assert cells[4] == str(row["preemptions"]), cells
        assert cells[7] == f"{row['per_1000h']:.3f}", (cells, row)


def metrics_show_the_ledger(live: Live, report: dict[str, Any]) -> None:
    """/metrics carries each of the report's ledger rows: its interruptions, and (for a life
    that ended) its hours and rate."""
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"{live.base}/metrics", timeout=10).raise_for_status().text
    got = {
        (s.name, s.labels["provider"], s.labels["instance_type"], s.labels["capacity"]): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name.startswith("slamon_ledger_")
    }
    for row in report["ledger"]:
        key = (row["provider"], row["instance_type"], row["capacity"])
        interruptions = row["preemptions"] + row["provider_ends"]
        assert got[("slamon_ledger_interruptions", *key)] == interruptions, (key, got)
        if row["ended"]:  # a finished life's hours no longer grow between report and scrape
            hours = got[("slamon_ledger_instance_seconds", *key)] / 3600
            assert hours == pytest.approx(row["instance_hours"], rel=1e-6), (key, got)
            rate = got[("slamon_ledger_interruptions_per_1000h", *key)]
            assert rate == pytest.approx(row["per_1000h"], rel=1e-6), (key, got)


# Garwood's exact 95 % Poisson interval for k events, in events: k = 0 and k = 1
GARWOOD = {0: (0.0, 3.6889), 1: (0.025318, 5.5716)}


def ledger_by_hand(report: dict[str, Any], targets: dict[str, dict[str, Any]]) -> None:
    """The report's interruption ledger, worked out from the targets' lives as the API gives
    them: one spot g5.xlarge preempted (1 interruption over its life), one on-demand g5.xlarge
    the user terminated (none: a user's end is no interruption), one p5.48xlarge still
    running (its hours up to the report)."""
    rows = {(r["provider"], r["instance_type"], r["capacity"]): r for r in report["ledger"]}
    assert set(rows) == {
        ("aws", "g5.xlarge", "spot"), ("aws", "g5.xlarge", "on-demand"),
        ("aws", "p5.48xlarge", "on-demand"),
    }, rows  # fmt: skip

    def life_h(name: str) -> float:
        start, end = _when(targets[name]["created_at"]), _when(targets[name]["retired_at"])
        return (end - start).total_seconds() / 3600

    for name, capacity, events in ((SPOT, "spot", 1), (STOPPED, "on-demand", 0)):
        row, hours = rows[("aws", "g5.xlarge", capacity)], life_h(name)
        assert (row["instances"], row["ended"]) == (1, 1), row
        assert (row["preemptions"], row["provider_ends"]) == (events, 0), row
        assert row["instance_hours"] == pytest.approx(hours, rel=1e-6), row
        assert row["median_lifetime_h"] == pytest.approx(hours, rel=1e-6), row
        assert row["per_1000h"] == pytest.approx(events * 1000 / hours, rel=1e-6), row
        low, high = GARWOOD[events]
        assert row["low"] == pytest.approx(low * 1000 / hours, rel=1e-4, abs=1e-9), row
        assert row["high"] == pytest.approx(high * 1000 / hours, rel=1e-4), row
        assert row["small_sample"] is True, row  # minutes of life, not 1,000 hours

    running = rows[("aws", "p5.48xlarge", "on-demand")]
    born, generated = _when(targets[DOWN]["created_at"]), _when(report["generated_at"])
    assert (running["ended"], running["median_lifetime_h"]) == (0, None), running
    assert running["per_1000h"] == 0, running
    assert running["instance_hours"] == pytest.approx(
        (generated - born).total_seconds() / 3600, abs=5 / 3600
    ), running  # it lives on: its hours up to the report, within the report's own run


def test_a_cloud_api_gone_dark_raises_discovery_failing_and_retires_nothing(live: Live) -> None:
    _cloud().go_dark()
    try:
        await_webhook(live, "discovery_failing", "aws", "firing")
        assert live.metrics().discovery_up.get("aws") == 0, "/metrics: aws still up"
        [source] = [s for s in _discovery(live) if s["name"] == "aws"]
        assert source["state"] == "failing", source
        assert "EndpointConnectionError" in (source["last_error"] or ""), source
        assert _targets(live)[DOWN]["retired_at"] is None, "a failed sweep retired an instance"
        surfaces_agree(live, Expect(targets={DOWN: "up"}, firing=(("discovery_failing", "aws"),)))
    finally:
        _cloud().come_back()
    await_webhook(live, "discovery_failing", "aws", "resolved")
    eventually(lambda: live.metrics().discovery_up.get("aws") == 1, "/metrics: aws up again")
    assert _targets(live)[DOWN]["retired_at"] is None


def _discovery(live: Live) -> list[dict[str, Any]]:
    reply = httpx.get(
        f"{live.base}/api/v1/discovery",
        headers={"Authorization": f"Bearer {live.deployment.read_token}"},
        timeout=10,
    )
    reply.raise_for_status()
    found: list[dict[str, Any]] = reply.json()
    return found


def test_no_alert_was_sent_twice(live: Live) -> None:
    wrong = no_second_messages(live)
    assert not wrong, "\n".join(wrong)
