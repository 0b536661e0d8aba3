"""Storing account events on the real databases: once per provider key however often and in
whatever order a reading arrives, and scoped to targets as every surface reads them
(monitor/history/account_events.py)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.account.kinds.aws_health import from_eventbridge
from monitor.account.model import AccountEvent
from monitor.db.models import AccountEventRecord
from monitor.fleet.account_store import accept, record
from monitor.history import account_events
from monitor.sla.intervals import Span
from tests.monitor.account.captured import document
from tests.monitor.history.conftest import target

NOW = datetime(2026, 12, 6, 12, tzinfo=UTC)
RETIREMENT = AccountEvent(
    provider="aws",
    source="ec2_events",
    key="i-0abc:instance-event-1",
    kind="retirement",
    status="upcoming",
    starts_at=NOW + timedelta(days=14),
    updated_at=NOW,
    region="us-east-1",
    title="instance-retirement",
    detail="The instance is running on degraded hardware",
    entities=("i-0abc",),
    raw_type="instance-retirement",
)


def stored(session: Session) -> list[AccountEventRecord]:
    rows = session.scalars(select(AccountEventRecord).order_by(AccountEventRecord.id))
    return list(rows.all())


def test_a_first_reading_is_new_and_the_same_reading_again_is_unchanged(session: Session) -> None:
    [first] = record(session, [RETIREMENT], NOW)
    [again] = record(session, [RETIREMENT], NOW + timedelta(minutes=5), "push")
    assert (first.outcome, again.outcome) == ("new", "unchanged")
    assert first.id == again.id
    [row] = stored(session)
    assert (row.readings, row.via) == (2, "push"), "via: how the latest reading came"
    assert row.first_seen_at == NOW
    assert row.last_seen_at == NOW + timedelta(minutes=5)
    assert row.entities == ["i-0abc"]


def test_a_newer_reading_replaces_and_an_older_one_changes_nothing(session: Session) -> None:
    later = replace(RETIREMENT, status="closed", updated_at=NOW + timedelta(days=15))
    record(session, [RETIREMENT], NOW)
    [newer] = record(session, [later], NOW + timedelta(days=15), "push")
    [older] = record(session, [RETIREMENT], NOW + timedelta(days=15, minutes=1))
    assert (newer.outcome, older.outcome) == ("updated", "stale")
    [row] = stored(session)
    assert (row.status, row.via, row.readings) == ("closed", "push", 3)
    assert row.updated_at == NOW + timedelta(days=15)


def test_one_delivery_holding_one_event_twice_stores_its_newest_reading(session: Session) -> None:
    newest = replace(RETIREMENT, status="open", updated_at=NOW + timedelta(hours=1))
    outcomes = record(session, [newest, RETIREMENT], NOW)
    assert [o.outcome for o in outcomes] == ["new"]
    [row] = stored(session)
    assert row.status == "open"


def test_the_same_key_of_two_providers_is_two_events(session: Session) -> None:
    record(session, [RETIREMENT, replace(RETIREMENT, provider="azure")], NOW)
    assert sorted(row.provider for row in stored(session)) == ["aws", "azure"]


def test_accepted_maintenance_stays_accepted(session: Session) -> None:
    record(session, [RETIREMENT], NOW, "agent", accepted=True, target="trainer-3")
    record(session, [replace(RETIREMENT, updated_at=NOW + timedelta(hours=1))], NOW)
    [row] = stored(session)
    assert (row.accepted, row.target) == (True, "trainer-3")
    assert accept(session, "aws", "no-such-key") is False


def test_an_eventbridge_delivery_stored_twice_is_one_event_of_the_instance_it_names(
    session: Session,
) -> None:
    pushed = from_eventbridge(document("1-aws-health-ec2-instance-store-issue.json"))
    box = target(session, "box-1", external_id=pushed.entities[0], provider="aws")
    record(session, [pushed], NOW, "push")
    record(session, [pushed], NOW + timedelta(seconds=1), "push")
    [view] = account_events.events(session)
    assert (view.readings, view.targets, view.scope) == (2, (box.name,), "targets")
    assert view.key == pushed.key
    assert view.kind == "issue"


def test_an_event_is_scoped_by_ids_without_case_then_by_region_then_to_no_one(
    session: Session,
) -> None:
    target(session, "vm-1", external_id="/SUBSCRIPTIONS/S/VM-1", provider="azure")
    target(session, "east", provider="aws", region="us-east-1")
    target(session, "west", provider="aws", region="us-west-2")
    named = replace(RETIREMENT, provider="azure", key="a", entities=("/subscriptions/s/vm-1",))
    regional = replace(RETIREMENT, key="r", entities=())
    billing = replace(RETIREMENT, key="b", entities=(), region="global")
    record(session, [named, regional, billing], NOW)
    found = {v.key: (v.scope, v.targets) for v in account_events.events(session)}
    assert found == {
        "a": ("targets", ("vm-1",)),
        "r": ("region", ("east",)),
        "b": ("account", ()),
    }
    assert [v.key for v in account_events.events(session, target="east")] == ["r"]


def test_a_service_health_event_of_several_regions_is_about_the_targets_in_each(
    session: Session,
) -> None:
    target(session, "vm-east", provider="azure", region="eastus")
    target(session, "vm-west", provider="azure", region="West Europe")
    target(session, "vm-north", provider="azure", region="northeurope")
    target(session, "aws-east", provider="aws", region="eastus")
    several = replace(
        RETIREMENT, provider="azure", key="TRK", entities=(), region="East US, West Europe"
    )
    record(session, [several], NOW)
    [view] = account_events.events(session)
    assert (view.scope, view.targets) == ("region", ("vm-east", "vm-west"))


def test_an_agent_s_event_is_about_its_box_even_without_an_instance_id(session: Session) -> None:
    target(session, "laptop-gpu")
    notice = replace(RETIREMENT, key="aws:notice", kind="preemption", entities=())
    record(session, [notice], NOW, "agent", target="laptop-gpu")
    [view] = account_events.events(session, target="laptop-gpu")
    assert (view.scope, view.targets, view.reported_for) == (
        "targets",
        ("laptop-gpu",),
        "laptop-gpu",
    )


def test_a_period_holds_the_events_whose_window_overlaps_it(session: Session) -> None:
    december = Span(datetime(2026, 12, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))
    closed_in_november = replace(
        RETIREMENT,
        key="nov",
        starts_at=datetime(2026, 11, 3, tzinfo=UTC),
        ends_at=datetime(2026, 11, 4, tzinfo=UTC),
    )
    open_since_november = replace(closed_in_november, key="open", ends_at=None)
    ahead = replace(RETIREMENT, key="jan", starts_at=datetime(2027, 1, 2, tzinfo=UTC))
    no_start = replace(RETIREMENT, key="unstarted", starts_at=None)  # spans from first sight
    record(session, [closed_in_november, open_since_november, ahead, no_start], NOW)
    keys = {v.key for v in account_events.events(session, period=december)}
    assert keys == {"open", "unstarted"}
    count = session.scalar(select(func.count()).select_from(AccountEventRecord))
    assert count == 4
    [kept] = account_events.events(
        session, period=december, statuses=["upcoming"], kinds=["retirement"], limit=1
    )
    assert kept.key in {"open", "unstarted"}
