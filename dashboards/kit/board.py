"""A slamon dashboard around its panels, with the provider, region and pool variables."""

from __future__ import annotations

from collections.abc import Sequence

from grafana_foundation_sdk.builders import dashboard as builders
from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.models import dashboard as model

from dashboards.kit.queries import ALL_VALUE, DATASOURCE


def variable(name: str, label: str, query: str) -> builders.QueryVariable:
    """A multi-value variable on the slamon datasource, "All" by default with ALL_VALUE."""
    return (
        builders.QueryVariable(name)
        .label(label)
        .datasource(DATASOURCE)
        .query(query)
        .refresh(model.VariableRefresh.ON_DASHBOARD_LOAD)
        .sort(model.VariableSort.ALPHABETICAL_ASC)
        .multi(True)
        .include_all(True)
        .all_value(ALL_VALUE)
        .current(model.VariableOption(selected=True, text=["All"], value=["$__all"]))
    )


def variables() -> list[builders.QueryVariable]:
    """Provider, region and pool: each narrows to the selections before it."""
    return [
        variable(
            "provider",
            "Provider",
            "SELECT DISTINCT provider AS __text FROM targets WHERE provider IS NOT NULL "
            "UNION SELECT slug FROM providers ORDER BY 1",
        ),
        variable(
            "region",
            "Region",
            "SELECT DISTINCT COALESCE(region, 'none') AS __text FROM targets "
            "WHERE ('__all__' IN ($provider) OR provider IN ($provider)) ORDER BY 1",
        ),
        variable(
            "pool",
            "Pool",
            "SELECT DISTINCT COALESCE(pool, 'none') AS __text FROM targets "
            "WHERE ('__all__' IN ($provider) OR provider IN ($provider)) "
            "AND ('__all__' IN ($region) OR COALESCE(region, 'none') IN ($region)) ORDER BY 1",
        ),
    ]


def board(
    uid: str,
    title: str,
    tags: list[str],
    time_from: str,
    panels: Sequence[cogbuilder.Builder[model.Panel]],
) -> builders.Dashboard:
    """A read-only slamon dashboard in UTC with the provider/region/pool variables."""
    dashboard = (
        builders.Dashboard(title)
        .uid(uid)
        .tags(tags)
        .timezone("utc")
        .readonly()  # provisioned: saving from the UI would only invite lost edits
        .tooltip(model.DashboardCursorSync.CROSSHAIR)
        .time(time_from, "now")
        .refresh("1m")
        .version(1)
        .variables(list(variables()))
    )
    for panel in panels:
        dashboard = dashboard.with_panel(panel)
    return dashboard
