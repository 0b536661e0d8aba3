"""Judging the GPU readings a box's `slamon agent` pushed, with the rules and thresholds of a
dcgm-exporter scrape (``health.assess``): one judgement, two sources.

Each pushed reading is judged once, in the order taken: the heartbeat judge runs on its own
schedule, and between two runs an agent may have pushed several readings (or a backlog after a
network outage), so the readings newer than the last one judged are folded through ``assess``
one by one, as consecutive scrapes would be. The counters and the verdict are remembered on the
push vantage's usable state (``gpu_counters``, ``gpu_verdict``), and a run with nothing new
repeats the remembered verdict rather than judging the same reading twice (which would count a
throttled reading as several throttled scrapes).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.db.models import Heartbeat, Target, TargetState
from monitor.probes.gpus.counters import GpuCounters
from monitor.probes.gpus.health import GpuHealth, assess
from monitor.probes.gpus.wire import snapshot_from_json
from monitor.probes.model import PUSH_VANTAGE
from monitor.sla.times import parse_aware

MAX_READINGS_PER_RUN = 500  # a backlog beyond is judged over the next runs


@dataclass(frozen=True, slots=True)
class GpuVerdict:
    usable: bool
    degraded: bool
    gpus_seen: int
    reasons: tuple[str, ...]
    detail: dict[str, Any]  # what the usable state remembers for the next run


def judge_pushed_gpus(session: Session, target: Target) -> GpuVerdict | None:
    """The verdict on ``target``'s pushed GPU readings, or None where it never pushed any."""
    remembered = _remembered(session, target.id)
    verdict = remembered.get("gpu_verdict") or {}
    since = _parse_time(verdict.get("assessed_at"))
    query = (
        select(Heartbeat.at, Heartbeat.payload)
        .where(Heartbeat.target_id == target.id)
        .order_by(Heartbeat.at)
        .limit(MAX_READINGS_PER_RUN)
    )
    if since is not None:
        query = query.where(Heartbeat.at > since)
    counters = _counters(remembered.get("gpu_counters"))
    health: GpuHealth | None = None
    gpus_seen, assessed_at = 0, since
    for at, payload in session.execute(query).all():
        readings = (payload or {}).get("gpus")
        if not isinstance(readings, list):
            continue  # a heartbeat without GPU readings (a training hook's) says nothing here
        snapshot = snapshot_from_json(readings)  # validated when accepted
        health = assess(snapshot, counters, target.gpus)
        counters, gpus_seen, assessed_at = health.counters, snapshot.gpus_seen, at
    if health is None:
        return _repeated(verdict, remembered)
    assert assessed_at is not None
    stored = {
        "assessed_at": assessed_at.isoformat(),
        "usable": health.usable,
        "degraded": health.degraded,
        "gpus_seen": gpus_seen,
        "reasons": list(health.reasons),
    }
    detail = {"gpu_counters": health.counters.to_json(), "gpu_verdict": stored}
    return GpuVerdict(health.usable, health.degraded, gpus_seen, health.reasons, detail)


def _repeated(verdict: dict[str, Any], remembered: dict[str, Any]) -> GpuVerdict | None:
    if not verdict:
        return None
    return GpuVerdict(
        bool(verdict.get("usable")),
        bool(verdict.get("degraded")),
        int(verdict.get("gpus_seen") or 0),
        tuple(verdict.get("reasons") or ()),
        {k: remembered[k] for k in ("gpu_counters", "gpu_verdict") if k in remembered},
    )


def _remembered(session: Session, target_id: int) -> dict[str, Any]:
    detail = session.scalar(
        select(TargetState.detail).where(
            TargetState.target_id == target_id,
            TargetState.vantage == PUSH_VANTAGE,
            TargetState.series == "usable",
        )
    )
    return detail if isinstance(detail, dict) else {}


def _counters(data: object) -> GpuCounters | None:
    try:
        return GpuCounters.from_json(data) if data else None
    except ValueError:
        return None  # a corrupt memory costs one reading's change detection


def _parse_time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_aware(value)
    except ValueError:
        return None
