"""A target's recent history as the status page draws it (pure): time split into what was seen
up, unusable (reachable, GPUs not) or down, and what nobody watched, which is unknown, never up.

The inputs are the intervals the monthly report reads (``observed_windows``, ``outages`` per
series), so the bar, the uptime figures and the report agree. Outage time outside every observed
window (an open outage nobody has probed since) is unknown, as in ``monitor.reports.assemble``.
Everything here is linear sweeps over normalized spans: the page draws a thousand targets.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import accumulate, groupby

from monitor.sla.intervals import Span, intersect, merge, subtract

UP, UNUSABLE, DOWN, UNKNOWN = "up", "unusable", "down", "unknown"
ZERO = timedelta(0)


@dataclass(frozen=True, slots=True)
class Timeline:
    """What is known of one target. Each tuple is normalized (sorted, disjoint); ``down`` and
    ``unusable`` lie inside ``observed`` and never overlap each other (down wins)."""

    observed: tuple[Span, ...]
    down: tuple[Span, ...]
    unusable: tuple[Span, ...]


@dataclass(frozen=True, slots=True)
class Bucket:
    """A segment of the history bar (one or more adjacent buckets of one state) and the time
    it holds of each kind."""

    start: datetime
    end: datetime
    state: str  # up | unusable | down | unknown
    observed: timedelta
    down: timedelta
    unusable: timedelta
    slots: int = 1  # how many of the bar's buckets it stands for

    @property
    def unobserved(self) -> timedelta:
        return (self.end - self.start) - self.observed


@dataclass(frozen=True, slots=True)
class Uptime:
    """Uptime over the ``window`` before now, over observed time only."""

    window: timedelta
    observed: timedelta
    reachable_pct: float | None  # None: nothing observed in the window ("no data", not 100 %)
    usable_pct: float | None  # reachable and usable


def outage_span(start: datetime, end: datetime | None, now: datetime) -> Span | None:
    """An outage row as a span, an open one (``end`` None) closed at ``now``; None when it has
    no length before ``now`` (it starts in the future, or ends where it starts)."""
    stop = now if end is None else min(end, now)
    return Span(start, stop) if stop > start else None


def timeline(
    observed: Iterable[Span], reachable_down: Iterable[Span], usable_down: Iterable[Span]
) -> Timeline:
    """Down is the reachable series' outages, unusable the usable series' outages outside them
    (a box that is down is not also counted unusable), both only where someone was watching."""
    known = merge(observed)
    down = intersect(reachable_down, known)
    unusable = subtract(intersect(usable_down, known), down)
    return Timeline(tuple(known), tuple(down), tuple(unusable))


def bucket_edges(now: datetime, count: int, width: timedelta) -> list[datetime]:
    """``count + 1`` edges of ``count`` buckets aligned to the epoch in UTC, the last bucket
    holding ``now`` and cut at ``now`` (time after now is not history). Raises ``ValueError``
    when ``count < 1`` or ``width`` is not a positive whole number of seconds."""
    step = int(width.total_seconds())
    if count < 1 or step < 1 or width != timedelta(seconds=step):
        raise ValueError(f"bucket_edges: need count >= 1 and whole seconds, got {count}, {width}")
    epoch = int(now.timestamp())
    last = datetime.fromtimestamp(epoch - epoch % step, tz=UTC)
    if last == now:  # exactly on an edge: the bucket holding now would be empty
        last -= width
    edges = [last - (count - 1 - i) * width for i in range(count)]
    return [*edges, now]


def per_bucket(spans: Sequence[Span], edges: Sequence[datetime]) -> list[timedelta]:
    """Time inside ``spans`` (normalized) in each bucket ``[edges[i], edges[i + 1])``."""
    out = [ZERO] * (len(edges) - 1)
    for span in spans:
        i = max(0, bisect_right(edges, span.start) - 1)
        while i < len(out) and edges[i] < span.end:
            lo, hi = max(span.start, edges[i]), min(span.end, edges[i + 1])
            if hi > lo:
                out[i] += hi - lo
            i += 1
    return out


def bucket_state(observed: timedelta, down: timedelta, unusable: timedelta) -> str:
    """The worst thing seen in a bucket: any down time makes it down, then any unusable time;
    a bucket nobody watched at all is unknown; otherwise up."""
    if observed <= ZERO:
        return UNKNOWN
    if down > ZERO:
        return DOWN
    return UNUSABLE if unusable > ZERO else UP


def history_bar(line: Timeline, edges: Sequence[datetime]) -> tuple[Bucket, ...]:
    """The history bar over the buckets between consecutive ``edges``, adjacent buckets of the
    same state joined into one segment (``slots`` says how many, times summed): a steady target
    draws as one segment, not 48, which keeps a thousand-target page small and quick to build."""
    seen = per_bucket(line.observed, edges)
    down = per_bucket(line.down, edges)
    unusable = per_bucket(line.unusable, edges)
    states = [bucket_state(*times) for times in zip(seen, down, unusable, strict=True)]
    out, first = [], 0
    for state, group in groupby(states):
        stop = first + sum(1 for _ in group)
        out.append(
            Bucket(
                edges[first],
                edges[stop],
                state,
                sum(seen[first:stop], ZERO),
                sum(down[first:stop], ZERO),
                sum(unusable[first:stop], ZERO),
                stop - first,
            )
        )
        first = stop
    return tuple(out)


def inside(spans: Sequence[Span], start: datetime, end: datetime) -> timedelta:
    """Time of ``spans`` (normalized) inside ``[start, end)``."""
    return per_bucket(spans, [start, end])[0] if end > start else ZERO


def uptime(line: Timeline, now: datetime, window: timedelta) -> Uptime:
    """Reachable and usable uptime over the ``window`` before ``now``: time seen up over time
    observed. Unobserved time is left out of the denominator, never counted as up."""
    start = now - window
    observed = inside(line.observed, start, now)
    down = inside(line.down, start, now)
    unusable = inside(line.unusable, start, now)
    return Uptime(window, observed, share_up(down, observed), share_up(down + unusable, observed))


def share_up(unavailable: timedelta, observed: timedelta) -> float | None:
    """``100 × (1 − unavailable / observed)`` clamped to [0, 100]; None when nothing was
    observed. ``monitor.sla.math.uptime_pct`` in floats: the page shows two decimals, truncated,
    and computes this for every target and window (exact fractions cost 50 µs a call)."""
    if observed <= ZERO:
        return None
    return min(100.0, max(0.0, 100.0 * (1.0 - unavailable / observed)))


def uptime_text(value: float | None) -> str:
    """An uptime as every page and badge shows it: two decimals, truncated, so a 100 % that was
    not earned is never shown (99.996 % reads 99.99 %); ``no data`` for None (nothing
    observed), never 100 %."""
    if value is None:
        return "no data"
    shown = math.floor(value * 100 + 1e-6) / 100  # the epsilon: 99.99 * 100 is 9998.99999…
    return f"{shown:.2f}%"


def weighted_median(samples: Iterable[tuple[float, int]]) -> float | None:
    """The median of values that each stand for ``weight`` samples: a rollup bucket's p50 for
    its successful probes. An approximation of the true median (the median of the buckets'
    medians; the lower median for an even count), exact when every bucket holds one value. None
    when there is no weight."""
    ordered = sorted((v, w) for v, w in samples if w > 0)
    if not ordered:
        return None
    cumulative = list(accumulate(w for _, w in ordered))
    return ordered[bisect_left(cumulative, cumulative[-1] / 2)][0]


def duration(value: timedelta) -> str:
    """``45 s``, ``30 min``, ``4 h 30 min``, ``7 d``, ``2 d 3 h``: two units at most."""
    seconds = int(value.total_seconds())
    if seconds < 60:
        return f"{seconds} s"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    if days:
        return f"{days} d" + (f" {hours} h" if hours else "")
    if hours:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    return f"{minutes} min"
