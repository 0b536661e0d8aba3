"""Probe rounds against real local servers that go down, come back, hang and return garbage;
outage intervals checked against the scripted ground truth."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from monitor.config.models import ProbesConfig, TargetConfig
from monitor.db.base import utcnow
from monitor.db.models import Outage, ProbeResult, Target, TargetState
from monitor.probes.record import load_probe_targets
from monitor.probes.round import Prober
from monitor.probes.schedule import Shard
from monitor.targets import upsert_target
from tests.support import FIXTURES as SHARED_FIXTURES
from tests.support import FeedServer

DCGM = SHARED_FIXTURES / "feeds" / "dcgm"
FAST = ProbesConfig(retry_interval=0.2)


def add_target(sessions: sessionmaker[Session], **fields: object) -> int:
    cfg = TargetConfig.model_validate({"interval": 1, "timeout": 0.5, **fields})
    with sessions() as session, session.begin():
        row = upsert_target(session, cfg, "config")
        session.flush()
        return row.id


def outages(
    sessions: sessionmaker[Session], target_id: int, series: str = "reachable"
) -> list[Outage]:
    with sessions() as session:
        query = select(Outage).where(Outage.target_id == target_id, Outage.series == series)
        return list(session.scalars(query.order_by(Outage.start)))


def test_a_scripted_outage_is_recorded_within_one_interval_of_the_truth(
    sessions: sessionmaker[Session], server: FeedServer
) -> None:
    tid = add_target(sessions, name="flap", kind="http", url=f"{server.url}/healthz")
    truth: dict[str, datetime] = {}
    for second in range(9):
        if second == 3:
            server.routes["/healthz"] = (503, b"down")
            truth["down"] = utcnow()
        if second == 6:
            server.routes["/healthz"] = (200, b"ok")
            truth["up"] = utcnow()
        started = time.monotonic()
        Prober(sessions, "test", FAST).round([tid])
        time.sleep(max(0, 1 - (time.monotonic() - started)))
    [outage] = outages(sessions, tid)
    assert outage.end is not None
    interval = timedelta(seconds=1)
    assert truth["down"] <= outage.start <= truth["down"] + interval
    assert truth["up"] <= outage.end <= truth["up"] + interval


def test_the_failing_probe_starts_the_outage_and_confirmation_comes_seconds_later(
    sessions: sessionmaker[Session], server: FeedServer
) -> None:
    tid = add_target(sessions, name="t", kind="http", url=f"{server.url}/healthz")
    Prober(sessions, "test", FAST).round([tid])
    server.routes["/healthz"] = (500, b"")
    report = Prober(sessions, "test", FAST).round([tid])
    assert report.states[tid] == "down"
    [outage] = outages(sessions, tid)
    with sessions() as session:
        failures = list(
            session.scalars(
                select(ProbeResult.at)
                .where(ProbeResult.target_id == tid, ProbeResult.ok.is_(False))
                .order_by(ProbeResult.at)
            )
        )
    assert len(failures) == 2  # the first probe and one confirmation re-probe
    assert outage.start == failures[0]
    assert outage.confirmed_at is not None
    assert timedelta(0) < outage.confirmed_at - outage.start < timedelta(seconds=2)
    assert [t.transition.state for t in report.transitions] == ["down", "down"]


def test_recovery_confirmations_decide_how_many_probes_end_an_outage(
    sessions: sessionmaker[Session], server: FeedServer
) -> None:
    one = add_target(
        sessions, name="one", kind="http", url=f"{server.url}/healthz", recovery_confirmations=1
    )
    three = add_target(
        sessions, name="three", kind="http", url=f"{server.url}/healthz", recovery_confirmations=3
    )
    server.routes["/healthz"] = (500, b"")
    prober = Prober(sessions, "test", FAST)
    assert prober.round([one, three]).states == {one: "down", three: "down"}
    server.routes["/healthz"] = (200, b"ok")

    report = prober.round([one, three])

    assert report.states == {one: "up", three: "up"}
    # one resolves on its first good probe; three needs two quick re-probes more in the round
    with sessions() as session:
        good = {
            tid: session.scalar(
                select(func.count()).where(ProbeResult.target_id == tid, ProbeResult.ok.is_(True))
            )
            for tid in (one, three)
        }
    assert good == {one: 1, three: 3}
    ends = [outage.end for tid in (one, three) for outage in outages(sessions, tid)]
    assert len(ends) == 2
    assert None not in ends


def test_a_hanging_target_times_out_and_a_refused_one_fails_fast(
    sessions: sessionmaker[Session], server: FeedServer
) -> None:
    server.delays["/slow"] = 3
    server.routes["/slow"] = (200, b"late")
    hang = add_target(sessions, name="hang", kind="http", url=f"{server.url}/slow")
    refused = add_target(sessions, name="refused", kind="tcp", url="tcp://127.0.0.1:1")
    started = time.monotonic()
    report = Prober(sessions, "test", FAST).round([hang, refused])
    assert time.monotonic() - started < 3  # two 0.5 s timeouts and a 0.2 s pause, not 3 s hangs
    by_target = {r.target: r for r in report.results}
    assert (by_target["hang"].ok, by_target["hang"].error_kind) == (False, "timeout")
    assert (by_target["refused"].ok, by_target["refused"].error_kind) == (False, "connect")
    assert report.states == {hang: "down", refused: "down"}


def test_body_conditions_and_expected_statuses_decide_ok(
    sessions: sessionmaker[Session], server: FeedServer
) -> None:
    server.routes["/ready"] = (200, b'{"ready": false}')
    server.routes["/teapot"] = (418, b"")
    body = add_target(
        sessions, name="b", kind="http", url=f"{server.url}/ready", expect_body='"ready": true'
    )
    status = add_target(
        sessions, name="s", kind="http", url=f"{server.url}/teapot", expect_status=[418]
    )
    report = Prober(sessions, "test", FAST).round([body, status])
    by_target = {r.target: r for r in report.results}
    assert (by_target["b"].ok, by_target["b"].error_kind) == (False, "body")
    assert (by_target["s"].ok, by_target["s"].status_code) == (True, 418)


def test_a_real_dcgm_document_makes_the_instance_usable_only_with_all_its_gpus(
    sessions: sessionmaker[Session], server: FeedServer
) -> None:
    server.routes["/metrics"] = (200, (DCGM / "cncf-kops-aws-L4.prom").read_bytes())
    one = add_target(sessions, name="l4", kind="dcgm", url=f"{server.url}/metrics", gpus=1)
    two = add_target(sessions, name="l4x2", kind="dcgm", url=f"{server.url}/metrics", gpus=2)
    report = Prober(sessions, "test", FAST).round([one, two])
    by_target = {r.target: r for r in report.results}
    assert (by_target["l4"].ok, by_target["l4"].usable, by_target["l4"].gpus_seen) == (
        True,
        True,
        1,
    )
    assert (by_target["l4x2"].ok, by_target["l4x2"].usable) == (True, False)
    assert by_target["l4x2"].error is not None
    assert "missing" in by_target["l4x2"].error
    assert outages(sessions, two, "reachable") == []
    assert len(outages(sessions, two, "usable")) == 1


def test_garbage_metrics_keep_the_instance_reachable_but_not_usable(
    sessions: sessionmaker[Session], server: FeedServer
) -> None:
    server.routes["/metrics"] = (200, b"\x00\xff{{{ not prometheus text")
    tid = add_target(sessions, name="g", kind="dcgm", url=f"{server.url}/metrics", gpus=1)
    [result] = Prober(sessions, "test", FAST).round([tid]).results
    assert (result.ok, result.usable, result.error_kind) == (True, False, "parse")


def test_a_retired_target_in_a_queued_shard_is_skipped(
    sessions: sessionmaker[Session], server: FeedServer
) -> None:
    tid = add_target(sessions, name="gone", kind="http", url=f"{server.url}/healthz")
    with sessions() as session, session.begin():
        session.get_one(Target, tid).retired_at = datetime.now(UTC)
    assert Prober(sessions, "test", FAST).round([tid]).results == ()


def test_a_dcgm_scrape_is_remembered_as_the_next_rounds_baseline(
    sessions: sessionmaker[Session], server: FeedServer
) -> None:
    server.routes["/metrics"] = (200, (DCGM / "cncf-kops-aws-L4.prom").read_bytes())
    gpu = add_target(sessions, name="l4", kind="dcgm", url=f"{server.url}/metrics", gpus=1)
    web = add_target(sessions, name="web", kind="http", url=f"{server.url}/healthz")
    Prober(sessions, "test", FAST).round([gpu, web])
    with sessions() as session:
        remembered = session.get_one(TargetState, (gpu, "test", "usable")).detail
        by_id = {t.id: t for t in load_probe_targets(session, [gpu, web], "test")}
        elsewhere = load_probe_targets(session, [gpu], "other-vantage")
    assert "gpu_counters" in remembered
    assert by_id[gpu].gpu_baseline == remembered["gpu_counters"]
    assert by_id[web].gpu_baseline is None
    assert elsewhere[0].gpu_baseline is None  # each vantage remembers its own scrapes
    [again] = Prober(sessions, "test", FAST).round([gpu]).results
    assert (again.ok, again.usable) == (True, True)


def test_a_failed_canary_makes_the_round_unknown_and_a_live_one_changes_nothing(
    sessions: sessionmaker[Session], server: FeedServer
) -> None:
    tid = add_target(sessions, name="c", kind="http", url=f"{server.url}/healthz")
    blind = ProbesConfig(retry_interval=0.2, canary="tcp://127.0.0.1:1")  # refused: we are cut off
    [unknown] = Prober(sessions, "test", blind).round([tid]).results
    assert (unknown.ok, unknown.error_kind) == (None, "vantage")
    seeing = ProbesConfig(retry_interval=0.2, canary=f"{server.url}/healthz")
    [known] = Prober(sessions, "test", seeing).round([tid]).results
    assert (known.ok, known.status_code) == (True, 200)
    with sessions() as session:
        assert session.get_one(TargetState, (tid, "test", "reachable")).state == "up"


def test_a_claimed_slot_is_waited_for_and_a_passed_one_is_not(
    sessions: sessionmaker[Session], server: FeedServer
) -> None:
    """A shard claimed ahead of time probes each target at its slot, not when it arrives."""
    ahead = add_target(sessions, name="ahead", kind="http", url=f"{server.url}/healthz")
    behind = add_target(sessions, name="behind", kind="http", url=f"{server.url}/healthz")
    now = utcnow()
    slots = {ahead: now + timedelta(seconds=0.6), behind: now - timedelta(seconds=3)}
    report = Prober(sessions, "test", FAST).round(Shard([ahead, behind], slots))
    at = {r.target_id: r.at for r in report.results}
    assert slots[ahead] <= at[ahead] < slots[ahead] + timedelta(seconds=0.3)
    assert now <= at[behind] < now + timedelta(seconds=0.3)
