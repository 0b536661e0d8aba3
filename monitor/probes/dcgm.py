"""DCGM probe: scrape an NVIDIA dcgm-exporter and judge whether the GPUs are usable.

Reachable = the exporter answered; usable = all expected GPUs present and no fatal signal since
the last scrape (XID and ECC read as changes against the remembered baseline).
"""

from __future__ import annotations

import time

import httpx

from monitor.db.base import utcnow
from monitor.probes.gpu import GpuCounters, assess, parse_dcgm
from monitor.probes.http import status_ok
from monitor.probes.model import ProbeResult, ProbeTarget

MAX_METRICS_BYTES = 4 * 1024 * 1024


async def probe(target: ProbeTarget, client: httpx.AsyncClient) -> ProbeResult:
    assert target.url is not None
    at, start = utcnow(), time.perf_counter()
    try:
        reply = await client.get(target.url, timeout=target.timeout_s)
    except httpx.TimeoutException:
        return ProbeResult(
            target.id,
            target.name,
            at,
            False,
            error_kind="timeout",
            error=f"no answer within {target.timeout_s:g} s",
        )
    except httpx.TransportError as exc:
        return ProbeResult(
            target.id,
            target.name,
            at,
            False,
            error_kind="connect",
            error=f"{type(exc).__name__}: {exc}"[:500],
        )
    latency = (time.perf_counter() - start) * 1000
    result = ProbeResult(target.id, target.name, at, True, latency, reply.status_code)
    if not status_ok(reply.status_code, target.expect_status):
        return result.failed("http_status", f"HTTP {reply.status_code}")
    return judge(result, reply.content[:MAX_METRICS_BYTES], target)


def judge(result: ProbeResult, raw: bytes, target: ProbeTarget) -> ProbeResult:
    """The reachable result with the GPU verdict added (pure; tested on captured documents)."""
    from dataclasses import replace

    try:
        snapshot = parse_dcgm(raw.decode("utf-8", errors="replace"))
    except ValueError as exc:  # it answered, so it is reachable; the GPUs cannot be vouched for
        return replace(result, usable=False, error_kind="parse", error=str(exc)[:500])
    try:
        baseline = GpuCounters.from_json(target.gpu_baseline) if target.gpu_baseline else None
    except ValueError:
        baseline = None  # a corrupt memory only costs one scrape's change detection
    health = assess(snapshot, baseline, target.gpus)
    return replace(
        result,
        usable=health.usable,
        degraded=health.degraded,
        gpus_seen=snapshot.gpus_seen,
        error_kind=None if health.usable else "gpu",
        error=None if health.usable else "; ".join(health.reasons)[:500],
        detail={"gpu_counters": health.counters.to_json(), "reasons": list(health.reasons)},
    )
