"""Tests for the interruption ledger's arithmetic (monitor/sla/interruptions.py)."""

from __future__ import annotations

import math

import pytest

from monitor.sla.interruptions import (
    Life,
    chi2_quantile,
    combined,
    gamma_p,
    gamma_quantile,
    ledger,
    poisson_interval,
    rate,
)


@pytest.mark.parametrize(
    ("events", "low", "high"),
    [
        pytest.param(0, 0.0, 3.688879, id="none: lower 0, upper -ln(0.025)"),
        pytest.param(1, 0.025318, 5.571643, id="one"),
        pytest.param(2, 0.242209, 7.224688, id="two"),
        pytest.param(3, 0.618672, 8.767273, id="three"),
        pytest.param(10, 4.795389, 18.390356, id="ten"),
        pytest.param(50, 37.110964, 65.918767, id="fifty"),
    ],
)
def test_garwood_intervals_match_the_published_tables(events: int, low: float, high: float) -> None:
    found_low, found_high = poisson_interval(events)
    assert found_low == pytest.approx(low, abs=1e-6)
    assert found_high == pytest.approx(high, abs=1e-6)


@pytest.mark.parametrize(
    ("q", "dof", "expected"),
    [
        pytest.param(0.95, 1, 3.841459, id="the 5% test with one degree"),
        pytest.param(0.975, 2, 7.377759, id="two degrees: -2 ln(0.025)"),
        pytest.param(0.5, 100, 99.334129, id="median of a hundred"),
        pytest.param(0.025, 20, 9.590777, id="lower tail"),
        pytest.param(0.99, 10, 23.209251, id="a table's far tail"),
        pytest.param(0.95, 30, 43.772972, id="thirty degrees"),
    ],
)
def test_chi_square_quantiles_match_known_values(q: float, dof: float, expected: float) -> None:
    assert chi2_quantile(q, dof) == pytest.approx(expected, rel=1e-6)


def test_the_incomplete_gamma_function_agrees_with_closed_forms() -> None:
    # P(1, x) = 1 - e^-x; P(0.5, x) = erf(sqrt(x)); both branches (series, continued fraction)
    for x in (0.01, 0.5, 1.9, 2.1, 10.0, 40.0):
        assert gamma_p(1, x) == pytest.approx(1 - math.exp(-x), rel=1e-12)
        assert gamma_p(0.5, x) == pytest.approx(math.erf(math.sqrt(x)), rel=1e-12)
    assert gamma_p(3, 0) == 0.0
    assert gamma_quantile(0.5, 1) == pytest.approx(math.log(2), rel=1e-12)


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5])
def test_a_quantile_outside_zero_and_one_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="0 < q < 1"):
        gamma_quantile(bad, 2)


def test_a_rate_is_per_thousand_instance_hours_with_its_interval_scaled() -> None:
    r = rate(10, 5000.0)
    assert r.per_1000h == pytest.approx(2.0)
    assert r.low == pytest.approx(4.795389 / 5, abs=1e-6)
    assert r.high == pytest.approx(18.390356 / 5, abs=1e-6)
    assert r.small_sample is False


@pytest.mark.parametrize(
    ("events", "hours", "small"),
    [
        pytest.param(10, 999.0, True, id="under a thousand hours"),
        pytest.param(2, 50_000.0, True, id="under three events"),
        pytest.param(3, 1000.0, False, id="at both thresholds"),
    ],
)
def test_small_samples_say_so(events: int, hours: float, small: bool) -> None:
    assert rate(events, hours).small_sample is small


def test_no_interruptions_give_zero_with_an_upper_bound_and_lower_zero() -> None:
    r = rate(0, 2000.0)
    assert (r.per_1000h, r.low) == (0.0, 0.0)
    assert r.high == pytest.approx(3.688879 / 2, abs=1e-6)


def test_no_hours_give_no_rate() -> None:
    r = rate(0, 0.0)
    assert (r.per_1000h, r.low, r.high, r.small_sample) == (None, None, None, True)


def test_the_ledger_groups_lives_by_provider_type_and_capacity() -> None:
    lives = [
        Life("aws", "p5.48xlarge", "spot", 100.0, "preempted", 30.0),
        Life("aws", "p5.48xlarge", "spot", 200.0, "provider", 250.0),
        Life("aws", "p5.48xlarge", "spot", 300.0, "user", 400.0),
        Life("aws", "p5.48xlarge", "spot", 720.0),
        Life("aws", "p5.48xlarge", "on-demand", 720.0),
        Life("gcp", None, "unknown", 10.0, "unknown", 10.0),
    ]
    spot, on_demand = ledger(lives)[1], ledger(lives)[0]
    assert (spot.capacity, spot.instances, spot.instance_hours) == ("spot", 4, 1320.0)
    assert (spot.preemptions, spot.provider_ends, spot.ended) == (1, 1, 3)
    assert spot.median_lifetime_h == 250.0  # of 30, 250 and 400: every end counts
    assert spot.interruptions.events == 2
    assert spot.interruptions.per_1000h == pytest.approx(2 / 1.32)
    assert spot.interruptions.small_sample is True  # two events
    assert (on_demand.capacity, on_demand.median_lifetime_h) == ("on-demand", None)
    assert on_demand.interruptions.per_1000h == 0.0
    assert [(line.provider, line.instance_type) for line in ledger(lives)][-1] == ("gcp", None)


def test_lines_combine_as_their_events_over_their_hours() -> None:
    lines = ledger(
        [
            Life("aws", "p5.48xlarge", "spot", 1000.0, "preempted", 5.0),
            Life("aws", "p4d.24xlarge", "spot", 3000.0, "preempted", 5.0),
        ]
    )
    both = combined(lines)
    assert both is not None
    assert (both.events, both.instance_hours, both.per_1000h) == (2, 4000.0, 0.5)
    assert combined([]) is None
