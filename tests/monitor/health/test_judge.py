"""The judgement, as tables: each check at and around its bound."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitor.config.models import Config
from monitor.health.judge import entry_lag, judge
from monitor.health.model import Bounds, Lease, Slot, Snapshot

NOW = datetime(2026, 12, 6, 9, 0, 0, tzinfo=UTC)
BOUNDS = Bounds(max_lag_s=30, max_backlog_s=600, max_feed_age_s=360)


def ago(seconds: float) -> datetime:
    return NOW - timedelta(seconds=seconds)


def lease(holder: str = "web-1:42", *, expires_in: float = 10, held_for: float = 3600) -> Lease:
    return Lease(holder, 7, ago(held_for), ago(1), NOW + timedelta(seconds=expires_in))


def dispatch(done_ago: float, period: float = 1.0) -> Slot:
    """probes-dispatch whose last admitted slot was ``done_ago`` seconds ago."""
    return Slot(
        "probes-dispatch", period, ago(done_ago), ago(done_ago), ago(done_ago), ago(done_ago)
    )


def healthy(**changes: object) -> Snapshot:
    values: dict[str, object] = {
        "now": NOW,
        "lease": lease(),
        "slots": (dispatch(0.5), Slot("reports-monthly", None)),
        "oldest_pending": None,
        "feeds": 3,
        "last_feed_poll": ago(60),
    }
    return Snapshot(**{**values, **changes})  # type: ignore[arg-type]


def texts(snapshot: Snapshot, bounds: Bounds = BOUNDS) -> list[str]:
    return [reason.text for reason in judge(snapshot, bounds).reasons]


def test_a_leader_on_time_with_drained_deliveries_and_polled_feeds_is_healthy() -> None:
    judgement = judge(healthy(), BOUNDS)
    assert judgement.ok
    assert judgement.leader == "web-1:42"
    assert judgement.lags == (("probes-dispatch", 0.0),)  # the calendar entry is not judged
    assert (judgement.lag_s, judgement.backlog_s, judgement.feed_age_s) == (0.0, 0.0, 60.0)


@pytest.mark.parametrize(
    ("snapshot", "expected"),
    [
        pytest.param(
            healthy(lease=None), ["no scheduler has taken the lease yet"], id="no-lease-row"
        ),
        pytest.param(
            healthy(lease=lease("")), ["no scheduler has taken the lease yet"], id="no-holder"
        ),
        pytest.param(
            healthy(lease=lease(expires_in=-12)),
            ["no scheduler leads (lease of web-1:42 expired 12s ago)"],
            id="expired",
        ),
        pytest.param(
            healthy(lease=lease(expires_in=0)),
            ["no scheduler leads (lease of web-1:42 expired 0s ago)"],
            id="expires-now",
        ),
    ],
)
def test_nobody_leading_is_a_reason(snapshot: Snapshot, expected: list[str]) -> None:
    judgement = judge(snapshot, BOUNDS)
    assert texts(snapshot) == expected
    assert judgement.leader is None
    assert judgement.kinds == ("leader",)


def test_an_expired_lease_still_says_its_token_and_last_holder() -> None:
    judgement = judge(healthy(lease=lease(expires_in=-5)), BOUNDS)
    assert judgement.lease is not None
    assert (judgement.lease.holder, judgement.lease.token) == ("web-1:42", 7)


@pytest.mark.parametrize(
    ("done_ago", "lag", "late"),
    [
        pytest.param(0.2, 0.0, False, id="before-the-next-slot"),
        pytest.param(31.0, 30.0, False, id="exactly-at-the-bound"),
        pytest.param(31.5, 30.5, True, id="just-past-the-bound"),
        pytest.param(43.0, 42.0, True, id="well-past"),
    ],
)
def test_lag_is_how_far_now_is_past_the_slot_after_the_last_admitted(
    done_ago: float, lag: float, late: bool
) -> None:
    judgement = judge(healthy(slots=(dispatch(done_ago),)), BOUNDS)
    assert judgement.lag_s == pytest.approx(lag)
    assert judgement.ok is not late
    if late:
        assert texts(healthy(slots=(dispatch(done_ago),)))[0].startswith(
            f"dispatch {int(lag)}s late (probes-dispatch; max_lag 30s)"
        )


def test_the_lag_reason_names_the_late_entries_worst_first_and_counts_the_rest() -> None:
    slots = tuple(
        Slot(f"task-{i}", 10.0, done_slot=ago(50 + i), done_at=ago(50 + i)) for i in range(5)
    )
    judgement = judge(healthy(slots=(dispatch(0.1), *slots)), BOUNDS)
    assert judgement.lag_s == pytest.approx(44.0)
    assert [r.text for r in judgement.reasons] == [
        "dispatch 44s late (task-4, task-3, task-2, +2 more; max_lag 30s)"
    ]


@pytest.mark.parametrize(
    ("slot", "the_lease", "lag"),
    [
        pytest.param(Slot("m", None, done_slot=ago(1e6)), lease(), None, id="calendar-entry"),
        pytest.param(Slot("t", 60.0, sent_at=ago(5)), lease(), 5.0, id="sent-never-admitted"),
        pytest.param(Slot("t", 60.0), lease(held_for=50), 0.0, id="never-sent-new-leader"),
        pytest.param(Slot("t", 60.0), lease(held_for=100), 40.0, id="never-sent-old-leader"),
        pytest.param(Slot("t", 60.0), None, None, id="never-sent-never-led"),
        pytest.param(Slot("t", 5.0, done_slot=ago(65)), None, 60.0, id="done-without-a-lease"),
        pytest.param(
            Slot("t", 5.0, done_slot=ago(8 * 3600)), lease(held_for=2), 2.0, id="new-leader"
        ),
        pytest.param(
            Slot("t", 5.0, done_slot=ago(8 * 3600)),
            lease(held_for=40, expires_in=-25),
            40.0,
            id="new-leader-lapsed",
        ),
    ],
)
def test_entry_lag_of_entries_not_yet_run(
    slot: Slot, the_lease: Lease | None, lag: float | None
) -> None:
    assert entry_lag(slot, the_lease, NOW) == (pytest.approx(lag) if lag is not None else None)


def test_a_fresh_leader_without_entries_is_healthy_until_max_lag_has_passed() -> None:
    assert judge(healthy(slots=(), lease=lease(held_for=30)), BOUNDS).ok
    assert texts(healthy(slots=(), lease=lease(held_for=45))) == [
        "no periodic task sent yet (web-1:42 has led for 45s; max_lag 30s)"
    ]


def test_a_fresh_install_is_healthy_once_a_scheduler_takes_the_lease() -> None:
    """The leader's rows exist, nothing sent yet, no feed known, nothing delivered."""
    entries = (Slot("probes-dispatch", 1.0), Slot("feeds-poll-all", 120.0))
    fresh = Snapshot(now=NOW, lease=lease(held_for=0.5), slots=entries)
    assert judge(fresh, BOUNDS).ok


