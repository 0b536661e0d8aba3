"""Account events and account event sources as the pages and /metrics show them
(monitor/status/account.py): the pure order and month rules as tables, then the reads on SQLite
and PostgreSQL, over events stored as the store stores them."""

from __future__ import annotations

import zlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session

from monitor.account.model import AccountEvent
from monitor.config import parse_config
from monitor.db.models import AccountSource
from monitor.fleet.account_store import record
from monitor.history.account_events import AccountEventView
from monitor.status.account import (
    AccountSourceHealth,
    account_sources,
    closed_at,
    closed_since,
    current_order,
    on_targets,
    page_events,
    seconds_until,
    source_health,
)
from tests.monitor.history.conftest import target

NOW = datetime(2026, 12, 6, 12, tzinfo=UTC)
DEC = datetime(2026, 12, 1, tzinfo=UTC)
DAY = timedelta(days=1)
VIEW = AccountEventView(
    id=1,
    provider="aws",
    source="ec2_events",
    key="k",
    kind="retirement",
    status="upcoming",
    starts_at=NOW + 14 * DAY,
    ends_at=None,
    updated_at=NOW - DAY,
    region="us-east-1",
    service="EC2",
    title="instance-retirement",
    detail="",
    entities=("i-1",),
    raw_type="instance-retirement",
    reported_for=None,
    via="poll",
    readings=1,
    accepted=False,
    first_seen_at=NOW - DAY,
    last_seen_at=NOW,
    scope="targets",
    targets=("gpu-1",),
)
RETIREMENT = AccountEvent(
    provider="aws",
    source="ec2_events",
    key="i-0abc:instance-event-1",
    kind="retirement",
    status="upcoming",
    starts_at=NOW + 14 * DAY,
    updated_at=NOW - DAY,
    region="us-east-1",
    title="instance-retirement",
    detail="The instance is running on degraded hardware",
    entities=("i-0abc",),
    raw_type="instance-retirement",
)


def view(key: str, **changes: object) -> AccountEventView:
    """An event keyed ``key`` (its id, a tie-breaker, follows from the key), changed."""
    return replace(VIEW, key=key, id=zlib.crc32(key.encode()), **changes)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- pure rules


def test_current_events_list_the_open_ones_first_then_the_soonest_to_start() -> None:
    found = current_order(
        [
            view("later", starts_at=NOW + 20 * DAY),
            view("open-recent", status="open", starts_at=NOW - DAY),
            view("sooner", starts_at=NOW + 2 * DAY),
            view("open-long", status="open", starts_at=NOW - 9 * DAY),
            view("no-start", starts_at=None, first_seen_at=NOW - 2 * DAY),  # from first sight
        ]
    )
    assert [v.key for v in found] == ["open-long", "open-recent", "no-start", "sooner", "later"]


@pytest.mark.parametrize(
    ("ends_at", "updated_at", "last_seen_at", "over"),
    [
        (NOW - DAY, NOW, NOW, NOW - DAY),  # its end
        (None, NOW - 2 * DAY, NOW, NOW - 2 * DAY),  # no end: the provider's last update
        (None, None, NOW - 3 * DAY, NOW - 3 * DAY),  # neither: slamon's last reading
        (NOW + 9 * DAY, NOW - DAY, NOW, NOW - DAY),  # an end still ahead: canceled, updated
    ],
    ids=["end", "provider-update", "last-seen", "canceled-ahead"],
)
def test_a_closed_event_is_over_at_its_end_else_its_last_update(
    ends_at: datetime | None, updated_at: datetime | None, last_seen_at: datetime, over: datetime
) -> None:
    closed = view(
        "c", status="closed", ends_at=ends_at, updated_at=updated_at, last_seen_at=last_seen_at
    )
    assert closed_at(closed) == over


def test_closed_this_month_counts_the_month_it_was_over_in_newest_first() -> None:
    found = closed_since(
        [
            view("nov", status="closed", starts_at=NOW - 30 * DAY, ends_at=DEC - DAY),
            view("straddling", status="closed", starts_at=DEC - DAY, ends_at=DEC + DAY),
            view("at-the-edge", status="closed", starts_at=DEC - DAY, ends_at=DEC),
            view("canceled-ahead", status="closed", ends_at=NOW + 9 * DAY, updated_at=NOW - DAY),
            view("still-open", status="open", starts_at=NOW - DAY),
        ],
        DEC,
    )
    # one over at midnight on the 1st ended in November ([start, end), like every span)
    assert [v.key for v in found] == ["canceled-ahead", "straddling"]


@pytest.mark.parametrize(
    ("status", "starts_at", "left"),
    [
        ("upcoming", NOW + timedelta(hours=2), 7200.0),
        ("upcoming", NOW - timedelta(seconds=1), None),  # due: its start has passed
        ("upcoming", NOW, None),
        ("upcoming", None, None),  # no start given
        ("open", NOW + timedelta(hours=1), None),  # under way, whatever its start says
    ],
    ids=["ahead", "past", "now", "no-start", "open"],
)
def test_seconds_until_an_upcoming_event_starts_never_negative(
    status: str, starts_at: datetime | None, left: float | None
) -> None:
    assert seconds_until(view("e", status=status, starts_at=starts_at), NOW) == left


