"""Running a shard of probes concurrently: one shared probe client, bounded concurrency, a hard
deadline per probe. The runner owns time and failure; probes only probe."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime

from monitor.db.base import utcnow
from monitor.probes.model import ProbeResult, ProbeTarget
from monitor.probes.registry import PROBES
from monitor.probes.wire import ProbeClient

DEADLINE_SLACK_S = 0.5  # the runner's deadline is the probe's own timeout plus this
MAX_SLOT_WAIT_S = 10.0  # slots come at most a dispatch period ahead; more is a clock disagreement


def probe_client() -> ProbeClient:
    """What the probes of a worker share: the process's verifying TLS context and the user agent.
    Connections are not shared: every probe opens its own (see ``monitor.probes.wire``)."""
    return ProbeClient()


async def probe_one(target: ProbeTarget, client: ProbeClient) -> ProbeResult:
    """Run the target's probe under a hard deadline; a bug becomes a failed result, not a crash."""
    at = utcnow()
    try:
        # asyncio.timeout, not wait_for: on 3.11 wait_for costs one more task per probe
        async with asyncio.timeout(target.timeout_s + DEADLINE_SLACK_S):
            return await PROBES[target.kind](target, client)
    except TimeoutError:
        return ProbeResult(
            target.id,
            target.name,
            at,
            False,
            error_kind="timeout",
            error=f"no answer within {target.timeout_s:g} s",
        )
    except Exception as exc:  # a probe bug must not take the shard down with it
        return ProbeResult(
            target.id,
            target.name,
            at,
            False,
            error_kind="internal",
            error=f"{type(exc).__name__}: {exc}"[:500],
        )


async def probe_many(
    targets: Sequence[ProbeTarget],
    client: ProbeClient,
    concurrency: int = 100,
    start_at: Mapping[int, datetime] | None = None,
) -> list[ProbeResult]:
    """Probe ``targets`` with at most ``concurrency`` in flight, each not before its time in
    ``start_at`` (by target id; absent: at once); results in input order."""
    gate = asyncio.Semaphore(concurrency)
    slots = start_at or {}

    async def gated(target: ProbeTarget) -> ProbeResult:
        slot = slots.get(target.id)
        if slot is not None:
            wait = (slot - utcnow()).total_seconds()
            if wait > 0:
                await asyncio.sleep(min(wait, MAX_SLOT_WAIT_S))
        async with gate:
            return await probe_one(target, client)

    return list(await asyncio.gather(*(gated(t) for t in targets)))
