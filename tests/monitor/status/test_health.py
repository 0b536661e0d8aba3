"""What the status page says about targets, pools, providers and vantages
(monitor/status/health.py): unknown is never up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitor.status.health import (
    FeedFacts,
    ProviderHealth,
    fresh,
    pool_health,
    provider_health,
    target_state,
    vantage_state,
)

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
STALE_AFTER = timedelta(minutes=30)


def ago(minutes: float) -> datetime:
    return NOW - timedelta(minutes=minutes)


# --- targets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reachable", "usable", "is_fresh", "expected"),
    [
        pytest.param("up", "up", True, "up", id="reachable-and-usable"),
        pytest.param("up", "down", True, "unusable", id="gpu-fell-off-the-bus"),
        pytest.param("up", None, True, "up", id="no-usable-verdict-http-tcp"),
        pytest.param("up", "unknown", True, "up", id="usable-unknown"),
        pytest.param("down", "down", True, "down", id="down"),
        pytest.param("down", "up", True, "down", id="down-whatever-usable-says"),
        pytest.param(None, None, True, "unknown", id="no-quorum-row"),
        pytest.param("unknown", "up", True, "unknown", id="quorum-unknown"),
        pytest.param("up", "up", False, "unknown", id="stale-up-is-unknown"),
        pytest.param("down", "down", False, "unknown", id="stale-down-is-unknown"),
    ],
)
def test_displayed_state_tells_reachable_from_usable(
    reachable: str | None, usable: str | None, is_fresh: bool, expected: str
) -> None:
    assert target_state(reachable, usable, is_fresh) == expected


@pytest.mark.parametrize(
    ("last_probe_at", "expected"),
    [
        pytest.param(ago(1), True, id="probed-a-minute-ago"),
        pytest.param(NOW - timedelta(seconds=95), True, id="exactly-three-intervals-and-timeout"),
        pytest.param(NOW - timedelta(seconds=96), False, id="just-past-the-cutoff"),
        pytest.param(None, False, id="never-probed"),
    ],
)
def test_a_verdict_is_fresh_while_some_vantage_would_still_vote(
    last_probe_at: datetime | None, expected: bool
) -> None:
    assert fresh(last_probe_at, 30.0, 5.0, NOW) is expected


# --- pools -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("min_up", "states", "expected", "usable"),
    [
        pytest.param(2, ["up", "up", "down"], "up", 2, id="enough-usable"),
        pytest.param(
            2, ["up", "unusable", "unusable"], "down", 1, id="unusable-members-do-not-count"
        ),
        pytest.param(2, ["up", "unknown", "down"], "unknown", 1, id="unknown-could-make-it"),
        pytest.param(1, ["unknown"], "unknown", 0, id="only-unknown"),
        pytest.param(1, [], "down", 0, id="no-members"),
        pytest.param(3, ["up", "unknown", "down"], "down", 1, id="short-even-if-unknown-were-up"),
    ],
)
def test_pools_count_usable_members_against_min_up(
    min_up: int, states: list[str], expected: str, usable: int
) -> None:
    pool = pool_health("h100", min_up, states)
    assert pool.state == expected
    assert pool.up == usable
    assert pool.total == len(states)


def test_pool_counts_every_member_once_by_state() -> None:
    pool = pool_health("p", 1, ["up", "unusable", "down", "unknown", "unknown"])
    assert (pool.up, pool.unusable, pool.down, pool.unknown) == (1, 1, 1, 2)


# --- providers -------------------------------------------------------------------------------


def feed(
    *,
    polled: datetime | None = None,
    success: datetime | None = None,
    failures: int = 0,
    error: str | None = None,
    enabled: bool = True,
) -> FeedFacts:
    return FeedFacts(enabled, polled, success, failures, error)


OK = feed(polled=ago(2), success=ago(2))
FAILING = feed(polled=ago(1), success=ago(90), failures=40, error="connect timeout")


@pytest.mark.parametrize(
    ("feeds", "incidents", "maintenance", "expected"),
    [
        pytest.param([], 0, 0, ("unknown", "no public feed", None), id="no-feed"),
        pytest.param(
            [feed(enabled=False, polled=ago(1), success=ago(1))],
            0,
            0,
            ("unknown", "feed disabled", None),
            id="only-a-disabled-feed",
        ),
        pytest.param([feed()], 0, 0, ("unknown", "feed never polled", None), id="never-polled"),
        pytest.param(
            [feed(polled=ago(1), failures=3, error="boom")],
            0,
            0,
            ("unknown", "feed never answered", None),
            id="never-answered",
        ),
        pytest.param([OK], 0, 0, ("operational", "polled", ago(2)), id="fresh-success"),
        pytest.param(
            [feed(polled=ago(1), success=ago(20), failures=3)],
            0,
            0,
            ("operational", "polled", ago(20)),
            id="a-few-failures-after-a-recent-success",
        ),
        pytest.param(
            [FAILING], 0, 0, ("unknown", "feed unreachable since", ago(90)), id="unreachable"
        ),
        pytest.param(
            [feed(polled=ago(45), success=ago(45))],
            0,
            0,
            ("unknown", "feed not polled since", ago(45)),
            id="feed-worker-stopped",
        ),
        pytest.param([OK], 2, 1, ("incident", "polled", ago(2)), id="open-incident"),
        pytest.param([OK], 0, 1, ("maintenance", "polled", ago(2)), id="maintenance-only"),
        pytest.param(
            [FAILING],
            1,
            0,
            ("incident", "feed unreachable since", ago(90)),
            id="incident-stays-visible-on-a-stale-feed",
        ),
        pytest.param(
            [FAILING, OK, feed()],
            0,
            0,
            ("operational", "polled", ago(2)),
            id="the-freshest-of-several-feeds-decides",
        ),
    ],
)
def test_provider_health_is_operational_only_after_a_recent_successful_poll(
    feeds: list[FeedFacts],
    incidents: int,
    maintenance: int,
    expected: tuple[str, str, datetime | None],
) -> None:
    health = provider_health(feeds, incidents, maintenance, NOW, STALE_AFTER)
    assert (health.state, health.reason, health.at) == expected
    assert (health.feed_state == "fresh") is (health.reason == "polled")


def test_provider_health_keeps_the_feed_it_rests_on_for_the_detail_line() -> None:
    health = provider_health([FAILING, feed(enabled=False)], 0, 0, NOW, STALE_AFTER)
    assert health == ProviderHealth("unknown", "feed unreachable since", ago(90), FAILING)


@pytest.mark.parametrize(
    ("feeds", "feed_state"),
    [
        pytest.param([], "none", id="no-feed"),
        pytest.param([feed(enabled=False)], "disabled", id="disabled"),
        pytest.param([feed()], "never-polled", id="never-polled"),
        pytest.param([feed(polled=ago(1), failures=1)], "never-answered", id="never-answered"),
        pytest.param([FAILING], "unreachable", id="unreachable"),
        pytest.param([feed(polled=ago(45), success=ago(45))], "stale", id="worker-stopped"),
        pytest.param([OK], "fresh", id="fresh"),
    ],
)
def test_the_feeds_own_state_is_told_apart_from_the_providers_incidents(
    feeds: list[FeedFacts], feed_state: str
) -> None:
    assert provider_health(feeds, 3, 0, NOW, STALE_AFTER).feed_state == feed_state


# --- vantages --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("last_probe_at", "disagreeing", "blind", "expected"),
    [
        pytest.param(ago(1), 0, False, "agrees", id="agrees"),
        pytest.param(ago(1), 3, False, "disagrees", id="disagrees-on-some"),
        pytest.param(ago(1), 50, True, "blind", id="blind"),
        pytest.param(None, 0, True, "blind", id="blind-before-anything-else"),
        pytest.param(None, 0, False, "unknown", id="never-probed"),
    ],
)
def test_vantage_state(
    last_probe_at: datetime | None, disagreeing: int, blind: bool, expected: str
) -> None:
    assert vantage_state(last_probe_at, disagreeing, blind) == expected
