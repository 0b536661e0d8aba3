"""The account events' alerts: ``interruption_notice``, ``scheduled_maintenance`` and
``provider_event``. The rules as tables over read-model views; then on the real databases,
events stored as a poll, a push or an agent stores them (monitor/fleet/account_store.py) and
judged at once (``on_account_events``) or by the periodic evaluation: each fires once however
often it is judged, a maintenance reminds exactly once before it starts, each resolves when its
event closes, ends or passes its deadline, and they are silenced and routed like every alert."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from monitor.account.model import AccountEvent
from monitor.alerts.channels.model import AlertMessage
from monitor.alerts.delivery import deliver_due
from monitor.alerts.rules import (
    TargetFacts,
    fingerprint,
    from_account_event,
    from_interruption,
    from_maintenance,
    from_provider_event,
)
from monitor.alerts.service import evaluate, on_account_events
from monitor.config import Config, parse_config
from monitor.db.models import AccountEventRecord, Alert, Channel, Delivery
from monitor.fleet.account_store import record
from monitor.history.account_events import AccountEventView
from monitor.targets import sync_config_targets
from tests.support import WebhookReceiver

NOW = datetime(2026, 12, 6, 10, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
TRAINER = TargetFacts("trainer-3", "http", "aws", "us-east-1", "us-east-1a", "h100")
OTHER = TargetFacts("trainer-4", "http", "aws", "us-east-1", "us-east-1b", "h100")

# --------------------------------------------------------------------------- the rules


def view(**changes: Any) -> AccountEventView:
    """A spot notice for trainer-3 two minutes ahead, as the read model gives it."""
    base = AccountEventView(
        id=1,
        provider="aws",
        source="agent",
        key="i-0abc:instance-action",
        kind="preemption",
        status="upcoming",
        starts_at=NOW + timedelta(minutes=2),
        ends_at=None,
        updated_at=NOW,
        region="us-east-1",
        service="EC2",
        title="instance-action",
        detail="spot instance-action terminate\nmore lines the summary leaves out",
        entities=("i-0abc",),
        raw_type="instance-action",
        reported_for="trainer-3",
        via="agent",
        readings=1,
        accepted=False,
        first_seen_at=NOW,
        last_seen_at=NOW,
        scope="targets",
        targets=("trainer-3",),
    )
    return replace(base, **changes)


@pytest.mark.parametrize(
    ("event", "at", "firing", "left", "summary", "when"),
    [
        pytest.param(
            view(),
            NOW + timedelta(seconds=2),
            True,
            118,
            "trainer-3: aws preemption at 2026-12-06 10:02:00Z (118 s left): "
            "spot instance-action terminate",
            NOW,
            id="upcoming",
        ),
        pytest.param(
            view(status="open", starts_at=None),
            NOW,
            True,
            None,
            "trainer-3: aws preemption (no deadline given): spot instance-action terminate",
            NOW,
            id="no-deadline",
        ),
        pytest.param(
            view(status="open"),
            NOW + timedelta(minutes=11),
            True,
            0,
            "trainer-3: aws preemption at 2026-12-06 10:02:00Z (0 s left): "
            "spot instance-action terminate",
            NOW,
            id="just-past-the-deadline",
        ),
        pytest.param(
            view(status="open"),
            NOW + timedelta(minutes=12),
            False,
            0,
            "trainer-3: aws preemption at 2026-12-06 10:02:00Z is past",
            NOW + timedelta(minutes=12),
            id="ten-minutes-past",
        ),
        pytest.param(
            view(status="closed", ends_at=NOW + timedelta(minutes=3)),
            NOW + timedelta(minutes=5),
            False,
            0,
            "trainer-3: aws preemption is over",
            NOW + timedelta(minutes=3),
            id="closed",
        ),
        pytest.param(
            view(status="closed"),
            NOW + timedelta(minutes=1),
            False,
            60,
            "trainer-3: aws preemption is over",
            NOW + timedelta(minutes=1),
            id="closed-without-an-end",
        ),
    ],
)
def test_an_interruption_notice_fires_until_it_closes_or_is_ten_minutes_past(
    event: AccountEventView,
    at: datetime,
    firing: bool,
    left: int | None,
    summary: str,
    when: datetime,
) -> None:
    signal = from_interruption(event, TRAINER, at)
    assert (signal.rule, signal.severity) == ("interruption_notice", "critical")
    assert (signal.firing, signal.summary, signal.at) == (firing, summary, when)
    assert signal.extra == {
        "deadline": None if event.starts_at is None else "2026-12-06T10:02:00Z",
        "seconds_left": left,
        "event_id": "i-0abc:instance-action",
        "event_kind": "preemption",
    }
    assert signal.labels == {
        "target": "trainer-3",
        "provider": "aws",
        "region": "us-east-1",
        "zone": "us-east-1a",
        "pool": "h100",
        "kind": "preemption",
        "event": "i-0abc:instance-action",
    }


def test_an_interruption_notice_is_one_alert_per_target_and_event() -> None:
    both = view(targets=("trainer-3", "trainer-4"))
    signals = from_account_event(both, [TRAINER, OTHER], NOW, HOUR)
    again = from_account_event(both, [TRAINER, OTHER], NOW + timedelta(seconds=30), HOUR)
    other_key = from_account_event(view(key="i-0abc:2"), [TRAINER], NOW, HOUR)
    other_cloud = from_account_event(view(provider="gcp"), [TRAINER], NOW, HOUR)
    identity = {"target": "trainer-3", "provider": "aws", "event": "i-0abc:instance-action"}

    assert [s.labels["target"] for s in signals] == ["trainer-3", "trainer-4"]
    assert [s.fingerprint for s in signals] == [s.fingerprint for s in again]
    assert signals[0].fingerprint == fingerprint("interruption_notice", identity)
    assert len({s.fingerprint for s in [*signals, *other_key, *other_cloud]}) == 4


def test_a_target_without_a_provider_takes_the_event_s_for_its_labels() -> None:
    bare = TargetFacts("laptop-gpu", "heartbeat", None, None, None, None)
    [signal] = from_account_event(view(), [bare], NOW, HOUR)
    assert signal.labels == {
        "target": "laptop-gpu",
        "provider": "aws",
        "kind": "preemption",
        "event": "i-0abc:instance-action",
    }


RETIREMENT = view(
    source="ec2_events",
    key="i-0abc/instance-event-1",
    kind="retirement",
    status="upcoming",
    starts_at=NOW + timedelta(days=14),
    ends_at=NOW + timedelta(days=14, hours=2),
    detail="The instance is running on degraded hardware",
    reported_for=None,
    via="poll",
    targets=("trainer-3", "trainer-4"),
)


@pytest.mark.parametrize(
    ("event", "at", "firing", "remind_at", "summary", "when"),
    [
        pytest.param(
            RETIREMENT,
            NOW,
            True,
            NOW + timedelta(days=14) - HOUR,
            "aws retirement of trainer-3, trainer-4 at 2026-12-20 10:00:00Z until "
            "2026-12-20 12:00:00Z: The instance is running on degraded hardware",
            NOW,
            id="announced",
        ),
        pytest.param(
            replace(RETIREMENT, status="open"),
            NOW + timedelta(days=14, minutes=5),
            True,
            None,
            "aws retirement of trainer-3, trainer-4 at 2026-12-20 10:00:00Z until "
            "2026-12-20 12:00:00Z: The instance is running on degraded hardware",
            NOW,
            id="under-way-no-reminder",
        ),
        pytest.param(
            replace(RETIREMENT, kind="scheduled_maintenance", ends_at=None, detail=""),
            NOW,
            True,
            NOW + timedelta(days=14) - HOUR,
            "aws scheduled maintenance of trainer-3, trainer-4 at 2026-12-20 10:00:00Z: "
            "instance-action",
            NOW,
            id="maintenance-without-end-nor-detail",
        ),
        pytest.param(
            replace(RETIREMENT, status="open"),
            NOW + timedelta(days=14, hours=2),
            False,
            None,
            "aws retirement of trainer-3, trainer-4 is over",
            NOW + timedelta(days=14, hours=2),
            id="its-end-passed",
        ),
        pytest.param(
            replace(RETIREMENT, status="closed"),
            NOW + timedelta(days=2),
            False,
            None,
            "aws retirement of trainer-3, trainer-4 is over",
            NOW + timedelta(days=2),
            id="canceled",
        ),
    ],
)
def test_scheduled_maintenance_fires_when_announced_and_reminds_before_it_starts(
    event: AccountEventView,
    at: datetime,
    firing: bool,
    remind_at: datetime | None,
    summary: str,
    when: datetime,
) -> None:
    signal = from_maintenance(event, [TRAINER, OTHER], at, HOUR)
    assert (signal.rule, signal.severity) == ("scheduled_maintenance", "warning")
    assert (signal.firing, signal.remind_at, signal.summary, signal.at) == (
        firing,
        remind_at,
        summary,
        when,
    )
    assert signal.labels == {
        "provider": "aws",
        "event": "i-0abc/instance-event-1",
        "kind": event.kind,
        "region": "us-east-1",
    }
    assert signal.extra == {
        "event_id": "i-0abc/instance-event-1",
        "event_kind": event.kind,
        "starts_at": "2026-12-20T10:00:00Z",
        "ends_at": None if event.ends_at is None else "2026-12-20T12:00:00Z",
        "targets": ["trainer-3", "trainer-4"],
    }


def test_a_maintenance_of_many_targets_names_five_in_its_summary() -> None:
    many = [replace(TRAINER, name=f"t-{i}") for i in range(7)]
    signal = from_maintenance(replace(RETIREMENT, detail=""), many, NOW, HOUR)
    assert signal.summary.startswith("aws retirement of t-0, t-1, t-2, t-3, t-4 and 2 more at ")
    assert signal.extra["targets"] == [f"t-{i}" for i in range(7)]


ISSUE = view(
    source="aws_health",
    key="arn:aws:health:us-east-1::event/EC2/AWS_EC2_OPERATIONAL_ISSUE/abc",
    kind="issue",
    status="open",
    starts_at=NOW - HOUR,
    title="AWS_EC2_OPERATIONAL_ISSUE",
    detail="Increased API error rates in us-east-1",
    entities=(),
    reported_for=None,
    scope="region",
    targets=("trainer-3",),
)


@pytest.mark.parametrize(
    ("status", "firing", "summary"),
    [
        pytest.param(
            "upcoming",
            True,
            "aws issue on trainer-3: Increased API error rates in us-east-1",
            id="upcoming",
        ),
        pytest.param(
            "open",
            True,
            "aws issue on trainer-3: Increased API error rates in us-east-1",
            id="open",
        ),
        pytest.param("closed", False, "aws issue on trainer-3 is over", id="closed"),
    ],
)
def test_a_provider_event_fires_while_the_issue_is_upcoming_or_open(
    status: str, firing: bool, summary: str
) -> None:
    signal = from_provider_event(replace(ISSUE, status=status), [TRAINER], NOW)
    assert (signal.rule, signal.severity, signal.firing, signal.summary) == (
        "provider_event",
        "warning",
        firing,
        summary,
    )
    assert signal.labels == {"provider": "aws", "event": ISSUE.key, "region": "us-east-1"}
    assert signal.extra == {"event_id": ISSUE.key, "service": "EC2", "targets": ["trainer-3"]}


@pytest.mark.parametrize(
    ("event", "targets"),
    [
        pytest.param(view(kind="user_initiated"), [TRAINER], id="user-initiated"),
        pytest.param(view(targets=()), [], id="about-no-target-of-ours"),
        pytest.param(replace(RETIREMENT, scope="account", targets=()), [], id="account-wide"),
    ],
)
def test_what_the_user_did_and_what_names_none_of_ours_raise_nothing(
    event: AccountEventView, targets: list[TargetFacts]
) -> None:
    assert from_account_event(event, targets, NOW, HOUR) == []


# --------------------------------------------------------------------------- on the databases

TARGETS = """
targets:
  - {name: trainer-3, kind: http, url: 'http://127.0.0.1:9/', interval: 5, provider: aws,
     region: us-east-1, pool: h100, instance_id: i-0abc}
  - {name: trainer-4, kind: http, url: 'http://127.0.0.1:9/', interval: 5, provider: aws,
     region: us-east-1, pool: h100, instance_id: i-0def}
