from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session

from monitor.config.models import TargetConfig
from monitor.db.models import Target
from monitor.probes.service import claim_due_targets, next_due, shards
from monitor.targets import retire_target, upsert_target

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


@pytest.mark.parametrize(
    ("previous", "now", "expected"),
    [
        pytest.param(None, 0, 5, id="first-probe-then-one-interval"),
        pytest.param(0, 0, 5, id="on-time"),
        pytest.param(0, 1.5, 5, id="late-dispatch-keeps-the-grid"),
        pytest.param(0, 12, 15, id="after-a-pause-no-burst"),
        pytest.param(100, 0, 5, id="clock-stepped-back"),
    ],
)
def test_next_due_stays_on_the_targets_grid(
    previous: float | None, now: float, expected: float
) -> None:
    prev = None if previous is None else at(previous)
    assert next_due(prev, 5, at(now)) == at(expected)


def test_shards_split_in_order() -> None:
    assert shards([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def target(session: Session, name: str, kind: str = "http", interval: float = 5) -> int:
    cfg = TargetConfig.model_validate(
        {
            "name": name,
            "kind": kind,
            "url": "http://h/" if kind != "heartbeat" else None,
            "interval": interval,
            "timeout": 1,
        }
    )
    row = upsert_target(session, cfg, "config")
    session.flush()
    return row.id


def test_a_due_target_is_claimed_once_per_slot(session: Session) -> None:
    fast, slow = target(session, "fast", interval=5), target(session, "slow", interval=60)
    target(session, "job", kind="heartbeat")
    retired = target(session, "old")
    retire_target(session, session.get_one(Target, retired), T0)
    assert claim_due_targets(session, at(0)) == [fast, slow]
    assert claim_due_targets(session, at(1)) == []
    assert claim_due_targets(session, at(5)) == [fast]
    assert claim_due_targets(session, at(61)) == [fast, slow]
