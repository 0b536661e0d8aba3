from __future__ import annotations

from pathlib import Path

import pytest

from monitor.config import load_config, parse_config
from monitor.config.durations import format_duration, parse_duration
from monitor.config.models import Config, TargetConfig
from monitor.errors import ConfigError

DESIGN_EXAMPLE = """
providers:
  - slug: aws
    regions: [us-east-1, us-west-2]
targets:
  - name: trainer-0
    kind: http
    url: http://10.0.0.5:8000/healthz
    provider: aws
    region: us-east-1
    zone: us-east-1a
    pool: h100-pool
    instance_type: p5.48xlarge
    gpus: 8
    hourly_price: 98.32
    sla: aws-ec2-instance
    interval: 15s
    timeout: 5s
channels:
  - name: ops
    kind: webhook
    url: https://hooks.example.com/slamon
    secret: ${SLAMON_OPS_SECRET}
routes:
  - match: {severity: critical}
    channels: [ops]
"""


def problems_of(text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    return caught.value.problems


def test_the_design_example_loads_with_its_secret_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SLAMON_OPS_SECRET", "s3cret")
    config = parse_config(DESIGN_EXAMPLE)
    target = config.targets[0]
    assert (target.interval, target.timeout, target.gpus, target.hourly_price) == (15, 5, 8, 98.32)
    assert config.channels[0].secret == "s3cret"
    assert config.providers[0].regions == ["us-east-1", "us-west-2"]


def test_an_unset_secret_is_a_problem_that_names_its_place(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLAMON_OPS_SECRET", raising=False)
    assert problems_of(DESIGN_EXAMPLE) == [
        "channels[0].secret (line 23): environment variable SLAMON_OPS_SECRET is not set"
    ]


def test_a_default_in_the_reference_is_used_when_the_variable_is_unset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    config = parse_config(
        "channels: [{name: a, kind: webhook, url: '${NOT_SET_ANYWHERE:-https://x.test/}'}]"
    )
    assert config.channels[0].url == "https://x.test/"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "targets:\n  - {name: x, kind: http, url: 'http://h/', interval: -5}\n",
            ["targets[0].interval (line 2): must be ≥ 1 s"],
            id="negative-interval",
        ),
        pytest.param(
            "targets:\n  - {name: x, kind: http, url: 'http://h/', interval: 500ms}\n",
            ["targets[0].interval (line 2): must be ≥ 1 s"],
            id="sub-second-interval",
        ),
        pytest.param(
            "targets:\n  - {name: x, kind: http, url: 'http://h/', interval: soon}\n",
            [
                "targets[0].interval (line 2): 'soon' is not a duration "
                "(use e.g. 15s, 2m, 1h30m, 500ms)"
            ],
            id="unreadable-duration",
        ),
        pytest.param(
            "targets:\n  - name: x\n    kind: tcp\n    url: http://h/\n",
            [
                "targets[0] (line 2): url: a tcp target needs tcp://host:port, e.g. tcp://10.0.0.5:22"
            ],
            id="tcp-without-port",
        ),
        pytest.param(
            "targets:\n  - {name: x, kind: ping, url: 'http://h/'}\n",
            [
                "targets[0].kind (line 2): Input should be 'http', 'tcp', 'dcgm' or 'heartbeat'",
            ],
            id="unknown-kind",
        ),
        pytest.param(
            "targets:\n  - {name: x, kind: http, url: 'http://h/', intervall: 5}\n",
            ["targets[0].intervall (line 2): unknown field (check the spelling)"],
            id="misspelt-field",
        ),
        pytest.param(
            "targets:\n  - {name: x, kind: http, url: 'http://h/', timeout: 60, interval: 30}\n",
            ["targets[0] (line 2): timeout: must not exceed interval"],
            id="timeout-over-interval",
        ),
        pytest.param(
            "targets:\n  - {name: x, kind: http, url: 'http://h/'}\n"
            "  - {name: x, kind: http, url: 'http://i/'}\n",
            ["targets[1] (line 3): duplicate name 'x'"],
            id="duplicate-target",
        ),
        pytest.param(
            "routes:\n  - {match: {severity: critical}, channels: [nope]}\n",
            ["routes[0].channels[0] (line 2): no channel named 'nope'"],
            id="route-to-missing-channel",
        ),
        pytest.param(
            "targets:\n  - {name: x, kind: http, url: 'http://h/', sla: gold}\n",
            ["targets[0].sla (line 2): unknown SLA policy 'gold'"],
            id="unknown-sla",
        ),
        pytest.param(
            "targets:\n  - {name: x, kind: http, url: 'http://h/', provider: gcp,"
            " sla: aws-ec2-instance}\n",
            [
                "targets[0].provider (line 2): target 'x' names provider 'gcp', but its SLA "
                "policy 'aws-ec2-instance' belongs to provider 'aws' (leave provider out, or "
                "choose a policy of 'gcp')"
            ],
            id="provider-contradicts-builtin-policy",
        ),
        pytest.param(
            "sla_policies:\n  - {name: lambda-gpu, provider: lambda, target_pct: 99.9}\n"
            "targets:\n  - {name: x, kind: http, url: 'http://h/', provider: aws,"
            " sla: lambda-gpu}\n",
            [
                "targets[0].provider (line 4): target 'x' names provider 'aws', but its SLA "
                "policy 'lambda-gpu' belongs to provider 'lambda' (leave provider out, or "
                "choose a policy of 'aws')"
            ],
            id="provider-contradicts-user-policy",
        ),
        pytest.param(
            "maintenance:\n  - {name: m, start: 2026-01-01T00:00:00, end: 2026-01-02T00:00:00Z}\n",
            ["maintenance[0].start (line 2): Input should have timezone info"],
            id="naive-maintenance-time",
        ),
        pytest.param("targets: [", None, id="broken-yaml"),
        pytest.param(
            "- a\n- b\n",
            ["the config must be a mapping with keys like providers, targets"],
            id="not-a-mapping",
        ),
    ],
)
def test_bad_config_gives_one_clear_line_per_problem(text: str, expected: list[str] | None) -> None:
    problems = problems_of(text)
    if expected is None:
        assert len(problems) == 1
        assert problems[0].startswith("not valid YAML:")
    else:
        assert problems == expected