"""
CHANNELS = """
channels:
  - {name: pager, kind: webhook, url: 'http://127.0.0.1:9/pager'}
  - {name: chat, kind: webhook, url: 'http://127.0.0.1:9/chat'}
"""
SPOT = AccountEvent(
    provider="aws",
    source="agent",
    key="i-0abc:2026-12-06T10:02:00Z:terminate",
    kind="preemption",
    status="upcoming",
    starts_at=NOW + timedelta(minutes=2),
    updated_at=NOW,
    region="us-east-1",
    title="instance-action",
    detail="spot instance-action terminate",
    entities=("i-0abc",),
    raw_type="instance-action",
)
RETIRING = AccountEvent(
    provider="aws",
    source="ec2_events",
    key="i-0abc/instance-event-1",
    kind="retirement",
    status="upcoming",
    starts_at=NOW + timedelta(days=14),
    ends_at=NOW + timedelta(days=14, hours=2),
    updated_at=NOW,
    region="us-east-1",
    title="instance-retirement",
    detail="The instance is running on degraded hardware",
    entities=("i-0abc", "i-0def"),
    raw_type="instance-retirement",
)
ISSUE_ON_US = AccountEvent(
    provider="aws",
    source="aws_health",
    key="arn:aws:health:us-east-1::event/EC2/AWS_EC2_OPERATIONAL_ISSUE/abc",
    kind="issue",
    status="open",
    starts_at=NOW - HOUR,
    updated_at=NOW,
    region="us-east-1",
    service="EC2",
    title="AWS_EC2_OPERATIONAL_ISSUE",
    detail="Increased API error rates",
)


RULE = "interruption_notice"


def setup(session: Session, extra: str = "") -> Config:
    config = parse_config(TARGETS + CHANNELS + extra)
    sync_config_targets(session, config, NOW - timedelta(days=1))
    return config


def alerts(session: Session, rule: str) -> list[Alert]:
    return list(session.scalars(select(Alert).where(Alert.rule == rule).order_by(Alert.id)))


def sent(session: Session, rule: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(channel, event, payload) of ``rule``'s queued deliveries, in order."""
    query = (
        select(Channel.name, Delivery.event, Delivery.payload)
        .join(Delivery, Delivery.channel_id == Channel.id)
        .join(Alert, Alert.id == Delivery.alert_id)
        .where(Alert.rule == rule)
        .order_by(Delivery.id)
    )
    return [(channel, event, dict(payload)) for channel, event, payload in session.execute(query)]


