"""Probe rounds and their schedule: which targets are due, probing a shard with quick
confirmation re-probes, judging heartbeats. Tasks and the CLI call these."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from sqlalchemy import Table, func, or_, select
from sqlalchemy.orm import Session, sessionmaker

from monitor.config.models import ProbesConfig
from monitor.db.base import utcnow
from monitor.db.dialect import update_many
from monitor.db.engine import READ_ONLY
from monitor.db.models import Heartbeat, Target, TargetState
from monitor.probes.loop import ProbeLoop
from monitor.probes.model import ProbeResult, ProbeTarget
from monitor.probes.runner import probe_client, probe_many, probe_one
from monitor.probes.store import RoundOutcome, TargetTransition, load_probe_targets, record_round
from monitor.probes.wire import ProbeClient

HEARTBEAT_VANTAGE = "push"
T = TypeVar("T")
SLOT_SPAN = timedelta(seconds=1)  # the slots one shard may span (see shards_by_slot)
TARGETS: Table = Target.__table__  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class RoundReport:
    """The last result per target, its state at this vantage, and confirmed transitions."""

    results: tuple[ProbeResult, ...]
    states: dict[int, str]
    transitions: tuple[TargetTransition, ...]


def next_due(previous: datetime | None, interval_s: float, now: datetime) -> datetime:
    """The next slot on the target's own grid after ``now``: no drift, no burst after a pause."""
    step = timedelta(seconds=interval_s)
    if previous is None or previous > now + step:
        return now + step
    missed = math.floor((now - previous) / step) + 1
    return previous + missed * step


GOLDEN = 0.6180339887498949  # consecutive ids land far apart in the interval


def first_slot(target_id: int, interval_s: float, now: datetime) -> datetime:
    """A new target's second slot: on its own phase in the interval, at least half an interval
    after its first probe (which runs at once). Targets added together (a config of thousands)
    so spread over the interval instead of being probed at the same instant every round, as
    Prometheus spreads its scrapes."""
    phase = (target_id * GOLDEN) % 1.0 * interval_s
    earliest = now.timestamp() + interval_s / 2
    k = math.ceil((earliest - phase) / interval_s)
    return datetime.fromtimestamp(k * interval_s + phase, UTC)


@dataclass(frozen=True, slots=True)
class Claim:
    """A target claimed for one slot: probe it at ``at`` (now, for a late one)."""

    target_id: int
    at: datetime


def claim_due_targets(
    session: Session, now: datetime, ahead: timedelta = timedelta(0)
) -> list[Claim]:
    """Live, probed targets whose slot falls before ``now + ahead``, moved to their next slot
    in the same transaction. On PostgreSQL the rows are locked FOR NO KEY UPDATE SKIP LOCKED:
    two dispatchers never claim one, and nothing else holds that lock for long (a shard
    recording its results takes advisory locks and the foreign keys' KEY SHARE, which this
    lock does not wait for, so a busy target is never skipped).

    Claiming ahead (the dispatcher asks for a period plus a second) lets a shard reach its
    worker before the slot and wait for it on the probe loop, instead of every probe landing one
    queue trip (and up to a dispatch period) after its slot. Core rows and one bulk update, not
    ORM objects: this runs for every target every interval.
    """
    due = (
        select(Target.id, Target.next_probe_at, Target.interval_s)
        .where(Target.retired_at.is_(None), Target.kind != "heartbeat")
        .where(or_(Target.next_probe_at.is_(None), Target.next_probe_at <= now + ahead))
        .order_by(Target.id)
        .with_for_update(skip_locked=True, key_share=True)
    )
    rows = session.execute(due).all()
    claims = [Claim(r.id, max(r.next_probe_at or now, now)) for r in rows]
    if rows:
        slots = [
            {
                "k_id": r.id,
                "next_probe_at": first_slot(r.id, r.interval_s, now)
                if r.next_probe_at is None
                else next_due(r.next_probe_at, r.interval_s, c.at),
            }
            for r, c in zip(rows, claims, strict=True)
        ]
        update_many(session, TARGETS, slots)
    return claims


