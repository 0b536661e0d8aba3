"""The quorum: every vantage's streak for a target becomes one verdict, and a changed verdict
opens or closes the target's outage. Beside the state machine (``state.py``) it drives; called
by ``record.record_round`` inside the round's transaction, over the rows that round loaded.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.db.dialect import insert_ignoring_conflicts
from monitor.db.models import Outage
from monitor.events.words import OutageChange
from monitor.probes.model import ProbeResult
from monitor.probes.state import (
    DOWN,
    UNKNOWN,
    UP,
    Streak,
    Transition,
    VantageView,
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
class TargetRow:
    """What recording and the quorum need of a target row."""

    id: int
    name: str
    interval_s: float
    timeout_s: float
    confirmations: int
    recovery_confirmations: int | None = None  # None: as many as ``confirmations``


@dataclass(slots=True)
class StateRow:
    """One ``target_states`` row as read (``stored``: what the database holds, None for a new
    row), and what this round made of it."""

    target_id: int
    vantage: str
    series: str
    streak: Streak
    last_probe_at: datetime | None
    stored: dict[str, Any] | None
    detail: dict[str, Any] | None = None  # set only when this round changes it


StateKey = tuple[int, str, str]  # target id, vantage, series


def apply_quorum(
    session: Session,
    states: dict[StateKey, StateRow],
    targets: dict[int, TargetRow],
    now: datetime,
    quorum: int | None,
) -> tuple[list[TargetTransition], list[tuple[int, OutageChange]]]:
    """Recompute each target's quorum verdict from every vantage; open/close outages on change.
    The transitions, and the outages opened or closed (by target id)."""
    by_series: dict[tuple[int, str], list[StateRow]] = defaultdict(list)
    for row in states.values():
        by_series[(row.target_id, row.series)].append(row)
    transitions = []
    outages: list[tuple[int, OutageChange]] = []
    for target in targets.values():
        for series in SERIES:
            mine = by_series[(target.id, series)]
            views = _fresh_views(mine, target, now)
            state, since = verdict(views, quorum_size(len(views), quorum))
            change = _set_overall(states, target.id, series, state, since, now)
            if change is not None:
                for outage in _record_outage(session, target, series, change, now, views):
                    outages.append((target.id, outage))
                transitions.append(TargetTransition(target.id, target.name, series, change))
    return transitions, outages


def told(
    outages: list[tuple[int, OutageChange]], results: Sequence[ProbeResult]
) -> list[OutageChange]:
    """The outages worth a console line, with the error that opened them. The usable series
    of a kind that cannot tell usable from reachable (http, tcp) only mirrors the reachable
    one: its outage is the same event, so it is not told twice."""
    latest = {r.target_id: r for r in sorted(results, key=lambda r: r.at)}
    told = []
    for target_id, outage in outages:
        result = latest.get(target_id)
        if outage.series == "usable" and (result is None or result.usable is None):
            continue
        if outage.opened and result is not None and result.ok is not True:
            outage = replace(outage, error=result.error or result.error_kind)
        elif outage.opened and result is not None and result.usable is False:
            outage = replace(outage, error=result.error or "not usable")
        told.append(outage)
    return told


def _fresh_views(rows: list[StateRow], target: TargetRow, now: datetime) -> list[VantageView]:
    cutoff = now - timedelta(seconds=target.interval_s * STALE_INTERVALS + target.timeout_s)
    return [
        VantageView(r.vantage, r.streak.state, r.streak.since, r.last_probe_at)
        for r in rows
        if r.vantage != QUORUM_VANTAGE and r.last_probe_at is not None and r.last_probe_at >= cutoff
    ]


def _set_overall(
    states: dict[StateKey, StateRow],
    target_id: int,
    series: str,
    state: str,
    since: datetime | None,
    now: datetime,
) -> Transition | None:
    """Move the quorum's row (vantage ``*``) to ``state``; the transition, if it is one."""
    key = (target_id, QUORUM_VANTAGE, series)
    row = states.get(key)
    previous = row.streak.state if row is not None else UNKNOWN
    if state in (UNKNOWN, previous):
        return None
    if row is None:
        row = states[key] = StateRow(target_id, QUORUM_VANTAGE, series, Streak(), now, None, {})
    row.streak = replace(row.streak, state=state, since=since or now)
    row.last_probe_at = now
    return Transition(previous, state, since or now)


def _record_outage(
    session: Session,
    target: TargetRow,
    series: str,
    change: Transition,
    now: datetime,
    views: list[VantageView],
) -> list[OutageChange]:
    """Open or close ``target``'s outage on ``change``; what it opened or closed."""
    target_id = target.id
    if change.state == DOWN:
        agreeing = sorted(v.vantage for v in views if v.state == DOWN)
        opened = insert_ignoring_conflicts(
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
        return [OutageChange(target.name, series, True, change.at)] if opened else []
    closed = []
    if change.state == UP and change.previous == DOWN:
        still_open = select(Outage).where(
            Outage.target_id == target_id, Outage.series == series, Outage.end.is_(None)
        )
        for outage in session.scalars(still_open):
            outage.end = max(outage.start, change.at)
            lasted = (outage.end - outage.start).total_seconds()
            closed.append(OutageChange(target.name, series, False, outage.end, None, lasted))
    return closed
