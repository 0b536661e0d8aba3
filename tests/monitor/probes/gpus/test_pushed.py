"""GPU readings pushed by `slamon agent` are judged with the dcgm rules: a missing GPU, a fatal
XID, a hot GPU make the box unusable and raise ``gpu_health``, as a dcgm target would; each
reading is judged once, however often the heartbeat judge runs."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.agent.nvml import NvmlReader
from monitor.alerts.service import on_transitions
from monitor.config import Config, parse_config
from monitor.config.models import TargetConfig
from monitor.db.models import Alert, Delivery, Heartbeat, Outage
from monitor.probes.gpus.readings import CLOCK_HW_THERMAL
from monitor.probes.kinds.heartbeat import judge_heartbeats
from monitor.probes.model import PUSH_VANTAGE
from monitor.probes.record import record_round
from monitor.probes.round import pushed_round
from monitor.targets import upsert_target
from tests.fake_nvml import FakeNvml, h100s

T0 = datetime(2026, 12, 3, 8, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def box(session: Session, gpus: int = 4) -> int:
    cfg = TargetConfig(
        name="runpod-a100-1", kind="heartbeat", interval=15, timeout=5, gpus=gpus, confirmations=1
    )
    row = upsert_target(session, cfg, "config")
    session.flush()
    return row.id


def push(session: Session, target_id: int, seconds: float, nvml: FakeNvml, reader: Any) -> None:
    """What the API stores for one agent push: the reading as JSON, at its time."""
    reading = reader.read().to_json()
    session.add(Heartbeat(target_id=target_id, at=at(seconds), payload=reading))
    session.flush()


def judge(session: Session, seconds: float) -> tuple[bool | None, bool | None, str | None]:
    [result] = judge_heartbeats(session, at(seconds))
    record_round(session, PUSH_VANTAGE, [result], now=at(seconds))
    return result.ok, result.usable, result.error


def test_a_healthy_box_is_reachable_and_usable(session: Session) -> None:
    tid = box(session)
    nvml = FakeNvml(h100s(4))
    push(session, tid, 0, nvml, NvmlReader(nvml))
    assert judge(session, 5) == (True, True, None)


def test_a_lost_gpu_a_fatal_xid_and_a_hot_gpu_make_it_unusable(session: Session) -> None:
    tid = box(session)
    nvml = FakeNvml(h100s(4))
    reader = NvmlReader(nvml)
    push(session, tid, 0, nvml, reader)
    assert judge(session, 5)[1] is True

    nvml.gpus[3].lost = True
    push(session, tid, 15, nvml, reader)
    assert judge(session, 20) == (True, False, "1 of 4 GPUs missing")

    nvml.gpus[3].lost = False
    nvml.xid(1, 79)
    push(session, tid, 30, nvml, reader)
    _, usable, error = judge(session, 35)
    assert usable is False
    assert error is not None
    assert "XID 79" in error

    nvml.gpus[2].temperature_c = 94
    push(session, tid, 45, nvml, reader)
    _, usable, error = judge(session, 50)
    assert usable is False
    assert error is not None
    assert "94" in error


def test_each_reading_is_judged_once_however_often_the_judge_runs(session: Session) -> None:
    tid = box(session, gpus=1)
    nvml = FakeNvml(h100s(1))
    reader = NvmlReader(nvml)
    nvml.gpus[0].clock_event_reasons = CLOCK_HW_THERMAL  # throttled: 3 readings in a row count
    push(session, tid, 0, nvml, reader)
    verdicts = [judge(session, s)[1] for s in (1, 2, 3, 4)]
    assert verdicts == [True, True, True, True]  # one throttled reading, judged once

    push(session, tid, 15, nvml, reader)
    push(session, tid, 30, nvml, reader)  # two more arrive between two runs: both judged
    assert judge(session, 31)[1] is False


def test_gpu_faults_pushed_by_an_agent_raise_gpu_health_not_heartbeat_stalled(
    session: Session,
) -> None:
    config: Config = parse_config(
        "channels: [{name: ops, kind: webhook, url: 'http://127.0.0.1:9/hook', secret: s}]\n"
    )
    tid = box(session)
    nvml = FakeNvml(h100s(4))
    reader = NvmlReader(nvml)

    def tick(seconds: float) -> None:
        now = at(seconds)
        pushed_round(session, now, lambda s, t: on_transitions(s, t, config, now))

    push(session, tid, 0, nvml, reader)
    tick(5)
    nvml.gpus[0] = replace(nvml.gpus[0], lost=True)
    push(session, tid, 15, nvml, reader)
    tick(20)
    [firing] = session.scalars(select(Alert))
    assert (firing.rule, firing.state) == ("gpu_health", "firing")
    assert firing.summary == (
        "runpod-a100-1 is reachable but its GPUs are not usable: 1 of 4 GPUs missing"
    )
    [outage] = session.scalars(select(Outage).where(Outage.series == "usable"))
    assert (outage.cause, outage.detail["causes"]) == ("gpu_hardware", ["gpu_hardware"])
    nvml.gpus[0] = replace(nvml.gpus[0], lost=False)
    push(session, tid, 30, nvml, reader)
    tick(35)

    [alert] = session.scalars(select(Alert))
    events = session.scalars(
        select(Delivery.event).where(Delivery.alert_id == alert.id).order_by(Delivery.id)
    )
    assert (alert.rule, alert.state, list(events)) == (
        "gpu_health",
        "resolved",
        ["firing", "resolved"],
    )


def test_a_box_without_gpu_readings_is_judged_as_a_plain_heartbeat(session: Session) -> None:
    tid = box(session)
    session.add(Heartbeat(target_id=tid, at=at(0), step=10))
    session.flush()
    assert judge(session, 5) == (True, True, None)
