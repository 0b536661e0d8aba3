"""Writing a probe round: the raw results in one batched insert, the per-vantage streaks, the
quorum verdict and the outage intervals it opens or closes — all in the caller's transaction."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from monitor.db.dialect import insert_ignoring_conflicts
from monitor.db.models import ObservedWindow, Outage, Target, TargetState
from monitor.db.models import ProbeResult as ResultRow
from monitor.probes.model import ProbeResult, ProbeTarget
from monitor.probes.state import (
    DOWN,
    UP,
    Streak,
    Transition,
    VantageView,
    advance,
    quorum_size,
    verdict,
)

SERIES = ("reachable", "usable")
QUORUM_VANTAGE = "*"
STALE_INTERVALS = 3  # a vantage silent for this many intervals no longer votes


@dataclass(frozen=True, slots=True)
class TargetTransition:
    """A confirmed change of a target's (quorum) state: what alerts and reports react to."""

    target_id: int
    target: str
    series: str
    transition: Transition


@dataclass(frozen=True, slots=True)
class RoundOutcome:
    transitions: tuple[TargetTransition, ...]
    unconfirmed: frozenset[int]  # targets whose streak at this vantage needs a quick re-probe
    states: dict[int, str]  # reachable state at this vantage after the round, by target id


def load_probe_targets(
    session: Session, target_ids: Iterable[int], vantage: str
) -> list[ProbeTarget]:
    """Live targets by id, with the GPU baseline this vantage remembered (dcgm)."""
    ids = list(target_ids)
    rows = session.scalars(select(Target).where(Target.id.in_(ids), Target.retired_at.is_(None)))
    remembered = select(TargetState.target_id, TargetState.detail).where(
        TargetState.target_id.in_(ids),
        TargetState.vantage == vantage,
        TargetState.series == "usable",
    )
    baselines: dict[int, dict[str, Any]] = dict(session.execute(remembered).all())
    return [_probe_target(row, baselines.get(row.id) or {}) for row in rows]


def _probe_target(row: Target, state_detail: dict[str, Any]) -> ProbeTarget:
    settings = row.settings or {}
    return ProbeTarget(
        id=row.id,
        name=row.name,
        kind=row.kind,
        url=row.url,
        timeout_s=row.timeout_s,
        expect_status=tuple(settings.get("expect_status") or ()),
        expect_body=settings.get("expect_body"),
        gpus=row.gpus,
        confirmations=row.confirmations,
        gpu_baseline=state_detail.get("gpu_counters"),
    )


def result_rows(vantage: str, results: Iterable[ProbeResult]) -> list[dict[str, Any]]:
    return [
        {
            "target_id": r.target_id,
            "vantage": vantage,
            "at": r.at,
            "ok": r.ok,
            "usable": r.usable_ok if r.usable is not None else None,
            "latency_ms": r.latency_ms,
            "status_code": r.status_code,
            "error_kind": r.error_kind,
            "error": r.error,
            "detail": {"gpus_seen": r.gpus_seen} if r.gpus_seen is not None else None,
        }
        for r in results
    ]


def record_round(
    session: Session,
    vantage: str,
    results: Sequence[ProbeResult],
    *,
    now: datetime,
    quorum: int | None = None,
) -> RoundOutcome:
    """Store ``results`` probed from ``vantage`` and apply what they confirm."""
    if not results:
        return RoundOutcome((), frozenset(), {})
    # Lock the targets (in id order) before reading any vantage's state: two vantages recording
    # at once must not each miss the other's uncommitted verdict and so never reach a quorum.
    locked = (
        select(Target)
        .where(Target.id.in_({r.target_id for r in results}))
        .order_by(Target.id)
        .with_for_update(key_share=True)  # NO KEY UPDATE: the results' foreign keys still pass
    )
    targets = {t.id: t for t in session.scalars(locked)}
    session.execute(insert(ResultRow), result_rows(vantage, results))
    streaks = _load_streaks(session, targets, vantage)
    unconfirmed: set[int] = set()
    for result in sorted(results, key=lambda r: r.at):
        target = targets.get(result.target_id)
        if target is None or result.ok is None:
            continue  # retired meanwhile, or unknown (our own side failed): no verdict
        for series, ok in (("reachable", result.ok), ("usable", bool(result.usable_ok))):
            row = streaks[(target.id, series)]
            streak, _ = advance(_streak(row), ok, result.at, target.confirmations)
            _store_streak(row, streak)
            row.last_probe_at = max(result.at, now)  # when the vantage last reported (freshness)
            if series == "usable" and "gpu_counters" in result.detail:
                row.detail = {**(row.detail or {}), "gpu_counters": result.detail["gpu_counters"]}
            if streak.unconfirmed:
                unconfirmed.add(target.id)
    _extend_coverage(session, targets, [r for r in results if r.ok is not None])
    session.flush()
    transitions = _apply_quorum(session, targets, now, quorum)
    states = {tid: streaks[(tid, "reachable")].state for tid in targets}
    return RoundOutcome(tuple(transitions), frozenset(unconfirmed), states)


