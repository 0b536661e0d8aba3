"""``training_slowdown`` (pure): a training job's throughput stays below a share of its own
trailing median.

The heartbeats' throughput (samples or tokens per second, as the job reports it) is the series.
The baseline is the median of the samples in the ``trailing`` window that ends ``after`` ago;
the job is slow when every sample since then is below ``share`` x baseline, and the run of slow
samples started at least ``after`` before the latest one. The minimum-sample guard keeps a job
that has just started (or reports rarely) from being judged against a baseline of a few points.
The slowdown is dated to its first slow sample and ends at the first sample back above the
line. A slowdown that lasts longer than half the trailing window becomes the job's new median,
and with it the new normal: the alert then resolves, as for a job whose speed changed for good.
"""

from __future__ import annotations

import statistics
from bisect import bisect_left, insort
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from monitor.sla.intervals import Span

Sample = tuple[datetime, float]  # (when, throughput)


@dataclass(frozen=True, slots=True)
class SlowdownRule:
    share: float = 0.7
    after: timedelta = timedelta(minutes=5)
    trailing: timedelta = timedelta(hours=1)
    min_samples: int = 10

    @property
    def span(self) -> timedelta:
        """How far back the samples must reach for one judgement."""
        return self.after + self.trailing


@dataclass(frozen=True, slots=True)
class Slowdown:
    """The verdict at one moment. ``since``: the first slow sample, when slow."""

    slow: bool
    since: datetime | None = None
    baseline: float | None = None
    latest: float | None = None
    judged: bool = True  # False: too few samples to say either way


def judge_slowdown(samples: Sequence[Sample], now: datetime, rule: SlowdownRule) -> Slowdown:
    """Whether the job whose throughput ``samples`` are (any order) is slow at ``now``."""
    ordered = sorted((at, value) for at, value in samples if at <= now)
    cut = now - rule.after
    baseline_values = [v for at, v in ordered if cut - rule.trailing < at <= cut]
    recent = [(at, v) for at, v in ordered if at > cut]
    if len(baseline_values) < rule.min_samples or not recent:
        return Slowdown(False, judged=False, latest=ordered[-1][1] if ordered else None)
    baseline = statistics.median(baseline_values)
    line = rule.share * baseline
    latest_at, latest = recent[-1]
    if latest >= line:
        return Slowdown(False, baseline=baseline, latest=latest)
    since = latest_at
    for at, value in reversed(ordered):
        if value >= line:
            break
        since = at
    slow = latest_at - since >= rule.after
    return Slowdown(slow, since if slow else None, baseline, latest)


def slow_spans(samples: Sequence[Sample], now: datetime, rule: SlowdownRule) -> list[Span]:
    """Every stretch before ``now`` the job was slow, as :func:`judge_slowdown` says at each of
    its samples: from the first slow sample to the first sample judged not slow. A stretch the
    job falls silent in ends ``after`` past its last sample (the judge then has nothing recent
    to say), or is still open at ``now``. One pass, the baseline kept sorted as it slides."""
    ordered = sorted((at, value) for at, value in samples if at <= now)
    found: list[Span] = []
    window: list[float] = []  # the baseline's values, sorted
    lo = hi = 0  # ordered[lo:hi] is the baseline window of the sample being judged
    since: datetime | None = None
    for i, (at, _) in enumerate(ordered):
        cut = at - rule.after
        while hi < len(ordered) and ordered[hi][0] <= cut:
            insort(window, ordered[hi][1])
            hi += 1
        while lo < hi and ordered[lo][0] <= cut - rule.trailing:
            del window[bisect_left(window, ordered[lo][1])]
            lo += 1
        slow = len(window) >= rule.min_samples and _slow_at(
            ordered, i, rule.share * _median(window), rule.after
        )
        if slow and since is None:
            since = _run_start(ordered, i, rule.share * _median(window))
        elif not slow and since is not None:
            found.append(Span(since, at))
            since = None
    if since is not None:
        end = min(now, ordered[-1][0] + rule.after)
        if end > since:
            found.append(Span(since, end))
    return found


def _median(sorted_values: Sequence[float]) -> float:
    middle = len(sorted_values) // 2
    if len(sorted_values) % 2:
        return sorted_values[middle]
    return (sorted_values[middle - 1] + sorted_values[middle]) / 2


def _slow_at(ordered: Sequence[Sample], i: int, line: float, after: timedelta) -> bool:
    """Whether every sample from ``after`` before sample ``i`` to it is below ``line``, and the
    run of them reaches back at least ``after`` (the judge's rule, walking back no further)."""
    latest_at = ordered[i][0]
    for j in range(i, -1, -1):
        at, value = ordered[j]
        if value >= line:
            return False
        if latest_at - at >= after:
            return True
    return False


def _run_start(ordered: Sequence[Sample], i: int, line: float) -> datetime:
    """The first sample of the run below ``line`` that ends at sample ``i``."""
    since = ordered[i][0]
    for j in range(i, -1, -1):
        at, value = ordered[j]
        if value >= line:
            break
        since = at
    return since
