"""slamon end to end: the real processes (``slamon run``; or migrate, worker, beat and api on
PostgreSQL + Redis) driven by local servers, and every surface held to the same truth.

Each scenario breaks something of its own (targets and providers are never shared), waits for
the signed webhooks, and checks that the API, /metrics and the status page in Chromium show the
same state at the same moment, and that the monthly report counts the interval the webhooks
announced. One deployment serves every scenario of the module, in file order: the restart
scenario comes late because it restarts it, and a last check over the whole run makes sure no
alert was sent twice, however late.
"""

from __future__ import annotations

import csv
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import sqlalchemy as sa
from sqlalchemy import func, select

from monitor.db.models import ProbeEvidence, ProbeResult, ProbeRollup
from tests.scenarios import surfaces
from tests.scenarios.checks import (
    ALERT_S,
    PROBE_INTERVAL_S,
    Expect,
    Live,
    World,
    ago,
    alerting_config,
    await_all,
    await_webhook,
    eventually,
    month_of,
    no_second_messages,
    once_each,
    report_counts,
    settled_disagreements,
    still_once,
    surfaces_agree,
    within,
)
from tests.scenarios.servers import GpuBox, HeartbeatJob, ScriptedIncident, statuspage_document

pytestmark = pytest.mark.slow

FEED = "/{slug}/api/v2/incidents.json"  # incidents.json lists resolved incidents too
PROVIDERS = ("acme", "stale", "dark", "phoenix")
# A budget that one second of downtime burns 166x over a minute, and a credit that a few
# seconds of downtime early in a target's life owe; burn windows short enough for a test.
SLA = """\
sla_policies:
  - {name: scenario-burn, provider: slacloud, target_pct: 99.99}
  - name: scenario-breach
    provider: slacloud
    target_pct: 80
    tiers: [{below_pct: 80, credit_pct: 25}]
"""
BURN = (
    "burn_windows: [{long: 60s, short: 10s, factor: 10, severity: critical}], burn_min_samples: 3"
)
BURN_SHORT_S = 10.0
SILENT_S = 5.0  # how long the training job stays silent once slamon said it is down
BREACH_TARGET = 0.80
GPU_BOXES = ("gpu-missing", "gpu-xid", "gpu-ecc", "gpu-hot")
HTTP_TARGETS = ("web-http", "restart-http")
SLA_TARGETS = ("sla-burn", "sla-breach")


def feed_path(slug: str) -> str:
    return FEED.format(slug=slug)


def prepare_world(world: World) -> None:
    """Everything healthy, except the ``dark`` provider's feed, which never answers."""
    for name in (*HTTP_TARGETS, "api-web", "api-gone", "import-a", "import-b", *SLA_TARGETS):
        world.http.up(name)
    world.tcp_target("web-tcp")
    for name in GPU_BOXES:
        world.dcgm.add(name)
    for slug in ("acme", "stale", "phoenix"):
        world.feeds.publish(feed_path(slug), statuspage_document(slug, []))
    world.feeds.fail(feed_path("dark"))


def scenario_config(world: World) -> tuple[str, str]:
    providers = "".join(
        f"  - {{slug: {slug}, name: {slug.title()} Cloud, regions: [us-east-1], feeds: "
        f"[{{kind: statuspage, url: '{world.feeds.url(feed_path(slug))}'}}]}}\n"
        for slug in PROVIDERS
    )
    providers += "  - {slug: slacloud, name: SLA Cloud, feeds: []}\n"
    targets = [
        *(f"{{name: {n}, kind: http, url: '{world.http.url(n)}'}}" for n in HTTP_TARGETS),
        f"{{name: web-tcp, kind: tcp, url: '{world.tcp['web-tcp'].url}'}}",
        *(f"{{name: {n}, kind: dcgm, url: '{world.dcgm.url(n)}', gpus: 8}}" for n in GPU_BOXES),
    ]
    body = alerting_config(world.receiver.url, BURN) + SLA + "targets:\n"
    body += "".join(f"  - {t[:-1]}, interval: 1s}}\n" for t in targets)
    return providers, body


