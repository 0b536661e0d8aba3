"""A probe round: probe a shard from one vantage, store what came back, and re-probe the
targets whose streak is unconfirmed until it is confirmed either way.

The path of a result (docs/architecture.md): ``Prober.round`` loads the shard's targets
(``record.load_probe_targets``), the runner probes them on the worker's probe loop
(``runner.probe_many``, each kind's ``probe``), and ``record.record_round`` stores them with the
streaks, the observed windows and the quorum's outages in one transaction, with the
``TransitionHook`` (the alert engine) inside that transaction. Database work runs in a thread
(``_blocking``), so the loop keeps probing other shards meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol, TypeVar

from sqlalchemy.orm import Session, sessionmaker

from monitor.db.base import utcnow
from monitor.db.engine import reading
from monitor.probes.kinds import kind_for_url, pushed
from monitor.probes.loop import ProbeLoop
from monitor.probes.model import PUSH_VANTAGE, ProbeResult, ProbeTarget
from monitor.probes.quorum import TargetTransition
from monitor.probes.record import RoundOutcome, StateMemory, load_probe_targets, record_round
from monitor.probes.runner import probe_client, probe_many, probe_one
from monitor.probes.schedule import Shard
from monitor.probes.wire import ProbeClient

T = TypeVar("T")
# how long before its first slot a shard reads its targets: enough to read them off the
# critical path, and late enough that the round of each target's previous slot has usually
# been recorded (a target probed every second is claimed up to two seconds ahead). A GPU
# verdict does not depend on it: recording judges the counters again against the memory
# stored then (``record._judged_on_stored_memory``)
LOAD_LEAD_S = 0.25


class RoundSettings(Protocol):
    """What a round needs of the ``probes:`` config (``ProbesConfig`` has these fields)."""

    @property
    def concurrency(self) -> int: ...
    @property
    def retry_interval(self) -> float: ...
    @property
    def canary(self) -> str | None: ...


class TransitionHook(Protocol):
    """Runs inside the transaction that stores a round's results, with the transitions they
    confirmed: the alert engine, so alerts commit with what caused them."""

    def __call__(self, session: Session, transitions: Sequence[TargetTransition], /) -> object: ...


@dataclass(frozen=True, slots=True)
class RoundReport:
    """The last result per target, its state at this vantage, and confirmed transitions."""

    results: tuple[ProbeResult, ...]
    states: dict[int, str]
    transitions: tuple[TargetTransition, ...]


@dataclass(frozen=True, slots=True)
class Prober:
    """One vantage's way of running rounds: where results are stored, how probes are run, and
    what confirmed transitions trigger. A worker keeps one; the CLI makes one per command.

    With ``loop`` (a worker's long-lived probe loop) a round runs on it; without, on a loop of
    its own for that round only. ``memory`` keeps the streak rows between rounds
    (``record.StateMemory``).
    """

    sessions: sessionmaker[Session]
    vantage: str
    settings: RoundSettings
    loop: ProbeLoop | None = None
    on_transitions: TransitionHook | None = None
    memory: StateMemory = field(default_factory=StateMemory, compare=False, repr=False)

    def round(self, shard: Shard | Sequence[int]) -> RoundReport:
        """Probe ``shard`` (or bare target ids, probed at once): each target first at its slot
        (at once if it has passed), then quick re-probes ``retry_interval`` apart while any
        streak is unconfirmed."""
        work = shard if isinstance(shard, Shard) else Shard(list(shard), {})
        if self.loop is not None:
            return self.loop.call(lambda client: self._run(work, client))
        return asyncio.run(self._run(work, probe_client()))

    async def _run(self, shard: Shard, client: ProbeClient) -> RoundReport:
        latest: dict[int, ProbeResult] = {}
        states: dict[int, str] = {}
        transitions: list[TargetTransition] = []
        if shard.slots:
            first = min(shard.slots.values())
            await asyncio.sleep(max(0.0, (first - utcnow()).total_seconds() - LOAD_LEAD_S))
        pending = await _blocking(self._load, shard.target_ids)
        # one pass, then enough quick re-probes to confirm a failure (or a recovery) either way
        passes = max((t.probes_to_confirm for t in pending), default=1)
        for attempt in range(passes):
            slots = shard.slots if attempt == 0 else None
            results = await probe_many(pending, client, self.settings.concurrency, slots)
            if self.settings.canary and not await canary_ok(self.settings.canary, client):
                results = [_unknown(r) for r in results]
            outcome = await _blocking(self._record, results)
            latest.update((r.target_id, r) for r in outcome.results)
            states.update(outcome.states)
            transitions.extend(outcome.transitions)
            retry = [t.id for t in pending if t.id in outcome.unconfirmed]
            if not retry or attempt == passes - 1:
                break
            await asyncio.sleep(self.settings.retry_interval)
            pending = await _blocking(self._load, retry)
        ordered = tuple(latest[i] for i in shard.target_ids if i in latest)
        return RoundReport(ordered, states, tuple(transitions))

    def _load(self, ids: list[int]) -> list[ProbeTarget]:
        with reading(self.sessions) as session:
            return load_probe_targets(session, ids, self.vantage)

    def _record(self, results: list[ProbeResult]) -> RoundOutcome:
        with self.sessions() as session, session.begin():
            return record_with_hook(
                session, self.vantage, results, utcnow(), self.on_transitions, self.memory
            )


def record_with_hook(
    session: Session,
    vantage: str,
    results: Sequence[ProbeResult],
    now: datetime,
    hook: TransitionHook | None,
    memory: StateMemory | None = None,
) -> RoundOutcome:
    """Store ``results`` and run ``hook`` on what they confirmed, in ``session``'s transaction."""
    outcome = record_round(session, vantage, results, now=now, memory=memory)
    if hook is not None and outcome.transitions:
        hook(session, outcome.transitions)
    return outcome


async def _blocking(work: Callable[..., T], *args: object) -> T:
    """Run database ``work`` in a thread: the probe loop keeps other shards' probes going."""
    return await asyncio.to_thread(work, *args)


async def canary_ok(canary: str, client: ProbeClient) -> bool:
    """Can this vantage reach the outside world at all? If not, our results mean nothing."""
    target = ProbeTarget(0, "canary", kind_for_url(canary), canary, timeout_s=3.0)
    return bool((await probe_one(target, client)).ok)


def _unknown(result: ProbeResult) -> ProbeResult:
    return replace(
        result,
        ok=None,
        usable=None,
        error_kind="vantage",
        error="this vantage's connectivity canary failed: result unknown",
    )


def pushed_round(
    session: Session, now: datetime, on_transitions: TransitionHook | None = None
) -> dict[str, RoundOutcome]:
    """Judge every pushed target (heartbeats) now and record the verdicts for its kind's
    vantage, with ``on_transitions`` in the same transaction — as a probe round does, so a
    stalled or silent job alerts like any other target. The outcome per kind."""
    return {
        kind.name: record_with_hook(
            session, PUSH_VANTAGE, kind.judge(session, now), now, on_transitions
        )
        for kind in pushed()
        if kind.judge is not None
    }