@pytest.mark.parametrize(
    ("waited", "reason"),
    [
        pytest.param(None, None, id="none-pending"),
        pytest.param(599.0, None, id="just-under"),
        pytest.param(600.0, None, id="at-the-bound"),
        pytest.param(
            601.0,
            "oldest pending delivery is 10m 01s old (max_backlog 10m 00s)",
            id="just-over",
        ),
    ],
)
def test_a_delivery_pending_past_max_backlog_is_a_reason(
    waited: float | None, reason: str | None
) -> None:
    snapshot = healthy(oldest_pending=ago(waited) if waited is not None else None)
    assert judge(snapshot, BOUNDS).backlog_s == (waited or 0.0)
    assert texts(snapshot) == ([reason] if reason else [])


@pytest.mark.parametrize(
    ("feeds", "polled_ago", "age", "reason"),
    [
        pytest.param(0, None, None, None, id="no-enabled-feeds"),
        pytest.param(0, 9000.0, None, None, id="no-enabled-feeds-old-row"),
        pytest.param(2, 360.0, 360.0, None, id="at-the-bound"),
        pytest.param(2, 540.0, 540.0, "no feed polled for 9m 00s (max_feed_age 6m 00s)", id="past"),
    ],
)
def test_no_feed_polled_within_max_feed_age_is_a_reason(
    feeds: int, polled_ago: float | None, age: float | None, reason: str | None
) -> None:
    last = ago(polled_ago) if polled_ago is not None else None
    snapshot = healthy(feeds=feeds, last_feed_poll=last)
    assert judge(snapshot, BOUNDS).feed_age_s == age
    assert texts(snapshot) == ([reason] if reason else [])


def test_every_failing_check_is_a_reason_in_order() -> None:
    snapshot = healthy(
        lease=lease(expires_in=-40),
        slots=(dispatch(100),),
        oldest_pending=ago(3600),
        last_feed_poll=ago(3600),
    )
    assert judge(snapshot, BOUNDS).kinds == ("leader", "lag", "backlog", "feeds")


def test_the_bounds_come_from_the_watchdog_section_and_feeds_default_to_three_periods() -> None:
    config = Config.model_validate(
        {"schedule": {"feeds": "5m"}, "watchdog": {"max_lag": "1m", "max_backlog": "20m"}}
    )
    assert Bounds.of(config) == Bounds(max_lag_s=60, max_backlog_s=1200, max_feed_age_s=900)
    config = Config.model_validate({"watchdog": {"max_feed_age": "10m"}})
    assert Bounds.of(config).max_feed_age_s == 600
