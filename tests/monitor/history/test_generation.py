"""monitor/history/generation.py: every write to what happened moves the generation (the
triggers of migration 0009), steady probe traffic does not, and the cache follows it; on SQLite
and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import insert, update
from sqlalchemy.orm import Session

from monitor.db.changes import KEEP, prune_changes
from monitor.db.models import HistoryChange, ObservedWindow, Target, TargetState
from monitor.history.generation import ReadCache, generation
from tests.monitor.history.conftest import DEC, NOV, incident, observed, outage, provider, target

MID = NOV + timedelta(days=15)


def test_writes_to_what_happened_move_the_generation(session: Session) -> None:
    before = generation(session)
    t = target(session, "a")
    after_target = generation(session)
    outage(session, t, MID, None)
    after_outage = generation(session)
    incident(session, provider(session, "aws"), "x", MID)
    after_incident = generation(session)
    assert before < after_target < after_outage < after_incident


def test_steady_probe_traffic_leaves_it_alone(session: Session) -> None:
    t = target(session, "a")
    observed(session, t, NOV, MID)
    state = TargetState(
        target_id=t.id, vantage="*", series="reachable", state="up", since=NOV, detail={}
    )
    session.add(state)
    session.flush()
    before = generation(session)
    session.execute(update(ObservedWindow).values(end=DEC))  # the window grows
    session.execute(update(Target).values(next_probe_at=DEC))  # the slot moves on
    session.execute(update(TargetState).values(consecutive_successes=7, last_probe_at=MID))
    session.execute(update(TargetState).values(state="up"))  # written, not changed
    assert generation(session) == before
    session.execute(update(TargetState).values(state="down"))
    assert generation(session) > before


def test_the_cache_rebuilds_on_a_write_and_when_too_old(session: Session) -> None:
    cache: ReadCache[int] = ReadCache(timedelta(seconds=15))
    built: list[int] = []

    def build() -> int:
        built.append(len(built))
        return len(built)

    assert cache.get(session, "k", MID, build).value == 1
    assert cache.get(session, "k", MID + timedelta(seconds=10), build).value == 1
    target(session, "a")  # something happened
    assert cache.get(session, "k", MID + timedelta(seconds=11), build).value == 2
    assert cache.get(session, "k", MID + timedelta(seconds=30), build).value == 3  # too old
    assert cache.get(session, "k", MID, build).value == 4  # a now before it was built
    assert (cache.hits, cache.misses) == (1, 4)


def test_pruning_keeps_the_newest_rows_and_still_moves_the_generation(
    session: Session,
) -> None:
    session.execute(insert(HistoryChange), [{"source": "test"}] * (KEEP + 10))
    count, newest = generation(session)
    assert prune_changes(session) == count - KEEP
    assert generation(session) == (KEEP, newest)
    assert prune_changes(session) == 0
