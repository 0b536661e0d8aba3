"""Calendar months, the unit every SLA is judged in: parsing ``YYYY-MM`` and bounding it in UTC.

One home for "a month", so the report, the API, the alerts and the metrics cannot disagree on
where one starts or which spellings are accepted.
"""

from __future__ import annotations

from datetime import UTC, datetime

from monitor.sla.intervals import Span

# What the API accepts as a month: four-digit years from 1000 (``strptime`` takes no fewer).
MONTH_PATTERN = r"^[1-9]\d{3}-(0[1-9]|1[0-2])$"


def month_period(month: str) -> Span:
    """The calendar month ``"YYYY-MM"`` as a UTC span ``[first day 00:00, next month)``."""
    try:
        start = datetime.strptime(month, "%Y-%m").replace(tzinfo=UTC)
    except ValueError:
        raise ValueError(f"month: expected YYYY-MM, got {month!r}") from None
    return Span(start, add_months(start, 1))


def month_bounds(month: str) -> tuple[datetime, datetime]:
    """``YYYY-MM`` -> [first instant, first instant of the next month), UTC."""
    period = month_period(month)
    return period.start, period.end


def month_of(at: datetime) -> str:
    """``YYYY-MM`` of the UTC month holding ``at``."""
    return f"{at.astimezone(UTC):%Y-%m}"


def previous_month(now: datetime) -> str:
    """``YYYY-MM`` of the month before ``now``'s (UTC)."""
    now = now.astimezone(UTC)
    year, month = (now.year, now.month - 1) if now.month > 1 else (now.year - 1, 12)
    return f"{year:04d}-{month:02d}"


def add_months(month_start: datetime, months: int) -> datetime:
    """The first instant ``months`` calendar months after (or before) ``month_start``."""
    index = month_start.year * 12 + month_start.month - 1 + months
    return month_start.replace(year=index // 12, month=index % 12 + 1)
