"""slamon's alerts in the real Alertmanager (Debian's ``prometheus-alertmanager``), end to end:
slamon runs (``slamon run``; and worker + beat + api on PostgreSQL + Redis) with an
``alertmanager`` channel naming two Alertmanagers, as an HA pair is configured. A target goes
down: both Alertmanagers list its ``target_down`` alert (``GET /api/v2/alerts``) with the right
labels and a link to its page. One Alertmanager is restarted (it keeps alerts in memory only,
so it comes back empty): slamon's resend gives it the alert back. The target recovers: the
alert resolves in both, before the ``endsAt`` of its last resend (so it was ended by slamon's
resolve, not by running out)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.alertmanager_process import AlertmanagerProcess, start_alertmanager
from tests.scenarios.checks import FAST_SCHEDULE, Live, World, eventually
from tests.scenarios.deployments import Deployment

pytestmark = pytest.mark.slow

TARGET = "am-trainer"
POOL = "h100-pool"
RESEND_S = 3  # firing alerts end 4 × 3 s after each post unless posted again
RESEND_WAIT_S = 20.0  # one resend period, on a busy 2-core machine

# One pair per deployment, started in prepare_world; every one stopped when the module ends.
ALERTMANAGERS: list[AlertmanagerProcess] = []
STARTED: list[AlertmanagerProcess] = []


@pytest.fixture(scope="module")
def browser() -> None:
    """These scenarios read Alertmanager's API, not a page: no Chromium."""


@pytest.fixture(scope="module", autouse=True)
def _alertmanagers_stopped() -> Iterator[None]:
    yield
    for am in STARTED:
        am.destroy()
    STARTED.clear()


def prepare_world(world: World) -> None:
    world.http.up(TARGET)
    ALERTMANAGERS[:] = [start_alertmanager() for _ in range(2)]
    STARTED.extend(ALERTMANAGERS)


def scenario_config(world: World) -> tuple[str, str]:
    urls = ", ".join(f"'{am.url}'" for am in ALERTMANAGERS)
    body = (
        FAST_SCHEDULE
        + "alerts: {retry_base: 1s}\n"
        + "channels:\n"
        + f"  - {{name: pager, kind: alertmanager, urls: [{urls}], resend_every: {RESEND_S}s}}\n"
        + "targets:\n"
        + f"  - {{name: {TARGET}, kind: http, url: '{world.http.url(TARGET)}', interval: 1s,"
        + f" pool: {POOL}}}\n"
    )
    return "", body


def scenario_environment(deployment: Deployment) -> dict[str, str]:
    return {"SLAMON_PUBLIC_URL": deployment.base_url}


def listed(am: AlertmanagerProcess) -> dict[str, Any] | None:
    """The target's target_down alert as ``am`` lists it (active ones only), or None."""
    try:
        alerts = am.alerts()
    except Exception:  # restarting: not answering is "not listed"
        return None
    found = [
        a
        for a in alerts
        if a["labels"].get("alertname") == "target_down" and a["labels"].get("target") == TARGET
    ]
    return found[0] if found else None


def logs() -> str:
    return "\n".join(f"----- alertmanager {am.url}\n{am.text()[-3000:]}" for am in ALERTMANAGERS)


def test_an_outage_reaches_both_alertmanagers_survives_a_restart_and_resolves(
    live: Live,
) -> None:
    first, second = ALERTMANAGERS
    eventually(lambda: live.firing() == {}, "slamon up with nothing firing")
    live.world.http.down(TARGET)

    alert = eventually(lambda: listed(first), f"target_down in the first Alertmanager\n{logs()}")
    also = eventually(lambda: listed(second), f"target_down in the second Alertmanager\n{logs()}")

    labels = alert["labels"]
    assert labels["alertname"] == "target_down"
    assert labels["severity"] == "critical"
    assert labels["target"] == TARGET
    assert labels["pool"] == POOL
    assert len(labels["slamon_fingerprint"]) == 32
    assert alert["generatorURL"] == f"{live.base}/targets/{TARGET}"
    assert alert["annotations"]["slamon_url"] == alert["generatorURL"]
    assert TARGET in alert["annotations"]["summary"]
    assert also["labels"] == labels  # the same alert: Alertmanager's fingerprints agree
    assert also["fingerprint"] == alert["fingerprint"]

    restarted_at = datetime.now(UTC)
    first.restart()
    back = eventually(
        lambda: listed(first), f"target_down back after a restart\n{logs()}", RESEND_WAIT_S
    )
    # an Alertmanager keeps alerts in memory only: this one was posted again since (when the
    # restart took longer than a resend period it is back before a first look could miss it)
    assert datetime.fromisoformat(back["updatedAt"]) >= restarted_at, (back, restarted_at)
    assert back["labels"] == labels
    assert back["startsAt"] == alert["startsAt"]  # the same outage, not a new one

    last_ends = [datetime.fromisoformat(back["endsAt"])]

    def resolved_in_both() -> bool:
        for am in (first, second):
            seen = listed(am)
            if seen is not None:
                last_ends.append(datetime.fromisoformat(seen["endsAt"]))
                return False
        return True

    live.world.http.up(TARGET)
    eventually(resolved_in_both, f"target_down resolved in both Alertmanagers\n{logs()}")
    gone_at = time.time()
    # Gone before the firing alert's last endsAt: slamon resolved it, it did not run out.
    assert gone_at < max(last_ends).timestamp(), (gone_at, max(last_ends))
