"""Reading a moment written as ISO 8601 text: the one parser for times that must say their UTC
offset (command-line options, imported rows, reports read back, stored stamps). Pure."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_aware(text: str, what: str = "time") -> datetime:
    """The moment ``text`` names (ISO 8601 with a ``Z`` or ``±hh:mm`` offset), in UTC.

    Raises ``ValueError`` naming ``what`` and the text: ``start 'yesterday' is not an ISO 8601
    time``, or, for a time without an offset (which would be read in whatever zone the reader
    happens to be in), ``start '2026-09-03T10:00:00' has no UTC offset (write e.g. …Z)``.
    """
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{what} {text!r} is not an ISO 8601 time") from None
    if moment.utcoffset() is None:
        raise ValueError(f"{what} {text!r} has no UTC offset (write e.g. 2026-10-01T12:00:00Z)")
    return moment.astimezone(UTC)
