from __future__ import annotations

from datetime import timedelta

from monitor.config import parse_config
from monitor.config.detection import allowed_downtime, detection_warnings, worst_case_detection
from monitor.sla.terms import BUILTIN_POLICIES


def test_99_99_allows_about_four_minutes_a_month() -> None:
    budget = allowed_downtime(BUILTIN_POLICIES["aws-ec2-region"])
    assert timedelta(minutes=4, seconds=19) <= budget <= timedelta(minutes=4, seconds=20)


def test_detection_is_interval_timeout_and_confirmation_reprobes() -> None:
    target = "{name: t, kind: tcp, url: 'tcp://h:1', interval: 60, timeout: 5, confirmations: 3}"
    config = parse_config(f"targets: [{target}]")
    assert worst_case_detection(config.targets[0], 1.0) == timedelta(seconds=60 + 5 + 2 * (1 + 5))


def test_only_targets_that_cannot_see_a_breach_in_time_are_warned_about() -> None:
    config = parse_config("""
targets:
  - {name: slow, kind: tcp, url: "tcp://h:1", interval: 5m, sla: aws-ec2-region}
  - {name: fast, kind: tcp, url: "tcp://h:1", interval: 15s, sla: aws-ec2-region}
  - {name: lax, kind: tcp, url: "tcp://h:1", interval: 5m, sla: aws-ec2-instance}
""")
    [warning] = detection_warnings(config, BUILTIN_POLICIES)
    assert warning.startswith("targets[0] (slow): worst-case detection 5m11s exceeds the 4m19s")
