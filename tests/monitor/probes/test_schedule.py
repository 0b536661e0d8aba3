from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest
from sqlalchemy.orm import Session

from monitor.config.models import TargetConfig
from monitor.db.models import Target
from monitor.probes.schedule import (
    Claim,
    Shard,
    claim_due_targets,
    first_slot,
    next_due,
    read_shard,
    shard_message,
    shards,
    shards_by_slot,
    without_stale,
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
    assert ids(claim_due_targets(session, at(0))) == [fast, slow]  # new: at once
    fast_next, slow_next = first_slot(fast, 5, at(0)), first_slot(slow, 60, at(0))
    assert ids(claim_due_targets(session, fast_next - timedelta(seconds=0.01))) == []
    assert ids(claim_due_targets(session, fast_next)) == [fast]
    assert ids(claim_due_targets(session, fast_next)) == []  # once per slot
    assert fast in ids(claim_due_targets(session, slow_next))
    assert ids(claim_due_targets(session, slow_next)) == []


def ids(claims: list[Claim]) -> list[int]:
    return [c.target_id for c in claims]


@pytest.mark.parametrize("interval", [1, 5, 30, 3600])
def test_new_targets_spread_over_the_interval(interval: float) -> None:
    """A thousand targets added at once are not probed at the same instant every round."""
    slots = [first_slot(i, interval, T0) for i in range(1, 1001)]
    half, step = timedelta(seconds=interval / 2), timedelta(seconds=interval)
    assert all(T0 + half <= s < T0 + half + step for s in slots)
    phases = sorted((s - T0).total_seconds() % interval for s in slots)
    biggest_gap = max(b - a for a, b in pairwise(phases))
    assert biggest_gap < interval / 100  # spread evenly, no clump
    assert first_slot(7, interval, T0 + step) == first_slot(7, interval, T0) + step  # a grid


def test_claiming_ahead_gives_each_target_its_own_slot(session: Session) -> None:
    """Dispatch claims what falls due before its next run; each claim carries the slot the
    target is probed at, and the next slot follows that one, not the dispatch time."""
    fast = target(session, "fast", interval=5)
    second = timedelta(seconds=1)
    [first] = claim_due_targets(session, at(0), second)
    assert first == Claim(fast, at(0))  # new: at once
    slot = first_slot(fast, 5, at(0))
    assert claim_due_targets(session, slot - 1.1 * second, second) == []
    [early] = claim_due_targets(session, slot - 0.8 * second, second)
    assert early == Claim(fast, slot)  # claimed 0.8 s ahead, probed on its slot
    late_now = slot + 7.5 * second  # slot + 5 s passed while nobody dispatched
    [late] = claim_due_targets(session, late_now, second)
    assert late == Claim(fast, late_now)  # at once
    [next_one] = claim_due_targets(session, slot + 9.5 * second, second)
    assert next_one == Claim(fast, slot + 10 * second)  # and back on the grid


def test_shard_messages_round_trip_and_bare_ids_run_at_once() -> None:
    claims = [Claim(7, at(5)), Claim(9, at(5.25))]
    shard = read_shard(json.loads(json.dumps(shard_message(claims))))
    target_ids, slots = shard.target_ids, shard.slots
    assert target_ids == [7, 9]
    assert slots == {7: at(5), 9: at(5.25)}
    assert read_shard([3, 4]) == Shard([3, 4], {})


def test_a_shard_carries_intervals_and_drops_targets_whose_slot_is_half_an_interval_gone() -> None:
    claims = [Claim(7, at(0), 10.0), Claim(9, at(0), 60.0), Claim(11, at(4.9), 10.0)]
    shard = read_shard(json.loads(json.dumps(shard_message(claims))))
    assert shard.intervals == {7: 10.0, 9: 60.0, 11: 10.0}
    kept, stale = without_stale(shard, at(5.01))  # 7 is 5.01 s late: its next slot is nearer
    assert stale == [7]
    assert kept == Shard([9, 11], {9: at(0), 11: at(4.9)}, {9: 60.0, 11: 10.0})
    assert without_stale(shard, at(5.0)) == (shard, [])  # exactly half: still probed
    older = read_shard([[7, at(0).timestamp()]])  # a message from before intervals travelled
    assert without_stale(older, at(100)) == (older, [])


def test_shards_follow_slots_and_never_span_more_than_a_quarter_second() -> None:
    claims = [Claim(i, at(0.1 * (i % 10))) for i in range(30)]  # 3 targets per 0.1 s step
    found = shards_by_slot(claims, size=4, span=timedelta(seconds=0.25))
    assert sorted(c.target_id for shard in found for c in shard) == list(range(30))
    for shard in found:
        assert len(shard) <= 4
        assert shard[-1].at - shard[0].at <= timedelta(seconds=0.25)
        assert [c.at for c in shard] == sorted(c.at for c in shard)
    assert [c.target_id for c in found[0]] == [0, 10, 20, 1]  # slot order, then id