def test_several_problems_are_all_reported() -> None:
    text = (
        "targets:\n"
        "  - {name: a, kind: http, url: 'http://h/', interval: 0}\n"
        "  - {name: b, kind: http, url: 'http://h/', gpus: -1}\n"
    )
    assert problems_of(text) == [
        "targets[0].interval (line 2): must be ≥ 1 s",
        "targets[1].gpus (line 3): Input should be greater than or equal to 0",
    ]


def test_an_empty_file_is_an_empty_config() -> None:
    config = parse_config("")
    assert (config.targets, config.providers, config.schedule.tick) == ([], [], 30)


def test_a_missing_file_is_an_error_unless_allowed(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "nope.yaml")
    assert load_config(tmp_path / "nope.yaml", missing_ok=True).targets == []


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("15s", 15), ("2m", 120), ("1h30m", 5400), ("500ms", 0.5), ("7", 7), (3, 3), ("1.5s", 1.5)],
)
def test_durations_read_as_seconds(text: str | int, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "s", "5x", "1h 5", "-", True, None, [1]])
def test_unreadable_durations_are_refused(text: object) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"), [(0.5, "500ms"), (90, "1m30s"), (3600, "1h"), (0, "0ms")]
)
def test_durations_format_shortly(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


POLICY_TARGETS = """
sla_policies:
  - {name: lambda-gpu, provider: lambda, target_pct: 99.9}
  - {name: aws-ec2-instance, provider: aws-gov, target_pct: 99.5}
targets:
  - {name: ec2, kind: tcp, url: 'tcp://h:22', sla: aws-ec2-instance}
  - {name: vm, kind: tcp, url: 'tcp://h:22', sla: gcp-compute-single-vm}
  - {name: azure, kind: tcp, url: 'tcp://h:22', sla: azure-vm-single-premium}
  - {name: gpu, kind: tcp, url: 'tcp://h:22', sla: lambda-gpu}
  - {name: named, kind: tcp, url: 'tcp://h:22', sla: gcp-compute-single-vm, provider: gcp}
  - {name: bare, kind: tcp, url: 'tcp://h:22'}
"""


def test_a_target_without_a_provider_gets_its_sla_policys_provider() -> None:
    config = parse_config(POLICY_TARGETS)
    assert {t.name: t.provider for t in config.targets} == {
        "ec2": "aws-gov",  # the user's policy of that name replaces the built-in
        "vm": "gcp",
        "azure": "azure",
        "gpu": "lambda",
        "named": "gcp",
        "bare": None,
    }


def test_a_config_built_in_code_gets_the_policy_provider_too() -> None:
    target = TargetConfig(name="x", kind="tcp", url="tcp://h:22", sla="aws-ec2-instance")
    assert target.provider is None  # alone, a target knows no user policies
    assert Config(targets=[target]).targets[0].provider == "aws"
    user = [{"name": "aws-ec2-instance", "provider": "aws-gov", "target_pct": 99.5}]
    assert Config(targets=[target], sla_policies=user).targets[0].provider == "aws-gov"


def test_a_provider_that_contradicts_a_user_override_of_a_built_in_is_refused() -> None:
    text = POLICY_TARGETS.replace("sla: aws-ec2-instance}", "sla: aws-ec2-instance, provider: aws}")
    assert problems_of(text) == [
        "targets[0].provider (line 6): target 'ec2' names provider 'aws', but its SLA policy "
        "'aws-ec2-instance' belongs to provider 'aws-gov' (leave provider out, or choose a "
        "policy of 'aws')"
    ]