def register(
    live: Live, name: str, url: str | None, heartbeat_token: bool = False, **fields: object
) -> str | None:
    """``POST /api/v1/targets`` with the admin token: an http target (unless ``fields`` say
    otherwise) probed every second from now on; its heartbeat token when asked for one."""
    reply = httpx.post(
        f"{live.base}/api/v1/targets",
        params={"heartbeat_token": "true"} if heartbeat_token else {},
        json={"name": name, "kind": "http", "url": url, "interval": "1s", **fields},
        headers={"Authorization": f"Bearer {live.deployment.admin_token}"},
        timeout=10,
    )
    assert reply.status_code == 201, reply.text
    token: str | None = reply.json().get("heartbeat_token")
    return token


def retire(live: Live, name: str) -> None:
    reply = httpx.delete(
        f"{live.base}/api/v1/targets/{name}",
        headers={"Authorization": f"Bearer {live.deployment.admin_token}"},
        timeout=10,
    )
    assert reply.status_code == 204, reply.text


# --------------------------------------------------------------------------- 1. target_down


def test_http_and_tcp_targets_that_go_down_and_come_back_send_one_firing_and_one_resolved_each(
    live: Live,
) -> None:
    names = ("web-http", "web-tcp")
    down = tuple(("target_down", n) for n in names)
    surfaces_agree(live, Expect(targets=dict.fromkeys(names, "up")), timeout=ALERT_S)

    live.world.http.down("web-http")
    live.world.tcp["web-tcp"].close()
    for name in names:
        await_webhook(live, "target_down", name, "firing")
    surfaces_agree(live, Expect(targets=dict.fromkeys(names, "down"), firing=down))

    live.world.http.up("web-http")
    live.world.tcp["web-tcp"].listen()
    for name in names:
        await_webhook(live, "target_down", name, "resolved")
    surfaces_agree(live, Expect(targets=dict.fromkeys(names, "up"), quiet=down))

    pairs = {name: once_each(live, "target_down", name) for name in names}
    report = live.report(month_of(pairs["web-http"][0].started_at))  # type: ignore[arg-type]
    for name, pair in pairs.items():
        report_counts(live, report, name, "reachable", [pair])


# --------------------------------------------------------------------------- 2. gpu_health


def _missing_gpu(box: GpuBox, broken: bool) -> None:
    box.missing = {7} if broken else set()


def _fatal_xid(box: GpuBox, broken: bool) -> None:
    box.gpus[3].xid = 79 if broken else 0  # 79: fallen off the bus; 0 after the reset


def _ecc_double_bit(box: GpuBox, broken: bool) -> None:
    gpu = box.gpus[5]
    if broken:
        gpu.dbe_vol, gpu.dbe_agg = gpu.dbe_vol + 1, gpu.dbe_agg + 1
    else:
        gpu.dbe_vol = 0  # a GPU reset clears the volatile count; the aggregate one stays


def _hot_gpu(box: GpuBox, broken: bool) -> None:
    box.gpus[2].temperature = 94.0 if broken else 46.0  # the threshold is 90 °C


GPU_FAULTS: dict[str, tuple[str, Callable[[GpuBox, bool], None]]] = {
    "missing-gpu-7": ("gpu-missing", _missing_gpu),
    "fatal-xid-79": ("gpu-xid", _fatal_xid),
    "ecc-double-bit-error": ("gpu-ecc", _ecc_double_bit),
    "hot-gpu": ("gpu-hot", _hot_gpu),
}


