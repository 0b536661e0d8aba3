"""Recording a round (monitor/probes/record.py): raw results, streaks and observed windows,
written in the caller's transaction, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import event, select
from sqlalchemy.orm import Session

from monitor.config.models import TargetConfig
from monitor.db.models import ObservedWindow, TargetState
from monitor.db.models import ProbeResult as ResultRow
from monitor.probes.model import ProbeResult
from monitor.probes.record import StateMemory, load_probe_targets, record_round
from monitor.targets import upsert_target

T0 = datetime(2026, 11, 30, 23, 59, 50, tzinfo=UTC)  # rounds cross a month boundary


def target(session: Session, name: str = "gpu-a", interval: float = 10) -> int:
    cfg = TargetConfig.model_validate(
        {"name": name, "kind": "http", "url": "http://10.0.0.1/", "interval": interval}
    )
    row = upsert_target(session, cfg, "config")
    session.flush()
    return row.id


def result(tid: int, at: datetime, ok: bool | None) -> ProbeResult:
    return ProbeResult(tid, "gpu-a", at, ok, error_kind=None if ok else "connect")


def windows(session: Session, tid: int) -> list[tuple[datetime, datetime]]:
    query = select(ObservedWindow.start, ObservedWindow.end).where(ObservedWindow.target_id == tid)
    return [(s.astimezone(UTC), e.astimezone(UTC)) for s, e in session.execute(query)]


def test_every_result_is_stored_and_known_ones_grow_one_observed_window(session: Session) -> None:
    tid = target(session)
    for i in range(3):
        at = T0 + timedelta(seconds=10 * i)
        record_round(session, "eu", [result(tid, at, True)], now=at)
    record_round(session, "eu", [result(tid, T0 + timedelta(seconds=30), None)], now=T0)
    stored = session.scalars(select(ResultRow.ok).where(ResultRow.target_id == tid))
    assert list(stored) == [True, True, True, None]
    # the unknown result vouches for nothing: the window ends one interval after the last known
    assert windows(session, tid) == [(T0, T0 + timedelta(seconds=30))]


def test_a_gap_longer_than_two_intervals_starts_a_new_window(session: Session) -> None:
    tid = target(session)
    record_round(session, "eu", [result(tid, T0, True)], now=T0)
    later = T0 + timedelta(seconds=35)  # more than two intervals after the window's end
    record_round(session, "eu", [result(tid, later, True)], now=later)
    assert sorted(windows(session, tid)) == [
        (T0, T0 + timedelta(seconds=10)),
        (later, later + timedelta(seconds=10)),
    ]


def test_an_unknown_result_moves_no_streak(session: Session) -> None:
    tid = target(session)
    record_round(session, "eu", [result(tid, T0, False)], now=T0)
    outcome = record_round(session, "eu", [result(tid, T0 + timedelta(seconds=10), None)], now=T0)
    state = session.get_one(TargetState, (tid, "eu", "reachable"))
    assert (state.consecutive_failures, state.consecutive_successes) == (1, 0)
    assert outcome.unconfirmed == frozenset()


def test_a_failure_short_of_confirmation_asks_for_a_quick_reprobe(session: Session) -> None:
    tid = target(session)
    outcome = record_round(session, "eu", [result(tid, T0, False)], now=T0)
    assert outcome.unconfirmed == {tid}
    assert outcome.transitions == ()


def test_targets_are_loaded_with_their_kinds_settings(session: Session) -> None:
    tid = target(session)
    [loaded] = load_probe_targets(session, [tid], "eu")
    assert (loaded.kind, loaded.url, loaded.gpu_baseline) == ("http", "http://10.0.0.1/", None)


def streak(session: Session, tid: int, vantage: str = "eu") -> tuple[str, int, int]:
    row = session.execute(
        select(
            TargetState.state,
            TargetState.consecutive_failures,
            TargetState.consecutive_successes,
        ).where(
            TargetState.target_id == tid,
            TargetState.vantage == vantage,
            TargetState.series == "reachable",
        )
    ).one()
    return row.state, row.consecutive_failures, row.consecutive_successes


def full_state_reads(session: Session) -> list[str]:
    """The statements that read every column of ``target_states`` (not only the stamps)."""
    seen: list[str] = []

    def note(_conn: object, _cursor: object, sql: str, *_args: object) -> None:
        if "FROM target_states" in sql and "consecutive_failures" in sql.split("FROM")[0]:
            seen.append(sql)

    event.listen(session.get_bind(), "before_cursor_execute", note)
    return seen


def test_a_remembered_round_reads_only_the_stamps_and_counts_on(session: Session) -> None:
    tid = target(session)
    memory = StateMemory()
    record_round(session, "eu", [result(tid, T0, True)], now=T0, memory=memory)
    reads = full_state_reads(session)
    for i in range(1, 4):
        at = T0 + timedelta(seconds=10 * i)
        record_round(session, "eu", [result(tid, at, True)], now=at, memory=memory)
    assert reads == []  # every row came from memory at the stamp the database still holds
    assert streak(session, tid) == ("up", 0, 4)


def test_rows_another_process_wrote_are_read_again(session: Session) -> None:
    tid = target(session)
    mine, theirs = StateMemory(), StateMemory()  # two probe processes, one vantage
    record_round(session, "eu", [result(tid, T0, True)], now=T0, memory=mine)
    later = T0 + timedelta(seconds=10)
    record_round(session, "eu", [result(tid, later, False)], now=later, memory=theirs)
    reads = full_state_reads(session)
    last = T0 + timedelta(seconds=20)
    outcome = record_round(session, "eu", [result(tid, last, False)], now=last, memory=mine)
    assert len(reads) == 1  # the stale rows, in one read
    # two failures in a row across the two processes: confirmed, as without any memory
    assert streak(session, tid) == ("down", 2, 0)
    assert {(t.series, t.transition.state) for t in outcome.transitions} == {
        ("reachable", "down"),
        ("usable", "down"),
    }


def test_a_rolled_back_round_is_not_remembered(session: Session) -> None:
    tid = target(session)
    memory = StateMemory()
    record_round(session, "eu", [result(tid, T0, True)], now=T0, memory=memory)
    later = T0 + timedelta(seconds=10)
    savepoint = session.begin_nested()
    record_round(session, "eu", [result(tid, later, False)], now=later, memory=memory)
    savepoint.rollback()  # e.g. the alert hook failed: the failure was never stored
    last = T0 + timedelta(seconds=20)
    outcome = record_round(session, "eu", [result(tid, last, False)], now=last, memory=memory)
    assert streak(session, tid) == ("up", 1, 0)  # one failure stored, not two
    assert outcome.transitions == ()


def test_a_round_recorded_after_its_target_was_retired_opens_no_outage(session: Session) -> None:
    """A round probed before a discovery sweep ended the target's life, and recorded after it
    (the spot reclaim's race): its failures are stored, but they confirm no outage on a life
    that is over, and raise no transition."""
    from monitor.db.models import Outage, Target

    tid = target(session)
    record_round(session, "eu", [result(tid, T0, True)], now=T0)
    record_round(session, "eu", [result(tid, T0 + timedelta(seconds=10), False)], now=T0)
    row = session.get_one(Target, tid)
    row.retired_at = T0 + timedelta(seconds=11)  # the sweep commits first
    session.flush()
    late = T0 + timedelta(seconds=10, milliseconds=200)
    outcome = record_round(session, "eu", [result(tid, late, False)], now=late)
    assert outcome.transitions == ()
    assert session.scalars(select(Outage).where(Outage.target_id == tid)).all() == []
    stored = session.scalars(select(ResultRow.ok).where(ResultRow.target_id == tid))
    assert list(stored) == [True, False, False]


def test_only_successes_that_repeat_the_one_before_are_routine(session: Session) -> None:
    """The compact record's mark (ProbeResult.routine): the first success ever, every failure,
    unknown, unusable or degraded probe and the first success after them are kept whole; a
    clean success after a success at the same vantage, with the target up, is routine."""
    tid = target(session)
    other = target(session, "gpu-b")
    plan: list[tuple[str, ProbeResult]] = []
    for i, ok in enumerate([True, True, True, False, True, True, None, True]):
        plan.append(("eu", result(tid, T0 + timedelta(seconds=10 * i), ok)))
    at = T0 + timedelta(seconds=80)
    plan += [
        ("eu", ProbeResult(tid, "gpu-a", at, True, usable=False)),  # reachable, not usable
        ("eu", result(tid, at + timedelta(seconds=10), True)),
        ("eu", result(tid, at + timedelta(seconds=20), True)),
        ("eu", ProbeResult(tid, "gpu-a", at + timedelta(seconds=30), True, degraded=True)),
        ("us", result(tid, at + timedelta(seconds=30), True)),  # another vantage starts afresh
        ("us", result(tid, at + timedelta(seconds=40), True)),
        ("eu", result(other, at + timedelta(seconds=40), True)),
    ]
    for vantage, probe in plan:
        record_round(session, vantage, [probe], now=probe.at)
    rows = session.execute(
        select(ResultRow.target_id, ResultRow.vantage, ResultRow.routine).order_by(ResultRow.id)
    )
    assert [(t == tid, v, bool(r)) for t, v, r in rows] == [
        (True, "eu", False),  # the first success
        (True, "eu", True),
        (True, "eu", True),
        (True, "eu", False),  # a failure
        (True, "eu", False),  # the first success after it
        (True, "eu", True),
        (True, "eu", False),  # unknown
        (True, "eu", True),  # an unknown moves no streak: the success before still counts
        (True, "eu", False),  # not usable
        (True, "eu", False),  # usable again
        (True, "eu", True),
        (True, "eu", False),  # degraded
        (True, "us", False),
        (True, "us", True),
        (False, "eu", False),
    ]


def test_a_success_still_confirming_a_recovery_is_kept_whole(session: Session) -> None:
    cfg = TargetConfig.model_validate(
        {
            "name": "slow-to-trust",
            "kind": "http",
            "url": "http://10.0.0.2/",
            "interval": 10,
            "confirmations": 1,
            "recovery_confirmations": 3,
        }
    )
    row = upsert_target(session, cfg, "config")
    session.flush()
    tid = row.id
    outcomes = [True, False, True, True, True, True]
    for i, ok in enumerate(outcomes):
        at = T0 + timedelta(seconds=10 * i)
        record_round(session, "eu", [result(tid, at, ok)], now=at)
    routine = session.scalars(select(ResultRow.routine).order_by(ResultRow.id))
    # down after the failure; up again at the third success, which confirms it: kept whole
    assert [bool(r) for r in routine] == [False, False, False, False, False, True]
