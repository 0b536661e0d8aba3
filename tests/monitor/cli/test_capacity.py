"""How many probe processes `slamon run` starts (monitor/cli/capacity.py): the configured probe
load, and one process per PROBES_PER_PROCESS of it, never more than the cores."""

from __future__ import annotations

from monitor.cli.capacity import PROBES_PER_PROCESS, configured_probe_rate, probe_processes_for
from monitor.config import parse_config


def test_probe_processes_follow_the_configured_load_up_to_the_cores() -> None:
    assert probe_processes_for(0.0, 2) == 1  # nothing configured: one, for API targets
    assert probe_processes_for(200.0, 2) == 1  # 1,000 targets every 5 s
    assert probe_processes_for(PROBES_PER_PROCESS + 1, 2) == 2
    assert probe_processes_for(3_000.0, 2) == 2  # never more than the cores
    assert probe_processes_for(3_000.0, 16) == 3


def test_the_configured_load_counts_probed_targets_by_their_intervals() -> None:
    config = parse_config(
        """
targets:
  - {name: a, kind: http, url: "http://10.0.0.1/", interval: 5}
  - {name: b, kind: tcp, url: "tcp://10.0.0.2:22", interval: 1}
  - {name: job, kind: heartbeat, interval: 60}
"""
    )
    assert configured_probe_rate(config) == 1.2  # the heartbeat is pushed, not probed
