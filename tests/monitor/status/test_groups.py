"""The fleet in groups (monitor/status/groups.py): a group's state (unknown never up, degraded
told from up), uptime pooled over observed time, the front page's groups and target list, and
the drill-down pages' selections."""

from __future__ import annotations

from datetime import timedelta

import pytest

from monitor.status.groups import (
    FleetFilter,
    fleet_page,
    fleet_path,
    front_fleet,
    group_of,
    group_state,
    home_provider,
    pool_page,
    pool_path,
    pooled_uptime,
    provider_groups,
)
from monitor.status.health import PoolHealth, pool_health
from monitor.status.history import Uptime
from monitor.status.view import WINDOWS, ProviderView, StatusView, TargetView, pools_of
from tests.monitor.status.test_view import NOW

DAY = timedelta(days=1)


def uptimes(
    observed_h: float, pct: float | None, usable: float | None = None
) -> tuple[Uptime, ...]:
    observed = timedelta(hours=observed_h)
    usable = pct if usable is None else usable
    return tuple(Uptime(w, observed, pct, usable) for w in WINDOWS)


def target(
    name: str,
    state: str,
    pool: str | None = "h100",
    provider: str | None = "aws",
    uptime: tuple[Uptime, ...] | None = None,
) -> TargetView:
    uptime = uptimes(24, 100.0) if uptime is None else uptime
    return TargetView(name, "tcp", state, pool, provider, None, (), uptime, None)


def view_of(fleet: list[TargetView], min_up: dict[str, int] | None = None) -> StatusView:
    providers = (ProviderView("aws", "Amazon Web Services", None, ()),)  # type: ignore[arg-type]
    return StatusView(
        now=NOW,
        month="2026-05",
        providers=providers,
        fleet=tuple(fleet),
        pools=pools_of(fleet, min_up or {}),
        alerts=(),
        sla=(),
    )


# --------------------------------------------------------------------------- the rules


@pytest.mark.parametrize(
    ("states", "min_up", "state"),
    [
        pytest.param(["up", "up"], 1, "up", id="every-member-up"),
        pytest.param(["up", "down"], 1, "degraded", id="enough-up-but-one-down"),
        pytest.param(["up", "unknown"], 1, "degraded", id="an-unknown-member-is-not-up"),
        pytest.param(["up", "unusable"], 1, "degraded", id="an-unusable-member-is-not-up"),
        pytest.param(["unknown", "unknown"], 1, "unknown", id="all-unknown-is-unknown-never-up"),
        pytest.param(["down", "unknown"], 1, "unknown", id="the-unknown-could-make-it"),
        pytest.param(["down", "unusable"], 1, "down", id="none-usable-none-unknown"),
        pytest.param(["up", "down"], 2, "down", id="short-of-min-up"),
        pytest.param(["up", "unknown"], 2, "unknown", id="short-unless-the-unknown-is-up"),
        pytest.param([], 1, "unknown", id="no-member-is-unknown"),
    ],
)
def test_a_group_s_state(states: list[str], min_up: int, state: str) -> None:
    assert group_state(pool_health("g", min_up, states)) == state


def test_a_configured_pool_without_members_is_down_as_the_page_counts_it() -> None:
    view = view_of([], {"spare": 2})
    page = pool_page(view, "spare")
    assert page is not None
    assert (page.group.state, page.group.health.state) == ("down", "down")
    assert page.members == ()


def test_uptime_is_pooled_over_observed_time_not_averaged_over_members() -> None:
    window = DAY
    # 20 h watched at 90 %, 4 h watched at 100 %, one never watched: (18 + 4) / 24
    pooled = pooled_uptime(
        [
            Uptime(window, timedelta(hours=20), 90.0, 80.0),
            Uptime(window, timedelta(hours=4), 100.0, 100.0),
            Uptime(window, timedelta(0), None, None),
        ],
        window,
    )
    assert pooled.observed == timedelta(hours=24)
    assert pooled.reachable_pct == pytest.approx(100 * 22 / 24)
    assert pooled.usable_pct == pytest.approx(100 * 20 / 24)


def test_a_group_nobody_watched_has_no_data_never_100() -> None:
    pooled = pooled_uptime([Uptime(DAY, timedelta(0), None, None)] * 3, DAY)
    assert (pooled.reachable_pct, pooled.usable_pct) == (None, None)
    assert pooled_uptime([], DAY).reachable_pct is None


def test_a_group_counts_its_members_and_pools_their_uptime_per_window() -> None:
    members = [
        target("a", "up", uptime=uptimes(10, 100.0)),
        target("b", "down", uptime=uptimes(30, 50.0)),
    ]
    group = group_of("aws", "AWS", members)
    assert group.counts == {"up": 1, "unusable": 0, "down": 1, "unknown": 0}
    assert group.state == "degraded"
    assert [u.window for u in group.uptime] == list(WINDOWS)
    assert group.uptime[0].reachable_pct == pytest.approx((10 + 15) / 40 * 100)


