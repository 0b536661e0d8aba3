from __future__ import annotations

from datetime import UTC, datetime

import pytest

from monitor.scheduler.slots import Term, interval_slot, seconds_to_next_slot


@pytest.mark.parametrize(
    ("now", "period", "slot"),
    [
        (
            datetime(2026, 12, 6, 7, 0, 0, 999000, tzinfo=UTC),
            1.0,
            datetime(2026, 12, 6, 7, 0, tzinfo=UTC),
        ),
        (
            datetime(2026, 12, 6, 7, 0, 29, tzinfo=UTC),
            30.0,
            datetime(2026, 12, 6, 7, 0, tzinfo=UTC),
        ),
        (
            datetime(2026, 12, 6, 7, 0, 30, tzinfo=UTC),
            30.0,
            datetime(2026, 12, 6, 7, 0, 30, tzinfo=UTC),
        ),
        (
            datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC),
            3600.0,
            datetime(2026, 12, 31, 23, tzinfo=UTC),
        ),
        (
            datetime(2026, 12, 6, 7, 0, 1, 600000, tzinfo=UTC),
            0.5,
            datetime(2026, 12, 6, 7, 0, 1, 500000, tzinfo=UTC),
        ),
    ],
)
def test_slots_lie_on_a_grid_from_the_epoch(now: datetime, period: float, slot: datetime) -> None:
    assert interval_slot(now, period) == slot


def test_the_next_slot_is_one_period_after_this_ones_start() -> None:
    now = datetime(2026, 12, 6, 7, 0, 12, tzinfo=UTC)
    assert seconds_to_next_slot(now, 5.0) == pytest.approx(3.0)
    assert seconds_to_next_slot(now, 1.0) == pytest.approx(1.0)


def test_a_term_ends_a_lease_after_it_was_asked_for_and_is_renewed_a_third_in() -> None:
    term = Term(asked_at=100.0, lease_s=15.0)
    assert term.leads_at(114.999)
    assert not term.leads_at(115.0)
    assert term.renew_at() == pytest.approx(105.0)
