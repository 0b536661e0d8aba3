"""Targets' SLA objectives as Sloth specs (``version: "prometheus/v1"``), for teams that generate
their SLO rules with Sloth (https://github.com/slok/sloth, ``pkg/prometheus/api/v1``).

One spec per provider (Sloth's ``service``), one SLO per target with an SLA policy: its
``objective`` is the policy's ``target_pct``, its events SLI the same counters the OpenSLO export
reads (``monitor.sla.openslo``): errors = the increase of ``slamon_target_downtime_seconds_total``,
total = the increase of ``slamon_target_observed_seconds_total`` over Sloth's ``{{.window}}``.
Sloth pages and tickets on its multi-window burn rates (``alerting``).

What Sloth cannot say: its SLO period is rolling (30 days unless Sloth is told otherwise), not
slamon's calendar month, and it has no credit tiers or exclusions; the spec is for alerting and
dashboards beside slamon's report, and slamon does not read it back (OpenSLO is the round trip).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from monitor.sla.openslo import (
    DOWNTIME_METRIC,
    OBSERVED_METRIC,
    TargetObjective,
    dns_label,
    selector,
)

VERSION = "prometheus/v1"
ALERT_NAME = "SlamonSLOBurn"


def sloth_specs(objectives: Sequence[TargetObjective]) -> list[dict[str, Any]]:
    """One Sloth spec per provider (sorted), each with its targets' SLOs in order."""
    providers = sorted({o.policy.provider for o in objectives})
    return [
        sloth_spec(provider, [o for o in objectives if o.policy.provider == provider])
        for provider in providers
    ]


def sloth_spec(provider: str, objectives: Sequence[TargetObjective]) -> dict[str, Any]:
    """The spec of one provider's targets."""
    return {
        "version": VERSION,
        "service": dns_label(provider),
        "labels": {"provider": provider},
        "slos": [_slo(o) for o in objectives],
    }


def window_query(metric: str, target: str) -> str:
    """How much ``metric`` grew for one target over Sloth's window (a Go template: a ``{{`` in
    the target's name is written as the template's own string literal)."""
    series = selector(metric, target).replace("{{", '{{"{{"}}')
    return f"sum(increase({series}[{{{{.window}}}}]))"


def _slo(objective: TargetObjective) -> dict[str, Any]:
    policy = objective.policy
    return {
        "name": dns_label(objective.target),
        "objective": policy.target_pct,
        "description": f"{objective.target} under {policy.title} ({policy.name})",
        "labels": {"target": objective.target, "sla": policy.name},
        "sli": {
            "events": {
                "error_query": window_query(DOWNTIME_METRIC, objective.target),
                "total_query": window_query(OBSERVED_METRIC, objective.target),
            }
        },
        "alerting": {
            "name": ALERT_NAME,
            "labels": {"category": "availability"},
            "annotations": {
                "summary": f"{objective.target} is spending its {policy.name} error budget fast"
            },
            "page_alert": {"labels": {"severity": "critical"}},
            "ticket_alert": {"labels": {"severity": "warning"}},
        },
    }
