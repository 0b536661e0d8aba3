"""Running a shard of probes concurrently: one shared probe client, bounded concurrency, each
probe at its slot, a hard deadline over the shard. The runner owns time and failure; probes
only probe (each kind keeps its own timeout)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from monitor.db.base import utcnow
from monitor.probes.kind import Probe
from monitor.probes.kinds import KINDS
from monitor.probes.model import ProbeResult, ProbeTarget, failure
from monitor.probes.wire import ProbeClient

DEADLINE_SLACK_S = 0.5  # the shard's deadline leaves each probe its own timeout plus this
# a deadline that fires this much later than set means this process could not keep time (a cold
# start, a starved CPU): what it cut short says nothing about the targets
LATE_DEADLINE_S = 0.5
MAX_SLOT_WAIT_S = 10.0  # slots come at most a dispatch period ahead; more is a clock disagreement


def probe_client() -> ProbeClient:
    """What the probes of a worker share: the process's verifying TLS context and the user agent.
    Connections are not shared: every probe opens its own (see ``monitor.probes.wire``)."""
    return ProbeClient()


async def probe_one(target: ProbeTarget, client: ProbeClient) -> ProbeResult:
    """Run the target's probe; a bug becomes a failed result, not a crash. Every probe kind
    keeps its own timeout; ``probe_many`` holds the hard deadline over them all."""
    at = utcnow()
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        result = await _probe_of(target.kind)(target, client)
    except Exception as exc:  # a probe bug must not take the shard down with it
        return failure(target, at, "internal", f"{type(exc).__name__}: {exc}"[:500])
    late = loop.time() - started - target.timeout_s
    if result.error_kind == "timeout" and late > LATE_DEADLINE_S:
        # the timer fired this late because the process was starved, not because the target
        # was silent: an answer may well be waiting unread in the socket
        return unjudged(target, result.at, f"this vantage was {late:.1f} s behind its own timeout")
    return result


def _probe_of(kind: str) -> Probe:
    probe = KINDS[kind].probe
    if probe is None:
        raise ValueError(f"{kind} targets are pushed, not probed")
    return probe


def overdue(target: ProbeTarget, at: datetime) -> ProbeResult:
    """The result of a probe (due at ``at``) still running at the shard's deadline."""
    return failure(target, at, "timeout", f"no answer within {target.timeout_s:g} s")


def unjudged(target: ProbeTarget, at: datetime, why: str) -> ProbeResult:
    """A probe this vantage could not run properly: unknown, never a failure of the target
    (a false ``target_down`` costs as much trust as a missed one)."""
    return ProbeResult(target.id, target.name, at, None, error_kind="vantage", error=why)


def cut_short(target: ProbeTarget, at: datetime, ran_s: float | None, late_s: float) -> ProbeResult:
    """What a probe cut at the shard's deadline tells: a timeout only when it ran its whole
    timeout on a process that kept time; else nothing (it never got the gate, or the deadline
    itself fired ``late_s`` late because this process was starved)."""
    if ran_s is None:
        return unjudged(target, at, "this vantage never got to run the probe before its deadline")
    if late_s > LATE_DEADLINE_S:
        return unjudged(target, at, f"this vantage was {late_s:.1f} s behind its own deadline")
    if ran_s < target.timeout_s:
        return unjudged(target, at, f"this vantage ran the probe only {ran_s:.1f} s")
    return overdue(target, at)


async def probe_many(
    targets: Sequence[ProbeTarget],
    client: ProbeClient,
    concurrency: int = 100,
    start_at: Mapping[int, datetime] | None = None,
) -> list[ProbeResult]:
    """Probe ``targets`` with at most ``concurrency`` in flight, each not before its time in
    ``start_at`` (by target id; absent: at once); results in input order.

    One deadline for the shard, not a timer per probe (a tenth of a probe's CPU): whatever still
    runs when the last probe should have ended by its own timeout (plus slack) is cancelled and
    reported as a timeout.
    """
    if not targets:
        return []
    gate = asyncio.Semaphore(concurrency)
    slots = start_at or {}
    now = utcnow()
    loop = asyncio.get_running_loop()
    began: dict[int, float] = {}  # by position in ``targets``: when its probe got the gate

    def wait_for_slot(target: ProbeTarget) -> float:
        slot = slots.get(target.id)
        return 0.0 if slot is None else min(max(0.0, (slot - now).total_seconds()), MAX_SLOT_WAIT_S)

    async def gated(position: int, target: ProbeTarget, wait: float) -> ProbeResult:
        if wait > 0:
            await asyncio.sleep(wait)
        async with gate:
            began[position] = loop.time()
            return await probe_one(target, client)

    waits = [wait_for_slot(t) for t in targets]
    tasks = [
        asyncio.ensure_future(gated(i, t, w))
        for i, (t, w) in enumerate(zip(targets, waits, strict=True))
    ]
    # the gate may queue probes behind each other: each batch of ``concurrency`` gets its time
    batches = -(-len(targets) // concurrency)
    longest = max(t.timeout_s for t in targets) + DEADLINE_SLACK_S
    timeout = max(waits) + batches * longest
    deadline = loop.time() + timeout
    _done, late = await asyncio.wait(tasks, timeout=timeout)
    cut_at = loop.time()
    for task in late:
        task.cancel()
    if late:
        await asyncio.wait(late)
    behind = max(0.0, cut_at - deadline) if late else 0.0
    return [
        cut_short(t, now + timedelta(seconds=w), _ran(began.get(i), cut_at), behind)
        if task in late
        else task.result()
        for i, (t, w, task) in enumerate(zip(targets, waits, tasks, strict=True))
    ]


def _ran(began: float | None, cut_at: float) -> float | None:
    return None if began is None else cut_at - began