def test_gpu_faults_on_reachable_dcgm_boxes_each_fire_gpu_health_once_and_resolve_once(
    live: Live,
) -> None:
    """Four boxes of 8 GPUs, one fault each, at the same time: GPU 7 gone, a fatal XID, an ECC
    double-bit error, a hot GPU. Each box stays reachable and each fault is its own alert, so
    each is checked on its own and all the outcomes are reported together."""
    boxes = {fault: name for fault, (name, _) in GPU_FAULTS.items()}
    health = {fault: ("gpu_health", name) for fault, name in boxes.items()}
    down = tuple(("target_down", name) for name in boxes.values())
    surfaces_agree(live, Expect(targets=dict.fromkeys(boxes.values(), "up")), timeout=ALERT_S)

    for name, breaks in GPU_FAULTS.values():
        breaks(live.world.dcgm.boxes[name], True)
    fired = await_all(live, list(health.values()), "firing")
    problems = [
        f"{fault}: no firing gpu_health webhook for {boxes[fault]} within {ALERT_S:g} s"
        for fault, key in health.items()
        if key not in fired
    ]
    broken = [fault for fault, key in health.items() if key in fired]
    problems += settled_disagreements(
        live,
        Expect(
            targets={boxes[f]: "unusable" for f in broken},
            firing=tuple(health[f] for f in broken),
            quiet=down,
        ),
    )

    for name, breaks in GPU_FAULTS.values():
        breaks(live.world.dcgm.boxes[name], False)
    resolved = await_all(live, [health[f] for f in broken], "resolved")
    problems += [
        f"{fault}: no resolved gpu_health webhook for {boxes[fault]} within {ALERT_S:g} s"
        for fault in broken
        if health[fault] not in resolved
    ]
    problems += settled_disagreements(
        live,
        Expect(
            targets=dict.fromkeys(boxes.values(), "up"),
            quiet=(*health.values(), *down),
        ),
        timeout=ALERT_S,
    )
    report = live.report(month_of(datetime.now(UTC)))
    for fault in broken:
        name = boxes[fault]
        try:
            pair = once_each(live, "gpu_health", name)
            report_counts(live, report, name, "usable", [pair])
        except AssertionError as exc:
            problems.append(f"{fault}: {exc}")
    for name in boxes.values():
        if live.hooks("target_down", name) != {"firing": [], "resolved": []}:
            problems.append(f"{name} stayed reachable, yet target_down was sent")
        if surfaces.report_outages(report, name, "reachable"):
            problems.append(f"{name} stayed reachable, yet the report has a reachable outage")
    assert not problems, "gpu_health:\n  " + "\n  ".join(problems)


# --------------------------------------------------------------------------- 3. heartbeats


def test_a_training_job_that_stalls_then_goes_silent_then_resumes_alerts_stalled_then_down_once(
    live: Live,
) -> None:
    """The job's target is registered through the API with a heartbeat token of its own (and
    retired at the end, so no later restart finds it silent)."""
    token = register(
        live,
        "hb-job",
        None,
        kind="heartbeat",
        grace="3s",
        stall_after="3s",
        heartbeat_token=True,
    )
    assert token is not None
    assert token.startswith("slmhb_")
    stalled, down = ("heartbeat_stalled", "hb-job"), ("target_down", "hb-job")
    job = HeartbeatJob(live.base, "hb-job", token)
    live.world.jobs.append(job)
    job.start()
    surfaces_agree(live, Expect(targets={"hb-job": "up"}), timeout=ALERT_S)

    job.stall()  # still pushing, the step no longer advances (stall_after: 3s)
    await_webhook(live, *stalled, "firing")
    surfaces_agree(live, Expect(targets={"hb-job": "unusable"}, firing=(stalled,), quiet=(down,)))

    job.silence()  # no heartbeat at all (grace: 3s)
    await_webhook(live, *down, "firing")
    surfaces_agree(live, Expect(targets={"hb-job": "down"}, firing=(stalled, down)))
    time.sleep(SILENT_S)  # the scenario: a silence of some seconds more, not a few milliseconds

    job.advance()
    await_webhook(live, *down, "resolved")
    await_webhook(live, *stalled, "resolved")
    surfaces_agree(live, Expect(targets={"hb-job": "up"}, quiet=(stalled, down)))

    stall_pair = once_each(live, *stalled)
    down_pair = once_each(live, *down)
    assert stall_pair[0].started_at < down_pair[0].started_at  # type: ignore[operator]
    job.stop()
    retire(live, "hb-job")
    assert set(job.answers) <= {202}, job.answers
    report = live.report(month_of(stall_pair[0].started_at))  # type: ignore[arg-type]
    report_counts(live, report, "hb-job", "reachable", [down_pair])
    report_counts(live, report, "hb-job", "usable", [stall_pair])


