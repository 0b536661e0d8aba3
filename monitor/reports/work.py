"""Training work from a job's throughput series (pure): how many samples (or tokens) it
processed in a span, and its usual speed.

Each heartbeat's throughput is the job's rate since its previous heartbeat (that is how the hooks
measure it), so the work of a heartbeat is its rate times the time since the previous one. A
gap longer than ``max_gap`` (the job was silent: down, or not running) counts no work: the next
rate speaks for its own interval only. Work is clipped to the span.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from datetime import datetime, timedelta
from itertools import pairwise

from monitor.sla.intervals import Span

Sample = tuple[datetime, float]  # (heartbeat time, throughput: units a second)
MILLION = 1_000_000.0
# No training job processes more than this many units a second (a large cluster: about 1e8
# tokens); the API refuses a faster throughput, and a stored one counts no work, so a month's
# sum stays finite.
MAX_THROUGHPUT = 1e12


def work_done(samples: Sequence[Sample], span: Span, max_gap: timedelta) -> float:
    """Units processed within ``span``."""
    ordered = sorted(samples)
    done = 0.0
    for (before, _), (at, rate) in pairwise(ordered):
        if at - before > max_gap or not 0 <= rate <= MAX_THROUGHPUT:
            continue
        start, end = max(before, span.start), min(at, span.end)
        if end > start:
            done += rate * (end - start).total_seconds()
    return done


def nominal_rate(samples: Sequence[Sample]) -> float | None:
    """The job's usual speed: the median of its throughput samples."""
    return statistics.median(rate for _, rate in samples) if samples else None


def per_million(dollars: float, units: float) -> float | None:
    return dollars / units * MILLION if units > 0 else None