def shards(items: Sequence[T], size: int) -> list[list[T]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def shards_by_slot(
    claims: Sequence[Claim], size: int, span: timedelta = SLOT_SPAN
) -> list[list[Claim]]:
    """Claims in slot order, cut into shards of at most ``size`` whose slots lie within
    ``span`` of the first: the probes of one shard run close together, and a round's targets
    are read and written in batches that match when they were probed."""
    found: list[list[Claim]] = []
    for claim in sorted(claims, key=lambda c: (c.at, c.target_id)):
        current = found[-1] if found else None
        if current is not None and len(current) < size and claim.at - current[0].at <= span:
            current.append(claim)
        else:
            found.append([claim])
    return found


def shard_message(claims: Sequence[Claim]) -> list[list[float]]:
    """A shard as the task takes it (JSON): ``[target id, slot as epoch seconds]`` pairs."""
    return [[c.target_id, c.at.timestamp()] for c in claims]


def read_shard(items: Sequence[int | Sequence[float]]) -> tuple[list[int], dict[int, datetime]]:
    """Target ids and their slots from a shard message; a bare id (an older message, or a
    shard from the CLI) is probed at once."""
    ids: list[int] = []
    slots: dict[int, datetime] = {}
    for item in items:
        if isinstance(item, int):
            ids.append(item)
            continue
        target_id, at = int(item[0]), datetime.fromtimestamp(float(item[1]), UTC)
        ids.append(target_id)
        slots[target_id] = at
    return ids, slots


OnTransitions = Callable[[Session, Sequence[TargetTransition]], object]


def probe_round(
    sessions: sessionmaker[Session],
    target_ids: Sequence[int],
    vantage: str,
    probes: ProbesConfig,
    loop: ProbeLoop | None = None,
    on_transitions: OnTransitions | None = None,
    slots: Mapping[int, datetime] | None = None,
) -> RoundReport:
    """Probe a shard from ``vantage``, store every result, and re-probe unconfirmed streaks after
    ``probes.retry_interval`` until they are confirmed either way. A target with a slot in
    ``slots`` is first probed at that time (at once if it has passed).

    With ``loop`` (a worker's long-lived probe loop) the round runs on it; without, on a loop of
    its own for this round only. ``on_transitions`` runs inside the transaction that stores the
    results (alerts commit with what caused them).
    """
    ids = list(target_ids)
    if loop is not None:
        return loop.call(
            lambda client: _round(sessions, ids, vantage, probes, client, on_transitions, slots)
        )

    client = probe_client()
    return asyncio.run(_round(sessions, ids, vantage, probes, client, on_transitions, slots))


async def _round(
    sessions: sessionmaker[Session],
    target_ids: list[int],
    vantage: str,
    probes: ProbesConfig,
    client: ProbeClient,
    on_transitions: OnTransitions | None = None,
    slots: Mapping[int, datetime] | None = None,
) -> RoundReport:
    latest: dict[int, ProbeResult] = {}
    states: dict[int, str] = {}
    transitions: list[TargetTransition] = []
    pending = await asyncio.to_thread(_load, sessions, target_ids, vantage)
    # one pass, then enough quick re-probes to confirm a failure (or a recovery) either way
    passes = max((t.confirmations for t in pending), default=1)
    for attempt in range(passes):
        start_at = slots if attempt == 0 else None
        results = await probe_many(pending, client, probes.concurrency, start_at)
        if probes.canary and not await _canary_ok(probes, client):
            results = [_unknown(r) for r in results]
        outcome = await asyncio.to_thread(_record, sessions, vantage, results, on_transitions)
        latest.update((r.target_id, r) for r in results)
        states.update(outcome.states)
        transitions.extend(outcome.transitions)
        retry = [t.id for t in pending if t.id in outcome.unconfirmed]
        if not retry or attempt == passes - 1:
            break
        await asyncio.sleep(probes.retry_interval)
        pending = await asyncio.to_thread(_load, sessions, retry, vantage)
    ordered = tuple(latest[i] for i in target_ids if i in latest)
    return RoundReport(ordered, states, tuple(transitions))


def _load(sessions: sessionmaker[Session], ids: list[int], vantage: str) -> list[ProbeTarget]:
    with sessions() as session:
        session.connection(execution_options=READ_ONLY)
        return load_probe_targets(session, ids, vantage)


def _record(
    sessions: sessionmaker[Session],
    vantage: str,
    results: list[ProbeResult],
    on_transitions: OnTransitions | None,
) -> RoundOutcome:
    with sessions() as session, session.begin():
        outcome = record_round(session, vantage, results, now=utcnow())
        if on_transitions is not None and outcome.transitions:
            on_transitions(session, outcome.transitions)
        return outcome


async def _canary_ok(probes: ProbesConfig, client: ProbeClient) -> bool:
    """Can this vantage reach the outside world at all? If not, our results mean nothing."""
    assert probes.canary is not None
    kind = "tcp" if probes.canary.startswith("tcp://") else "http"
    canary = ProbeTarget(0, "canary", kind, probes.canary, timeout_s=3.0)
    return bool((await probe_one(canary, client)).ok)


def _unknown(result: ProbeResult) -> ProbeResult:
    return replace(
        result,
        ok=None,
        usable=None,
        error_kind="vantage",
        error="this vantage's connectivity canary failed: result unknown",
    )


def heartbeat_round(
    session: Session, now: datetime, on_transitions: OnTransitions | None = None
) -> RoundOutcome:
    """Judge every heartbeat target now and record the verdicts for the push vantage, with
    ``on_transitions`` in the same transaction — as a probe round does, so a stalled or silent
    job alerts like any other target."""
    outcome = record_round(session, HEARTBEAT_VANTAGE, judge_heartbeats(session, now), now=now)
    if on_transitions is not None and outcome.transitions:
        on_transitions(session, outcome.transitions)
    return outcome


def judge_heartbeats(session: Session, now: datetime) -> list[ProbeResult]:
    """One synthetic result per live heartbeat target: down when no heartbeat came within its
    grace period (dated to when the grace ran out), unusable when its step stopped advancing."""
    targets = session.scalars(
        select(Target).where(Target.kind == "heartbeat", Target.retired_at.is_(None))
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
    stalled = _stalled_since(session, target, last, settings, now)
    if stalled is not None:
        return ProbeResult(
            target.id,
            target.name,
            now,
            True,
            usable=False,
            error_kind="body",
            error=f"step {last.step} has not advanced since {stalled.isoformat()}",
        )
    return ProbeResult(
        target.id, target.name, now, True, usable=True if last.step is not None else None
    )


def _already_failing(session: Session, target_id: int, since: datetime) -> bool:
    """Whether the push vantage has already recorded a failure from ``since`` on."""
    first = session.scalar(
        select(TargetState.first_failure_at).where(
            TargetState.target_id == target_id,
            TargetState.vantage == HEARTBEAT_VANTAGE,
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
