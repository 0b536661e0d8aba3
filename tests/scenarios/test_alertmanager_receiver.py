"""The team's own Prometheus alerts in slamon, end to end through the real Alertmanager (Debian's
``prometheus-alertmanager``): slamon runs (``slamon run``; and worker + beat + api on PostgreSQL
+ Redis) with a target ``am-gpu``; an Alertmanager whose webhook receiver points at slamon's
``POST /api/v1/alertmanager`` with an ``events`` token (``http_config.authorization``, as a team
configures it) is sent a dcgm-exporter-style alert as Prometheus sends one (``POST
/api/v2/alerts``, labelled ``slamon_target: am-gpu``). slamon lists it about the target (``GET
/api/v1/events?target=am-gpu``), keyed by Alertmanager's own fingerprint and the alert's start,
and shows it open on the target's page; an alert naming no target is listed about none. Then
Prometheus resolves it (the same alert with an ``endsAt`` in the past): slamon shows it closed,
and no slamon alert was raised for either (Alertmanager paged already).

slamon's own alerts go to the same Alertmanager through an ``alertmanager`` channel, and its
catch-all route sends them back: the receiver takes them and stores none."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.alertmanager_process import AlertmanagerProcess, alertmanager_binary
from tests.monitor.api.test_pages import account_events
from tests.scenarios.checks import FAST_SCHEDULE, Live, World, eventually

pytestmark = pytest.mark.slow

TARGET = "am-gpu"
# Alertmanager flushes a group 1 s after its first alert and every 1 s after; slamon answers
# at once. Generous for a busy 2-core machine also running the deployment.
DELIVERED_S = 30.0
# Alertmanager's debug log as it flushes the group of slamon's target_down alert
FLUSHED_TARGET_DOWN = 'aggrGroup="{}:{alertname=\\"target_down\\"}" msg=flushing'


@pytest.fixture(scope="module")
def browser() -> None:
    """These scenarios read slamon's API and pages as text: no Chromium."""
    return


# one Alertmanager per deployment (by its world), started before slamon so that slamon's
# alertmanager channel can name it; stopped when the module ends
ALERTMANAGERS: dict[int, AlertmanagerProcess] = {}


@pytest.fixture(scope="module", autouse=True)
def _alertmanagers_stopped() -> Iterator[None]:
    yield
    for am in ALERTMANAGERS.values():
        am.destroy()
    ALERTMANAGERS.clear()


def prepare_world(world: World) -> None:
    world.http.up(TARGET)
    am = AlertmanagerProcess(alertmanager_binary())
    ALERTMANAGERS[id(world)] = am
    am.start()  # routes everything nowhere until the test gives it slamon's receiver


def scenario_config(world: World) -> tuple[str, str]:
    """The target, the receiver's label, and slamon's own alerts posted to the same
    Alertmanager (whose catch-all route sends them back: they must not be stored)."""
    am = ALERTMANAGERS[id(world)]
    body = (
        FAST_SCHEDULE
        + "alerts: {retry_base: 1s}\n"
        + "alertmanager_receiver: {target_labels: [slamon_target]}\n"
        + f"channels:\n  - {{name: pager, kind: alertmanager, url: '{am.url}'}}\n"
        + "routes:\n  - {match: {}, channels: [pager]}\n"
        + "targets:\n"
        + f"  - {{name: {TARGET}, kind: http, url: '{world.http.url(TARGET)}', interval: 1s}}\n"
    )
    return "", body


def webhook_config(url: str, token: str) -> str:
    """An Alertmanager routing everything to slamon's receiver, as docs/prometheus.md says."""
    return (
        "route:\n"
        "  receiver: slamon\n"
        "  group_by: [alertname]\n"
        "  group_wait: 1s\n"
        "  group_interval: 1s\n"
        "  repeat_interval: 1h\n"
        "receivers:\n"
        "  - name: slamon\n"
        "    webhook_configs:\n"
        f"      - url: {json.dumps(url)}\n"
        "        send_resolved: true\n"
        "        http_config:\n"
        "          authorization:\n"
        f"            credentials: {json.dumps(token)}\n"
    )


@pytest.fixture
def alertmanager(live: Live) -> AlertmanagerProcess:
    """This deployment's Alertmanager, now delivering every alert to slamon's receiver with a
    fresh events token (restarted on its port with that config, once per deployment)."""
    am = ALERTMANAGERS[id(live.world)]
    if "webhook_configs" not in am.config:
        token = live.deployment.command(
            "token", "create", "alertmanager", "--scope", "events"
        ).stdout.strip()
        am.config = webhook_config(f"{live.base}/api/v1/alertmanager", token)
        am.restart()
    return am


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def prometheus_alert(start: datetime, end: datetime, **labels: str) -> dict[str, Any]:
    """A ``postableAlert`` as Prometheus' notifier sends one: while it fires, ``endsAt`` is
    ahead (4 × the resend delay); once resolved, the moment it resolved."""
    return {
        "labels": {
            "alertname": "DCGMXidErrors",
            "gpu": "0",
            "instance": "10.0.0.5:9400",
            "job": "dcgm",
            "severity": "critical",
            **labels,
        },
        "annotations": {
            "summary": "GPU 0 reported XID 79",
            "description": "XID 79 (GPU has fallen off the bus) on GPU 0.",
        },
        "startsAt": iso(start),
        "endsAt": iso(end),
        "generatorURL": "http://prometheus.example:9090/graph?g0.expr=DCGM_FI_DEV_XID_ERRORS",
    }