# --------------------------------------------------------------------------- API targets


def test_api_registered_targets_alert_like_configured_ones_and_leave_every_surface_when_retired(
    live: Live,
) -> None:
    names = ("api-web", "api-gone")
    for name in names:
        register(live, name, live.world.http.url(name))
    surfaces_agree(live, Expect(targets=dict.fromkeys(names, "up")), timeout=ALERT_S)

    for name in names:
        live.world.http.down(name)
    for name in names:
        await_webhook(live, "target_down", name, "firing")
    down = tuple(("target_down", n) for n in names)
    surfaces_agree(live, Expect(targets=dict.fromkeys(names, "down"), firing=down))

    live.world.http.up("api-web")
    retire(live, "api-gone")  # gone while down: nobody will ever see it come back
    for name in names:
        await_webhook(live, "target_down", name, "resolved")
    surfaces_agree(live, Expect(targets={"api-web": "up"}, gone=("api-gone",), quiet=down))

    pair = once_each(live, "target_down", "api-web")
    once_each(live, "target_down", "api-gone")
    retire(live, "api-web")
    surfaces_agree(live, Expect(gone=names))
    report = live.report(month_of(pair[0].started_at))  # type: ignore[arg-type]
    report_counts(live, report, "api-web", "reachable", [pair])


# --------------------------------------------------------------------------- 4. provider_incident


def test_a_provider_incident_fires_once_through_its_update_and_resolves_when_learned_late(
    live: Live,
) -> None:
    feeds, path = live.world.feeds, feed_path("acme")
    incident = ScriptedIncident(
        "acme",
        "scn4k7q2w9xa",
        "Elevated GPU instance launch failures in us-east-1",
        started_at=ago(days=2, hours=3),
    )
    key = ("provider_incident", "acme")
    feeds.publish(path, statuspage_document("acme", [incident.opened()]))
    firing = await_webhook(live, *key, "firing")
    assert within(firing.started_at, incident.started_at)
    assert firing.labels.get("incident") == incident.source_id
    surfaces_agree(live, Expect(incidents={"acme": (incident.name, True)}, firing=(key,)))

    feeds.publish(path, statuspage_document("acme", [incident.updated(ago(days=2, hours=2))]))
    eventually(
        lambda: any(
            i["status"] == "identified"
            for i in surfaces.incidents(live.base, live.deployment.read_token, "acme")
        ),
        "the incident's update stored",
    )
    still_once(live, *key)  # a changed incident is not a new alert (renotify is 4 h)

    resolved_at = ago(days=2)  # the provider back-dates the resolution by two days
    feeds.publish(path, statuspage_document("acme", [incident.resolved(resolved_at)]))
    await_webhook(live, *key, "resolved")
    surfaces_agree(live, Expect(incidents={"acme": (incident.name, False)}, quiet=(key,)))

    first, last = once_each(live, *key)
    assert within(last.resolved_at, resolved_at), (last.resolved_at, resolved_at)
    report = live.report(month_of(incident.started_at))
    listed = surfaces.report_incident(report, "acme", incident.source_id)
    assert listed is not None, f"the {report['month']} report does not list the incident"
    assert within(surfaces.when(listed["started_at"]), first.started_at)
    assert within(surfaces.when(listed["resolved_at"]), last.resolved_at)
    hits = [h for h in feeds.hits if h.path == path]
    assert any(h.status == 304 for h in hits), "slamon never polled conditionally (no 304)"


