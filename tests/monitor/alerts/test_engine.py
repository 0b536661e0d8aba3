"""The alert engine (monitor/alerts/engine.py): signals become alert state and outbox rows in
the caller's transaction; the same signal twice changes nothing, a resolution is told once,
a silence or a maintenance window mutes, and re-notification waits for ``renotify``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.alerts.engine import apply
from monitor.alerts.rules import Signal, fingerprint
from monitor.config import parse_config
from monitor.db.models import Alert, Delivery

NOW = datetime(2026, 12, 1, 0, 0, 30, tzinfo=UTC)  # just after a month boundary
CONFIG = parse_config(
    """
channels:
  - {name: ops, kind: webhook, url: "https://hooks.example/ops"}
  - {name: chat, kind: slack, url: "https://hooks.slack.com/services/T/B/x"}
routes:
  - {match: {severity: critical}, channels: [ops, chat]}
  - {match: {}, channels: [chat]}
alerts: {renotify: 3600}
"""
)


def signal(firing: bool = True, at: datetime = NOW, target: str = "gpu-a") -> Signal:
    labels = {"target": target, "severity": "critical"}
    identity = fingerprint("target_down", {"target": target})
    return Signal("target_down", identity, "critical", labels, f"{target} is down", firing, at)


def test_a_signal_applied_twice_fires_one_alert_with_one_delivery_per_routed_channel(
    session: Session,
) -> None:
    first = apply(session, [signal()], CONFIG, NOW)
    again = apply(session, [signal()], CONFIG, NOW + timedelta(seconds=5))
    assert (first.changed, first.deliveries) == (1, 2)
    assert (again.changed, again.deliveries) == (0, 0)
    [alert] = session.scalars(select(Alert))
    assert (alert.rule, alert.state, alert.started_at.astimezone(UTC)) == (
        "target_down",
        "firing",
        NOW,
    )


def test_a_resolution_is_told_once_to_the_same_channels(session: Session) -> None:
    apply(session, [signal()], CONFIG, NOW)
    resolved = apply(session, [signal(firing=False)], CONFIG, NOW + timedelta(minutes=1))
    repeat = apply(session, [signal(firing=False)], CONFIG, NOW + timedelta(minutes=2))
    assert (resolved.changed, resolved.deliveries, repeat.deliveries) == (1, 2, 0)
    events = [event for (event,) in session.execute(select(Delivery.event).order_by(Delivery.id))]
    assert events == ["firing", "firing", "resolved", "resolved"]


def test_a_firing_alert_is_renotified_only_after_renotify(session: Session) -> None:
    apply(session, [signal()], CONFIG, NOW)
    [alert] = session.scalars(select(Alert))
    alert.last_notified_at = NOW
    early = apply(session, [signal()], CONFIG, NOW + timedelta(minutes=59))
    due = apply(session, [signal()], CONFIG, NOW + timedelta(minutes=61))
    assert (early.deliveries, due.deliveries) == (0, 2)


def test_a_silenced_or_maintained_target_records_the_alert_but_sends_nothing(
    session: Session,
) -> None:
    start, end = NOW.isoformat(), (NOW + timedelta(hours=1)).isoformat()
    muted = parse_config(
        f"""
channels: [{{name: ops, kind: webhook, url: "https://hooks.example/ops"}}]
silences: [{{match: {{target: gpu-a}}, end: "{end}"}}]
maintenance:
  - {{name: upgrade, targets: [gpu-b], start: "{start}", end: "{end}"}}
"""
    )
    applied = apply(session, [signal(target="gpu-a"), signal(target="gpu-b")], muted, NOW)
    assert (applied.changed, applied.deliveries) == (2, 0)
    assert all(a.suppressed for a in session.scalars(select(Alert)))


def test_an_operator_s_maintenance_notice_mutes_while_it_holds_a_feed_s_window_does_not(
    session: Session,
) -> None:
    """Maintenance an operator announced (``slamon notices post --kind maintenance``) mutes
    its targets' alerts from its start to its end, as a configured window does; a window a
    provider's feed announced mutes nothing; a notice ended early stops muting at once."""
    from monitor import notices
    from monitor.db.models import MaintenanceWindow

    hour = timedelta(hours=1)
    draft = notices.NoticeDraft(
        "driver upgrade", NOW, NOW + hour, kind="maintenance", targets=("gpu-a",)
    )
    posted = notices.post(session, draft, "ops", NOW - hour)
    session.add(
        MaintenanceWindow(
            name="provider work",
            starts_at=NOW - hour,
            ends_at=NOW + hour,
            targets=["gpu-b"],
            source="feed",
        )
    )
    session.flush()
    during = apply(session, [signal(target="gpu-a"), signal(target="gpu-b")], CONFIG, NOW)
    muted = {a.labels["target"]: a.suppressed for a in session.scalars(select(Alert))}
    assert muted == {"gpu-a": True, "gpu-b": False}
    assert during.deliveries == 2  # gpu-b's, to both channels

    notices.end(session, posted.id, "ops", NOW + timedelta(minutes=10))
    apply(session, [signal(target="gpu-a", firing=False)], CONFIG, NOW + timedelta(minutes=11))
    after = apply(session, [signal(target="gpu-a")], CONFIG, NOW + timedelta(minutes=12))
    assert after.deliveries == 2  # the notice ended: gpu-a pages again


def test_routes_and_silences_match_a_real_rule_s_severity_and_name(session: Session) -> None:
    """The rules put neither ``severity`` nor ``rule`` in their labels: a route or a silence
    on them matches the alert's own fields (DESIGN.md's ``match: {severity: critical}``)."""
    from monitor.alerts.rules import TargetFacts, from_feed, from_transition
    from monitor.db.models import Channel

    config = parse_config(
        """
channels:
  - {name: pager, kind: webhook, url: "https://hooks.example/pager"}
  - {name: chat, kind: webhook, url: "https://hooks.example/chat"}
routes:
  - {match: {severity: critical}, channels: [pager]}
  - {match: {rule: feed_stale}, channels: [chat]}
silences:
  - {match: {rule: feed_stale, provider: gcp}, end: "2027-01-01T00:00:00Z"}
"""
    )
    box = TargetFacts("gpu-z", "http", "aws", "us-east-1", None, None)
    [down] = from_transition(box, "reachable", "down", "up", NOW)
    stale = from_feed("aws", "https://status.aws.amazon.com/rss", True, NOW, "HTTP 503")
    muted = from_feed("gcp", "https://status.cloud.google.com/feed", True, NOW, "HTTP 503")
    assert "severity" not in down.labels
    assert "rule" not in stale.labels
    apply(session, [down, stale, muted], config, NOW)
    sent = session.execute(
        select(Alert.rule, Alert.labels, Channel.name)
        .join(Delivery, Delivery.alert_id == Alert.id)
        .join(Channel, Channel.id == Delivery.channel_id)
    ).all()
    routed = sorted((rule, labels.get("provider"), channel) for rule, labels, channel in sent)
    assert routed == [("feed_stale", "aws", "chat"), ("target_down", "aws", "pager")]
