"""A real Prometheus (Debian's ``/usr/bin/prometheus``) scrapes a running slamon (``slamon
run``; and worker + beat + api on PostgreSQL + Redis) every second, with the rules ``slamon
export prometheus-rules`` writes for the deployment's config loaded. The target ``prom-gpu``
goes down for a scripted while: Prometheus' own rules fire ``SlamonTargetDown`` and then
``SlamonSlaBurn`` from slamon's series. The target comes back; slamon is then left serving its
API alone (nothing probes: what happened is final), and Prometheus' availability from the
counters is the monthly report's (``slamon report monthly --format json``): exactly from the
counters' values, and over a window with ``increase()`` within what that window cannot see.
The figures are printed in the run's summary (``tests.support.report_figure``)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from monitor.reports.cumulative import months_between
from tests.prometheus import PrometheusProcess, scrape_config
from tests.scenarios.checks import FAST_SCHEDULE, Live, World, eventually
from tests.scenarios.deployments import START_S, _answers
from tests.support import report_figure

pytestmark = pytest.mark.slow

TARGET = "prom-gpu"
# the burn pair slamon and the exported rules judge by: a minute and 10 s at 14.4× of a 99 %
# objective, so a few seconds of downtime in the last minute page
BURN = "burn_windows: [{long: 1m, short: 10s, factor: 14.4, severity: critical}]"
SLA = "sla_policies:\n  - {name: prom-99, provider: promcloud, target_pct: 99.0}\n"
# scrape every second, a rule evaluation every second; slamon confirms in ~0.5 s, an open
# outage reaches the downtime counter after its settle (1 s interval + 2 × (1 s judging round +
# 1 s timeout) + 5 s = 10 s), and the 1-minute window needs 8.64 s of it to burn at 14.4×
FIRES_S = 60.0
WATCHED_S = 5.0  # up before the outage, and again after it, while Prometheus watches


@pytest.fixture(scope="module")
def browser() -> None:
    """These scenarios read slamon's API and Prometheus' as JSON: no Chromium."""
    return


def prepare_world(world: World) -> None:
    world.http.up(TARGET)


def scenario_config(world: World) -> tuple[str, str]:
    body = (
        FAST_SCHEDULE
        + f"alerts: {{{BURN}}}\n"
        + SLA
        + "targets:\n"
        + f"  - {{name: {TARGET}, kind: http, url: '{world.http.url(TARGET)}', interval: 1s,"
        + " timeout: 1s, sla: prom-99}\n"
    )
    return "  - {slug: promcloud, name: Prom Cloud, feeds: []}\n", body


@pytest.fixture
def prometheus(live: Live) -> Iterator[PrometheusProcess]:
    """Prometheus scraping this deployment every second, with the rules slamon exports for
    the deployment's own config."""
    rules = live.deployment.command("export", "prometheus-rules").stdout
    server = PrometheusProcess(scrape_config(live.deployment.port, ["slamon.rules.yml"]))
    (server.root / "slamon.rules.yml").write_text(rules)
    server.start()
    try:
        yield server
    finally:
        server.destroy()


def firing(prometheus: PrometheusProcess, alertname: str) -> dict[str, Any] | None:
    return next(
        (
            a
            for a in prometheus.alerts()
            if a["labels"].get("alertname") == alertname
            and a["labels"].get("target") == TARGET
            and a["state"] == "firing"
        ),
        None,
    )


def counters(prometheus: PrometheusProcess, window: str) -> list[tuple[float, float, float]]:
    """The scraped samples of both counters over ``window``: (time, observed, downtime)."""
    observed = prometheus.samples(
        f'slamon_target_observed_seconds_total{{target="{TARGET}"}}[{window}]'
    )
    downtime = dict(
        prometheus.samples(f'slamon_target_downtime_seconds_total{{target="{TARGET}"}}[{window}]')
    )
    return [(t, o, downtime[t]) for t, o in observed if t in downtime]


