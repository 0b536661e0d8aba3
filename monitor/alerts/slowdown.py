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
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

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