def test_a_spot_notice_fires_at_once_and_once_however_often_it_is_judged(
    session: Session,
) -> None:
    config = setup(session, "routes: [{match: {}, channels: [pager]}]\n")
    record(session, [SPOT], NOW, "agent", target="trainer-3")
    on_account_events(session, config, NOW + timedelta(seconds=2))
    on_account_events(session, config, NOW + timedelta(seconds=3))
    record(session, [SPOT], NOW + timedelta(seconds=5), "agent", target="trainer-3")  # retried
    evaluate(session, config, NOW + timedelta(seconds=30))
    evaluate(session, config, NOW + timedelta(seconds=60))

    [alert] = alerts(session, "interruption_notice")
    assert (alert.state, alert.severity, alert.started_at.astimezone(UTC)) == (
        "firing",
        "critical",
        NOW,
    )
    assert alert.labels["target"] == "trainer-3"
    [(channel, event, payload)] = sent(session, "interruption_notice")
    assert (channel, event) == ("pager", "firing")
    assert payload["extra"] == {
        "deadline": "2026-12-06T10:02:00Z",
        "seconds_left": 118,
        "event_id": SPOT.key,
        "event_kind": "preemption",
    }
    assert payload["summary"] == (
        "trainer-3: aws preemption at 2026-12-06 10:02:00Z (118 s left): "
        "spot instance-action terminate"
    )


