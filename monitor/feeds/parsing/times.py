"""Times as feeds write them (ISO 8601, RFC 2822, epoch seconds), read as aware UTC."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any


def parse_time(value: str | int | float | None) -> datetime | None:
    """An aware UTC datetime from ISO 8601, RFC 822 or epoch seconds; None for empty input.

    Naive times are taken as UTC (the feeds that omit a zone mean UTC). Raises ``ValueError``
    for text that is none of these and for times out of range ("0001-01-01T00:00:00+01:00",
    an epoch of 1e300), and nothing else.
    """
    if value is None or value == "":
        return None
    try:
        if isinstance(value, int | float) or (isinstance(value, str) and value.strip().isdigit()):
            seconds = float(value)
            if seconds > 1e11:  # milliseconds
                seconds /= 1000
            return datetime.fromtimestamp(seconds, tz=UTC)
        return to_utc(_parse_text_time(value.strip()))
    except (OverflowError, OSError) as exc:
        raise ValueError(f"time out of range: {value!r}") from exc


def _parse_text_time(text: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        try:
            return parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError) as exc:
            raise ValueError(f"unreadable time {text!r}") from exc


def to_utc(value: datetime) -> datetime:
    """The same instant in UTC; a naive value is taken to be UTC already."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def read_time(value: object) -> datetime | None:
    """``parse_time`` for untrusted JSON values: None for anything missing or unreadable, so one
    bad timestamp costs a field, not the document."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None


def first_time(item: dict[str, Any], *keys: str) -> datetime | None:
    """The time under the first of ``keys`` that holds a readable one; None when none does."""
    for key in keys:
        at = read_time(item.get(key))
        if at is not None:
            return at
    return None