def test_events_by_target_keep_only_the_targets_asked_for_in_current_order() -> None:
    region = view("region", scope="region", targets=("gpu-1", "gpu-2", "gone"), status="open")
    mine = view("mine", targets=("gpu-1",), starts_at=NOW + DAY)
    grouped = on_targets([mine, region], ["gpu-1", "gpu-2"])
    assert {name: [v.key for v in found] for name, found in grouped.items()} == {
        "gpu-1": ["region", "mine"],
        "gpu-2": ["region"],
    }


def test_a_source_never_polled_is_unknown_a_failing_one_failing_in_the_config_s_order() -> None:
    config = parse_config(
        "account_events:\n"
        "  - {name: health, kind: aws_health}\n"
        "  - {name: vms, kind: azure_resource_health, subscription: s-1, every: 60}\n"
        "  - {name: ec2, kind: ec2_events, regions: [us-east-1]}\n"
    )
    states = [
        AccountSource(name="vms", kind="azure_resource_health", last_polled_at=NOW,
                      last_success_at=NOW - DAY, consecutive_failures=3, last_error="403"),
        AccountSource(name="ec2", kind="ec2_events", last_polled_at=NOW, last_success_at=NOW,
                      consecutive_failures=0, events=4),
        AccountSource(name="removed", kind="ec2_events", last_polled_at=NOW),
    ]  # fmt: skip
    found = source_health(config, states)
    assert [(s.name, s.provider, s.state) for s in found] == [
        ("health", "aws", "unknown"),
        ("vms", "azure", "failing"),
        ("ec2", "aws", "ok"),
    ]
    health, vms, ec2 = found
    assert (health.last_polled_at, health.last_success_at, health.events) == (None, None, 0)
    assert (vms.every_s, vms.consecutive_failures, vms.last_error) == (60.0, 3, "403")
    assert ec2.events == 4


# --------------------------------------------------------------------------- the reads


def test_a_target_s_page_events_are_its_own_current_then_this_month_s_closed(
    session: Session,
) -> None:
    target(session, "gpu-1", external_id="i-0abc", provider="aws", region="us-east-1")
    target(session, "gpu-2", external_id="i-0def", provider="aws", region="us-east-1")
    record(
        session,
        [
            RETIREMENT,
            replace(RETIREMENT, key="maint", kind="scheduled_maintenance", starts_at=NOW + DAY),
            replace(RETIREMENT, key="issue", kind="issue", status="open", starts_at=NOW - DAY),
            replace(RETIREMENT, key="done", status="closed", starts_at=DEC, ends_at=DEC + DAY),
            replace(
                RETIREMENT, key="november", status="closed", starts_at=DEC - 9 * DAY, ends_at=DEC
            ),
            replace(  # a maintenance announced for January, canceled this month
                RETIREMENT,
                key="canceled",
                kind="scheduled_maintenance",
                status="closed",
                starts_at=NOW + 40 * DAY,
                ends_at=NOW + 41 * DAY,
                updated_at=NOW - DAY,
            ),
            replace(RETIREMENT, key="other", entities=("i-0def",)),
        ],
        NOW - DAY,
    )
    found = page_events(session, NOW, target="gpu-1")
    assert [v.key for v in found.current] == ["issue", "maint", RETIREMENT.key]
    assert [v.key for v in found.closed] == ["canceled", "done"]
    assert not page_events(session, NOW, target="nobody")


def test_a_provider_s_page_events_are_its_own_whatever_target_they_name(
    session: Session,
) -> None:
    target(session, "gpu-1", external_id="i-0abc", provider="aws", region="us-east-1")
    record(
        session,
        [
            RETIREMENT,
            replace(RETIREMENT, key="billing", kind="issue", region="global", entities=()),
            replace(RETIREMENT, provider="azure", key="vm", entities=("/subscriptions/s/vm",)),
        ],
        NOW,
    )
    aws = page_events(session, NOW, provider="aws")
    assert {(v.key, v.scope, v.targets) for v in aws.current} == {
        (RETIREMENT.key, "targets", ("gpu-1",)),
        ("billing", "account", ()),
    }
    assert [v.key for v in page_events(session, NOW, provider="azure").current] == ["vm"]
    assert not page_events(session, NOW, provider="gcp")


def test_account_sources_read_what_the_polls_left_and_nothing_without_a_source(
    session: Session,
) -> None:
    session.add(
        AccountSource(
            name="health",
            kind="aws_health",
            last_polled_at=NOW,
            last_success_at=NOW,
            consecutive_failures=0,
            events=2,
        )
    )
    session.flush()
    config = parse_config("account_events:\n  - {name: health, kind: aws_health}\n")
    assert account_sources(session, config) == (
        AccountSourceHealth("health", "aws_health", "aws", 300.0, NOW, NOW, 0, None, 2),
    )
    assert account_sources(session, parse_config("")) == ()
