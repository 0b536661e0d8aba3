"""How many probe processes `slamon run` starts: the probe load the config asks for, and the
processes that keep it on the cores there are."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from monitor.config import Config

# One probe process keeps about 1,500 probes a second on one core (bench/probe_throughput.py);
# sized with headroom for confirmation re-probes and the round's database work.
PROBES_PER_PROCESS = 1_200


def configured_probe_rate(config: Config) -> float:
    """Probes a second the config asks for: one per interval per probed target (the API's
    targets come on top; the supervisor sizes for the config's)."""
    from monitor.probes.kinds import probed

    kinds = set(probed())
    return sum(1.0 / t.interval for t in config.targets if t.kind in kinds)


def dedicated_probe_processes(probes_per_second: float, cores: int) -> int:
    """Probe processes beside the main one: none while one core keeps the schedule (the main
    process probes), else as many as :func:`probe_processes_for` says."""
    if probes_per_second <= PROBES_PER_PROCESS:
        return 0
    return probe_processes_for(probes_per_second, cores)


def probe_processes_for(probes_per_second: float, cores: int) -> int:
    """Probe processes for a load: one until one core cannot keep the schedule, then one per
    ``PROBES_PER_PROCESS``, never more than the cores (a second process on the same core only
    adds its memory)."""
    wanted = max(1, math.ceil(probes_per_second / PROBES_PER_PROCESS))
    return max(1, min(wanted, cores))
