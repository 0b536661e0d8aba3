"""Inline SVG charts for the HTML report: pure functions from report data to SVG markup.

Every piece of text is escaped here; the result is :class:`markupsafe.Markup` so the template
inserts it as it is. Hovering a bar shows its exact figures (an SVG ``<title>``, no script).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from markupsafe import Markup, escape

from monitor.reports.model import MonthlyReport, ProviderReport, TargetReport
from monitor.reports.render.tables import duration, number, pct, when

GOOD = "#2e7d32"
BAD = "#c62828"
UNCOUNTED = "#f9a825"
NODATA = "#bdbdbd"
INK = "#212121"
GRID = "#e0e0e0"
MUTED = 'fill="#616161"'
FONT = "font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif"

# Lower ends the uptime axis may start at: uptimes cluster just under 100 %, so a 0–100 axis
# would draw every bar full. The axis starts at the largest of these below every value shown.
AXIS_FLOORS = (0.0, 50.0, 80.0, 90.0, 95.0, 98.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999)


def _svg(width: float, height: float, label: str, body: list[str]) -> Markup:
    head = (
        f'<svg width="{width:g}" height="{height:g}" '
        f'viewBox="0 0 {width:g} {height:g}" role="img" aria-label="{escape(label)}" '
        f'style="{FONT};font-size:11px;max-width:100%;height:auto">'
    )
    return Markup(head + "".join(body) + "</svg>")  # noqa: S704 - every part escaped above


def _text(x: float, y: float, text: str, anchor: str = "start", extra: str = "") -> str:
    attrs = f'x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" {extra}'.rstrip()
    return f"<text {attrs}>{escape(text)}</text>"


def _rect(x: float, y: float, w: float, h: float, fill: str, tip: str, extra: str = "") -> str:
    attrs = f'x="{x:.2f}" y="{y:.2f}" width="{w:.2f}" height="{h:.2f}" fill="{fill}" {extra}'
    return f"<rect {attrs.rstrip()}><title>{escape(tip)}</title></rect>"


def axis_floor(values: Sequence[float]) -> float:
    """The uptime axis's lower end: the largest of :data:`AXIS_FLOORS` below every value."""
    low = min(values, default=100.0)
    return max((f for f in AXIS_FLOORS if f < low), default=0.0)


@dataclass(frozen=True, slots=True)
class ValueAxis:
    """Percentages from ``lo`` to 100 onto ``width`` pixels starting at ``left``."""

    lo: float
    left: float
    width: float

    def x(self, v: float) -> float:
        return self.left + self.width * (max(v, self.lo) - self.lo) / (100.0 - self.lo)


@dataclass(frozen=True, slots=True)
class TimeAxis:
    """The report period onto ``width`` pixels starting at ``left``; clamps outside times."""

    start: datetime
    end: datetime
    left: float
    width: float

    def x(self, at: datetime) -> float:
        span = max((self.end - self.start).total_seconds(), 1.0)
        offset = min(max((at - self.start).total_seconds(), 0.0), span)
        return self.left + self.width * offset / span


def uptime_bars(providers: Sequence[ProviderReport]) -> Markup:
    """Horizontal bars of each provider's SLA uptime, with its target as a black tick."""
    values = [v for p in providers for v in (p.uptime_pct, p.target_pct) if v is not None]
    axis = ValueAxis(axis_floor(values), left=170.0, width=440.0)
    row = 26.0
    height = 34 + row * max(len(providers), 1)
    body = _value_ticks(axis, height - 16)
    for i, p in enumerate(providers):
        y = 6 + i * row
        body.append(_text(axis.left - 8, y + 14, p.name or p.slug, "end"))
        body.extend(_uptime_bar(p, axis, y))
    label = "Uptime against SLA target per provider"
    return _svg(axis.left + axis.width + 190, height, label, body)


