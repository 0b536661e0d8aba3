"""The quorum: every vantage's streak for a target becomes one verdict, and a changed verdict
opens or closes the target's outage. Beside the state machine (``state.py``) it drives; called
by ``record.record_round`` inside the round's transaction, over the rows that round loaded.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.db.dialect import among, insert_ignoring_conflicts
from monitor.db.models import Outage
from monitor.events.words import OutageChange
from monitor.probes.model import ProbeResult, cause_text, causes_of
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
    """A confirmed change of a target's (quorum) state, what alerts and reports react to; or,
    for an open usable outage, of why it is unusable (``was`` set, the state stays down).

    ``causes``: why the usable series went (or stays) down, from the result that confirmed it
    (``ProbeResult.causes``); ``error`` that result's message."""

    target_id: int
    target: str
    series: str
    transition: Transition
    causes: frozenset[str] = frozenset()
    error: str | None = None
    was: frozenset[str] | None = None  # a cause change: the causes before it


@dataclass(frozen=True, slots=True)
class Unusable:
    """Why a target's latest result in a round was reachable but not usable."""

    causes: frozenset[str]
    error: str | None
    at: datetime

    @classmethod
    def of(cls, results: Sequence[ProbeResult]) -> dict[int, Unusable]:
        """Each target's latest result's, for the targets whose latest is reachable but not
        usable."""
        latest: dict[int, ProbeResult] = {}
        for r in results:  # one pass: a round holds thousands of results, rarely an unusable one
            seen = latest.get(r.target_id)
            if seen is None or r.at >= seen.at:
                latest[r.target_id] = r
        return {
            tid: cls(frozenset(r.causes), r.error, r.at)
            for tid, r in latest.items()
            if r.ok is True and r.usable is False
        }


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
    unusable: Mapping[int, Unusable] | None = None,
) -> tuple[list[TargetTransition], list[tuple[int, OutageChange]]]:
    """Recompute each target's quorum verdict from every vantage; open/close outages on change.
    ``unusable`` (``Unusable.of`` the round's results) names why a usable outage opens, and
    changes the cause of one that stays open. The transitions (cause changes included), and
    the outages opened or closed (by target id)."""
    unusable = unusable or {}
    by_series: dict[tuple[int, str], list[StateRow]] = defaultdict(list)
    for row in states.values():
        by_series[(row.target_id, row.series)].append(row)
    transitions = []
    outages: list[tuple[int, OutageChange]] = []
    still_down: list[int] = []
    for target in targets.values():
        for series in SERIES:
            mine = by_series[(target.id, series)]
            views = _fresh_views(mine, target, now)
            state, since = verdict(views, quorum_size(len(views), quorum))
            change = _set_overall(states, target.id, series, state, since, now)
            why = unusable.get(target.id) if series == "usable" else None
            if change is None:
                if why is not None and _overall(states, target.id, series) == DOWN:
                    still_down.append(target.id)
                continue
            opening = why if change.state == DOWN else None
            for outage in _record_outage(session, target, series, change, now, views, opening):
                outages.append((target.id, outage))
            transitions.append(
                TargetTransition(
                    target.id,
                    target.name,
                    series,
                    change,
                    opening.causes if opening else frozenset(),
                    opening.error if opening else None,
                )
            )
    if still_down:
        transitions += _changed_causes(session, targets, still_down, unusable)
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


def _overall(states: dict[StateKey, StateRow], target_id: int, series: str) -> str:
    row = states.get((target_id, QUORUM_VANTAGE, series))
    return row.streak.state if row is not None else UNKNOWN


def _changed_causes(
    session: Session,
    targets: dict[int, TargetRow],
    ids: list[int],
    unusable: Mapping[int, Unusable],
) -> list[TargetTransition]:
    """For targets whose usable outage stays open: where the round's cause differs from the
    outage's (the step resumed but a GPU faulted, say), the outage row takes the new one and a
    cause change is returned. One read, and only for targets unusable in this round."""
    open_outages = select(Outage).where(
        among(session, Outage.target_id, ids), Outage.series == "usable", Outage.end.is_(None)
    )
    changes = []
    for outage in session.scalars(open_outages):
        why = unusable[outage.target_id]
        was = causes_of(outage.cause)
        if not why.causes or why.causes == was:
            continue
        outage.cause = cause_text(why.causes)
        outage.detail = _with_cause(outage.detail, why)
        change = Transition(DOWN, DOWN, why.at)
        target = targets[outage.target_id]
        changes.append(
            TargetTransition(target.id, target.name, "usable", change, why.causes, why.error, was)
        )
    return changes


MAX_CAUSE_HISTORY = 20  # an outage's cause changes kept in its detail; the oldest go first


def _with_cause(detail: dict[str, Any] | None, why: Unusable) -> dict[str, Any]:
    """An outage's ``detail`` with ``why`` as its cause (and in its history of causes)."""
    entry = {"at": why.at.isoformat(), "causes": sorted(why.causes), "error": why.error}
    history = [*(detail or {}).get("causes_history", []), entry][-MAX_CAUSE_HISTORY:]
    return {**(detail or {}), "causes": sorted(why.causes), "causes_history": history}


def _record_outage(
    session: Session,
    target: TargetRow,
    series: str,
    change: Transition,
    now: datetime,
    views: list[VantageView],
    why: Unusable | None = None,
) -> list[OutageChange]:
    """Open or close ``target``'s outage on ``change``; what it opened or closed. A usable
    outage opens with ``why`` as its cause."""
    target_id = target.id
    if change.state == DOWN:
        agreeing = sorted(v.vantage for v in views if v.state == DOWN)
        detail: dict[str, Any] = {"vantages": agreeing}
        if why is not None and why.causes:
            detail = _with_cause(detail, why)
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
                    "cause": cause_text(why.causes) if why is not None else None,
                    "source": "probe",
                    "detail": detail,
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
