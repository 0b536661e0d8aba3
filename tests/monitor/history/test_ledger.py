"""monitor/history/ledger.py: the interruption ledger's lives, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy.orm import Session

from monitor.history.ledger import ledger_in, lives_in
from monitor.sla.interruptions import Life
from monitor.sla.intervals import Span
from tests.monitor.history.conftest import DEC, NOV, observed, target

MONTH = Span(NOV, DEC)
MID = NOV + timedelta(days=15)


def test_instances_live_their_part_of_the_period_and_ends_in_it_say_who(
    session: Session,
) -> None:
    spot: dict[str, Any] = {"provider": "aws", "instance_type": "p5.48xlarge", "capacity": "spot"}
    target(session, "whole", discovered_by="ec2", **spot)
    target(session, "reclaimed", retired=MID, ended_by="preempted", discovered_by="ec2", **spot)
    late = target(session, "late", created=MID, retired=MID + timedelta(hours=6), **spot)
    late.ended_by = "provider"
    gone = target(session, "gone", retired=NOV - timedelta(days=1), ended_by="preempted", **spot)
    assert gone.retired_at  # before the month: not in it
    target(session, "deleted", retired=MID, provider="aws", instance_type="p4d.24xlarge")
    target(session, "a-job", kind="heartbeat", url=None)  # neither type nor source: no instance
    target(session, "found", created=NOV + timedelta(days=20), discovered_by="lab")
    session.flush()
    assert lives_in(session, MONTH) == [
        Life("aws", "p4d.24xlarge", "unknown", 15 * 24.0, "user", 45 * 24.0),
        Life(None, None, "unknown", 10 * 24.0),
        Life("aws", "p5.48xlarge", "spot", 6.0, "provider", 6.0),
        Life("aws", "p5.48xlarge", "spot", 15 * 24.0, "preempted", 45 * 24.0),
        Life("aws", "p5.48xlarge", "spot", 30 * 24.0),
    ]


def test_a_life_with_imported_history_is_as_long_as_that_history(session: Session) -> None:
    imported = target(
        session, "imported", created=MID, retired=MID + timedelta(days=1), ended_by="preempted",
        instance_type="g5.xlarge", provider="aws", capacity="spot",
    )  # fmt: skip
    observed(session, imported, NOV - timedelta(days=10), MID)
    (life,) = lives_in(session, MONTH)
    assert life.hours_in_period == 16 * 24.0  # the month's part: from NOV
    assert life.lifetime_h == 26 * 24.0  # its whole life: from the imported history


def test_the_ledger_groups_the_lives(session: Session) -> None:
    for n in range(3):
        target(
            session, f"spot-{n}", retired=NOV + timedelta(days=n + 1), ended_by="preempted",
            provider="aws", instance_type="p5.48xlarge", capacity="spot", created=NOV,
        )  # fmt: skip
    (line,) = ledger_in(session, MONTH)
    assert (line.instances, line.preemptions, line.ended) == (3, 3, 3)
    assert line.instance_hours == 6 * 24.0
    assert line.median_lifetime_h == 48.0
    assert line.interruptions.per_1000h == pytest.approx(3 / 144 * 1000)
    assert line.interruptions.small_sample is True  # 144 instance-hours
