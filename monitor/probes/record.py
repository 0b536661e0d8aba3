"""Writing a probe round: the raw results in one batched insert, the per-vantage streaks and
the observed windows, then the quorum (``quorum.py``) — all in the caller's transaction.

Written in Core, not through the ORM's unit of work: a round changes two state rows and one
observed window per target, and at thousands of probes a second the ORM's per-object bookkeeping
cost more than the probes themselves (bench/probe_throughput.py). Rows are read once as tuples,
changed in memory by the pure state machine, and written back with one executemany per statement.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Row, Table, insert, select, text
from sqlalchemy.orm import Session

from monitor.db.dialect import among, update_many
from monitor.db.models import ObservedWindow, Target, TargetState
from monitor.db.models import ProbeResult as ResultRow
from monitor.events import emitting
from monitor.probes.kinds import KINDS
from monitor.probes.model import ProbeResult, ProbeTarget
from monitor.probes.quorum import (
    SERIES,
    StateKey,
    StateRow,
    TargetRow,
    TargetTransition,
    Unusable,
    apply_quorum,
    told,
)
from monitor.probes.state import UP, Streak, advance

# what a usable state keeps of a result's detail for the next judgement: the GPU counters, and
# for pushed readings the verdict on the last one judged (probes/gpus/pushed.py)
REMEMBERED = ("gpu_counters", "gpu_verdict")
# when the probe whose detail is remembered ran: a reading older than that is not judged again
REMEMBERED_AT = "remembered_at"
RECORD_LOCK_SPACE = 0x51A3  # advisory lock namespace: (this, target id) guards recording

RESULTS: Table = ResultRow.__table__  # type: ignore[assignment]
STATES: Table = TargetState.__table__  # type: ignore[assignment]
STATE_COLUMNS = (
    "state",
    "since",
    "consecutive_failures",
    "consecutive_successes",
    "first_failure_at",
    "first_success_at",
    "last_probe_at",
)
STAMP = STATE_COLUMNS.index("last_probe_at")
WINDOWS: Table = ObservedWindow.__table__  # type: ignore[assignment]


class StateMemory:
    """What this process last read or wrote of each ``target_states`` row, kept between
    rounds so a round reads only the rows' freshness stamps (``last_probe_at``) instead of
    every column of every vantage's rows. A remembered row is used only while the database
    still holds its stamp: every write moves the stamp (a round's ``now``), so a row another
    process wrote, or a write whose transaction rolled back, is read again in full. Values are
    tuples in ``STATE_COLUMNS`` order (a dict per row would cost several times the memory)."""

    __slots__ = ("rows",)

    def __init__(self) -> None:
        self.rows: dict[StateKey, tuple[Any, ...]] = {}

    def recall(self, key: StateKey, stamp: datetime | None) -> dict[str, Any] | None:
        values = self.rows.get(key)
        if values is None or stamp is None or values[STAMP] != stamp:
            return None
        return dict(zip(STATE_COLUMNS, values, strict=True))

    def keep(self, key: StateKey, stored: dict[str, Any]) -> None:
        self.rows[key] = tuple(stored[name] for name in STATE_COLUMNS)


_memories: dict[str, StateMemory] = {}


def process_memory(vantage: str) -> StateMemory:
    """This process's memory of ``vantage``'s rounds, shared by its probe tasks (threads): a
    forked child starts with its parent's, which the stamps check like any other."""
    return _memories.setdefault(vantage, StateMemory())


@dataclass(frozen=True, slots=True)
class RoundOutcome:
    transitions: tuple[TargetTransition, ...]
    unconfirmed: frozenset[int]  # targets whose streak at this vantage needs a quick re-probe
    states: dict[int, str]  # reachable state at this vantage after the round, by target id
    results: tuple[ProbeResult, ...] = ()  # as recorded: judged against the stored memory


def load_probe_targets(
    session: Session, target_ids: Iterable[int], vantage: str
) -> list[ProbeTarget]:
    """Live targets by id, with what this vantage's last result remembered for the kinds that
    compare against it (dcgm's GPU counters)."""
    ids = list(target_ids)
    columns = (
        Target.id,
        Target.name,
        Target.kind,
        Target.url,
        Target.timeout_s,
        Target.settings,
        Target.gpus,
        Target.confirmations,
        Target.recovery_confirmations,
    )
    live = select(*columns).where(among(session, Target.id, ids), Target.retired_at.is_(None))
    rows = session.execute(live).all()
    baselines = _remembered(session, [r.id for r in rows if _remembers(r.kind)], vantage)
    return [_probe_target(row, baselines.get(row.id) or {}) for row in rows]


def _remembers(kind: str) -> bool:
    known = KINDS.get(kind)
    return known is not None and known.remembers_detail


def _remembered(session: Session, ids: Iterable[int], vantage: str) -> dict[int, dict[str, Any]]:
    """The detail this vantage remembered for ``ids`` (read only for kinds that use it)."""
    if not ids:
        return {}
    remembered = select(TargetState.target_id, TargetState.detail).where(
        among(session, TargetState.target_id, ids),
        TargetState.vantage == vantage,
        TargetState.series == "usable",
    )
    return dict(session.execute(remembered).all())


def _probe_target(row: Row[Any], state_detail: dict[str, Any]) -> ProbeTarget:
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
        recovery_confirmations=row.recovery_confirmations,
        gpu_baseline=state_detail.get("gpu_counters"),
    )