def _extend_coverage(
    session: Session, targets: dict[int, Target], known: Sequence[ProbeResult]
) -> None:
    """Grow each target's observed window: a known result vouches for the interval after it.
    A gap longer than two intervals (slamon was down, or our canary failed) starts a new window,
    so time outside every window is reported as unknown, never as up."""
    latest: dict[int, datetime] = {}
    for result in known:
        latest[result.target_id] = max(result.at, latest.get(result.target_id, result.at))
    if not latest:
        return
    horizon = min(latest.values()) - timedelta(
        seconds=max(t.interval_s for t in targets.values()) * 3
    )
    windows = {
        w.target_id: w
        for w in session.scalars(
            select(ObservedWindow)
            .where(ObservedWindow.target_id.in_(latest), ObservedWindow.source == "probe")
            .where(ObservedWindow.end >= horizon)
            .order_by(ObservedWindow.end)
        )
    }
    for target_id, at in latest.items():
        step = timedelta(seconds=targets[target_id].interval_s)
        window = windows.get(target_id)
        if window is not None and window.end >= at - 2 * step:
            window.end = max(window.end, at + step)
        else:
            session.add(
                ObservedWindow(target_id=target_id, start=at, end=at + step, source="probe")
            )


def _load_streaks(
    session: Session, targets: dict[int, Target], vantage: str
) -> dict[tuple[int, str], TargetState]:
    rows = {
        (r.target_id, r.series): r
        for r in session.scalars(
            select(TargetState).where(
                TargetState.target_id.in_(targets), TargetState.vantage == vantage
            )
        )
    }
    for target_id in targets:
        for series in SERIES:
            if (target_id, series) not in rows:
                row = TargetState(
                    target_id=target_id,
                    vantage=vantage,
                    series=series,
                    state="unknown",
                    consecutive_failures=0,
                    consecutive_successes=0,
                    detail={},
                )
                session.add(row)
                rows[(target_id, series)] = row
    return rows


def _streak(row: TargetState) -> Streak:
    return Streak(
        row.state,
        row.since,
        row.consecutive_failures,
        row.consecutive_successes,
        row.first_failure_at,
        row.first_success_at,
        row.last_probe_at,
    )


def _store_streak(row: TargetState, streak: Streak) -> None:
    row.state, row.since = streak.state, streak.since or row.since
    row.consecutive_failures, row.consecutive_successes = streak.failures, streak.successes
    row.first_failure_at, row.first_success_at = (
        streak.failure_started_at,
        streak.success_started_at,
    )
    row.last_probe_at = streak.last_probe_at


def _apply_quorum(
    session: Session, targets: dict[int, Target], now: datetime, quorum: int | None
) -> list[TargetTransition]:
    """Recompute each target's quorum verdict from every vantage; open/close outages on change."""
    by_series: dict[tuple[int, str], list[TargetState]] = defaultdict(list)
    for row in session.scalars(select(TargetState).where(TargetState.target_id.in_(targets))):
        by_series[(row.target_id, row.series)].append(row)
    transitions = []
    for target in targets.values():
        for series in SERIES:
            mine = by_series[(target.id, series)]
            views = _fresh_views(mine, target, now)
            state, since = verdict(views, quorum_size(len(views), quorum))
            overall = next((r for r in mine if r.vantage == QUORUM_VANTAGE), None)
            change = _set_overall(session, overall, target.id, series, state, since, now)
            if change is not None:
                _record_outage(session, target.id, series, change, now, views)
                transitions.append(TargetTransition(target.id, target.name, series, change))
    return transitions


def _fresh_views(rows: list[TargetState], target: Target, now: datetime) -> list[VantageView]:
    cutoff = now - timedelta(seconds=target.interval_s * STALE_INTERVALS + target.timeout_s)
    return [
        VantageView(r.vantage, r.state, r.since, r.last_probe_at)
        for r in rows
        if r.vantage != QUORUM_VANTAGE and r.last_probe_at is not None and r.last_probe_at >= cutoff
    ]


def _set_overall(
    session: Session,
    row: TargetState | None,
    target_id: int,
    series: str,
    state: str,
    since: datetime | None,
    now: datetime,
) -> Transition | None:
    previous = row.state if row is not None else "unknown"
    if state == "unknown" or state == previous:
        return None
    if row is None:
        row = TargetState(
            target_id=target_id,
            vantage=QUORUM_VANTAGE,
            series=series,
            consecutive_failures=0,
            consecutive_successes=0,
            detail={},
        )
        session.add(row)
    row.state, row.since, row.last_probe_at = state, since or now, now
    return Transition(previous, state, since or now)


def _record_outage(
    session: Session,
    target_id: int,
    series: str,
    change: Transition,
    now: datetime,
    views: list[VantageView],
) -> None:
    if change.state == DOWN:
        agreeing = sorted(v.vantage for v in views if v.state == DOWN)
        insert_ignoring_conflicts(
            session,
            Outage,
            [
                {
                    "target_id": target_id,
                    "series": series,
                    "start": change.at,
                    "end": None,
                    "confirmed_at": now,
                    "source": "probe",
                    "detail": {"vantages": agreeing},
                }
            ],
            ["target_id", "series", "start"],
        )
    elif change.state == UP and change.previous == DOWN:
        still_open = select(Outage).where(
            Outage.target_id == target_id, Outage.series == series, Outage.end.is_(None)
        )
        for outage in session.scalars(still_open):
            outage.end = max(outage.start, change.at)
