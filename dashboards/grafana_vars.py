"""Template variables and macros expanded the way Grafana expands them for its PostgreSQL
datasource, so the dashboards' SQL can be run here exactly as Grafana would send it.

What Grafana does (public/app/features/templating/template_srv.ts and the SQL datasource's
``interpolateVariable``):

* A variable that is multi-value or has "All" has each value quoted as a SQL literal
  (``'a','b'``, a quote doubled); a plain single-value variable goes in as it is.
* "All" selected with a custom ``allValue``: the ``allValue`` goes in verbatim, unquoted (it may
  itself name variables, which are expanded in turn).
* "All" selected without one: every option the variable's query returned, quoted and joined;
  when the query returned nothing that is the empty string, and ``x IN ()`` is a syntax error.

Pure: no database. The caller runs each variable's query and passes the options it got.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

ALL = "$__all"


@dataclass(frozen=True, slots=True)
class Selection:
    """A variable as a dashboard holds it: its definition, the options its query returned and
    what is selected (``[ALL]`` for "All")."""

    definition: Mapping[str, Any]
    options: Sequence[str]
    selected: Sequence[str]


@dataclass(frozen=True, slots=True)
class TimeRange:
    start: datetime
    end: datetime
    interval: str = "1h"
    interval_ms: int = 3_600_000


def quote_literal(value: str) -> str:
    """The SQL datasource's ``quoteLiteral``: single quotes, an inner quote doubled."""
    return "'" + value.replace("'", "''") + "'"


def is_all(selection: Selection) -> bool:
    return ALL in selection.selected


def render(selection: Selection) -> str:
    """The text that replaces ``$name`` for this selection, before any nested expansion."""
    definition = selection.definition
    quoted = bool(definition.get("multi") or definition.get("includeAll"))
    if is_all(selection):
        if definition.get("allValue"):
            return str(definition["allValue"])
        values: Sequence[str] = selection.options
    else:
        values = selection.selected
    if not quoted:
        return ",".join(values)
    return ",".join(quote_literal(v) for v in values)


def expand_variables(sql: str, selections: Mapping[str, Selection]) -> str:
    """Replace ``$name`` and ``${name}`` for every selection (longest names first, so
    ``$pool`` never eats ``$pools``); a custom allValue is expanded again, as Grafana does."""
    for name in sorted(selections, key=len, reverse=True):
        text = render(selections[name])
        if is_all(selections[name]) and selections[name].definition.get("allValue"):
            text = expand_variables(text, {k: v for k, v in selections.items() if k != name})
        sql = sql.replace(f"${{{name}}}", text)
        # the text is a replacement template: its backslashes must stay literal
        sql = re.sub(rf"\${re.escape(name)}(?!\w)", text.replace("\\", "\\\\"), sql)
    return sql


def expand_macros(sql: str, time: TimeRange) -> str:
    """Grafana's PostgreSQL macros: ``$__timeFilter(col)``, ``$__timeFrom()``, ``$__timeTo()``,
    ``$__timeGroupAlias(col, $__interval)``, ``$__interval`` and ``$__interval_ms``."""
    frm, to = f"'{time.start.isoformat()}'", f"'{time.end.isoformat()}'"
    sql = re.sub(
        r"\$__timeGroupAlias\(([^,()]+),\s*\$__interval\)",
        lambda g: (
            f"date_bin('{time.interval}'::interval, {g.group(1).strip()}, "
            "TIMESTAMPTZ '2000-01-01 00:00:00+00') AS \"time\""
        ),
        sql,
    )
    sql = re.sub(
        r"\$__timeFilter\(([^()]+)\)", lambda g: f"{g.group(1)} BETWEEN {frm} AND {to}", sql
    )
    sql = sql.replace("$__timeFrom()", frm).replace("$__timeTo()", to)
    sql = sql.replace("$__interval_ms", str(time.interval_ms))
    return sql.replace("$__interval", time.interval)


def expand(sql: str, selections: Mapping[str, Selection], time: TimeRange) -> str:
    """Variables (Grafana's frontend), then macros (its backend); raises ValueError if anything
    starting with ``$`` is left."""
    out = expand_macros(expand_variables(sql, selections), time)
    if "$" in out:
        raise ValueError(f"unexpanded macro or variable in:\n{out}")
    return out


def round_interval(ms: float) -> int:
    """Grafana's ``rangeutil.roundInterval``: the raw interval (range / max data points) snapped
    to a round one, in milliseconds."""
    for below, rounded in ROUND_INTERVALS:
        if ms < below:
            return rounded
    return 31_536_000_000  # a year


ROUND_INTERVALS = (
    (15, 10), (35, 20), (75, 50), (150, 100), (350, 200), (750, 500), (1_500, 1_000),
    (3_500, 2_000), (7_500, 5_000), (12_500, 10_000), (17_500, 15_000), (25_000, 20_000),
    (45_000, 30_000), (90_000, 60_000), (210_000, 120_000), (450_000, 300_000),
    (750_000, 600_000), (1_050_000, 900_000), (1_500_000, 1_200_000), (2_700_000, 1_800_000),
    (5_400_000, 3_600_000), (9_000_000, 7_200_000), (16_200_000, 10_800_000),
    (32_400_000, 21_600_000), (86_400_000, 43_200_000), (604_800_000, 86_400_000),
    (1_814_400_000, 604_800_000), (3_628_800_000, 2_592_000_000),
)  # fmt: skip


def time_range(start: datetime, end: datetime, max_data_points: int = 1000) -> TimeRange:
    """The range with ``$__interval`` as Grafana computes it for a panel ``max_data_points``
    pixels wide (its default max data points)."""
    interval_ms = round_interval((end - start).total_seconds() * 1000 / max_data_points)
    return TimeRange(start, end, interval_text(interval_ms), interval_ms)


def interval_text(ms: int) -> str:
    """Grafana's text for a whole interval: ``1m``, ``30m``, ``1h``, ``1d``."""
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000)):
        if ms >= size and ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def dashboard_start(time_from: str, now: datetime) -> datetime:
    """A dashboard's ``time.from`` as Grafana resolves it: ``now/M`` (the month's start) or
    ``now-<n>h`` / ``now-<n>d``."""
    if time_from == "now/M":
        return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    amount, unit = int(time_from[4:-1]), time_from[-1]
    return now - timedelta(**{{"h": "hours", "d": "days"}[unit]: amount})