def test_a_spot_notice_resolves_ten_minutes_past_its_deadline(session: Session) -> None:
    config = setup(session)
    record(session, [SPOT], NOW, "agent", target="trainer-3")
    on_account_events(session, config, NOW)
    evaluate(session, config, NOW + timedelta(minutes=11))
    assert [a.state for a in alerts(session, "interruption_notice")] == ["firing"]

    evaluate(session, config, NOW + timedelta(minutes=12))
    evaluate(session, config, NOW + timedelta(minutes=13))
    [alert] = alerts(session, "interruption_notice")
    assert (alert.state, alert.resolved_at) == ("resolved", NOW + timedelta(minutes=12))
    assert [(c, e) for c, e, _ in sent(session, "interruption_notice")] == [
        ("chat", "firing"),
        ("pager", "firing"),
        ("chat", "resolved"),
        ("pager", "resolved"),
    ]


def test_a_spot_notice_resolves_when_it_closes_or_its_target_is_retired(
    session: Session,
) -> None:
    config = setup(session)
    other = replace(SPOT, key="i-0def:terminate", entities=("i-0def",))
    record(session, [SPOT, other], NOW, "agent")
    on_account_events(session, config, NOW)
    assert len(alerts(session, "interruption_notice")) == 2

    closed = replace(
        SPOT, status="closed", ends_at=NOW + timedelta(minutes=2), updated_at=NOW + HOUR
    )
    record(session, [closed], NOW + timedelta(minutes=3))
    on_account_events(session, config, NOW + timedelta(minutes=3))  # the poll's own judgement
    sync_config_targets(session, parse_config(TARGETS.split("  - {name: trainer-4")[0]), NOW)
    evaluate(session, config, NOW + timedelta(minutes=4))

    states = {a.labels["target"]: (a.state, a.resolved_at) for a in alerts(session, RULE)}
    assert states == {
        "trainer-3": ("resolved", NOW + timedelta(minutes=2)),
        "trainer-4": ("resolved", NOW + timedelta(minutes=4)),
    }
    [retired] = [a for a in alerts(session, RULE) if a.labels["target"] == "trainer-4"]
    assert retired.summary.endswith("resolved: target retired")