# --------------------------------------------------------------------------- the front page


def test_a_pool_is_listed_once_under_the_provider_holding_most_of_its_members() -> None:
    fleet = [
        target("a", "up", pool="mixed", provider="gcp"),
        target("b", "up", pool="mixed", provider="aws"),
        target("c", "up", pool="mixed", provider="aws"),
        target("d", "down", pool=None, provider="aws"),
        target("e", "unknown", pool="orphans", provider=None),
    ]
    groups = {g.slug: g for g in provider_groups(view_of(fleet, {"spare": 1}))}
    assert list(groups) == ["aws", "gcp", None]  # by name, no provider last
    aws, gcp, none = groups["aws"], groups["gcp"], groups[None]
    assert (aws.name, aws.has_page) == ("Amazon Web Services", True)
    assert (gcp.name, gcp.has_page) == ("gcp", False)  # no catalog row: no page to link
    assert [p.key for p in aws.pools] == ["mixed"]
    assert aws.pools[0].health.total == 3  # the whole pool, gcp's member too
    assert aws.group.health.total == 3  # its own targets: b, c, d
    assert aws.unpooled is not None
    assert aws.unpooled.health.down == 1
    assert gcp.pools == ()
    assert gcp.unpooled is None
    assert [p.key for p in none.pools] == ["spare", "orphans"]  # trouble first: down, unknown
    assert none.name == "(no provider)"


def test_home_provider_breaks_a_tie_by_slug() -> None:
    members = [target("a", "up", provider="gcp"), target("b", "up", provider="aws")]
    assert home_provider(members) == "aws"
    assert home_provider([]) == ""


def test_a_small_fleet_is_listed_whole_a_large_one_only_its_trouble() -> None:
    small = [target(f"t{i}", "up") for i in range(3)]
    listed = front_fleet(small, limit=3)
    assert (len(listed.rows), listed.trimmed, listed.unlisted) == (3, False, 0)
    large = [target("d", "down"), target("u", "unknown")] + [
        target(f"t{i}", "up") for i in range(10)
    ]
    trimmed = front_fleet(large, limit=5)
    assert trimmed.trimmed
    assert [t.name for t in trimmed.rows] == ["d", "u"]
    assert (trimmed.total, trimmed.trouble, trimmed.unlisted) == (12, 2, 0)
    crowded = front_fleet([target(f"x{i}", "unknown") for i in range(9)], limit=5)
    assert (len(crowded.rows), crowded.unlisted) == (5, 4)


# --------------------------------------------------------------------------- drill-down


def test_the_fleet_page_selects_by_provider_pool_and_state_an_empty_value_meaning_none() -> None:
    fleet = [
        target("a", "up", pool="h100", provider="aws"),
        target("b", "down", pool=None, provider="aws"),
        target("c", "down", pool=None, provider=None),
    ]
    view = view_of(fleet)

    def names(selected: FleetFilter) -> list[str]:
        return [t.name for t in fleet_page(view, selected).rows]

    assert names(FleetFilter()) == ["a", "b", "c"]
    assert names(FleetFilter(provider="aws")) == ["a", "b"]
    assert names(FleetFilter(provider="aws", pool="")) == ["b"]
    assert names(FleetFilter(provider="")) == ["c"]
    assert names(FleetFilter(states=frozenset({"down"}))) == ["b", "c"]
    assert FleetFilter("aws", "", frozenset({"unknown", "down"})).words == (
        "provider aws, no pool, down or unknown"
    )


def test_a_pool_s_page_holds_its_members_whatever_their_provider() -> None:
    fleet = [
        target("a", "up", pool="mixed", provider="gcp"),
        target("b", "up", pool="mixed", provider="aws"),
        target("c", "up", pool="mixed", provider="aws"),
        target("x", "down", pool="other"),
    ]
    page = pool_page(view_of(fleet), "mixed")
    assert page is not None
    assert [m.name for m in page.members] == ["a", "b", "c"]
    assert page.providers == ("aws", "gcp")  # most members first
    assert page.group.state == "up"
    assert page.availability_pct is None  # no report: no figure, never 100
    assert pool_page(view_of(fleet), "nope") is None


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param(pool_path("a/b c"), "/pools/a%2Fb%20c", id="pool-name-quoted"),
        pytest.param(fleet_path(), "/fleet", id="everything"),
        pytest.param(fleet_path("aws", ""), "/fleet?provider=aws&pool=", id="no-pool"),
        pytest.param(
            fleet_path(states=("down", "unknown")), "/fleet?state=down&state=unknown", id="states"
        ),
    ],
)
def test_drill_down_paths(path: str, expected: str) -> None:
    assert path == expected


def test_an_empty_group_takes_the_state_its_kind_gives_it() -> None:
    health = PoolHealth("p", 1, 2, 1, 1, 1)
    assert group_state(health) == "degraded"
    assert group_state(PoolHealth("p", 1, 0, 0, 0, 0), "down") == "down"
