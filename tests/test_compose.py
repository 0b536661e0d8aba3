"""What can be checked of docker-compose.yml without a Docker engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from monitor.cli import cli
from monitor.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]
SLAMON_SERVICES = sorted(n for n, s in SERVICES.items() if s.get("image", "").startswith("slamon"))


def test_compose_has_every_part_of_the_production_setup() -> None:
    assert set(SERVICES) == {"postgres", "redis", "migrate", "worker", "beat", "api", "grafana"}
    assert SLAMON_SERVICES == ["api", "beat", "migrate", "worker"]


@pytest.mark.parametrize("name", SLAMON_SERVICES)
def test_each_service_runs_a_real_slamon_subcommand_with_valid_options(name: str) -> None:
    command = SERVICES[name]["command"]
    assert command[0] == "slamon"
    # click parses the arguments exactly as the container would, without running anything
    context = cli.make_context("slamon", list(command[1:]), resilient_parsing=False)
    sub = cli.get_command(context, command[1])
    assert isinstance(sub, click.Command)
    sub.make_context(command[1], list(command[2:]))


@pytest.mark.parametrize("name", SLAMON_SERVICES)
def test_environment_names_are_settings_that_exist(name: str) -> None:
    fields = set(Settings.model_fields)
    for key in SERVICES[name]["environment"]:
        assert key.startswith("SLAMON_")
        assert key.removeprefix("SLAMON_").lower() in fields


def test_the_services_start_in_order_migrate_first() -> None:
    for name in ("worker", "beat", "api"):
        assert SERVICES[name]["depends_on"]["migrate"] == {
            "condition": "service_completed_successfully"
        }
    assert SERVICES["migrate"]["restart"] == "no"


def test_mounted_host_paths_exist_in_the_repository() -> None:
    for service in SERVICES.values():
        for volume in service.get("volumes", []):
            host = volume.split(":", 1)[0]
            if host.startswith("./"):
                path = ROOT / host
                if path.name == "slamon.yaml":  # the user's own config, made from the example
                    path = ROOT / "slamon.example.yaml"
                assert path.exists(), host


def test_grafana_gets_the_dashboard_provisioning() -> None:
    volumes = SERVICES["grafana"]["volumes"]
    assert "./dashboards/provisioning:/etc/grafana/provisioning:ro" in volumes
    provider = yaml.safe_load((ROOT / "dashboards/provisioning/dashboards/slamon.yaml").read_text())
    mounted = {v.split(":")[1] for v in volumes}
    assert provider["providers"][0]["options"]["path"] in mounted


def test_the_dockerfile_copies_only_what_exists() -> None:
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source