def _uptime_bar(p: ProviderReport, axis: ValueAxis, y: float) -> list[str]:
    name = p.name or p.slug
    if p.uptime_pct is None:
        tip = f"{name}: no data"
        return [_rect(axis.left, y + 3, 4, 16, NODATA, tip), _text(axis.left + 10, y + 15, tip)]
    ok = p.target_pct is None or p.uptime_pct >= p.target_pct
    tip = f"{name}: uptime {pct(p.uptime_pct)}, target {number(p.target_pct)}%"
    width = max(axis.x(p.uptime_pct) - axis.left, 1.0)
    parts = [_rect(axis.left, y + 3, width, 16, GOOD if ok else BAD, tip)]
    if p.target_pct is not None:
        tx = axis.x(p.target_pct)
        parts.append(_line(tx, tx, y, y + 22, INK, 'stroke-width="2"'))
    label = f"{pct(p.uptime_pct)} (target {number(p.target_pct)}%)"
    parts.append(_text(axis.x(100.0) + 8, y + 15, label))
    return parts


def _value_ticks(axis: ValueAxis, y: float) -> list[str]:
    parts = []
    for k in range(5):
        v = axis.lo + (100.0 - axis.lo) * k / 4
        parts.append(_line(axis.x(v), axis.x(v), 0, y, GRID))
        parts.append(_text(axis.x(v), y + 12, f"{v:.6g}%", "middle", MUTED))
    return parts


def outage_timeline(report: MonthlyReport) -> Markup:
    """One row per target with outages or without data, across the report period.

    Red: downtime the SLA counts; amber: downtime it does not (maintenance, our vantage, under
    the minimum); an open outage runs to the period's end with a dashed edge; grey: no data.
    """
    rows = [t for t in report.targets if t.outages or t.uptime_pct is None]
    axis = TimeAxis(report.period_start, report.period_end, left=190.0, width=1000.0)
    row = 16.0
    height = 48 + row * max(len(rows), 1)
    body = _day_grid(axis, height - 30)
    for i, t in enumerate(rows):
        y = 4 + i * row
        body.append(_text(axis.left - 6, y + 11, _short(t.name), "end"))
        body.extend(_target_bars(t, axis, y))
    if not rows:
        body.append(_text(axis.left + 8, 20, "No outages this period."))
    return _svg(axis.left + axis.width + 10, height, "Outage timeline per target", body)


def _day_grid(axis: TimeAxis, y: float) -> list[str]:
    parts = []
    day = axis.start.replace(hour=0, minute=0, second=0, microsecond=0)
    while day < axis.end:
        if day >= axis.start:
            parts.append(_line(axis.x(day), axis.x(day), 0, y, GRID))
            parts.append(_text(axis.x(day) + 2, y + 12, str(day.day), "start", MUTED))
        day += timedelta(days=1)
    parts.append(_text(axis.x(axis.end), y + 22, "day of month (UTC)", "end", MUTED))
    return parts


def _target_bars(t: TargetReport, axis: TimeAxis, y: float) -> list[str]:
    if not t.outages:  # a target without data: the whole period is unknown
        width = axis.x(axis.end) - axis.left
        return [_rect(axis.left, y + 2, width, 11, NODATA, f"{t.name}: no data")]
    parts = []
    for o in t.outages:
        x0, x1 = axis.x(o.start), axis.x(o.end or axis.end)
        fill = BAD if o.sla_counted_s > 0 else UNCOUNTED
        tip = (
            f"{t.name}: {when(o.start)} → {when(o.end, 'still open')} UTC, "
            f"{duration(o.duration_s)}, {o.cause}, SLA counts {duration(o.sla_counted_s)}"
        )
        extra = f'stroke="{INK}" stroke-dasharray="3 2"' if o.end is None else ""
        parts.append(_rect(x0, y + 2, max(x1 - x0, 3.0), 11, fill, tip, extra))
    return parts


def _line(x1: float, x2: float, y1: float, y2: float, color: str, extra: str = "") -> str:
    attrs = f'x1="{x1:.2f}" x2="{x2:.2f}" y1="{y1:.1f}" y2="{y2:.1f}" stroke="{color}" {extra}'
    return f"<line {attrs.rstrip()}/>"


def _short(name: str, limit: int = 30) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"
