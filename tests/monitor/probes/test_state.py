from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitor.probes.state import (
    DOWN,
    UNKNOWN,
    UP,
    Streak,
    Transition,
    VantageView,
    advance,
    quorum_size,
    verdict,
)

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def run(
    verdicts: list[bool],
    confirmations: int = 2,
    every: float = 5,
    recovery_confirmations: int | None = None,
) -> tuple[Streak, list[Transition]]:
    streak, transitions = Streak(), []
    for i, ok in enumerate(verdicts):
        streak, change = advance(streak, ok, at(i * every), confirmations, recovery_confirmations)
        if change:
            transitions.append(change)
    return streak, transitions


def test_the_first_success_makes_an_unknown_target_up() -> None:
    streak, transitions = run([True])
    assert streak.state == UP
    assert transitions == [Transition(UNKNOWN, UP, T0)]


def test_one_failure_is_not_an_outage_but_asks_for_confirmation() -> None:
    streak, transitions = run([True, False])
    assert (streak.state, streak.unconfirmed) == (UP, True)
    assert transitions == [Transition(UNKNOWN, UP, T0)]


def test_a_confirmed_outage_starts_at_the_first_failing_probe() -> None:
    streak, transitions = run([True, False, False, False])
    assert streak.state == DOWN
    assert transitions[-1] == Transition(UP, DOWN, at(5))
    assert streak.unconfirmed is False


def test_recovery_needs_confirmation_and_is_dated_to_the_first_success() -> None:
    _, transitions = run([True, False, False, True, False, True, True])
    assert transitions[-1] == Transition(DOWN, UP, at(25))
    assert [t.state for t in transitions] == [UP, DOWN, UP]


@pytest.mark.parametrize(
    ("verdicts", "confirmations", "states"),
    [
        pytest.param([False, False], 2, [DOWN], id="down-from-unknown"),
        pytest.param([False], 1, [DOWN], id="one-confirmation"),
        pytest.param([True, False, True, False, True], 2, [UP], id="flapping-never-confirms"),
        pytest.param([True, False, False, False, True, True, True], 3, [UP, DOWN, UP], id="three"),
    ],
)
def test_transition_table(verdicts: list[bool], confirmations: int, states: list[str]) -> None:
    _, transitions = run(verdicts, confirmations)
    assert [t.state for t in transitions] == states


def test_one_recovery_confirmation_ends_an_outage_at_the_first_success() -> None:
    streak, transitions = run([True, False, False, True], recovery_confirmations=1)
    assert transitions[-1] == Transition(DOWN, UP, at(15))
    assert (streak.state, streak.unconfirmed) == (UP, False)


def test_recovery_confirmations_apart_from_down_confirmations() -> None:
    # down on one failure, but three successes in a row to call it back up
    verdicts = [True, False, True, True, False, True, True, True]
    _, transitions = run(verdicts, confirmations=1, recovery_confirmations=3)
    assert [(t.state, t.at) for t in transitions] == [
        (UP, at(0)),
        (DOWN, at(5)),
        (UP, at(25)),
    ]


@pytest.mark.parametrize(
    ("active", "configured", "size"),
    [(1, None, 1), (2, None, 2), (3, None, 2), (4, None, 3), (0, None, 1), (3, 1, 1), (2, 5, 2)],
)
def test_quorum_is_a_majority_of_the_active_vantages(
    active: int, configured: int | None, size: int
) -> None:
    assert quorum_size(active, configured) == size


def view(vantage: str, state: str, since: float) -> VantageView:
    return VantageView(vantage, state, at(since), at(100))


def test_one_failing_vantage_of_three_is_no_outage() -> None:
    views = [view("a", DOWN, 10), view("b", UP, 0), view("c", UP, 0)]
    assert verdict(views, quorum_size(3)) == (UP, at(0))


def test_a_quorum_of_failing_vantages_is_an_outage_from_when_the_quorum_formed() -> None:
    views = [view("a", DOWN, 10), view("b", DOWN, 12), view("c", UP, 0)]
    assert verdict(views, quorum_size(3)) == (DOWN, at(12))


def test_the_target_is_back_up_when_the_quorum_breaks_at_the_latest_recovery() -> None:
    views = [view("a", UP, 60), view("b", DOWN, 12), view("c", UP, 70)]
    assert verdict(views, quorum_size(3)) == (UP, at(70))


def test_no_vantage_that_knows_means_unknown() -> None:
    assert verdict([view("a", UNKNOWN, 0)], 1) == (UNKNOWN, None)
    assert verdict([], 1) == (UNKNOWN, None)
