"""Sweeps on the real databases, through a toy source kind that needs only its module's record
and one registry call (as a plug-in would): what is added, updated, kept, refused and retired,
how a life's end treats the outage it opened, and what a failed sweep leaves alone."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.orm import Session, sessionmaker

from monitor.alerts.service import evaluate, on_transitions
from monitor.config import parse_config
from monitor.db.models import Alert, DiscoverySource, Outage, Target, TargetState
from monitor.discovery.kind import DiscoveryKind, SourceOptions, SweepContext
from monitor.discovery.kinds import register, unregister
from monitor.discovery.model import Instance
from monitor.errors import SweepFailed
from monitor.fleet.sweep import due_sources, sweep
from monitor.probes.quorum import TargetTransition
from monitor.probes.state import Transition
from monitor.targets import sync_config_targets

T0 = datetime(2026, 12, 4, 12, tzinfo=UTC)
CLOUD: dict[str, Any] = {"instances": [], "error": None}


class ToyOptions(SourceOptions):
    region: str = "lab-1"


def list_toy(options: ToyOptions, context: SweepContext) -> Sequence[Instance]:
    if CLOUD["error"]:
        raise SweepFailed(CLOUD["error"])
    return list(CLOUD["instances"])


TOY = DiscoveryKind(name="toy", options=ToyOptions, list_instances=list_toy)


@pytest.fixture(autouse=True)
def toy_kind() -> Iterator[None]:
    register(TOY)
    CLOUD.update(instances=[], error=None)
    yield
    unregister("toy")


CONFIG = """
targets:
  - {name: config-box, kind: http, url: "http://127.0.0.1:1/"}
discovery:
  - name: cloud
    kind: toy
    retire_after: 2
    prices: {p5.48xlarge: 98.32}
    price_tag: price
    template:
      {kind: http, url: "http://{ip}:8000/healthz", pool: "{tags.pool}", sla: aws-ec2-instance}
  - name: other
    kind: toy
    template: {kind: tcp, url: "tcp://{ip}:22"}
