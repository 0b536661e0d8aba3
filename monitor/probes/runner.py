"""Running a shard of probes concurrently: one shared client, bounded concurrency, a hard
deadline per probe. The runner owns time and failure; probes only probe."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import httpx

from monitor.db.base import utcnow
from monitor.probes.model import ProbeResult, ProbeTarget
from monitor.probes.registry import PROBES

DEADLINE_SLACK_S = 0.5  # the runner's deadline is the probe's own timeout plus this


def probe_client(max_connections: int = 200) -> httpx.AsyncClient:
    """The one client a shard shares. Keep-alive reuse is on: a dead instance still fails on the
    reused connection, and not paying a handshake per probe is what lets one worker probe
    thousands of targets (issue 8 measures it)."""
    limits = httpx.Limits(
        max_connections=max_connections, max_keepalive_connections=max_connections
    )
    return httpx.AsyncClient(
        limits=limits, follow_redirects=False, verify=True, headers={"User-Agent": "slamon-probe"}
    )


async def probe_one(target: ProbeTarget, client: httpx.AsyncClient) -> ProbeResult:
    """Run the target's probe under a hard deadline; a bug becomes a failed result, not a crash."""
    at = utcnow()
    try:
        return await asyncio.wait_for(
            PROBES[target.kind](target, client), target.timeout_s + DEADLINE_SLACK_S
        )
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
    targets: Sequence[ProbeTarget], client: httpx.AsyncClient, concurrency: int = 100
) -> list[ProbeResult]:
    """Probe ``targets`` with at most ``concurrency`` in flight; results in input order."""
    gate = asyncio.Semaphore(concurrency)

    async def gated(target: ProbeTarget) -> ProbeResult:
        async with gate:
            return await probe_one(target, client)

    return list(await asyncio.gather(*(gated(t) for t in targets)))
