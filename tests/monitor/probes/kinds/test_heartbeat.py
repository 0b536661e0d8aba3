from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.alerts.service import on_transitions
from monitor.config import Config, parse_config
from monitor.config.models import TargetConfig
from monitor.db.models import Alert, Delivery, Heartbeat, Outage
from monitor.probes.kinds.heartbeat import judge_heartbeats
from monitor.probes.model import PUSH_VANTAGE
from monitor.probes.record import record_round
from monitor.probes.round import pushed_round
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
    record_round(session, PUSH_VANTAGE, [result], now=at(seconds))
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


# --- heartbeat rounds alert like probe rounds (issue 14, finding 1) ---------------------------


def alerting_config() -> Config:
    return parse_config(
        "channels: [{name: ops, kind: webhook, url: 'http://127.0.0.1:9/hook', secret: s}]\n"
    )


def heartbeat_tick(session: Session, seconds: float, config: Config) -> None:
    now = at(seconds)
    pushed_round(session, now, lambda s, t: on_transitions(s, t, config, now))


def alerts_by_rule(session: Session) -> dict[str, tuple[str, list[str]]]:
    found = {}
    for alert in session.scalars(select(Alert)):
        events = session.scalars(
            select(Delivery.event).where(Delivery.alert_id == alert.id).order_by(Delivery.id)
        )
        found[alert.rule] = (alert.state, list(events))
    return found


def test_a_stalled_then_silent_job_fires_and_resolves_its_alerts(session: Session) -> None:
    config = alerting_config()
    tid = job(session)
    for seconds in range(0, 420, 30):
        beat(session, tid, seconds, step=500)  # alive, stuck at step 500 from the start
    heartbeat_tick(session, 420, config)
    assert alerts_by_rule(session) == {"heartbeat_stalled": ("firing", ["firing"])}

    heartbeat_tick(session, 600, config)  # no heartbeat since 390 + 90 s of grace: silent
    assert alerts_by_rule(session)["target_down"] == ("firing", ["firing"])

    beat(session, tid, 610, step=900)  # it is back, and advancing
    heartbeat_tick(session, 615, config)
    assert alerts_by_rule(session) == {
        "heartbeat_stalled": ("resolved", ["firing", "resolved"]),
        "target_down": ("resolved", ["firing", "resolved"]),
    }


def test_a_silent_job_stays_watched_downtime_not_unknown(session: Session) -> None:
    from monitor.db.models import ObservedWindow

    tid = job(session)
    beat(session, tid, 0, step=100)
    judge(session, 30)
    for seconds in (100, 130, 160, 190):  # silent since 0; the grace ran out at 90
        ok, _, _ = judge(session, seconds)
        assert ok is False
    [outage] = session.scalars(select(Outage).where(Outage.series == "reachable"))
    assert (outage.start, outage.end) == (at(90), None)
    ends = session.scalars(select(ObservedWindow.end).where(ObservedWindow.target_id == tid))
    assert max(ends) >= at(190)  # every silent verdict vouches for the time it was made


# --- the alert follows what made the job unusable (issue 29) ----------------------------------


def gpu_box(session: Session) -> int:
    """An 8-GPU box whose training job pushes its step (and, with `slamon agent`, readings)."""
    cfg = TargetConfig(
        name="train-8gpu",
        kind="heartbeat",
        interval=30,
        timeout=5,
        grace=90,
        stall_after=300,
        gpus=8,
        confirmations=1,
    )
    row = upsert_target(session, cfg, "api")
    session.flush()
    return row.id


def readings(dbe_on_gpu0: int = 0) -> dict[str, object]:
    """What `slamon agent` pushes for 8 healthy GPUs; GPU 0's ECC double-bit count given."""
    gpus = [{"key": f"GPU-{i}", "index": str(i), "xid": 0, "ecc_dbe_volatile": 0} for i in range(8)]
    gpus[0]["ecc_dbe_volatile"] = dbe_on_gpu0
    return {"gpus": gpus}


def firing_rules(session: Session) -> set[str]:
    return {a.rule for a in session.scalars(select(Alert).where(Alert.state == "firing"))}


def usable_outage(session: Session) -> Outage:
    [outage] = session.scalars(select(Outage).where(Outage.series == "usable"))
    return outage


def test_a_gpu_box_whose_step_stalls_raises_heartbeat_stalled_not_gpu_health(
    session: Session,
) -> None:
    config = alerting_config()
    tid = gpu_box(session)
    for seconds in range(0, 420, 30):
        beat(session, tid, seconds, step=500)  # only the step, and it is stuck
    heartbeat_tick(session, 420, config)
    assert firing_rules(session) == {"heartbeat_stalled"}
    outage = usable_outage(session)
    assert (outage.cause, outage.detail["causes"]) == ("stalled_step", ["stalled_step"])
    [alert] = session.scalars(select(Alert))
    assert "step 500 has not advanced" in alert.summary


def test_the_alerts_follow_the_cause_while_the_outage_stays_open(session: Session) -> None:
    config = alerting_config()
    tid = gpu_box(session)

    def push(seconds: float, step: int, dbe: int) -> None:
        session.add(Heartbeat(target_id=tid, at=at(seconds), step=step, payload=readings(dbe)))
        session.flush()

    for seconds in range(0, 420, 30):
        push(seconds, 500, 0)  # healthy GPUs, stuck step
    heartbeat_tick(session, 420, config)
    assert firing_rules(session) == {"heartbeat_stalled"}
    assert usable_outage(session).cause == "stalled_step"

    push(430, 500, 1)  # GPU 0 takes an ECC double-bit error; the step is still stuck
    heartbeat_tick(session, 435, config)
    assert firing_rules(session) == {"heartbeat_stalled", "gpu_health"}
    assert usable_outage(session).cause == "gpu_hardware+stalled_step"

    push(450, 510, 1)  # the step moves again; the GPU's fault holds until it is reset
    heartbeat_tick(session, 455, config)
    assert firing_rules(session) == {"gpu_health"}
    outage = usable_outage(session)
    assert (outage.end, outage.cause) == (None, "gpu_hardware")
    history = [entry["causes"] for entry in outage.detail["causes_history"]]
    assert history == [["stalled_step"], ["gpu_hardware", "stalled_step"], ["gpu_hardware"]]
    stalled = session.scalars(select(Alert).where(Alert.rule == "heartbeat_stalled")).one()
    assert "still not usable: its GPUs are not usable" in stalled.summary

    push(470, 520, 0)  # reset: the volatile count starts again from 0
    heartbeat_tick(session, 475, config)
    assert firing_rules(session) == set()
    assert usable_outage(session).end == at(475)
    assert alerts_by_rule(session) == {
        "heartbeat_stalled": ("resolved", ["firing", "resolved"]),
        "gpu_health": ("resolved", ["firing", "resolved"]),
    }
