"""Time spans and the set algebra the SLA math needs (docs/DESIGN.md, "Availability and SLA math").

A ``Span`` is the half-open interval ``[start, end)`` between two aware datetimes, held in UTC.
Every function that returns a list of spans returns it *normalized*: sorted, disjoint and
non-adjacent (touching spans are joined), so its total is simply the sum of the durations.
Inputs may be in any order and may overlap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta


@dataclass(frozen=True, slots=True, order=True)
class Span:
    """``[start, end)`` in UTC; ``end`` must be after ``start``.

    Aware datetimes in any zone are accepted and converted to UTC. That conversion is not
    cosmetic: subtracting two datetimes that share a ``ZoneInfo`` gives wall-clock time, which is
    an hour off across a DST change. An outage still open is closed by the caller at "now".

    Raises ``ValueError`` for naive datetimes or an empty or reversed span.
    """

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        for field in ("start", "end"):
            value = getattr(self, field)
            if not isinstance(value, datetime) or value.utcoffset() is None:
                raise ValueError(f"Span.{field} must be a timezone-aware datetime, got {value!r}")
            object.__setattr__(self, field, value.astimezone(UTC))
        if self.end <= self.start:
            raise ValueError(f"Span.end ({self.end}) must be after Span.start ({self.start})")

    @property
    def duration(self) -> timedelta:
        return self.end - self.start


def merge(spans: Iterable[Span]) -> list[Span]:
    """The union of ``spans``, normalized (overlapping and touching spans joined)."""
    out: list[Span] = []
    for span in sorted(spans):
        if out and span.start <= out[-1].end:
            if span.end > out[-1].end:
                out[-1] = Span(out[-1].start, span.end)
        else:
            out.append(span)
    return out


def intersect(a: Iterable[Span], b: Iterable[Span]) -> list[Span]:
    """The times inside both ``a`` and ``b``."""
    left, right = merge(a), merge(b)
    out: list[Span] = []
    i = j = 0
    while i < len(left) and j < len(right):
        lo = max(left[i].start, right[j].start)
        hi = min(left[i].end, right[j].end)
        if lo < hi:
            out.append(Span(lo, hi))
        if left[i].end < right[j].end:
            i += 1
        else:
            j += 1
    return out


def clip(spans: Iterable[Span], start: datetime, end: datetime) -> list[Span]:
    """The parts of ``spans`` inside ``[start, end)``; empty when ``end <= start``."""
    if end <= start:
        return []
    return intersect(spans, [Span(start, end)])


def subtract(spans: Iterable[Span], minus: Iterable[Span]) -> list[Span]:
    """The times in ``spans`` that are not in ``minus``.

    ``minus`` is merged first, so overlapping exclusions (two maintenance windows covering the
    same hour) remove that hour once, never twice.
    """
    cuts = merge(minus)
    out: list[Span] = []
    j = 0
    for span in merge(spans):
        cursor = span.start
        while j < len(cuts) and cuts[j].end <= cursor:
            j += 1
        k = j
        while k < len(cuts) and cuts[k].start < span.end:
            if cuts[k].start > cursor:
                out.append(Span(cursor, cuts[k].start))
            cursor = max(cursor, cuts[k].end)
            k += 1
        if cursor < span.end:
            out.append(Span(cursor, span.end))
    return out


def complement(spans: Iterable[Span], start: datetime, end: datetime) -> list[Span]:
    """The times in ``[start, end)`` not covered by ``spans`` (e.g. up time from outages)."""
    if end <= start:
        return []
    return subtract([Span(start, end)], spans)


def total(spans: Iterable[Span]) -> timedelta:
    """Length of the union of ``spans``: overlapping time is counted once."""
    return sum((span.duration for span in merge(spans)), timedelta(0))


def at_least(k: int, members: Sequence[Sequence[Span]]) -> list[Span]:
    """The times when at least ``k`` members are inside one of their own spans.

    A sweep line over every member's start (+1) and end (-1) events. Each member's spans are
    merged first, so a member that overlaps itself still counts once. Used for "two or more
    zones down at once" (region rules) and for pools ("fewer than k of n up").

    Raises ``ValueError`` when ``k < 1``; returns ``[]`` when ``k > len(members)``.
    """
    if k < 1:
        raise ValueError(f"at_least: k must be at least 1, got {k}")
    events = sorted(
        (edge, step)
        for member in members
        for span in merge(member)
        for edge, step in ((span.start, 1), (span.end, -1))
    )
    out: list[Span] = []
    count, opened, i = 0, None, 0
    while i < len(events):
        now = events[i][0]
        # Apply every event at this instant before judging it: with half-open spans, a member
        # ending at t and another starting at t leave the count unchanged at t.
        while i < len(events) and events[i][0] == now:
            count += events[i][1]
            i += 1
        if count >= k and opened is None:
            opened = now
        elif count < k and opened is not None:
            out.append(Span(opened, now))
            opened = None
    return out