def test_prometheus_availability_from_slamon_counters_is_the_monthly_report(
    live: Live, prometheus: PrometheusProcess
) -> None:
    began = datetime.now(UTC)
    eventually(lambda: counters(prometheus, "1m"), "Prometheus scraping slamon's counters", 60)
    time.sleep(WATCHED_S)

    # the outage: Prometheus' rules page from slamon's series, as slamon itself would
    live.world.http.down(TARGET)
    down_at = time.monotonic()
    eventually(lambda: firing(prometheus, "SlamonTargetDown"), "SlamonTargetDown firing", 30)
    target_down_s = time.monotonic() - down_at
    burn = eventually(lambda: firing(prometheus, "SlamonSlaBurn"), "SlamonSlaBurn", FIRES_S)
    burn_s = time.monotonic() - down_at
    assert burn["labels"]["sla"] == "prom-99"
    assert (burn["labels"]["severity"], burn["labels"]["rule"]) == ("critical", "sla_burn")
    live.world.http.up(TARGET)
    eventually(
        lambda: (rows := live.outages(TARGET)) and all(r["end"] for r in rows),
        "the outage closed on the API",
        30,
    )
    time.sleep(WATCHED_S)

    # final: slamon serves its API alone, nothing probes; Prometheus scrapes it until two
    # scrapes after the restart agree (a fresh process keeps nothing: each reads the database)
    live.deployment.stop()
    frozen = time.time()
    live.deployment.processes.start("api", "api", f"--port={live.deployment.port}")
    eventually(lambda: _answers(f"{live.base}/healthz"), "slamon api alone", START_S)

    def two_agreeing() -> bool:
        after = [s for s in counters(prometheus, "20s") if s[0] > frozen]
        return len(after) >= 2 and after[-1][1:] == after[-2][1:]

    eventually(two_agreeing, "two scrapes of the API alone that agree", 60)

    ended = datetime.now(UTC)
    rows = [
        next(t for t in live.report(month)["targets"] if t["name"] == TARGET)
        for month in months_between(began, ended)
    ]
    observed = sum(r["observed_s"] for r in rows)
    downtime = sum(r["sla_downtime_s"] for r in rows)
    report_availability = 1 - downtime / observed
    if len(rows) == 1:
        assert rows[0]["uptime_pct"] / 100 == pytest.approx(report_availability, abs=1e-12)

    # exactly: the counters are the report's figures, and so is their ratio
    label = f'{{target="{TARGET}"}}'
    scraped_observed = prometheus.value(f"slamon_target_observed_seconds_total{label}")
    scraped_downtime = prometheus.value(f"slamon_target_downtime_seconds_total{label}")
    assert (scraped_observed, scraped_downtime) == (
        pytest.approx(observed, abs=1e-6),
        pytest.approx(downtime, abs=1e-6),
    )
    assert downtime > 0
    exact = prometheus.value(
        f"1 - slamon_target_downtime_seconds_total{label}"
        f" / slamon_target_observed_seconds_total{label}"
    )
    assert exact == pytest.approx(report_availability, abs=1e-9)

    # every scrape of the run, the confirmed recovery's included: the counters never went back
    window = f"{int(time.time() - began.timestamp()) + 30}s"
    scraped = counters(prometheus, window)
    for (_, o1, d1), (t, o2, d2) in itertools.pairwise(scraped):
        assert o2 >= o1, f"the observed counter went back at {t}: {o1} -> {o2}"
        assert d2 >= d1, f"the downtime counter went back at {t}: {d1} -> {d2}"

    # over a window holding the whole run, increase() sees all of the downtime (the outage
    # came after Prometheus' first sample: d0 = 0) but not the o0 seconds observed before that
    # sample; and it extrapolates the observed counter back by half the average scrape
    # interval (the downtime counter, starting at 0, not at all; asked at the last sample's
    # time, neither forward). So it is 1 − D / (O − o0), within D / (O − o0) × (interval / 2)
    # / (the sampled span)
    (first, o0, d0), last = scraped[0], scraped[-1][0]
    assert d0 == 0
    windowed = prometheus.value(
        f"1 - increase(slamon_target_downtime_seconds_total{label}[{window}])"
        f" / increase(slamon_target_observed_seconds_total{label}[{window}])",
        at=last,
    )
    assert windowed is not None
    seen = 1 - downtime / (observed - o0)
    half_interval = (last - first) / (len(scraped) - 1) / 2
    tolerance = downtime / (observed - o0) * half_interval / (last - first)
    assert abs(windowed - seen) <= tolerance + 1e-9
    unseen = seen - report_availability  # what o0 seconds more observed (none down) add

    name = live.deployment.kind
    report_figure(
        f"prometheus ({name}): report availability {report_availability:.6f} "
        f"({downtime:.1f} s down of {observed:.1f} s observed); Prometheus from the counters "
        f"{exact:.6f}; with increase() over {window} {windowed:.6f}: the window's own "
        f"{seen:.6f} within {abs(windowed - seen):.6f} (bound {tolerance:.6f}) and "
        f"{unseen:+.6f} for the {o0:.1f} s observed before Prometheus' first sample; "
        f"SlamonTargetDown after {target_down_s:.1f} s, SlamonSlaBurn after {burn_s:.1f} s "
        f"of outage"
    )