# --------------------------------------------------------------------------- 5. feed_stale


def test_a_feed_failing_longer_than_feed_stale_after_fires_once_and_resolves_when_it_answers(
    live: Live,
) -> None:
    feeds, path, key = live.world.feeds, feed_path("stale"), ("feed_stale", "stale")

    def last_success() -> datetime | None:
        feed = surfaces.providers(live.base, live.deployment.read_token)["stale"]["feeds"][0]
        return surfaces.when(feed["last_success_at"])

    eventually(last_success, "a first successful poll of the stale provider's feed")
    surfaces_agree(live, Expect(feeds={"stale": True}))

    feeds.fail(path)
    firing = await_webhook(live, *key, "firing")
    succeeded = last_success()
    assert succeeded is not None
    assert firing.started_at - succeeded >= timedelta(seconds=5)  # type: ignore[operator]
    surfaces_agree(live, Expect(feeds={"stale": False}, firing=(key,)))

    feeds.recover(path)
    await_webhook(live, *key, "resolved")
    surfaces_agree(live, Expect(feeds={"stale": True}, quiet=(key,)))
    once_each(live, *key)


def test_a_feed_that_has_never_answered_is_not_shown_as_operational(live: Live) -> None:
    eventually(
        lambda: surfaces.providers(live.base, live.deployment.read_token)["dark"]["feeds"][0][
            "consecutive_failures"
        ],
        "a failed poll of the dark provider's feed",
    )
    surfaces_agree(live, Expect(feeds={"dark": False}))


# --------------------------------------------------------------------------- 6. SLA burn, breach


def test_downtime_that_burns_the_budget_or_owes_a_credit_fires_sla_burn_and_sla_breach_once(
    live: Live,
) -> None:
    """Targets registered now (their lifetime, hence the month-to-date, starts now) with
    user-defined policies; both go down together for a few seconds."""
    register(live, "sla-burn", live.world.http.url("sla-burn"), sla="scenario-burn")
    register(live, "sla-breach", live.world.http.url("sla-breach"), sla="scenario-breach")
    created = surfaces.when(
        surfaces.targets(live.base, live.deployment.read_token)["sla-breach"]["created_at"]
    )
    assert created is not None
    surfaces_agree(live, Expect(targets=dict.fromkeys(SLA_TARGETS, "up")), timeout=ALERT_S)
    burn, breach = ("sla_burn", "sla-burn"), ("sla_breach", "sla-breach")
    down = tuple(("target_down", n) for n in SLA_TARGETS)

    for name in SLA_TARGETS:
        live.world.http.down(name)
    for key in (*down, burn, breach):
        await_webhook(live, *key, "firing")
    surfaces_agree(
        live, Expect(targets=dict.fromkeys(SLA_TARGETS, "down"), firing=(*down, burn, breach))
    )

    for name in SLA_TARGETS:
        live.world.http.up(name)
    outage = {n: await_webhook(live, "target_down", n, "resolved") for n in SLA_TARGETS}
    await_webhook(live, *burn, "resolved", timeout=BURN_SHORT_S + ALERT_S)
    # the credit is owed until uptime since the target's creation is back at 80 %
    breach_down = outage["sla-breach"]
    downtime = breach_down.resolved_at - breach_down.started_at  # type: ignore[operator]
    owed_until = created + downtime / (1 - BREACH_TARGET)
    wait = max(0.0, (owed_until - datetime.now(UTC)).total_seconds())
    await_webhook(live, *breach, "resolved", timeout=wait + ALERT_S)
    surfaces_agree(
        live, Expect(targets=dict.fromkeys(SLA_TARGETS, "up"), quiet=(*down, burn, breach))
    )

    pairs = {n: once_each(live, "target_down", n) for n in SLA_TARGETS}
    burn_pair, breach_pair = (
        once_each(live, *burn),
        once_each(live, *breach),
    )
    assert burn_pair[0].severity == "critical"  # the configured window's severity
    assert burn_pair[0].labels.get("sla") == "scenario-burn"
    for (first, _last), (down_first, down_last) in (
        (burn_pair, pairs["sla-burn"]),
        (breach_pair, pairs["sla-breach"]),
    ):
        # judged during the outage, not before it began nor after it ended
        assert down_first.started_at <= first.started_at <= down_last.resolved_at  # type: ignore[operator]
    burn_clear = pairs["sla-burn"][1].resolved_at + timedelta(seconds=BURN_SHORT_S)  # type: ignore[operator]
    assert burn_pair[1].resolved_at >= burn_clear - timedelta(seconds=PROBE_INTERVAL_S)  # type: ignore[operator]
    assert breach_pair[1].resolved_at >= owed_until - timedelta(seconds=PROBE_INTERVAL_S)  # type: ignore[operator]
    report = live.report(month_of(created))
    for name, pair in pairs.items():
        report_counts(live, report, name, "reachable", [pair])
        entry = surfaces.report_target(report, name)
        assert entry is not None
        reported = entry["sla_downtime_s"]
        announced = (pair[1].resolved_at - pair[0].started_at).total_seconds()  # type: ignore[operator]
        assert abs(reported - announced) <= PROBE_INTERVAL_S, (name, reported, announced)


