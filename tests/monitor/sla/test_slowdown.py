"""monitor/sla/slowdown.py's slow stretches over a whole series (pure): the same verdicts the
training_slowdown judge gives at each sample, found in one pass."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from monitor.sla.intervals import Span
from monitor.sla.slowdown import SlowdownRule, judge_slowdown, slow_spans


def _replayed(samples: list[tuple[datetime, float]], rule: SlowdownRule) -> list[Span]:
    """What the alert would have said, judged again at every sample (the slow way)."""
    found, since = [], None
    for at, _ in samples:
        verdict = judge_slowdown(samples, at, rule)
        if verdict.slow and since is None:
            since = verdict.since
        elif not verdict.slow and since is not None:
            found.append(Span(since, at))
            since = None
    if since is not None:
        found.append(Span(since, samples[-1][0] + rule.after))
    return found


@pytest.mark.parametrize("seed", range(40))
def test_slow_spans_are_what_the_judge_says_at_every_sample(seed: int) -> None:
    rng = random.Random(seed)
    rule = SlowdownRule(
        share=0.7, after=timedelta(minutes=2), trailing=timedelta(minutes=10), min_samples=5
    )
    at, samples = datetime(2026, 11, 1, tzinfo=UTC), []
    for k in range(300):
        at += timedelta(seconds=rng.choice([10, 15, 20, 60]))
        slow_phase = (k // 40) % 2 == 1 and rng.random() < 0.8
        samples.append((at, (30.0 if slow_phase else 100.0) * rng.uniform(0.9, 1.1)))
    expected = _replayed(samples, rule)
    assert expected  # the series has slowdowns to find
    assert slow_spans(samples, samples[-1][0] + timedelta(hours=1), rule) == expected


def test_a_slow_stretch_still_running_is_open_at_now() -> None:
    rule = SlowdownRule(share=0.5, after=timedelta(minutes=1), trailing=timedelta(minutes=30))
    start = datetime(2026, 11, 1, tzinfo=UTC)
    samples = [(start + timedelta(seconds=15 * i), 100.0 if i < 30 else 10.0) for i in range(50)]
    now = samples[-1][0] + timedelta(seconds=5)
    assert slow_spans(samples, now, rule) == [Span(samples[30][0], now)]