def result_rows(
    vantage: str, results: Sequence[ProbeResult], routine: frozenset[int] = frozenset()
) -> list[dict[str, Any]]:
    """The rows of ``results``, each marked: routine at the positions in ``routine`` (their
    minute's rollup will hold them), else kept whole (compaction moves them to the evidence)."""
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
            "routine": i in routine,
        }
        for i, r in enumerate(results)
    ]


def insert_results(session: Session, rows: list[dict[str, Any]]) -> None:
    """One batched insert; on PostgreSQL a COPY, which skips building an INSERT per row."""
    if session.get_bind().dialect.name != "postgresql":
        session.execute(insert(RESULTS), rows)
        return
    from psycopg import sql
    from psycopg.types.json import Json

    columns = list(rows[0])
    raw = session.connection().connection.driver_connection
    assert raw is not None
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(RESULTS.name), sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    with raw.cursor() as cursor, cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row([Json(v) if k == "detail" else v for k, v in row.items()])


def record_round(
    session: Session,
    vantage: str,
    results: Sequence[ProbeResult],
    *,
    now: datetime,
    quorum: int | None = None,
    memory: StateMemory | None = None,
) -> RoundOutcome:
    """Store ``results`` probed from ``vantage`` and apply what they confirm. With ``memory``
    (a worker's, kept across rounds) the state rows it still knows are not read again."""
    if not results:
        return RoundOutcome((), frozenset(), {})
    targets = _lock_targets(session, {r.target_id for r in results})
    results = _judged_on_stored_memory(session, vantage, results)
    states = _load_states(session, targets, vantage, memory)
    unconfirmed, routine = _advance_streaks(states, targets, vantage, results, now)
    insert_results(session, result_rows(vantage, results, routine))
    # a life that ended meanwhile is not observed past its end
    _extend_coverage(
        session, targets, [r for r in results if r.ok is not None and r.target_id in targets]
    )
    unusable = Unusable.of(results)
    transitions, outages = apply_quorum(session, states, targets, now, quorum, unusable)
    if outages:  # rare: most rounds change nothing
        emitting.outages_changed(session, told(outages, results), now)
    _write_states(session, states.values(), now, memory)
    reachable = {tid: states[(tid, vantage, "reachable")].streak.state for tid in targets}
    return RoundOutcome(tuple(transitions), frozenset(unconfirmed), reachable, tuple(results))


def lock_recording(session: Session, ids: Iterable[int]) -> list[int]:
    """Serialize with recording for ``ids`` (in id order), until the caller's transaction ends:
    two vantages recording at once must not each miss the other's uncommitted verdict, and a
    discovery sweep ending a life must not miss an outage a round is about to open. On
    PostgreSQL with transaction-scoped advisory locks, not row locks: a row lock on the target
    would stall (or make skip) the dispatcher claiming its next slot. SQLite writers already
    take turns. Returns the ids, ordered."""
    ordered = sorted(ids)
    if ordered and session.get_bind().dialect.name == "postgresql":
        session.execute(
            text(
                "SELECT pg_advisory_xact_lock(:space, id) "
                "FROM unnest(CAST(:ids AS integer[])) WITH ORDINALITY AS t(id, n) ORDER BY n"
            ),
            {"space": RECORD_LOCK_SPACE, "ids": ordered},
        )
    return ordered


def _lock_targets(session: Session, ids: set[int]) -> dict[int, TargetRow]:
    """The live targets among ``ids``, read once recording for them is serialized
    (:func:`lock_recording`): a target retired meanwhile gets no verdict and no outage (its
    life ended; the sweep that ended it has settled its outages)."""
    ordered = lock_recording(session, ids)
    columns = (
        Target.id,
        Target.name,
        Target.interval_s,
        Target.timeout_s,
        Target.confirmations,
        Target.recovery_confirmations,
    )
    live = select(*columns).where(among(session, Target.id, ordered), Target.retired_at.is_(None))
    return {row.id: TargetRow(*row) for row in session.execute(live)}


