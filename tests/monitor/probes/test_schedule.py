from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.orm import Session

from monitor.config.models import TargetConfig
from monitor.db.models import Target
from monitor.probes.service import (
    Claim,
    claim_due_targets,
    next_due,
    read_shard,
    shard_message,
    shards,
    shards_by_slot,
)
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
    assert ids(claim_due_targets(session, at(0))) == [fast, slow]
    assert ids(claim_due_targets(session, at(1))) == []
    assert ids(claim_due_targets(session, at(5))) == [fast]
    assert ids(claim_due_targets(session, at(61))) == [fast, slow]


def ids(claims: list[Claim]) -> list[int]:
    return [c.target_id for c in claims]


def test_claiming_ahead_gives_each_target_its_own_slot(session: Session) -> None:
    """Dispatch claims what falls due before its next run; each claim carries the slot the
    target is probed at, and the next slot follows that one, not the dispatch time."""
    fast = target(session, "fast", interval=5)
    [first] = claim_due_targets(session, at(0), timedelta(seconds=1))
    assert first == Claim(fast, at(0))  # new: at once
    assert claim_due_targets(session, at(3.9), timedelta(seconds=1)) == []
    [early] = claim_due_targets(session, at(4.2), timedelta(seconds=1))
    assert early == Claim(fast, at(5))  # claimed 0.8 s ahead, probed on its slot
    [late] = claim_due_targets(session, at(12.5), timedelta(seconds=1))
    assert late == Claim(fast, at(12.5))  # slot 10 passed while nobody dispatched: at once
    [next_one] = claim_due_targets(session, at(14.5), timedelta(seconds=1))
    assert next_one == Claim(fast, at(15))  # and back on the grid


def test_shard_messages_round_trip_and_bare_ids_run_at_once() -> None:
    claims = [Claim(7, at(5)), Claim(9, at(5.25))]
    target_ids, slots = read_shard(json.loads(json.dumps(shard_message(claims))))
    assert target_ids == [7, 9]
    assert slots == {7: at(5), 9: at(5.25)}
    assert read_shard([3, 4]) == ([3, 4], {})


def test_shards_follow_slots_and_never_span_more_than_a_quarter_second() -> None:
    claims = [Claim(i, at(0.1 * (i % 10))) for i in range(30)]  # 3 targets per 0.1 s step
    found = shards_by_slot(claims, size=4, span=timedelta(seconds=0.25))
    assert sorted(c.target_id for shard in found for c in shard) == list(range(30))
    for shard in found:
        assert len(shard) <= 4
        assert shard[-1].at - shard[0].at <= timedelta(seconds=0.25)
        assert [c.at for c in shard] == sorted(c.at for c in shard)
    assert [c.target_id for c in found[0]] == [0, 10, 20, 1]  # slot order, then id