def post_alerts(am: AlertmanagerProcess, alerts: list[dict[str, Any]]) -> None:
    answer = httpx.post(f"{am.url}/api/v2/alerts", json=alerts, timeout=5)
    assert answer.status_code == 200, answer.text


def events(live: Live, **query: str) -> list[dict[str, Any]]:
    answer = httpx.get(
        f"{live.base}/api/v1/events",
        params={"limit": "100", **query},
        headers={"Authorization": f"Bearer {live.deployment.read_token}"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    items: list[dict[str, Any]] = answer.json()["items"]
    return items


def page_rows(live: Live, table: str) -> list[Any]:
    answer = httpx.get(f"{live.base}/targets/{TARGET}", timeout=10)
    assert answer.status_code == 200, answer.text[:2000]
    return account_events(answer.text, table)


def test_a_prometheus_alert_shows_on_the_target_and_closes_when_resolved(
    live: Live, alertmanager: AlertmanagerProcess
) -> None:
    am = alertmanager
    start = datetime.now(UTC).replace(microsecond=250000) - timedelta(minutes=2)
    firing = prometheus_alert(start, start + timedelta(hours=1), slamon_target=TARGET)
    untargeted = prometheus_alert(start, start + timedelta(hours=1), alertname="NodeDiskFull")
    post_alerts(am, [firing, untargeted])

    def listed(status: str) -> dict[str, Any]:
        """The alert's event about the target once it has ``status``; empty until then."""
        found = [e for e in events(live, target=TARGET) if e["raw_type"] == "DCGMXidErrors"]
        return found[0] if found and found[0]["status"] == status else {}

    event = eventually(
        lambda: listed("open"),
        f"the alert open in /api/v1/events?target={TARGET}\n{am.text()[-3000:]}",
        DELIVERED_S,
    )
    (held,) = [a for a in am.alerts() if a["labels"]["alertname"] == "DCGMXidErrors"]
    assert event["key"] == f"{held['fingerprint']}@{iso(start)}"
    assert (event["provider"], event["source"], event["kind"]) == (
        "prometheus",
        "alertmanager",
        "issue",
    )
    assert (event["title"], event["targets"], event["via"]) == (
        "GPU 0 reported XID 79",
        [TARGET],
        "push",
    )
    assert datetime.fromisoformat(event["starts_at"]) == start
    assert event["ends_at"] is None

    [row] = page_rows(live, "account-events")
    assert (row.attrs["data-event"], row.attrs["data-status"]) == (event["key"], "open")
    assert "GPU 0 reported XID 79" in row.text

    other = eventually(
        lambda: [e for e in events(live) if e["raw_type"] == "NodeDiskFull"],
        "the alert naming no target listed",
        DELIVERED_S,
    )
    assert [(e["scope"], e["targets"]) for e in other] == [("account", [])]

    resolved_at = datetime.now(UTC).replace(microsecond=500000) - timedelta(seconds=5)
    post_alerts(am, [prometheus_alert(start, resolved_at, slamon_target=TARGET)])
    closed = eventually(
        lambda: listed("closed"),
        f"the alert closed in /api/v1/events\n{am.text()[-3000:]}",
        DELIVERED_S,
    )
    assert closed["id"] == event["id"]  # the same event, closed
    assert datetime.fromisoformat(closed["ends_at"]) == resolved_at
    assert page_rows(live, "account-events") == []
    [row] = page_rows(live, "account-events-closed")
    assert (row.attrs["data-event"], row.attrs["data-status"]) == (event["key"], "closed")

    # no alert of slamon's, firing or resolved, for the team's own alert
    answer = httpx.get(
        f"{live.base}/api/v1/alerts",
        params={"rule": "provider_event", "state": "any"},
        headers={"Authorization": f"Bearer {live.deployment.read_token}"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["items"] == []


def test_slamon_s_own_alert_sent_back_by_a_catch_all_route_is_not_stored(
    live: Live, alertmanager: AlertmanagerProcess
) -> None:
    """The target goes down: slamon's target_down reaches Alertmanager through the channel, and
    Alertmanager's catch-all route delivers it to slamon's receiver, which answers 2xx (its
    log's "Notify success" after flushing that group) and stores nothing of it."""
    am = alertmanager
    live.world.http.down(TARGET)

    def delivered_back() -> bool:
        after = am.text().split(FLUSHED_TARGET_DOWN, 1)
        return len(after) == 2 and "Notify success" in after[1]

    eventually(
        delivered_back,
        f"target_down delivered back to slamon\n{am.text()[-3000:]}",
        DELIVERED_S,
    )
    assert [e for e in events(live) if e["raw_type"] == "target_down"] == []
    live.world.http.up(TARGET)
