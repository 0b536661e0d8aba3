"""Can the configured probing even see an SLA breach in time? (pure)

Worst case, an outage starts just after a probe: it is seen one interval plus a timeout later,
then confirmed by ``confirmations - 1`` quick re-probes. If that alone exceeds the downtime the
target's SLA allows in a month, the monitor cannot tell a breach from a blip.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import timedelta

from monitor.config.durations import format_duration
from monitor.config.models import Config, TargetConfig
from monitor.sla.policy import SlaPolicy

MONTH = timedelta(days=30)


def worst_case_detection(target: TargetConfig, retry_interval: float) -> timedelta:
    seconds = target.interval + target.timeout
    seconds += (target.confirmations - 1) * (retry_interval + target.timeout)
    return timedelta(seconds=seconds)


def allowed_downtime(policy: SlaPolicy) -> timedelta:
    """The downtime a 30-day month may hold before the policy's target is missed."""
    return MONTH * (1 - policy.target_pct / 100)


def detection_warnings(config: Config, policies: Mapping[str, SlaPolicy]) -> Iterator[str]:
    for i, target in enumerate(config.targets):
        policy = policies.get(target.sla or "")
        if policy is None:
            continue
        detection = worst_case_detection(target, config.probes.retry_interval)
        budget = allowed_downtime(policy)
        if detection > budget:
            yield (
                f"targets[{i}] ({target.name}): worst-case detection "
                f"{format_duration(detection.total_seconds())} exceeds the "
                f"{format_duration(budget.total_seconds())} a month {policy.name} "
                f"({policy.target_pct}%) allows: probe more often or confirm faster"
            )
