"""The one parser of ISO 8601 times that must carry their UTC offset (monitor/sla/times.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from monitor.sla.times import parse_aware


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        pytest.param("2026-10-01T12:00:00Z", datetime(2026, 10, 1, 12, tzinfo=UTC), id="zulu"),
        pytest.param(
            "2026-10-01T14:30:00+02:00",
            datetime(2026, 10, 1, 12, 30, tzinfo=UTC),
            id="an offset is turned into UTC",
        ),
        pytest.param(
            "2026-10-01T00:00:00.250000+00:00",
            datetime(2026, 10, 1, 0, 0, 0, 250000, tzinfo=UTC),
            id="what isoformat writes, fractions kept",
        ),
        pytest.param(
            "2026-10-01T02:00:00-05:00",
            datetime(2026, 10, 1, 7, tzinfo=UTC),
            id="a negative offset",
        ),
    ],
)
def test_an_aware_time_is_read_as_the_same_moment_in_utc(text: str, moment: datetime) -> None:
    parsed = parse_aware(text)
    assert parsed == moment
    assert parsed.tzinfo is UTC


NOT_ISO = "is not an ISO 8601 time"
NO_OFFSET = "has no UTC offset (write e.g. 2026-10-01T12:00:00Z)"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param("2026-09-03T10:00:00", NO_OFFSET, id="a naive time is refused, not guessed"),
        pytest.param("yesterday", NOT_ISO, id="not a time"),
        pytest.param("", NOT_ISO, id="empty"),
        pytest.param("2026-02-30T00:00:00Z", NOT_ISO, id="no such day"),
    ],
)
def test_a_bad_time_raises_a_value_error_naming_the_field(text: str, problem: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_aware(text, "start")
    assert str(raised.value) == f"start {text!r} {problem}"