# --------------------------------------------------------------------------- 8. import, report


def test_outages_imported_for_last_month_are_reported_for_targets_registered_now(
    live: Live,
) -> None:
    for name in ("import-a", "import-b"):
        register(live, name, live.world.http.url(name))
    this_month = datetime.now(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    begin = (this_month - timedelta(days=1)).replace(day=1)
    imported = {
        "import-a": [
            (begin + timedelta(days=2, hours=10), begin + timedelta(days=2, hours=10, minutes=45)),
            (begin + timedelta(days=9, hours=3), begin + timedelta(days=9, hours=3, minutes=10)),
        ],
        "import-b": [
            (begin + timedelta(days=14, hours=20), begin + timedelta(days=14, hours=22)),
        ],
    }
    sheet = live.deployment.root / "history.csv"
    with sheet.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["target", "start", "end", "cause"])
        for name, spans in imported.items():
            for start, end in spans:
                writer.writerow([name, start.isoformat(), end.isoformat(), "single_instance"])
    live.deployment.command(
        "import",
        "outages",
        str(sheet),
        "--observed-from",
        begin.isoformat(),
        "--observed-to",
        this_month.isoformat(),
    )

    report = live.report(month_of(begin))
    for name, spans in imported.items():
        entry = surfaces.report_target(report, name)
        assert entry is not None, f"the {report['month']} report does not list {name}"
        rows = surfaces.report_outages(report, name, "reachable")
        assert [(o["start"], o["end"]) for o in rows or []] == spans
        downtime = sum((end - start).total_seconds() for start, end in spans)
        assert entry["downtime_s"] == pytest.approx(downtime)
        assert entry["uptime_pct"] is not None
        api = [(o["start"], o["end"], o["source"]) for o in live.outages(name)]
        assert [(s, e, "import") for s, e in spans] == api


# --------------------------------------------------------------------------- 7. restarts


