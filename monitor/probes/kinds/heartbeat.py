"""Heartbeat targets: a training job or a box's `slamon agent` pushes heartbeats to the API
(``POST /api/v1/heartbeats``) and slamon judges what arrived. Reachable = a heartbeat came within
the grace period; usable = its step is still advancing (a stalled job is up but not training)
and, where the heartbeats carry GPU readings, the GPUs pass the dcgm rules
(``gpus.pushed``): all ``gpus`` present, no fatal XID, ECC or remap fault, not hot or throttled.
The result names why it is unusable (``causes``: a stalled step, the GPU readings, or both), and
the alert follows the cause: ``heartbeat_stalled`` for the step, ``gpu_health`` for the GPUs, as
a dcgm target raises, both when both.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.db.models import Heartbeat, Target, TargetState
from monitor.probes.gpus.pushed import GpuVerdict, judge_pushed_gpus
from monitor.probes.kind import ProbeKind, UsableRule
from monitor.probes.model import PUSH_VANTAGE, ProbeResult, UnusableCause


def judge_heartbeats(session: Session, now: datetime) -> list[ProbeResult]:
    """One synthetic result per live heartbeat target: down when no heartbeat came within its
    grace period (dated to when the grace ran out), unusable when its step stopped advancing."""
    targets = session.scalars(
        select(Target).where(Target.kind == KIND_NAME, Target.retired_at.is_(None))
    )
    return [_judge(session, target, now) for target in targets]


def _judge(session: Session, target: Target, now: datetime) -> ProbeResult:
    settings = target.settings or {}
    grace = timedelta(seconds=settings.get("grace_s") or target.interval_s * 2)
    last = session.scalars(
        select(Heartbeat)
        .where(Heartbeat.target_id == target.id)
        .order_by(Heartbeat.at.desc())
        .limit(1)
    ).one_or_none()
    if last is None:
        return ProbeResult(
            target.id,
            target.name,
            now,
            None,
            error_kind="vantage",
            error="no heartbeat received yet",
        )
    if now - last.at > grace:
        # The first silent verdict is dated to when the grace ran out (the outage's start);
        # later ones to now, so the silence keeps counting as watched downtime, not unknown.
        ran_out = last.at + grace
        return ProbeResult(
            target.id,
            target.name,
            now if _already_failing(session, target.id, ran_out) else ran_out,
            False,
            error_kind="timeout",
            error=f"no heartbeat since {last.at.isoformat()}",
        )
    gpus = judge_pushed_gpus(session, target)
    stalled = _stalled_since(session, target, last, settings, now)
    if stalled is not None:
        return _with_gpus(
            ProbeResult(
                target.id,
                target.name,
                now,
                True,
                usable=False,
                error_kind="stalled",
                error=f"step {last.step} has not advanced since {stalled.isoformat()}",
                causes=STALLED,
            ),
            gpus,
        )
    usable = True if last.step is not None else None
    return _with_gpus(ProbeResult(target.id, target.name, now, True, usable=usable), gpus)


def _with_gpus(result: ProbeResult, gpus: GpuVerdict | None) -> ProbeResult:
    """The result with the GPU verdict added: not usable when either the job or the GPUs are
    not; the GPU reasons first, as they are the cause a stall would follow from."""
    if gpus is None:
        return result
    usable = gpus.usable and result.usable is not False
    errors = [*gpus.reasons] if not gpus.usable else []
    if result.usable is False and result.error:
        errors.append(result.error)
    return replace(
        result,
        usable=usable,
        degraded=usable and gpus.degraded,
        gpus_seen=gpus.gpus_seen,
        error_kind=None if usable else ("gpu" if not gpus.usable else result.error_kind),
        error=None if usable else "; ".join(errors)[:500],
        detail={**gpus.detail, "reasons": list(gpus.reasons)},
        causes=result.causes | (frozenset() if gpus.usable else GPU_FAULT),
    )


STALLED: frozenset[UnusableCause] = frozenset({"stalled_step"})
GPU_FAULT: frozenset[UnusableCause] = frozenset({"gpu_hardware"})


def _already_failing(session: Session, target_id: int, since: datetime) -> bool:
    """Whether the push vantage has already recorded a failure from ``since`` on."""
    first = session.scalar(
        select(TargetState.first_failure_at).where(
            TargetState.target_id == target_id,
            TargetState.vantage == PUSH_VANTAGE,
            TargetState.series == "reachable",
        )
    )
    return first is not None and first >= since


def _stalled_since(
    session: Session, target: Target, last: Heartbeat, settings: dict[str, object], now: datetime
) -> datetime | None:
    """When the job last made progress, if that is longer ago than ``stall_after``."""
    stall_after = settings.get("stall_after_s")
    if last.step is None or not isinstance(stall_after, int | float):
        return None
    first_at_step = session.scalar(
        select(func.min(Heartbeat.at)).where(
            Heartbeat.target_id == target.id, Heartbeat.step == last.step
        )
    )
    if first_at_step is not None and now - first_at_step > timedelta(seconds=stall_after):
        return first_at_step
    return None


KIND_NAME = "heartbeat"
KIND = ProbeKind(
    KIND_NAME,
    None,
    judge=judge_heartbeats,
    usable=(
        UsableRule("heartbeat_stalled", "warning", "has stopped making progress", "stalled_step"),
        UsableRule(
            "gpu_health", "warning", "is reachable but its GPUs are not usable", "gpu_hardware"
        ),
    ),
)