def test_a_retirement_is_announced_reminded_once_an_hour_ahead_and_resolved_when_it_ends(
    session: Session,
) -> None:
    config = setup(session, "routes: [{match: {}, channels: [pager]}]\nalerts: {renotify: 60s}\n")
    record(session, [RETIRING], NOW)
    on_account_events(session, config, NOW)
    start = RETIRING.starts_at or NOW
    moments = [
        NOW + timedelta(days=1),  # days ahead: no re-notification, however short renotify is
        start - timedelta(minutes=61),
        start - timedelta(minutes=59),  # the reminder
        start - timedelta(minutes=58),
        start - timedelta(minutes=1),
        start + timedelta(minutes=30),  # under way
        start + timedelta(hours=2),  # its end has passed
        start + timedelta(hours=3),
    ]
    for moment in moments:
        evaluate(session, config, moment)

    deliveries = sent(session, "scheduled_maintenance")
    assert [(event, p["extra"].get("reminder")) for _, event, p in deliveries] == [
        ("firing", None),
        ("firing", True),
        ("resolved", None),
    ]
    announced, reminder, resolved = (p for _, _, p in deliveries)
    assert announced["summary"] == (
        "aws retirement of trainer-3, trainer-4 at 2026-12-20 10:00:00Z until "
        "2026-12-20 12:00:00Z: The instance is running on degraded hardware"
    )
    assert reminder["summary"] == "Reminder: " + announced["summary"]
    assert resolved["resolved_at"] == "2026-12-20T12:00:00+00:00"
    assert announced["extra"] == {
        "event_id": RETIRING.key,
        "event_kind": "retirement",
        "starts_at": "2026-12-20T10:00:00Z",
        "ends_at": "2026-12-20T12:00:00Z",
        "targets": ["trainer-3", "trainer-4"],
    }
    [alert] = alerts(session, "scheduled_maintenance")
    assert (alert.state, alert.resolved_at) == ("resolved", start + timedelta(hours=2))
    assert alert.labels == {
        "provider": "aws",
        "event": RETIRING.key,
        "kind": "retirement",
        "region": "us-east-1",
    }