def _judged_on_stored_memory(
    session: Session, vantage: str, results: Sequence[ProbeResult]
) -> list[ProbeResult]:
    """``results`` with every verdict that compares against remembered detail
    (``ProbeResult.rejudge``: dcgm's GPU counters) judged again, in probe-time order, against
    the memory stored now that recording for its target is serialized — not the one its round
    read before probing, which an overlapping round (the previous slot's re-probes, a slot a
    second later) may have replaced since. A reading older than the stored memory keeps its
    round's verdict and is not remembered: the memory already holds a later reading."""
    pending = sorted(
        (i for i, r in enumerate(results) if r.rejudge is not None), key=lambda i: results[i].at
    )
    judged = list(results)
    if not pending:
        return judged
    stored = _remembered(session, {results[i].target_id for i in pending}, vantage)
    for i in pending:
        result, rejudge = results[i], results[i].rejudge
        assert rejudge is not None
        memory = stored.get(result.target_id) or {}
        since = memory.get(REMEMBERED_AT)
        if since is not None and datetime.fromisoformat(since) > result.at:
            kept = {k: v for k, v in result.detail.items() if k not in REMEMBERED}
            judged[i] = replace(result, detail=kept)
            continue
        judged[i] = rejudge(memory)
        stored[result.target_id] = {**memory, **_remembering(judged[i])}
    return judged


def _remembering(result: ProbeResult) -> dict[str, Any]:
    """What a usable state row keeps of ``result``'s detail, stamped with its probe time."""
    kept = {k: result.detail[k] for k in REMEMBERED if k in result.detail}
    return {**kept, REMEMBERED_AT: result.at.isoformat()}


def _load_states(
    session: Session, targets: dict[int, TargetRow], vantage: str, memory: StateMemory | None
) -> dict[StateKey, StateRow]:
    """Every vantage's rows for ``targets`` (the quorum needs them), plus new ones for this
    vantage where it has none yet: the stamps first, then in full only the rows ``memory``
    does not hold at that stamp. ``detail`` is not read: only a dcgm result changes it."""
    c = STATES.c
    stamps = select(c.target_id, c.vantage, c.series, c.last_probe_at).where(
        among(session, c.target_id, targets)
    )
    states: dict[StateKey, StateRow] = {}
    unknown: set[StateKey] = set()
    for target_id, at_vantage, series, stamp in session.execute(stamps):
        key = (target_id, at_vantage, series)
        stored = memory.recall(key, stamp) if memory is not None else None
        if stored is None:
            unknown.add(key)
        else:
            states[key] = StateRow(*key, _streak(stored), stamp, stored)
    if unknown:
        query = select(
            c.target_id, c.vantage, c.series, *(c[name] for name in STATE_COLUMNS)
        ).where(among(session, c.target_id, {key[0] for key in unknown}))
        for r in session.execute(query).all():
            key = (r.target_id, r.vantage, r.series)
            if key not in unknown:
                continue
            stored = dict(zip(STATE_COLUMNS, r[3:], strict=True))
            states[key] = StateRow(*key, _streak(stored), r.last_probe_at, stored)
            if memory is not None:
                memory.keep(key, stored)
    for target_id in targets:
        for series in SERIES:
            if (target_id, vantage, series) not in states:
                states[(target_id, vantage, series)] = StateRow(
                    target_id, vantage, series, Streak(), None, None, detail={}
                )
    return states


def _streak(stored: dict[str, Any]) -> Streak:
    return Streak(
        stored["state"],
        stored["since"],
        stored["consecutive_failures"],
        stored["consecutive_successes"],
        stored["first_failure_at"],
        stored["first_success_at"],
        stored["last_probe_at"],
    )


def _advance_streaks(
    states: dict[StateKey, StateRow],
    targets: dict[int, TargetRow],
    vantage: str,
    results: Sequence[ProbeResult],
    now: datetime,
) -> tuple[set[int], frozenset[int]]:
    """Feed each result to its two series' streaks. Returns the targets that need a quick
    re-probe, and the positions in ``results`` of the routine ones: a clean success at a
    vantage that was up in both series and had succeeded on the probe before (it changes
    nothing, confirms nothing a credit claim would cite; its minute's rollup counts it)."""
    unconfirmed: set[int] = set()
    routine: set[int] = set()
    for position in sorted(range(len(results)), key=lambda i: results[i].at):
        result = results[position]
        target = targets.get(result.target_id)
        if target is None or result.ok is None:
            continue  # retired meanwhile, or unknown (our own side failed): no verdict
        series_rows = [states[(target.id, vantage, series)] for series in SERIES]
        if _clean(result) and all(_up_on_a_success(row.streak) for row in series_rows):
            routine.add(position)
        for series, ok in (("reachable", result.ok), ("usable", bool(result.usable_ok))):
            row = states[(target.id, vantage, series)]
            row.streak, _ = advance(
                row.streak, ok, result.at, target.confirmations, target.recovery_confirmations
            )
            row.last_probe_at = max(result.at, now)  # when the vantage last reported (freshness)
            if series == "usable" and "gpu_counters" in result.detail:
                row.detail = _remembering(result)
            if row.streak.unconfirmed:
                unconfirmed.add(target.id)
    return unconfirmed, frozenset(routine)


