"""The status page's queries (monitor/status/repository.py) on SQLite and PostgreSQL: live
targets only, every target at once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from monitor.db.models import (
    Feed,
    Incident,
    ProbeRollup,
    Provider,
    Target,
    TargetState,
)
from monitor.status import repository
from monitor.status.health import FeedFacts

NOW = datetime(2026, 5, 4, 12, 20, tzinfo=UTC)
HOUR = timedelta(hours=1)


def add_target(session: Session, name: str, *, retired: bool = False) -> Target:
    row = Target(
        name=name,
        kind="tcp",
        url="tcp://h:22",
        created_at=NOW - timedelta(days=40),
        retired_at=NOW - timedelta(days=1) if retired else None,
    )
    session.add(row)
    session.flush()
    return row


def state(
    target: Target, vantage: str, series: str, value: str, at: datetime | None
) -> TargetState:
    return TargetState(
        target_id=target.id,
        vantage=vantage,
        series=series,
        state=value,
        last_probe_at=at,
        detail={},
    )


def test_verdicts_take_the_quorum_rows_and_the_freshest_vantage_report(session: Session) -> None:
    live, retired = add_target(session, "live"), add_target(session, "old", retired=True)
    session.add_all(
        [
            state(live, "*", "reachable", "up", NOW - timedelta(days=3)),  # stamped on change only
            state(live, "*", "usable", "down", NOW - timedelta(days=3)),
            state(live, "eu", "reachable", "up", NOW - timedelta(minutes=5)),
            state(live, "us", "reachable", "up", NOW - timedelta(seconds=20)),
            state(live, "us", "usable", "down", None),
            state(retired, "*", "reachable", "up", NOW),
        ]
    )
    session.flush()
    assert repository.verdicts(session) == {
        live.id: repository.Verdict("up", "down", NOW - timedelta(seconds=20))
    }


def test_latency_samples_are_the_last_days_hour_buckets_and_the_open_hour_as_one(
    session: Session,
) -> None:
    live, retired = add_target(session, "live"), add_target(session, "old", retired=True)
    hour = datetime(2026, 5, 4, 12, tzinfo=UTC)

    def rollup(target: Target, resolution: str, start: datetime, p50: float | None) -> ProbeRollup:
        return ProbeRollup(
            target_id=target.id,
            resolution=resolution,
            bucket_start=start,
            count=10,
            failures=2,
            unknown=1,
            latency_p50_ms=p50,
        )

    session.add_all(
        [
            rollup(live, "hour", hour - HOUR * 25, 500.0),  # more than a day ago
            rollup(live, "hour", hour - HOUR * 23, 20.0),
            rollup(live, "hour", hour - HOUR, 30.0),
            rollup(live, "hour", hour - HOUR * 2, None),  # every probe failed
            rollup(live, "minute", hour - timedelta(minutes=1), 700.0),  # in an hour bucket
            rollup(live, "minute", hour + timedelta(minutes=5), 22.0),
            rollup(live, "minute", hour + timedelta(minutes=6), 28.0),
            rollup(live, "minute", hour + timedelta(minutes=7), None),
            rollup(retired, "hour", hour - HOUR, 1.0),
        ]
    )
    session.flush()
    found = repository.latency_samples(session, [live.id], NOW)
    assert list(found) == [live.id]
    assert repository.latency_samples(session, [], NOW) == {}
    # the open hour's minutes count as one sample: their p50s averaged by successful probes
    assert sorted(found[live.id]) == [(20.0, 7), (25.0, 14), (30.0, 7)]


def test_providers_come_with_their_feeds_and_open_relevant_incidents_newest_first(
    session: Session,
) -> None:
    aws = Provider(slug="aws", name="AWS", regions=[], components=[])
    bare = Provider(slug="bare", name="Bare", regions=[], components=[])
    session.add_all([aws, bare])
    session.flush()

    def incident(source: str, hours_ago: int, **extra: object) -> Incident:
        values: dict[str, object] = {
            "provider_id": aws.id,
            "source_id": source,
            "title": source,
            "status": "investigating",
            "impact": "minor",
            "started_at": NOW - HOUR * hours_ago,
            "relevant": True,
            "content_hash": source,
        }
        return Incident(**(values | extra))

    session.add_all(
        [
            Feed(
                provider_id=aws.id,
                kind="statuspage",
                url="https://aws/feed",
                last_polled_at=NOW,
                last_success_at=NOW - HOUR,
                consecutive_failures=3,
                last_error="timeout",
            ),
            incident("older", 5),
            incident("newer", 1, is_maintenance=True),
            incident("resolved", 2, resolved_at=NOW),
            incident("irrelevant", 2, relevant=False),
        ]
    )
    session.flush()
    rows = {p.slug: p for p in repository.providers(session)}
    assert [i.title for i in rows["aws"].incidents] == ["newer", "older"]
    assert rows["aws"].incidents[0].is_maintenance
    assert rows["aws"].feeds == (FeedFacts(True, NOW, NOW - HOUR, 3, "timeout"),)
    assert rows["bare"].feeds == ()
    assert rows["bare"].incidents == ()
