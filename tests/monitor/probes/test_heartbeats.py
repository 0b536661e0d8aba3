from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.config.models import TargetConfig
from monitor.db.models import Heartbeat, Outage
from monitor.probes.service import HEARTBEAT_VANTAGE, judge_heartbeats
from monitor.probes.store import record_round
from monitor.targets import upsert_target

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def job(session: Session) -> int:
    cfg = TargetConfig(
        name="train-llm",
        kind="heartbeat",
        interval=30,
        timeout=5,
        grace=90,
        stall_after=300,
        confirmations=1,
    )
    row = upsert_target(session, cfg, "api")
    session.flush()
    return row.id


def beat(session: Session, target_id: int, seconds: float, step: int | None) -> None:
    session.add(Heartbeat(target_id=target_id, at=at(seconds), step=step))
    session.flush()


def judge(session: Session, seconds: float) -> tuple[bool | None, bool | None, str | None]:
    [result] = judge_heartbeats(session, at(seconds))
    record_round(session, HEARTBEAT_VANTAGE, [result], now=at(seconds))
    return result.ok, result.usable, result.error


def test_a_job_that_never_reported_is_unknown_not_down(session: Session) -> None:
    job(session)
    assert judge(session, 0)[0] is None


def test_a_missing_heartbeat_is_an_outage_from_when_the_grace_ran_out(session: Session) -> None:
    tid = job(session)
    beat(session, tid, 0, step=100)
    assert judge(session, 60)[:2] == (True, True)
    ok, _, error = judge(session, 200)
    assert ok is False
    assert error is not None
    [outage] = session.scalars(select(Outage).where(Outage.series == "reachable"))
    assert outage.start == at(90)
    beat(session, tid, 230, step=130)
    judge(session, 235)
    session.refresh(outage)
    assert outage.end == at(235)


def test_a_step_that_stops_advancing_is_stalled_but_reachable(session: Session) -> None:
    tid = job(session)
    for seconds in range(0, 420, 30):
        beat(session, tid, seconds, step=500)  # alive, but stuck at step 500
    ok, usable, error = judge(session, 420)
    assert (ok, usable) == (True, False)
    assert error is not None
    assert "step 500 has not advanced" in error
    series = {o.series for o in session.scalars(select(Outage))}
    assert series == {"usable"}
