"""Grafana's expansion of template variables and macros, as dashboards/grafana_vars.py
reproduces it (the dashboard tests run their SQL through it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dashboards.grafana_vars import ALL, Selection, TimeRange, expand, render, time_range

MULTI = {"name": "provider", "multi": True, "includeAll": True}
MULTI_ALL_VALUE = {**MULTI, "allValue": "'__all__'"}
SINGLE = {"name": "provider", "multi": False, "includeAll": False}
TIME = TimeRange(datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 8, tzinfo=UTC))


@pytest.mark.parametrize(
    ("definition", "options", "selected", "text"),
    [
        pytest.param(MULTI, ["a", "b"], ["a"], "'a'", id="one-value-of-a-multi-is-quoted"),
        pytest.param(MULTI, ["a", "b"], ["a", "b"], "'a','b'", id="several-values-quoted"),
        pytest.param(MULTI, ["o'b"], ["o'b"], "'o''b'", id="a-quote-is-doubled"),
        pytest.param(MULTI, ["a", "b"], [ALL], "'a','b'", id="all-is-every-option"),
        pytest.param(MULTI, [], [ALL], "", id="all-with-no-options-is-empty"),
        pytest.param(MULTI_ALL_VALUE, ["a"], [ALL], "'__all__'", id="all-value-verbatim"),
        pytest.param(MULTI_ALL_VALUE, [], [ALL], "'__all__'", id="all-value-with-no-options"),
        pytest.param(MULTI_ALL_VALUE, ["a", "b"], ["b"], "'b'", id="all-value-unused-on-pick"),
        pytest.param(SINGLE, ["a"], ["a"], "a", id="a-plain-single-value-is-not-quoted"),
    ],
)
def test_a_variable_renders_as_grafanas_postgres_datasource_renders_it(
    definition: dict[str, object], options: list[str], selected: list[str], text: str
) -> None:
    assert render(Selection(definition, options, selected)) == text


def test_all_with_no_options_and_no_all_value_gives_the_empty_in_list() -> None:
    sql = expand("SELECT 1 WHERE p IN ($provider)", {"provider": Selection(MULTI, [], [ALL])}, TIME)
    assert sql == "SELECT 1 WHERE p IN ()"


def test_an_all_value_naming_another_variable_is_expanded_too() -> None:
    selections = {
        "provider": Selection(MULTI, ["a"], ["a"]),
        "region": Selection({**MULTI, "allValue": "$provider"}, [], [ALL]),
    }
    assert expand("IN ($region)", selections, TIME) == "IN ('a')"


def test_both_spellings_expand_and_a_longer_name_is_not_eaten() -> None:
    selections = {
        "pool": Selection(MULTI, ["x"], ["x"]),
        "pools": Selection(MULTI, ["y"], ["y"]),
    }
    assert expand("$pool ${pool} $pools", selections, TIME) == "'x' 'x' 'y'"


def test_macros_expand_as_the_dashboard_tests_assume() -> None:
    sql = expand(
        "SELECT $__timeGroupAlias(at, $__interval), $__interval_ms FROM x "
        "WHERE $__timeFilter(at) AND $__timeFrom() < $__timeTo()",
        {},
        TIME,
    )
    frm, to = f"'{TIME.start.isoformat()}'", f"'{TIME.end.isoformat()}'"
    assert sql == (
        "SELECT date_bin('1h'::interval, at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS \"time\", "
        f"3600000 FROM x WHERE at BETWEEN {frm} AND {to} AND {frm} < {to}"
    )


def test_anything_left_unexpanded_is_an_error() -> None:
    with pytest.raises(ValueError, match="unexpanded"):
        expand("SELECT $region", {}, TIME)


@pytest.mark.parametrize(
    ("hours", "interval", "interval_ms"),
    [(1, "5s", 5_000), (24, "1m", 60_000), (24 * 7, "10m", 600_000), (24 * 30, "30m", 1_800_000)],
)
def test_interval_follows_grafanas_rounding_for_a_1000_pixel_panel(
    hours: int, interval: str, interval_ms: int
) -> None:
    end = datetime(2026, 11, 30, tzinfo=UTC)
    got = time_range(end - timedelta(hours=hours), end)
    assert (got.interval, got.interval_ms) == (interval, interval_ms)