"""


def box(external_id: str, ip: str = "10.0.0.1", pool: str = "h100", **more: Any) -> Instance:
    tags = {"pool": pool, **more.pop("tags", {})}
    return Instance(
        external_id=external_id,
        name=more.pop("name", external_id),
        fields={"ip": ip},
        tags=tags,
        provider="aws",
        region="us-east-1",
        instance_type=more.pop("instance_type", "p5.48xlarge"),
        **more,
    )


def targets(sessions: sessionmaker[Session]) -> dict[str, Target]:
    with sessions() as session:
        return {t.name: t for t in session.scalars(select(Target))}


def run(sessions: sessionmaker[Session], at: datetime, name: str = "cloud", **kw: Any):
    config = parse_config(CONFIG)
    source = config.source(name)
    assert source is not None
    return sweep(sessions, config, source, at, **kw)


def test_new_instances_are_registered_with_their_gpus_price_capacity_and_id(
    sessions: sessionmaker[Session],
) -> None:
    CLOUD["instances"] = [
        box("i-1", capacity="spot"),
        box("i-2", ip="10.0.0.2", instance_type="g5.12xlarge", tags={"price": "5.67"}),
    ]
    outcome = run(sessions, T0)
    assert outcome.ok
    assert outcome.counts()["added"] == 2
    rows = targets(sessions)
    one, two = rows["i-1"], rows["i-2"]
    assert (one.url, one.pool, one.gpus, one.hourly_price) == (
        "http://10.0.0.1:8000/healthz", "h100", 8, 98.32,
    )  # fmt: skip
    assert (one.capacity, one.external_id, one.discovered_by, one.source) == (
        "spot", "i-1", "cloud", "discovery",
    )  # fmt: skip
    assert (one.provider, one.region, one.sla_policy) == ("aws", "us-east-1", "aws-ec2-instance")
    assert (two.gpus, two.hourly_price) == (4, 5.67)  # 4 x A10G; the price tag wins
    assert [s.to_json("cloud")["action"] for s in outcome.steps] == ["added", "added"]


def test_a_source_is_due_when_never_swept_or_its_every_has_passed(
    sessions: sessionmaker[Session],
) -> None:
    config = parse_config(CONFIG)

    def due(at: datetime) -> list[str]:
        with sessions() as session:
            return [source.name for source in due_sources(session, config, at)]

    assert due(T0) == ["cloud", "other"]
    run(sessions, T0)
    assert due(T0 + timedelta(seconds=30)) == ["other"]  # every: 60 s, the default
    assert due(T0 + timedelta(seconds=60)) == ["cloud", "other"]


def test_a_changed_instance_is_updated_in_place_and_an_unchanged_one_kept(
    sessions: sessionmaker[Session],
) -> None:
    CLOUD["instances"] = [box("i-1"), box("i-2", ip="10.0.0.2")]
    run(sessions, T0)
    first_id = targets(sessions)["i-1"].id
    CLOUD["instances"] = [box("i-1", pool="a100"), box("i-2", ip="10.0.0.2")]
    outcome = run(sessions, T0 + timedelta(minutes=1))
    by_target = {s.target: s for s in outcome.steps}
    assert by_target["i-1"].action == "updated"
    assert by_target["i-1"].reason == "changed: pool"
    assert (by_target["i-2"].action, by_target["i-2"].reason) == ("kept", "unchanged")
    assert targets(sessions)["i-1"].id == first_id  # the same row: its history stays
    assert targets(sessions)["i-1"].pool == "a100"


def test_a_missing_instance_is_retired_only_after_retire_after_good_sweeps(
    sessions: sessionmaker[Session],
) -> None:
    CLOUD["instances"] = [box("i-1"), box("i-2", ip="10.0.0.2")]
    run(sessions, T0)
    CLOUD["instances"] = [box("i-1")]
    first = {s.target: s for s in run(sessions, T0 + timedelta(minutes=1)).steps}
    assert (first["i-2"].action, first["i-2"].reason) == ("kept", "missing from 1 of 2 sweeps")
    CLOUD["error"] = "toy: unreachable"  # a failed sweep in between counts for nothing
    assert not run(sessions, T0 + timedelta(minutes=2)).ok
    assert targets(sessions)["i-2"].retired_at is None
    CLOUD["error"] = None
    second = {s.target: s for s in run(sessions, T0 + timedelta(minutes=3)).steps}
    assert (second["i-2"].action, second["i-2"].reason) == ("retired", "missing")
    gone = targets(sessions)["i-2"]
    assert gone.retired_at == T0 + timedelta(minutes=3)
    assert gone.ended_by == "unknown"
    assert gone.end_detail == "missing from 2 consecutive successful sweeps"


def test_a_failed_sweep_retires_nothing_and_is_recorded_on_the_source(
    sessions: sessionmaker[Session],
) -> None:
    CLOUD["instances"] = [box("i-1")]
    run(sessions, T0)
    CLOUD.update(instances=[], error="toy lab-1: unauthorized: AuthFailure")
    for minute in (1, 2, 3, 4):
        outcome = run(sessions, T0 + timedelta(minutes=minute))
        assert outcome.error == "toy lab-1: unauthorized: AuthFailure"
        assert not outcome.steps
    assert targets(sessions)["i-1"].retired_at is None
    with sessions() as session:
        state = session.get(DiscoverySource, "cloud")
        assert state is not None
        assert (state.consecutive_failures, state.last_success_at) == (4, T0)
        assert state.last_error == "toy lab-1: unauthorized: AuthFailure"


def test_discovery_failing_fires_after_its_threshold_and_resolves_on_a_good_sweep(
    sessions: sessionmaker[Session],
) -> None:
    config = parse_config(CONFIG + "alerts: {discovery_failing_after: 5m}\n")
    CLOUD["instances"] = [box("i-1")]
    run(sessions, T0)
    CLOUD["error"] = "toy lab-1: throttled"
    run(sessions, T0 + timedelta(minutes=1))

    def firing(at: datetime) -> list[Alert]:
        with sessions() as session, session.begin():
            evaluate(session, config, at)
        with sessions() as session:
            query = select(Alert).where(Alert.rule == "discovery_failing", Alert.state == "firing")
            return list(session.scalars(query))

    assert firing(T0 + timedelta(minutes=4)) == []  # failing, but not for long yet
    run(sessions, T0 + timedelta(minutes=6))
    alerts = firing(T0 + timedelta(minutes=6))
    assert [a.labels for a in alerts] == [{"source": "cloud", "kind": "toy"}]
    assert "throttled" in alerts[0].summary
    CLOUD["error"] = None
    run(sessions, T0 + timedelta(minutes=7))
    assert firing(T0 + timedelta(minutes=7)) == []


def test_one_instance_two_sources_is_one_target(sessions: sessionmaker[Session]) -> None:
    CLOUD["instances"] = [box("i-1")]
    run(sessions, T0)
    outcome = run(sessions, T0, name="other")
    assert [(s.action, s.reason) for s in outcome.steps] == [
        ("kept", "one target: registered by source cloud")
    ]
    assert list(targets(sessions)) == ["i-1"]


def test_another_source_starts_a_new_life_only_where_the_first_lost_sight_of_it(
    sessions: sessionmaker[Session],
) -> None:
    CLOUD["instances"] = [box("i-1"), box("i-2", ip="10.0.0.2")]
    run(sessions, T0)
    CLOUD["instances"] = [
        box("i-1", state="ended", ended_by="preempted", end_detail="reclaimed"),
    ]  # the cloud ends i-1; i-2 drops out of the first source's listing
    run(sessions, T0 + timedelta(minutes=1))
    run(sessions, T0 + timedelta(minutes=2))  # i-2: missing from 2 sweeps, retired
    CLOUD["instances"] = [box("i-1"), box("i-2", ip="10.0.0.2", name="node-2")]
    steps = {s.external_id: s for s in run(sessions, T0 + timedelta(minutes=3), "other").steps}
    assert (steps["i-1"].action, steps["i-1"].reason) == (
        "kept", "one target: source cloud saw its life end (preempted)",
    )  # fmt: skip
    assert (steps["i-2"].action, steps["i-2"].reason) == ("added", "new instance")
    with sessions() as session:
        lives = session.execute(
            select(Target.external_id, Target.discovered_by, Target.retired_at).order_by(Target.id)
        ).all()
    assert [(e, d, r is None) for e, d, r in lives if e] == [
        ("i-1", "cloud", False), ("i-2", "cloud", False), ("i-2", "other", True),
    ]  # fmt: skip


def test_a_name_taken_by_a_config_target_is_refused_with_one_line(
    sessions: sessionmaker[Session],
) -> None:
    with sessions() as session, session.begin():
        sync_config_targets(session, parse_config(CONFIG), T0)
    CLOUD["instances"] = [box("i-9", name="config-box")]
    steps = run(sessions, T0).steps
    assert [(s.action, s.reason) for s in steps] == [
        ("refused", "name 'config-box' is taken by a config target")
    ]
    assert targets(sessions)["config-box"].source == "config"


def test_a_template_field_the_instance_lacks_is_refused_and_loses_nothing(
    sessions: sessionmaker[Session],
) -> None:
    CLOUD["instances"] = [box("i-1")]
    run(sessions, T0)
    CLOUD["instances"] = [Instance("i-1", "i-1", tags={"pool": "h100"}), Instance("i-2", "i-2")]
    outcome = run(sessions, T0 + timedelta(minutes=1))
    refused = {s.target: s.reason for s in outcome.steps}
    assert refused["i-1"].startswith("template url: the instance has no 'ip'")
    assert set(refused) == {"i-1", "i-2"}
    assert "i-2" not in targets(sessions)
    run(sessions, T0 + timedelta(minutes=2))
    assert targets(sessions)["i-1"].retired_at is None  # refused is seen, never missing


def test_names_two_instances_share_are_refused_for_the_second(
    sessions: sessionmaker[Session],
) -> None:
    CLOUD["instances"] = [box("i-1", name="trainer"), box("i-2", name="trainer")]
    steps = run(sessions, T0).steps
    assert [s.action for s in steps] == ["added", "refused"]
    assert "taken by instance i-1 in this sweep" in steps[1].reason


def _open_outage(sessions: sessionmaker[Session], name: str, start: datetime) -> None:
    with sessions() as session, session.begin():
        target = session.scalars(select(Target).where(Target.name == name)).one()
        session.add(Outage(target_id=target.id, series="reachable", start=start))


def _outages(sessions: sessionmaker[Session], name: str) -> list[tuple[datetime, datetime | None]]:
    with sessions() as session:
        query = select(Outage.start, Outage.end).join(Target).where(Target.name == name)
        return [tuple(row) for row in session.execute(query)]  # type: ignore[misc]


def test_a_preemption_ends_the_life_where_its_failures_began_and_is_no_outage(
    sessions: sessionmaker[Session],
) -> None:
    CLOUD["instances"] = [box("i-1", capacity="spot")]
    run(sessions, T0)  # seen running at T0
    _open_outage(sessions, "i-1", T0 + timedelta(seconds=40))  # the reclaim, as probes saw it
    CLOUD["instances"] = [
        box("i-1", capacity="spot", state="ended", ended_by="preempted",
            ended_at=T0 + timedelta(seconds=50), end_detail="Server.SpotInstanceTermination"),
    ]  # fmt: skip
    steps = run(sessions, T0 + timedelta(minutes=1)).steps
    assert [(s.action, s.reason) for s in steps] == [("retired", "preempted")]
    row = targets(sessions)["i-1"]
    assert row.retired_at == T0 + timedelta(seconds=40)
    assert (row.ended_by, row.end_detail) == ("preempted", "Server.SpotInstanceTermination")
    assert _outages(sessions, "i-1") == []


def test_failures_the_cloud_saw_running_stay_downtime_up_to_a_user_stop(
    sessions: sessionmaker[Session],
) -> None:
    CLOUD["instances"] = [box("i-1")]
    run(sessions, T0)
    _open_outage(sessions, "i-1", T0 + timedelta(seconds=10))
    run(sessions, T0 + timedelta(minutes=1))  # still listed running while it fails: down
    stopped = T0 + timedelta(minutes=5)
    CLOUD["instances"] = [box("i-1", state="ended", ended_by="user", ended_at=stopped)]
    run(sessions, T0 + timedelta(minutes=6))
    assert targets(sessions)["i-1"].retired_at == stopped
    assert _outages(sessions, "i-1") == [(T0 + timedelta(seconds=10), stopped)]


def test_a_provider_end_keeps_its_outage_as_downtime_up_to_the_end(
    sessions: sessionmaker[Session],
) -> None:
    CLOUD["instances"] = [box("i-1")]
    run(sessions, T0)
    _open_outage(sessions, "i-1", T0 + timedelta(seconds=30))
    CLOUD["instances"] = [box("i-1", state="ended", ended_by="provider")]
    run(sessions, T0 + timedelta(minutes=2))
    row = targets(sessions)["i-1"]
    assert (row.retired_at, row.ended_by) == (T0 + timedelta(minutes=2), "provider")
    assert _outages(sessions, "i-1") == [(T0 + timedelta(seconds=30), T0 + timedelta(minutes=2))]


def test_an_instance_running_again_is_revived_with_its_end_forgotten(
    sessions: sessionmaker[Session],
) -> None:
    CLOUD["instances"] = [box("i-1")]
    run(sessions, T0)
    CLOUD["instances"] = [box("i-1", state="ended", ended_by="user")]
    run(sessions, T0 + timedelta(minutes=1))
    CLOUD["instances"] = [box("i-1")]
    steps = run(sessions, T0 + timedelta(minutes=2)).steps
    assert [(s.action, s.reason) for s in steps] == [("updated", "running again")]
    row = targets(sessions)["i-1"]
    assert (row.retired_at, row.ended_by) == (None, None)


def test_a_dry_run_writes_nothing(sessions: sessionmaker[Session]) -> None:
    CLOUD["instances"] = [box("i-1")]
    outcome = run(sessions, T0, dry_run=True)
    assert [s.action for s in outcome.steps] == ["added"]
    assert targets(sessions) == {}
    with sessions() as session:
        assert session.get(DiscoverySource, "cloud") is None


def test_a_sweep_costs_the_same_statements_at_ten_and_at_a_thousand_instances(
    sessions: sessionmaker[Session],
) -> None:
    def statements(count: int, at: datetime) -> int:
        CLOUD["instances"] = [box(f"i-{n}", ip=f"10.1.{n // 250}.{n % 250}", name=f"n{n}")
                              for n in range(count)]  # fmt: skip
        seen: list[str] = []
        with sessions() as session:
            bind = session.get_bind()
        engine = bind.engine
        listener = lambda *args: seen.append(args[2])  # noqa: E731
        event.listen(engine, "before_cursor_execute", listener)
        try:
            run(sessions, at)
        finally:
            event.remove(engine, "before_cursor_execute", listener)
        return len(seen)

    small, large = statements(10, T0), statements(1000, T0 + timedelta(minutes=1))
    # the large sweep adds 990 (a few batched INSERTs) and keeps 10: not one statement each
    assert large <= small + 10, (small, large)
    kept = statements(1000, T0 + timedelta(minutes=2))  # nothing changed: reads and 1 UPDATE
    assert kept <= small, (small, kept)
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(Target)) == 1000


def _verdict(sessions: sessionmaker[Session], name: str, since: datetime) -> int:
    with sessions() as session, session.begin():
        target = session.scalars(select(Target).where(Target.name == name)).one()
        session.add(TargetState(target_id=target.id, vantage="*", series="reachable",
                                state="down", since=since))  # fmt: skip
        return target.id


def _down_alerts(sessions: sessionmaker[Session]) -> list[str]:
    with sessions() as session:
        query = select(Alert.labels).where(Alert.rule == "target_down", Alert.state == "firing")
        return sorted(labels["target"] for labels in session.scalars(query))


def test_a_discovered_targets_down_alert_waits_for_a_sweep_that_lists_it_running(
    sessions: sessionmaker[Session],
) -> None:
    config = parse_config(CONFIG)
    CLOUD["instances"] = [box("i-1"), box("i-2", ip="10.0.0.2", capacity="spot")]
    run(sessions, T0)
    down_at = T0 + timedelta(seconds=30)
    transitions = [
        TargetTransition(_verdict(sessions, name, down_at), name, "reachable",
                         Transition("up", "down", down_at))
        for name in ("i-1", "i-2")
    ]  # fmt: skip
    with sessions() as session, session.begin():
        on_transitions(session, transitions, config, down_at)
    assert _down_alerts(sessions) == []  # held: down, or gone?
    CLOUD["instances"] = [
        box("i-1"),
        box("i-2", ip="10.0.0.2", capacity="spot", state="ended", ended_by="preempted"),
    ]
    run(sessions, T0 + timedelta(seconds=60))
    with sessions() as session, session.begin():
        evaluate(session, config, T0 + timedelta(seconds=61))
    assert _down_alerts(sessions) == ["i-1"]  # listed running, yet down; i-2 was reclaimed
