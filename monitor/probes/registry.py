"""Probe kinds by name (STYLE.md §2). ``heartbeat`` targets are pushed, not probed: they are
judged from stored heartbeats. A cloud-API state check (instance running/impaired) plugs in
here as one more async ``probe(target, client)`` without a hard SDK dependency."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from monitor.probes import dcgm, http, tcp
from monitor.probes.model import ProbeResult, ProbeTarget
from monitor.probes.wire import ProbeClient

Probe = Callable[[ProbeTarget, ProbeClient], Awaitable[ProbeResult]]

PROBES: dict[str, Probe] = {
    "http": http.probe,
    "tcp": tcp.probe,
    "dcgm": dcgm.probe,
}
