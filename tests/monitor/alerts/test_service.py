"""The periodic evaluator on a real database: resolves are never swallowed (a resolution slamon
learns late, an alert whose cause vanished), burn windows come from the config, and a vantage
that disagrees with the quorum on every target is called blind."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.alerts.service import evaluate
from monitor.config import Config, parse_config
from monitor.db.models import (
    Alert,
    Delivery,
    Feed,
    Incident,
    Outage,
    ProbeResult,
    Provider,
    Target,
)
from monitor.targets import sync_config_targets

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
CHANNEL = "channels: [{name: ops, kind: webhook, url: 'http://127.0.0.1:9/hook', secret: s}]\n"


def config(extra: str = "") -> Config:
    return parse_config(CHANNEL + extra)


def provider(session: Session, slug: str = "acme") -> Provider:
    row = Provider(slug=slug, name=slug.title(), source="config")
    session.add(row)
    session.flush()
    return row


def incident(session: Session, owner: Provider, **fields: object) -> Incident:
    row = Incident(
        provider_id=owner.id,
        source_id="inc-1",
        title="GPU instances failing to launch",
        status="investigating",
        impact="major",
        started_at=NOW - timedelta(days=3),
        relevant=True,
        content_hash="x",
        **fields,
    )
    session.add(row)
    session.flush()
    return row


def events(session: Session, rule: str) -> list[tuple[str, str]]:
    """(alert state, delivery event) pairs of ``rule``'s alerts, in delivery order."""
    query = (
        select(Alert.state, Delivery.event)
        .join(Delivery, Delivery.alert_id == Alert.id)
        .where(Alert.rule == rule)
        .order_by(Delivery.id)
    )
    return [(state, event) for state, event in session.execute(query)]


def test_a_resolution_learned_two_days_late_still_resolves_the_alert(session: Session) -> None:
    cfg = config()
    acme = provider(session)
    open_incident = incident(session, acme)
    evaluate(session, cfg, NOW - timedelta(days=3))
    assert events(session, "provider_incident") == [("firing", "firing")]

    # slamon was down; the next poll shows it resolved two days before that poll
    open_incident.resolved_at, open_incident.status = NOW - timedelta(days=2), "resolved"
    session.flush()
    evaluate(session, cfg, NOW)

    [alert] = session.scalars(select(Alert).where(Alert.rule == "provider_incident"))
    assert (alert.state, alert.resolved_at) == ("resolved", NOW - timedelta(days=2))
    assert [e for _, e in events(session, "provider_incident")] == ["firing", "resolved"]
    evaluate(session, cfg, NOW + timedelta(minutes=1))  # and only once
    assert len(events(session, "provider_incident")) == 2


def test_an_incident_that_stops_being_relevant_resolves_its_alert(session: Session) -> None:
    cfg = config()
    row = incident(session, provider(session))
    evaluate(session, cfg, NOW)
    row.relevant = False  # the user narrowed the regions they care about
    session.flush()
    evaluate(session, cfg, NOW + timedelta(minutes=1))
    assert [e for _, e in events(session, "provider_incident")] == ["firing", "resolved"]


def test_a_stale_feed_that_is_removed_resolves_its_alert(session: Session) -> None:
    cfg = config("alerts: {feed_stale_after: 60s}\n")
    feed = Feed(
        provider_id=provider(session).id,
        kind="statuspage",
        url="http://127.0.0.1:9/api/v2/incidents.json",
        last_polled_at=NOW,
        consecutive_failures=5,
        last_error="connection refused",
        created_at=NOW - timedelta(hours=1),
    )
    session.add(feed)
    session.flush()
    evaluate(session, cfg, NOW)
    assert [e for _, e in events(session, "feed_stale")] == ["firing"]
    feed.enabled = False  # taken out of the config
    session.flush()
    evaluate(session, cfg, NOW + timedelta(minutes=1))
    assert [e for _, e in events(session, "feed_stale")] == ["firing", "resolved"]


def test_a_retired_targets_down_alert_resolves(session: Session) -> None:
    cfg = config("targets: [{name: gpu-0, kind: http, url: 'http://127.0.0.1:9/', interval: 5}]\n")
    sync_config_targets(session, cfg, NOW)
    session.add(
        Alert(
            fingerprint="f" * 32,
            rule="target_down",
            severity="critical",
            labels={"target": "gpu-0"},
            summary="gpu-0 is down",
            state="firing",
            started_at=NOW,
            last_notified_at=NOW,
        )
    )
    session.flush()
    evaluate(session, cfg, NOW + timedelta(minutes=1))
    assert session.scalars(select(Alert.state)).one() == "firing"  # still watched, still down
    sync_config_targets(session, config(), NOW + timedelta(minutes=2))  # removed: retired
    evaluate(session, cfg, NOW + timedelta(minutes=3))
    [alert] = session.scalars(select(Alert))
    assert alert.state == "resolved"
    assert alert.summary.endswith("resolved: target retired")


BURN = """
sla_policies:
  - {name: four-nines, provider: acme, target_pct: 99.99,
     tiers: [{below_pct: 99.99, credit_pct: 10}]}
alerts:
  burn_min_samples: 1
  burn_windows: [{long: 60s, short: 10s, factor: 14.4, severity: critical}]
targets: [{name: gpu-0, kind: http, url: 'http://127.0.0.1:9/', interval: 1, sla: four-nines}]
"""


def test_configured_burn_windows_page_within_seconds_and_clear(session: Session) -> None:
    cfg = config(BURN)
    sync_config_targets(session, cfg, NOW - timedelta(minutes=5))
    target = session.scalars(select(Target)).one()
    session.add(
        Outage(
            target_id=target.id,
            series="reachable",
            start=NOW - timedelta(seconds=6),
            end=NOW - timedelta(seconds=1),
            confirmed_at=NOW - timedelta(seconds=5),
        )
    )
    session.add_all(
        ProbeResult(target_id=target.id, vantage="here", at=NOW - timedelta(seconds=s), ok=s > 6)
        for s in range(1, 10)
    )
    session.flush()
    evaluate(session, cfg, NOW)
    [burn] = session.scalars(select(Alert).where(Alert.rule == "sla_burn"))
    assert (burn.state, burn.severity) == ("firing", "critical")
    assert "over 1m" in burn.summary
    evaluate(session, cfg, NOW + timedelta(seconds=15))  # the short window no longer burns
    session.refresh(burn)
    assert burn.state == "resolved"


def test_burn_windows_are_validated() -> None:
    import pytest

    from monitor.errors import ConfigError

    with pytest.raises((ConfigError, ValueError), match="short must not be longer than long"):
        config("alerts: {burn_windows: [{long: 10s, short: 60s, factor: 2}]}\n")
