"""Fuzz scaffolding the feed parser tests share.

Hypothesis settings, a strategy for arbitrary JSON values, time helpers, the checks every parsed
incident must pass, and a builder for the "only FeedParseError may escape ``parse``" test.
Each parser's own assertions stay in its test file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from monitor.errors import FeedParseError
from monitor.feeds.model import IMPACTS, STATUSES, Incident
from monitor.sla.response import CLOSED_STATUSES

Parse = Callable[[bytes], list[Incident]]

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MAINTENANCE_STATUSES = frozenset({"scheduled", "in_progress", "verifying", "completed"})

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def assert_well_formed(incident: Incident) -> None:
    """What every parser promises of every incident it returns, whatever the input."""
    moments = [incident.started_at, incident.resolved_at, *(u.at for u in incident.updates)]
    assert all(moment is None or moment.tzinfo is UTC for moment in moments)
    assert incident.status in STATUSES
    assert incident.impact in IMPACTS
    assert [u.at for u in incident.updates] == sorted(u.at for u in incident.updates)
    if incident.status not in CLOSED_STATUSES:
        assert incident.resolved_at is None
    if incident.is_maintenance:
        assert {incident.status, *(u.status for u in incident.updates)} <= MAINTENANCE_STATUSES


def parse_or_error(parse: Parse, kind: str, raw: bytes) -> list[Incident] | FeedParseError:
    """Only a FeedParseError naming ``kind`` may escape ``parse``; anything else fails the test."""
    try:
        return parse(raw)
    except FeedParseError as exc:
        error = exc
    assert error.kind == kind
    return error


def mutated(fixtures: Sequence[bytes], *, shortest_cut: int | None = 0) -> st.SearchStrategy[bytes]:
    """One of ``fixtures``, cut short and then overwritten in up to six places.

    A cut shorter than ``shortest_cut`` keeps the whole fixture; ``None`` never cuts.
    """

    @st.composite
    def draw_mutated(draw: st.DrawFn) -> bytes:
        raw = draw(st.sampled_from(fixtures))
        cut = draw(st.integers(0, len(raw)))
        keep_whole = shortest_cut is None or cut < shortest_cut
        result = bytearray(raw if keep_whole else raw[:cut])
        edits = st.tuples(st.integers(0, len(raw)), st.binary(min_size=1, max_size=3))
        for position, replacement in draw(st.lists(edits, max_size=6)):
            result[position : position + len(replacement)] = replacement
        return bytes(result)

    return draw_mutated()


def spliced(fixture: bytes, *, width: int) -> st.SearchStrategy[bytes]:
    """``fixture`` with up to ``width`` bytes somewhere replaced by up to ``width`` random bytes."""

    @st.composite
    def draw_spliced(draw: st.DrawFn) -> bytes:
        start = draw(st.integers(0, len(fixture)), label="start")
        end = draw(st.integers(start, min(len(fixture), start + width)), label="end")
        return fixture[:start] + draw(st.binary(max_size=width), label="insert") + fixture[end:]

    return draw_spliced()


def fuzz_raises_only_parse_errors(
    parse: Parse, kind: str, fixtures: Sequence[bytes], *, shortest_cut: int | None = 0
) -> Callable[..., Any]:
    """A test: arbitrary bytes, and mutated ``fixtures``, give incidents or FeedParseError.

    Assign it to a ``test_…`` name in the parser's test file; it runs twice FUZZ's examples,
    as it stands for the former separate arbitrary-bytes and mutated-fixture tests.
    """

    @settings(FUZZ, max_examples=2 * FUZZ.max_examples)
    @given(st.binary(max_size=400) | mutated(fixtures, shortest_cut=shortest_cut))
    def test(raw: bytes) -> None:
        parse_or_error(parse, kind, raw)

    return test
