"""Where a panel sits and one builder per panel kind, each on the slamon datasource with the
query format its kind needs."""

from __future__ import annotations

from typing import Any

from grafana_foundation_sdk.builders import (
    bargauge,
    piechart,
    stat,
    statetimeline,
    table,
    timeseries,
)
from grafana_foundation_sdk.builders import common as common_builders
from grafana_foundation_sdk.builders import dashboard as builders
from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.models import common
from grafana_foundation_sdk.models import dashboard as model

from dashboards.kit.queries import DATASOURCE, Format, SqlTarget


class Grid(model.GridPos):
    """Where a panel sits: x and y from the top left, w of 24 columns, h in rows."""

    def __init__(self, x: int, y: int, w: int, h: int) -> None:
        super().__init__(h=h, w=w, x=x, y=y)


Panel = Any  # the SDK's panel builders share no typed base with these methods


def place(
    panel: Panel,
    panel_id: int,
    title: str,
    grid: Grid,
    query: str,
    format_val: Format,
    description: str | None = None,
) -> cogbuilder.Builder[model.Panel]:
    panel = (
        panel.id(panel_id)
        .title(title)
        .datasource(DATASOURCE)
        .grid_pos(grid)
        .with_target(SqlTarget(query, format_val))
    )
    if description:
        panel = panel.description(description)
    return panel  # type: ignore[no-any-return]


def stat_panel(
    panel_id: int, title: str, grid: Grid, query: str
) -> cogbuilder.Builder[model.Panel]:
    return place(stat.Panel(), panel_id, title, grid, query, "table")


def table_panel(
    panel_id: int,
    title: str,
    grid: Grid,
    query: str,
    description: str | None = None,
    units: dict[str, str] | None = None,
) -> cogbuilder.Builder[model.Panel]:
    """A table; ``units`` maps a column to its Grafana unit (``percent``, ``s``, ``m``,
    ``currencyUSD``) so the cell reads ``99.95%`` or ``42 min``, not a bare number."""
    panel = table.Panel()
    for column, unit in (units or {}).items():
        panel = panel.override_by_name(
            column, [model.DynamicConfigValue(id_val="unit", value=unit)]
        )
    return place(panel, panel_id, title, grid, query, "table", description)


def timeseries_panel(
    panel_id: int,
    title: str,
    grid: Grid,
    query: str,
    unit: str | None = None,
    max_data_points: int | None = None,
) -> cogbuilder.Builder[model.Panel]:
    """A time series; ``max_data_points`` caps the points per series (and so widens
    ``$__interval``) where a finer one would cost more than it shows."""
    panel = timeseries.Panel()
    if unit:
        panel = panel.unit(unit)
    if max_data_points:
        panel = panel.max_data_points(max_data_points)
    return place(panel, panel_id, title, grid, query, "time_series")


def state_timeline(
    panel_id: int, title: str, grid: Grid, query: str
) -> cogbuilder.Builder[model.Panel]:
    """A state timeline of 1 (up, green), 0 (down, red) and 0.5 (unknown, grey: never shown as
    up) per series."""
    panel = (
        statetimeline.Panel()
        .mappings(
            [
                model.ValueMap(
                    options={
                        "0": model.ValueMappingResult(text="down", color="red"),
                        "0.5": model.ValueMappingResult(text="unknown", color="text"),
                        "1": model.ValueMappingResult(text="up", color="green"),
                    }
                )
            ]
        )
        .thresholds(
            builders.ThresholdsConfig()
            .mode(model.ThresholdsMode.ABSOLUTE)
            .steps(
                [
                    model.Threshold(value=None, color="red"),
                    model.Threshold(value=0.5, color="text"),
                    model.Threshold(value=1, color="green"),
                ]
            )
        )
    )
    return place(panel, panel_id, title, grid, query, "time_series")


def every_row() -> common_builders.ReduceDataOptions:
    # Grafana's default reduces each column to its last value: one bar or slice, not one per row.
    return common_builders.ReduceDataOptions().values(True).calcs([]).fields("")


def rows_bargauge(
    panel_id: int,
    title: str,
    grid: Grid,
    query: str,
    unit: str | None = None,
    steps: list[tuple[float | None, str]] | None = None,
) -> cogbuilder.Builder[model.Panel]:
    """A bar per row of the query's result, coloured by ``steps`` (value, colour) if given."""
    panel = bargauge.Panel().reduce_options(every_row())
    if unit:
        panel = panel.unit(unit)
    if steps:
        panel = panel.thresholds(
            builders.ThresholdsConfig()
            .mode(model.ThresholdsMode.ABSOLUTE)
            .steps([model.Threshold(value=value, color=color) for value, color in steps])
        )
    return place(panel, panel_id, title, grid, query, "table")


def rows_piechart(
    panel_id: int, title: str, grid: Grid, query: str
) -> cogbuilder.Builder[model.Panel]:
    """A slice per row of the query's result."""
    # The SDK's default legend is hidden; Grafana's (and this panel's) names each slice.
    legend = (
        piechart.PieChartLegendOptions()
        .show_legend(True)
        .display_mode(common.LegendDisplayMode.LIST)
        .placement(common.LegendPlacement.RIGHT)
        .values([])
    )
    panel = piechart.Panel().reduce_options(every_row()).legend(legend)
    return place(panel, panel_id, title, grid, query, "table")
