"""Running a shard of probes concurrently: one shared probe client, bounded concurrency, each
probe at its slot, a hard deadline over the shard. The runner owns time and failure; probes
only probe (each kind keeps its own timeout)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from monitor.db.base import utcnow
from monitor.probes.model import ProbeResult, ProbeTarget, failure
from monitor.probes.registry import PROBES
from monitor.probes.wire import ProbeClient

DEADLINE_SLACK_S = 0.5  # the shard's deadline leaves each probe its own timeout plus this
MAX_SLOT_WAIT_S = 10.0  # slots come at most a dispatch period ahead; more is a clock disagreement


def probe_client() -> ProbeClient:
    """What the probes of a worker share: the process's verifying TLS context and the user agent.
    Connections are not shared: every probe opens its own (see ``monitor.probes.wire``)."""
    return ProbeClient()


async def probe_one(target: ProbeTarget, client: ProbeClient) -> ProbeResult:
    """Run the target's probe; a bug becomes a failed result, not a crash. Every probe kind
    keeps its own timeout; ``probe_many`` holds the hard deadline over them all."""
    at = utcnow()
    try:
        return await PROBES[target.kind](target, client)
    except Exception as exc:  # a probe bug must not take the shard down with it
        return failure(target, at, "internal", f"{type(exc).__name__}: {exc}"[:500])


def overdue(target: ProbeTarget, at: datetime) -> ProbeResult:
    """The result of a probe (due at ``at``) still running at the shard's deadline."""
    return failure(target, at, "timeout", f"no answer within {target.timeout_s:g} s")


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

    def wait_for_slot(target: ProbeTarget) -> float:
        slot = slots.get(target.id)
        return 0.0 if slot is None else min(max(0.0, (slot - now).total_seconds()), MAX_SLOT_WAIT_S)

    async def gated(target: ProbeTarget, wait: float) -> ProbeResult:
        if wait > 0:
            await asyncio.sleep(wait)
        async with gate:
            return await probe_one(target, client)

    waits = [wait_for_slot(t) for t in targets]
    tasks = [asyncio.ensure_future(gated(t, w)) for t, w in zip(targets, waits, strict=True)]
    # the gate may queue probes behind each other: each batch of ``concurrency`` gets its time
    batches = -(-len(targets) // concurrency)
    longest = max(t.timeout_s for t in targets) + DEADLINE_SLACK_S
    _done, late = await asyncio.wait(tasks, timeout=max(waits) + batches * longest)
    for task in late:
        task.cancel()
    if late:
        await asyncio.wait(late)
    return [
        overdue(t, now + timedelta(seconds=w)) if task in late else task.result()
        for t, w, task in zip(targets, waits, tasks, strict=True)
    ]