def test_a_restart_during_an_open_outage_and_an_open_incident_sends_one_firing_and_one_resolved(
    live: Live,
) -> None:
    feeds, path = live.world.feeds, feed_path("phoenix")
    incident = ScriptedIncident(
        "phoenix", "scn7r3s8t1aa", "Degraded networking in us-east-1", started_at=ago(minutes=20)
    )
    down, incident_key = ("target_down", "restart-http"), ("provider_incident", "phoenix")
    surfaces_agree(live, Expect(targets={"restart-http": "up"}), timeout=ALERT_S)
    live.world.http.down("restart-http")
    feeds.publish(path, statuspage_document("phoenix", [incident.opened()]))
    await_webhook(live, *down, "firing")
    await_webhook(live, *incident_key, "firing")

    restarted = datetime.now(UTC).timestamp()
    live.deployment.restart()

    def judged_again() -> bool:
        finished = live.metrics().task_finished
        return all(
            finished.get(task, 0.0) > restarted
            for task in ("slamon.alerts.evaluate", "slamon.probes.run_shard")
        )

    eventually(judged_again, "a probe round and an alert evaluation after the restart")
    still_once(live, *down)
    still_once(live, *incident_key)
    surfaces_agree(
        live,
        Expect(
            targets={"restart-http": "down"},
            incidents={"phoenix": (incident.name, True)},
            firing=(down, incident_key),
        ),
    )

    live.world.http.up("restart-http")
    resolved_at = ago(seconds=30)
    feeds.publish(path, statuspage_document("phoenix", [incident.resolved(resolved_at)]))
    await_webhook(live, *down, "resolved")
    await_webhook(live, *incident_key, "resolved")
    surfaces_agree(
        live,
        Expect(
            targets={"restart-http": "up"},
            incidents={"phoenix": (incident.name, False)},
            quiet=(down, incident_key),
        ),
    )
    pair = once_each(live, *down)
    once_each(live, *incident_key)
    report = live.report(month_of(pair[0].started_at))  # type: ignore[arg-type]
    report_counts(live, report, "restart-http", "reachable", [pair])


# --------------------------------------------------------------------------- the whole run


def test_the_running_service_rolls_its_probes_into_minutes_that_metrics_reads(
    live: Live,
) -> None:
    """The rollup runs in the service beside the probe rounds (its own short transactions, on
    SQLite through the writers' lock): a closed minute of a healthy target's probes reaches
    /metrics as that minute's median latency (SQL grouping on both databases)."""
    latency = eventually(
        lambda: live.metrics().target_latency.get("web-http"),
        "a rolled-up minute of web-http on /metrics",
        timeout=150,  # the rollup runs once a minute, on the minutes that have closed
    )
    assert 0 < latency < PROBE_INTERVAL_S  # a local target's median answer, in seconds


def test_the_running_service_keeps_its_raw_record_compact(live: Live) -> None:
    """What the rollup made final is compact in the running service: no raw row is left older
    than the minutes the rollup may still recompute (its minute bucket holds the routine ones),
    and every failure the buckets count was moved whole into the evidence, for the claim."""
    engine = sa.create_engine(live.deployment.database_url)
    r, e, m = ProbeResult, ProbeEvidence, ProbeRollup

    def compacted() -> tuple[int, int, int, int] | None:
        final = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(minutes=4)
        with engine.connect() as db:
            raw = db.scalar(select(func.count()).where(r.at < final))
            kept = db.scalar(select(func.count()).where(e.at < final))
            failed = db.scalar(select(func.count()).where(e.ok.is_(False), e.at < final))
            counted = db.execute(
                select(func.sum(m.count), func.sum(m.failures)).where(
                    m.resolution == "minute", m.bucket_start < final
                )
            ).one()
        probes, failures = counted
        if raw or not probes:
            return None
        return kept or 0, failed or 0, probes, failures or 0

    try:
        kept, failed, probes, failures = eventually(
            compacted, "the raw rows of final minutes compacted", timeout=300
        )
    finally:
        engine.dispose()
    assert kept < probes  # routine probes live on only in their buckets
    assert failures > 0  # the scenarios took targets down
    assert failed >= failures  # each failure a bucket counts is kept whole (late ones too)


def test_no_alert_of_the_whole_run_was_sent_twice_or_unsigned(live: Live) -> None:
    """Each scenario saw exactly one firing and one resolved webhook when it ended; a quiet
    period later, across every scenario of this deployment, still no more than one of each."""
    wrong = no_second_messages(live)
    assert not wrong, "webhooks sent more than once:\n  " + "\n  ".join(wrong)
