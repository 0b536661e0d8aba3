"""The interruption ledger (docs/measuring.md, "The interruption ledger"): how often instances of
one provider, instance type and capacity class were taken away, per 1,000 instance-hours, with
an exact 95 % Poisson interval.

An interruption is an end the provider caused: a preemption (``ended_by`` ``preempted``: spot
capacity reclaimed) or a provider end (``provider``: a retirement, a host failure). Ends by the
user, or of unknown cause, are lives too (they count in the median lifetime) but not
interruptions.

The interval is Garwood's exact one for a Poisson count ``k``: ``[chi2(0.025, 2k) / 2,
chi2(0.975, 2k + 2) / 2]`` events, which is ``[Gamma(k).ppf(0.025), Gamma(k + 1).ppf(0.975)]``,
scaled to the exposure. The gamma quantile is found by bisection on the regularized lower
incomplete gamma function (its series and continued fraction, as in Numerical Recipes): exact to
the float, without scipy.

Pure functions over plain values; ``monitor.history.ledger`` hands in the lives.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import median

PER_HOURS = 1000.0  # rates are per this many instance-hours
CONFIDENCE = 0.95
# below either, a rate is a small sample: the row says so (its interval is wide)
SMALL_SAMPLE_HOURS = 1000.0
SMALL_SAMPLE_EVENTS = 3
INTERRUPTING_ENDS = frozenset({"preempted", "provider"})

_EPS = 1e-15
_MAX_TERMS = 10_000
_TINY = 1e-300


# --------------------------------------------------------------------------- the gamma function


def gamma_p(a: float, x: float) -> float:
    """The regularized lower incomplete gamma function P(a, x), for a > 0 and x >= 0."""
    if a <= 0:
        raise ValueError(f"gamma_p needs a > 0, got {a!r}")
    if x <= 0:
        return 0.0
    if x < a + 1:
        return _series(a, x)
    return 1.0 - _continued_fraction(a, x)


def _series(a: float, x: float) -> float:
    """P(a, x) by its series, which converges fast for x < a + 1."""
    term = total = 1.0 / a
    n = a
    for _ in range(_MAX_TERMS):
        n += 1
        term *= x / n
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _continued_fraction(a: float, x: float) -> float:
    """Q(a, x) = 1 - P(a, x) by Lentz's continued fraction, for x >= a + 1."""
    b = x + 1 - a
    c = 1.0 / _TINY
    d = 1.0 / b
    h = d
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPS:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def gamma_quantile(q: float, a: float) -> float:
    """The x with P(a, x) = q (the q-quantile of a Gamma(a, 1) variable), by bisection."""
    if not 0 < q < 1:
        raise ValueError(f"a quantile needs 0 < q < 1, got {q!r}")
    low, high = 0.0, max(1.0, 2 * a)
    while gamma_p(a, high) < q:
        low, high = high, 2 * high
    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if gamma_p(a, middle) < q:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def chi2_quantile(q: float, dof: float) -> float:
    """The chi-square distribution's q-quantile with ``dof`` degrees of freedom."""
    return 2 * gamma_quantile(q, dof / 2)


def poisson_interval(events: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Garwood's exact interval for a Poisson count, in events (0 events: lower 0)."""
    if events < 0:
        raise ValueError(f"a count of events cannot be negative, got {events!r}")
    tail = (1 - confidence) / 2
    low = 0.0 if events == 0 else chi2_quantile(tail, 2 * events) / 2
    return low, chi2_quantile(1 - tail, 2 * events + 2) / 2


# --------------------------------------------------------------------------- rates


@dataclass(frozen=True, slots=True)
class InterruptionRate:
    """Interruptions per 1,000 instance-hours and its 95 % interval (None: no hours)."""

    events: int
    instance_hours: float
    per_1000h: float | None
    low: float | None
    high: float | None
    small_sample: bool  # under SMALL_SAMPLE_HOURS or SMALL_SAMPLE_EVENTS: the interval is wide


def rate(events: int, instance_hours: float) -> InterruptionRate:
    """``events`` over ``instance_hours``, per 1,000 h, with Garwood's interval."""
    small = instance_hours < SMALL_SAMPLE_HOURS or events < SMALL_SAMPLE_EVENTS
    if instance_hours <= 0:
        return InterruptionRate(events, 0.0, None, None, None, True)
    scale = PER_HOURS / instance_hours
    low, high = poisson_interval(events)
    return InterruptionRate(
        events, instance_hours, events * scale, low * scale, high * scale, small
    )


# --------------------------------------------------------------------------- the ledger


@dataclass(frozen=True, slots=True)
class Life:
    """One instance's life as the ledger sees it in a period."""

    provider: str | None
    instance_type: str | None
    capacity: str  # on-demand | spot | reserved | unknown
    hours_in_period: float  # the part of the period it existed
    ended_by: str | None = None  # user | preempted | provider | unknown; None: not ended in it
    lifetime_h: float | None = None  # its whole life, birth to end, when it ended in the period


@dataclass(frozen=True, slots=True)
class LedgerLine:
    """One provider, instance type and capacity class over a period."""

    provider: str | None
    instance_type: str | None
    capacity: str
    instances: int
    instance_hours: float
    preemptions: int
    provider_ends: int
    ended: int  # lives that ended in the period, any cause
    median_lifetime_h: float | None  # of the lives that ended in the period, any cause
    interruptions: InterruptionRate


def ledger(lives: Iterable[Life]) -> list[LedgerLine]:
    """One line per (provider, instance type, capacity), sorted by those."""
    groups: dict[tuple[str, str, str], list[Life]] = defaultdict(list)
    for life in lives:
        groups[(life.provider or "", life.instance_type or "", life.capacity)].append(life)
    return [_line(members) for _, members in sorted(groups.items())]


def _line(members: Sequence[Life]) -> LedgerLine:
    first = members[0]
    hours = sum(m.hours_in_period for m in members)
    preempted = sum(m.ended_by == "preempted" for m in members)
    by_provider = sum(m.ended_by == "provider" for m in members)
    lifetimes = [m.lifetime_h for m in members if m.ended_by and m.lifetime_h is not None]
    return LedgerLine(
        provider=first.provider,
        instance_type=first.instance_type,
        capacity=first.capacity,
        instances=len(members),
        instance_hours=hours,
        preemptions=preempted,
        provider_ends=by_provider,
        ended=sum(m.ended_by is not None for m in members),
        median_lifetime_h=median(lifetimes) if lifetimes else None,
        interruptions=rate(preempted + by_provider, hours),
    )


def combined(lines: Iterable[LedgerLine]) -> InterruptionRate | None:
    """The rate over several lines together (their events over their hours); None for none."""
    chosen = list(lines)
    if not chosen:
        return None
    events = sum(line.preemptions + line.provider_ends for line in chosen)
    return rate(events, sum(line.instance_hours for line in chosen))
