from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitor.alerts.routing import route, silenced
from monitor.alerts.rules import TargetFacts, fingerprint, from_incident, from_transition
from monitor.config import parse_config
from monitor.sla.maintenance import in_maintenance

T0 = datetime(2026, 11, 30, 12, tzinfo=UTC)
GPU = TargetFacts("gpu-0", "dcgm", "aws", "us-east-1", "us-east-1a", "h100")
JOB = TargetFacts("train", "heartbeat", None, None, None, None)


@pytest.mark.parametrize(
    ("target", "series", "state", "previous", "rule", "firing"),
    [
        pytest.param(GPU, "reachable", "down", "up", "target_down", True, id="down"),
        pytest.param(GPU, "reachable", "up", "down", "target_down", False, id="recovered"),
        pytest.param(GPU, "usable", "down", "up", "gpu_health", True, id="gpus-unusable"),
        pytest.param(JOB, "usable", "down", "up", "heartbeat_stalled", True, id="job-stalled"),
        pytest.param(GPU, "reachable", "up", "unknown", None, None, id="first-sight-is-no-news"),
    ],
)
def test_transitions_become_signals(
    target: TargetFacts,
    series: str,
    state: str,
    previous: str,
    rule: str | None,
    firing: bool | None,
) -> None:
    signals = from_transition(target, series, state, previous, T0)
    if rule is None:
        assert signals == []
        return
    assert [(s.rule, s.firing) for s in signals] == [(rule, firing)]


BOX = TargetFacts("train-8gpu", "heartbeat", None, None, None, None, gpus=8)
GPU_FAULT, STALLED = frozenset({"gpu_hardware"}), frozenset({"stalled_step"})


@pytest.mark.parametrize(
    ("target", "causes", "was", "fired", "resolved"),
    [
        pytest.param(BOX, STALLED, None, ["heartbeat_stalled"], [], id="stalled-step"),
        pytest.param(BOX, GPU_FAULT, None, ["gpu_health"], [], id="gpu-fault"),
        pytest.param(
            BOX, GPU_FAULT | STALLED, None, ["heartbeat_stalled", "gpu_health"], [], id="both"
        ),
        pytest.param(JOB, GPU_FAULT, None, ["gpu_health"], [], id="gpu-readings-without-gpus"),
        pytest.param(BOX, frozenset(), None, ["heartbeat_stalled"], [], id="cause-unknown"),
        pytest.param(
            BOX, GPU_FAULT, STALLED, ["gpu_health"], ["heartbeat_stalled"], id="step-resumed"
        ),
        pytest.param(
            BOX,
            GPU_FAULT,
            GPU_FAULT | STALLED,
            ["gpu_health"],
            ["heartbeat_stalled"],
            id="one-left",
        ),
        pytest.param(GPU, STALLED, None, ["gpu_health"], [], id="dcgm-is-always-gpu-health"),
    ],
)
def test_the_usable_rule_follows_the_cause(
    target: TargetFacts,
    causes: frozenset[str],
    was: frozenset[str] | None,
    fired: list[str],
    resolved: list[str],
) -> None:
    signals = from_transition(target, "usable", "down", "up", T0, causes=causes, was=was)
    assert [s.rule for s in signals if s.firing] == fired
    assert [s.rule for s in signals if not s.firing] == resolved
    for signal in signals:
        assert signal.fingerprint == fingerprint(signal.rule, {"target": target.name})
        if signal.firing and causes:
            assert signal.extra["cause"] == "+".join(sorted(causes))


def test_a_recovery_resolves_every_usable_rule_of_the_kind() -> None:
    signals = from_transition(BOX, "usable", "up", "down", T0)
    assert {(s.rule, s.firing) for s in signals} == {
        ("heartbeat_stalled", False),
        ("gpu_health", False),
    }


def test_fingerprints_are_stable_and_ignore_label_order() -> None:
    assert fingerprint("r", {"a": "1", "b": "2"}) == fingerprint("r", {"b": "2", "a": "1"})
    assert fingerprint("r", {"a": "1"}) != fingerprint("s", {"a": "1"})
    [down] = from_transition(GPU, "reachable", "down", "up", T0)
    [back] = from_transition(GPU, "reachable", "up", "down", T0 + timedelta(minutes=5))
    assert down.fingerprint == back.fingerprint
    assert (down.labels["provider"], down.labels["pool"]) == ("aws", "h100")


def test_incident_severity_follows_impact() -> None:
    signal = from_incident("aws", "ev-1", "EC2 API errors", "major", ["us-east-1"], True, T0, None)
    assert (signal.rule, signal.severity, signal.firing) == ("provider_incident", "critical", True)
    assert signal.labels == {"provider": "aws", "incident": "ev-1", "region": "us-east-1"}


CONFIG = parse_config("""
channels:
  - {name: pager, kind: pagerduty, url: "https://events.pagerduty.com/v2/enqueue", secret: k}
  - {name: chat, kind: slack, url: "https://hooks.slack.com/services/x"}
  - {name: audit, kind: webhook, url: "https://audit.example/hook"}
routes:
  - {match: {severity: critical}, channels: [pager]}
  - {match: {provider: aws}, channels: [chat], continue: false}
  - {match: {}, channels: [audit]}
maintenance:
  - {name: m, start: 2026-11-30T11:00:00Z, end: 2026-11-30T13:00:00Z, pool: h100}
silences:
  - {match: {target: gpu-9}, end: 2026-11-30T12:30:00Z}
""")


@pytest.mark.parametrize(
    ("labels", "channels"),
    [
        pytest.param({"severity": "critical", "provider": "aws"}, ["pager", "chat"], id="stop"),
        pytest.param({"severity": "warning", "provider": "gcp"}, ["audit"], id="fallthrough"),
        pytest.param({"severity": "critical", "provider": "gcp"}, ["pager", "audit"], id="both"),
    ],
)
def test_routes_match_labels_in_order(labels: dict[str, str], channels: list[str]) -> None:
    assert route(labels, CONFIG.routes, [c.name for c in CONFIG.channels]) == channels


def test_without_routes_every_channel_gets_it() -> None:
    assert route({"a": "b"}, [], ["x", "y"]) == ["x", "y"]


def test_silences_and_maintenance_mute_only_what_they_match_while_they_last() -> None:
    assert silenced({"target": "gpu-9"}, CONFIG.silences, T0)
    assert not silenced({"target": "gpu-9"}, CONFIG.silences, T0 + timedelta(hours=1))
    assert not silenced({"target": "gpu-1"}, CONFIG.silences, T0)
    assert in_maintenance({"pool": "h100", "target": "x"}, CONFIG.maintenance, T0)
    assert not in_maintenance({"pool": "a100"}, CONFIG.maintenance, T0)
    assert not in_maintenance({"pool": "h100"}, CONFIG.maintenance, T0 + timedelta(hours=2))