def _up_on_a_success(streak: Streak) -> bool:
    """Before a probe: the series is up and its last verdict was a success."""
    return streak.state == UP and streak.successes > 0


def _clean(result: ProbeResult) -> bool:
    """A success with nothing to remember: reachable, usable where known, no error, not
    degraded."""
    return (
        result.ok is True
        and result.usable is not False
        and result.error_kind is None
        and result.error is None
        and not result.degraded
        and not result.causes
    )


def _write_states(
    session: Session, states: Iterable[StateRow], now: datetime, memory: StateMemory | None
) -> None:
    """New rows in one insert; changed rows in one executemany update per set of changed
    columns (a steady round changes only a success count and the freshness stamp, and binding
    four timestamps per row for nothing was a tenth of a round's cost). ``memory`` learns
    what was written, under the stamp written with it."""
    rows = list(states)
    details = _stored_details(session, [r for r in rows if r.stored and r.detail is not None])
    new: list[dict[str, Any]] = []
    changed: dict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        values = _state_values(row, now)
        if row.stored is None:
            key = {"target_id": row.target_id, "vantage": row.vantage, "series": row.series}
            new.append({**key, **values, "detail": row.detail or {}})
            if memory is not None:
                memory.keep((row.target_id, row.vantage, row.series), values)
            continue
        diff = {k: v for k, v in values.items() if v != row.stored[k]}
        if row.detail is not None:
            stored = details.get((row.target_id, row.vantage, row.series)) or {}
            diff["detail"] = {**stored, **row.detail}
        if diff:
            where = {"k_target_id": row.target_id, "k_vantage": row.vantage, "k_series": row.series}
            changed[tuple(diff)].append({**where, **diff})
            if memory is not None:
                memory.keep((row.target_id, row.vantage, row.series), values)
    if new:
        session.execute(insert(STATES), new)
    for batch in changed.values():
        update_many(session, STATES, batch)


def _stored_details(session: Session, rows: list[StateRow]) -> dict[StateKey, dict[str, Any]]:
    """The stored details of the rows this round gives new ones (dcgm), in one read."""
    if not rows:
        return {}
    c = STATES.c
    query = select(c.target_id, c.vantage, c.series, c.detail).where(
        among(session, c.target_id, {r.target_id for r in rows})
    )
    wanted = {(r.target_id, r.vantage, r.series) for r in rows}
    found = ((r.target_id, r.vantage, r.series, r.detail) for r in session.execute(query))
    return {(t, v, s): d for t, v, s, d in found if (t, v, s) in wanted}


def _state_values(row: StateRow, now: datetime) -> dict[str, Any]:
    streak = row.streak
    return {
        "state": streak.state,
        "since": streak.since or now,  # a new row that has no verdict yet
        "consecutive_failures": streak.failures,
        "consecutive_successes": streak.successes,
        "first_failure_at": streak.failure_started_at,
        "first_success_at": streak.success_started_at,
        "last_probe_at": row.last_probe_at,
    }


def _extend_coverage(
    session: Session, targets: dict[int, TargetRow], known: Sequence[ProbeResult]
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
    c = WINDOWS.c
    recent = (
        select(c.target_id, c.id, c.end)
        .where(among(session, c.target_id, latest), c.source == "probe", c.end >= horizon)
        .order_by(c.end)
    )
    windows = {tid: (wid, end) for tid, wid, end in session.execute(recent)}  # the latest wins
    grown, opened = [], []
    for target_id, at in latest.items():
        step = timedelta(seconds=targets[target_id].interval_s)
        window = windows.get(target_id)
        if window is not None and window[1] >= at - 2 * step:
            if at + step > window[1]:
                grown.append({"k_id": window[0], "end": at + step})
        else:
            opened.append(
                {"target_id": target_id, "start": at, "end": at + step, "source": "probe"}
            )
    if grown:
        update_many(session, WINDOWS, grown)
    if opened:
        session.execute(insert(WINDOWS), opened)