def test_a_reminder_is_queued_once_even_when_two_evaluations_race(session: Session) -> None:
    config = setup(session)
    record(session, [RETIRING], NOW)
    on_account_events(session, config, NOW)
    start = RETIRING.starts_at or NOW
    evaluate(session, config, start - timedelta(minutes=30))
    [alert] = alerts(session, "scheduled_maintenance")
    alert.last_notified_at = NOW  # as a replica that judged before this one committed saw it
    session.flush()
    evaluate(session, config, start - timedelta(minutes=29))
    reminders = [
        p for _, _, p in sent(session, "scheduled_maintenance") if p["extra"].get("reminder")
    ]
    assert len(reminders) == 2  # one per channel: the second evaluation queued nothing new


def test_a_moved_maintenance_reminds_again_before_its_new_start(session: Session) -> None:
    config = setup(session, "routes: [{match: {}, channels: [chat]}]\n")
    record(session, [RETIRING], NOW)
    start = RETIRING.starts_at or NOW
    evaluate(session, config, NOW)
    evaluate(session, config, start - timedelta(minutes=30))
    later = replace(
        RETIRING,
        starts_at=start + timedelta(days=7),
        ends_at=start + timedelta(days=7, hours=2),
        updated_at=start - timedelta(minutes=20),
    )
    record(session, [later], start - timedelta(minutes=20))
    on_account_events(session, config, start - timedelta(minutes=20))
    evaluate(session, config, start + timedelta(days=7) - timedelta(minutes=30))
    evaluate(session, config, start + timedelta(days=7) - timedelta(minutes=10))
    assert [p["extra"].get("reminder") for _, _, p in sent(session, "scheduled_maintenance")] == [
        None,
        True,
        True,
    ]


def test_a_maintenance_announced_within_the_hour_is_told_once_not_reminded(
    session: Session,
) -> None:
    config = setup(session, "routes: [{match: {}, channels: [chat]}]\n")
    soon = replace(RETIRING, starts_at=NOW + timedelta(minutes=30), ends_at=None)
    record(session, [soon], NOW)
    on_account_events(session, config, NOW)
    evaluate(session, config, NOW + timedelta(minutes=1))
    evaluate(session, config, NOW + timedelta(minutes=29))
    assert [e for _, e, _ in sent(session, "scheduled_maintenance")] == ["firing"]


def test_a_canceled_maintenance_resolves_as_soon_as_the_poll_stores_it(session: Session) -> None:
    config = setup(session, "routes: [{match: {}, channels: [chat]}]\n")
    record(session, [RETIRING], NOW)
    on_account_events(session, config, NOW)
    canceled = replace(RETIRING, status="closed", updated_at=NOW + HOUR)
    record(session, [canceled], NOW + HOUR)
    on_account_events(session, config, NOW + HOUR)
    [alert] = alerts(session, "scheduled_maintenance")
    assert (alert.state, alert.resolved_at) == ("resolved", NOW + HOUR)
    assert [e for _, e, _ in sent(session, "scheduled_maintenance")] == ["firing", "resolved"]


def test_a_provider_issue_on_our_region_fires_and_resolves_when_it_closes(
    session: Session,
) -> None:
    config = setup(session, "routes: [{match: {}, channels: [chat]}]\n")
    record(session, [ISSUE_ON_US], NOW, "push")
    on_account_events(session, config, NOW)
    evaluate(session, config, NOW + timedelta(minutes=1))
    [alert] = alerts(session, "provider_event")
    assert (alert.state, alert.labels) == (
        "firing",
        {"provider": "aws", "event": ISSUE_ON_US.key, "region": "us-east-1"},
    )
    record(session, [replace(ISSUE_ON_US, status="closed", updated_at=NOW + HOUR)], NOW + HOUR)
    evaluate(session, config, NOW + HOUR)
    deliveries = sent(session, "provider_event")
    assert [e for _, e, _ in deliveries] == ["firing", "resolved"]
    assert deliveries[0][2]["extra"] == {
        "event_id": ISSUE_ON_US.key,
        "service": "EC2",
        "targets": ["trainer-3", "trainer-4"],
    }


def test_an_event_that_vanishes_resolves_its_alert(session: Session) -> None:
    config = setup(session)
    record(session, [ISSUE_ON_US], NOW, "push")
    on_account_events(session, config, NOW)
    session.execute(delete(AccountEventRecord))
    evaluate(session, config, NOW + timedelta(minutes=1))
    [alert] = alerts(session, "provider_event")
    assert alert.state == "resolved"
    assert alert.summary.endswith("resolved: no longer reported")


