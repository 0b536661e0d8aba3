"""Targets' SLA objectives as Sloth specs: the prometheus/v1 shape Sloth loads
(github.com/slok/sloth, pkg/prometheus/api/v1/v1.go: version, service, slos[] with name,
objective, sli.events.error_query/total_query using {{.window}}, alerting.name), queries
that Prometheus' own parser accepts."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from monitor.sla.openslo import DOWNTIME_METRIC, OBSERVED_METRIC, TargetObjective
from monitor.sla.policy_config import policy_from_config
from monitor.sla.sloth import sloth_specs, window_query
from monitor.sla.terms import BUILTIN_POLICIES
from tests.support import unavailable

LAMBDA = policy_from_config({"name": "lambda-h100", "provider": "lambda", "target_pct": 99.9})
OBJECTIVES = [
    TargetObjective("trainer-0", BUILTIN_POLICIES["aws-ec2-instance"], 15.0),
    TargetObjective("lambda-0", LAMBDA, 30.0),
    TargetObjective("trainer-1", BUILTIN_POLICIES["aws-ec2-instance"], 15.0),
]


def _specs() -> list[Any]:
    text = yaml.safe_dump_all(sloth_specs(OBJECTIVES), sort_keys=False, allow_unicode=True)
    return list(yaml.safe_load_all(text))


def _render(query: str, window: str = "5m") -> str:
    """What Sloth's Go template makes of a query: the window, and the string literal an
    escaped ``{{`` is written as."""
    return query.replace('{{"{{"}}', "\0").replace("{{.window}}", window).replace("\0", "{{")


def test_one_spec_per_provider_with_its_targets_slos() -> None:
    aws, lam = _specs()

    assert [s["version"] for s in (aws, lam)] == ["prometheus/v1", "prometheus/v1"]
    assert (aws["service"], lam["service"]) == ("aws", "lambda")
    assert [slo["name"] for slo in aws["slos"]] == ["trainer-0", "trainer-1"]
    assert [slo["objective"] for slo in aws["slos"] + lam["slos"]] == [99.5, 99.5, 99.9]
    assert lam["slos"][0]["labels"] == {"target": "lambda-0", "sla": "lambda-h100"}


def test_each_slo_has_the_events_sli_and_the_alerting_sloth_requires() -> None:
    [slo] = _specs()[1]["slos"]

    assert slo["sli"] == {
        "events": {
            "error_query": (
                f'sum(increase({DOWNTIME_METRIC}{{target="lambda-0"}}[{{{{.window}}}}]))'
            ),
            "total_query": (
                f'sum(increase({OBSERVED_METRIC}{{target="lambda-0"}}[{{{{.window}}}}]))'
            ),
        }
    }
    alerting = slo["alerting"]
    assert alerting["name"] == "SlamonSLOBurn"
    assert alerting["page_alert"] == {"labels": {"severity": "critical"}}
    assert alerting["ticket_alert"] == {"labels": {"severity": "warning"}}
    for spec in _specs():
        for each in spec["slos"]:
            assert {"name", "objective", "sli", "alerting"} <= set(each)
            assert 0 < each["objective"] <= 100
            assert re.fullmatch(r"[A-Za-z0-9][-A-Za-z0-9_.]*[A-Za-z0-9]", each["name"])


def test_a_target_name_with_template_braces_stays_itself_after_sloth_renders_it() -> None:
    query = window_query(DOWNTIME_METRIC, 'job {{x}} "a"')
    assert (
        _render(query) == f'sum(increase({DOWNTIME_METRIC}{{target="job {{{{x}}}} \\"a\\""}}[5m]))'
    )


def test_the_queries_rendered_for_a_window_are_promql_prometheus_accepts(tmp_path: Path) -> None:
    promtool = shutil.which("promtool") or "/usr/bin/promtool"
    if not Path(promtool).exists():
        unavailable("promtool", f"{promtool} is not installed (Debian's prometheus package)")
    weird = TargetObjective('job {{x}} "a"\\b', LAMBDA, 30.0)
    rules: list[dict[str, str]] = []
    for spec in sloth_specs([*OBJECTIVES, weird]):
        for slo in spec["slos"]:
            events = slo["sli"]["events"]
            expr = f"({_render(events['error_query'])}) / ({_render(events['total_query'])})"
            rules.append({"record": f"slamon:error_ratio_{len(rules)}", "expr": expr})
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "sloth", "rules": rules}]}))

    checked = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 4 rules found" in checked.stdout
