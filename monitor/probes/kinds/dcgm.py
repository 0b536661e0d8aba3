"""DCGM probe: scrape an NVIDIA dcgm-exporter and judge whether the GPUs are usable.

Reachable = the exporter answered; usable = all expected GPUs present and no fatal signal since
the last scrape (XID and ECC read as changes against the remembered baseline).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from monitor.probes.gpus.counters import GpuCounters
from monitor.probes.gpus.dcgm_text import parse_dcgm
from monitor.probes.gpus.health import assess
from monitor.probes.gpus.readings import GpuSnapshot
from monitor.probes.kind import ProbeKind, UsableRule
from monitor.probes.kinds.http import HTTP_URL, fetch, status_ok
from monitor.probes.model import ProbeResult, ProbeTarget, UnusableCause
from monitor.probes.wire import ProbeClient

MAX_METRICS_BYTES = 4 * 1024 * 1024


async def probe(target: ProbeTarget, client: ProbeClient) -> ProbeResult:
    result, body = await fetch(target, client, MAX_METRICS_BYTES)
    if not result.ok or result.status_code is None:
        return result
    if not status_ok(result.status_code, target.expect_status):
        return result.failed("http_status", f"HTTP {result.status_code}")
    return judge(result, body, target)


def judge(result: ProbeResult, raw: bytes, target: ProbeTarget) -> ProbeResult:
    """The reachable result with the GPU verdict added (pure; tested on captured documents),
    judged against ``target.gpu_baseline``; recording judges it again (``ProbeResult.rejudge``)
    against the counters stored when it records."""
    try:
        snapshot = parse_dcgm(raw.decode("utf-8", errors="replace"))
    except ValueError as exc:  # it answered, so it is reachable; the GPUs cannot be vouched for
        return replace(
            result, usable=False, error_kind="parse", error=str(exc)[:500], causes=GPU_FAULT
        )
    reading = replace(result, gpus_seen=snapshot.gpus_seen)
    return _verdict(reading, snapshot, target.gpus, target.gpu_baseline)


def _verdict(
    reading: ProbeResult,
    snapshot: GpuSnapshot,
    expected_gpus: int,
    remembered: Mapping[str, Any] | None,
) -> ProbeResult:
    try:
        baseline = GpuCounters.from_json(remembered) if remembered else None
    except ValueError:
        baseline = None  # a corrupt memory only costs one scrape's change detection
    health = assess(snapshot, baseline, expected_gpus)
    return replace(
        reading,
        usable=health.usable,
        degraded=health.degraded,
        error_kind=None if health.usable else "gpu",
        error=None if health.usable else "; ".join(health.reasons)[:500],
        detail={"gpu_counters": health.counters.to_json(), "reasons": list(health.reasons)},
        causes=frozenset() if health.usable else GPU_FAULT,
        rejudge=partial(_rejudged, reading, snapshot, expected_gpus),
    )


def _rejudged(
    reading: ProbeResult, snapshot: GpuSnapshot, expected_gpus: int, stored: Mapping[str, Any]
) -> ProbeResult:
    """``_verdict`` against the detail recording found stored for the target."""
    return _verdict(reading, snapshot, expected_gpus, stored.get("gpu_counters"))


GPU_FAULT: frozenset[UnusableCause] = frozenset({"gpu_hardware"})  # unreadable counts too


KIND = ProbeKind(
    "dcgm",
    HTTP_URL,
    probe=probe,
    usable=(UsableRule("gpu_health", "warning", "is reachable but its GPUs are not usable"),),
    remembers_detail=True,
)