def test_what_the_user_did_and_what_is_about_none_of_ours_raise_nothing(
    session: Session,
) -> None:
    config = setup(session)
    restart = replace(SPOT, key="restart", kind="user_initiated", status="open")
    elsewhere = replace(RETIRING, key="someone-else", entities=("i-0zzz",))
    billing = replace(ISSUE_ON_US, key="billing", region="global")
    record(session, [restart, elsewhere, billing], NOW)
    on_account_events(session, config, NOW)
    evaluate(session, config, NOW + timedelta(minutes=1))
    assert session.scalars(select(Alert)).all() == []


@pytest.mark.parametrize(
    "muting",
    [
        pytest.param(
            "silences: [{match: {target: trainer-3}, end: 2026-12-07T00:00:00Z}]", id="silence"
        ),
        pytest.param(
            "maintenance: [{name: m, start: 2026-12-06T00:00:00Z, end: 2026-12-07T00:00:00Z, "
            "provider: aws}]",
            id="maintenance-window",
        ),
    ],
)
def test_a_silence_or_a_maintenance_window_records_the_alerts_and_sends_nothing(
    session: Session, muting: str
) -> None:
    config = setup(session, muting + "\n")
    soon = replace(RETIRING, starts_at=NOW + timedelta(minutes=90), ends_at=None)
    record(session, [SPOT, soon], NOW)
    on_account_events(session, config, NOW)
    interruption = alerts(session, "interruption_notice")
    assert [(a.labels["target"], a.state, a.suppressed) for a in interruption] == [
        ("trainer-3", "firing", True)
    ]
    evaluate(session, config, NOW + timedelta(minutes=31))  # the reminder is due; it resolved
    [maintenance] = alerts(session, "scheduled_maintenance")
    muted = muting.startswith("maintenance")  # the window covers the provider, not one target
    assert maintenance.suppressed is muted
    assert sent(session, "interruption_notice") == []  # neither its firing nor its resolve
    assert len(sent(session, "scheduled_maintenance")) == (0 if muted else 4)


def test_routes_send_each_rule_where_its_labels_say(session: Session) -> None:
    config = setup(
        session,
        "routes:\n"
        "  - {match: {kind: preemption}, channels: [pager], continue: false}\n"
        "  - {match: {provider: aws}, channels: [chat]}\n",
    )
    record(session, [SPOT, RETIRING, ISSUE_ON_US], NOW)
    on_account_events(session, config, NOW)
    assert [c for c, _, _ in sent(session, "interruption_notice")] == ["pager"]
    assert [c for c, _, _ in sent(session, "scheduled_maintenance")] == ["chat"]
    assert [c for c, _, _ in sent(session, "provider_event")] == ["chat"]


def test_the_webhook_receives_the_deadline_and_the_seconds_left(
    sessions: sessionmaker[Session],
) -> None:
    receiver = WebhookReceiver()
    config = parse_config(
        TARGETS + f"channels: [{{name: ops, kind: webhook, url: '{receiver.url}'}}]\n"
    )
    try:
        with sessions() as session, session.begin():
            sync_config_targets(session, config, NOW - timedelta(days=1))
            record(session, [SPOT, RETIRING], NOW, "agent", target="trainer-3")
            on_account_events(session, config, NOW + timedelta(seconds=2))
        with httpx.Client(timeout=5) as client:
            run = deliver_due(
                sessions, client, config, "test", clock=lambda: NOW + timedelta(seconds=3)
            )
    finally:
        receiver.close()

    assert run.delivered == 2
    bodies = {b["alert"]["rule"]: b for b in (json.loads(body) for _, body in receiver.requests)}
    notice = bodies["interruption_notice"]["alert"]
    assert notice["extra"]["deadline"] == "2026-12-06T10:02:00Z"
    assert notice["extra"]["seconds_left"] == 118
    assert notice["extra"]["event_id"] == SPOT.key
    assert notice["labels"]["target"] == "trainer-3"
    assert notice["summary"].startswith("trainer-3: aws preemption at 2026-12-06 10:02:00Z (118 s")
    maintenance = bodies["scheduled_maintenance"]["alert"]
    assert maintenance["extra"]["targets"] == ["trainer-3", "trainer-4"]
    assert maintenance["extra"]["starts_at"] == "2026-12-20T10:00:00Z"


def test_the_targets_list_survives_the_outbox_json_and_other_lists_are_refused() -> None:
    message = AlertMessage(
        "fp", "scheduled_maintenance", "warning", {}, "s", NOW, extra={"targets": ["a", "b"]}
    )
    assert AlertMessage.from_json(json.loads(json.dumps(message.to_json()))) == message
    with pytest.raises(ValueError, match=r"lists of strings: \['x'\]"):
        AlertMessage("fp", "provider_event", "warning", {}, "s", NOW, extra={"x": [1]})  # type: ignore[list-item]
    with pytest.raises(ValueError, match="not a JSON scalar or a list of strings"):
        AlertMessage.from_json({**message.to_json(), "extra": {"x": [{"a": 1}]}})


def test_sla_breach_leaves_out_a_restart_the_provider_records_as_the_user_s(
    session: Session,
) -> None:
    """trainer-3 (aws-ec2-instance: 99.5 %) is down 9 h this month; Azure-style Resource Health
    says 8 h 30 min of it was the user's own restart. Without the record the month to date is
    below 99.5 %; with it, 30 min are counted: within the SLA, as the monthly report says."""
    from monitor.db.models import Target
    from tests.monitor.history.conftest import observed, outage

    config = setup(session)
    month = datetime(2026, 12, 1, tzinfo=UTC)
    row = session.scalars(select(Target).where(Target.name == "trainer-3")).one()
    row.sla_policy, row.created_at = "aws-ec2-instance", month - timedelta(days=30)
    observed(session, row, month, NOW)
    outage(session, row, month + timedelta(days=2), month + timedelta(days=2, hours=9))
    evaluate(session, config, NOW)
    [breach] = alerts(session, "sla_breach")
    assert breach.state == "firing"
    restart = AccountEvent(
        provider="azure",
        source="azure_resource_health",
        key="/subscriptions/s/vm/trainer-3@restart",
        kind="user_initiated",
        status="closed",
        starts_at=month + timedelta(days=2),
        ends_at=month + timedelta(days=2, hours=8, minutes=30),
        entities=("i-0abc",),
    )
    record(session, [restart], NOW)
    evaluate(session, config, NOW + timedelta(seconds=30))
    [breach] = alerts(session, "sla_breach")
    assert breach.state == "resolved"


def test_an_agent_s_notice_without_a_time_of_its_own_is_over_an_hour_after_it_was_heard() -> None:
    """A rebalance recommendation has no deadline and the box never says it is over: it fires,
    then resolves an hour after it was last heard (not until the target is retired)."""
    rebalance = view(starts_at=None, raw_type="metadata:rebalance")
    assert from_interruption(rebalance, TRAINER, NOW + 59 * timedelta(minutes=1)).firing
    over = from_interruption(rebalance, TRAINER, NOW + HOUR)
    assert not over.firing
    assert over.at == NOW + HOUR
    heard_again = replace(rebalance, last_seen_at=NOW + HOUR / 2)
    assert from_interruption(heard_again, TRAINER, NOW + HOUR).firing


def test_an_agent_s_maintenance_notice_is_over_an_hour_after_it_starts() -> None:
    """GCE's host maintenance or Azure's redeploy, as the box heard it: no end is ever told."""
    host = view(kind="scheduled_maintenance", starts_at=NOW + timedelta(seconds=60))
    [during] = from_account_event(host, [TRAINER], NOW + timedelta(minutes=30), HOUR)
    [after] = from_account_event(host, [TRAINER], NOW + timedelta(seconds=60) + HOUR, HOUR)
    assert (during.rule, during.firing, after.firing) == ("scheduled_maintenance", True, False)
    polled = replace(host, via="poll")  # a provider API says when it ends (or closes it)
    [still] = from_account_event(polled, [TRAINER], NOW + 2 * HOUR, HOUR)
    assert still.firing
