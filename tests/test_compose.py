"""What can be checked of docker-compose.yml without a Docker engine."""

from __future__ import annotations

import itertools
import re
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click
import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy.engine import make_url

from monitor.cli import cli
from monitor.cli.secrets_cmd import COMPOSE_SECRETS
from monitor.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
COMPOSE: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]
SLAMON_SERVICES = sorted(n for n, s in SERVICES.items() if s.get("image", "").startswith("slamon"))


HA = sorted(n for n, s in SERVICES.items() if "ha" in s.get("profiles", []))
DEFAULT = sorted(n for n, s in SERVICES.items() if not s.get("profiles"))
HAPROXY_CFG = ROOT / "deploy/haproxy.cfg"


def test_compose_has_every_part_of_the_production_setup() -> None:
    assert DEFAULT == ["api", "beat", "grafana", "migrate", "postgres", "redis", "worker"]
    assert SLAMON_SERVICES == [
        "api", "api-a", "api-b", "beat", "migrate", "worker", "worker-a", "worker-b"
    ]  # fmt: skip


def test_the_ha_profile_is_two_workers_with_beat_two_apis_and_a_balancer() -> None:
    assert HA == ["api-a", "api-b", "lb", "worker-a", "worker-b"]
    assert set(SERVICES) == {*DEFAULT, *HA}  # no other profile


@pytest.mark.parametrize("name", SLAMON_SERVICES)
def test_each_service_runs_a_real_slamon_subcommand_with_valid_options(name: str) -> None:
    assert SERVICES[name]["command"][0] == "slamon"
    assert parsed(name).command.name == SERVICES[name]["command"][1]


def parsed(name: str) -> click.Context:
    """The subcommand's context for a service's command: click parses the arguments exactly as
    the container would, without running anything (a bad option fails here)."""
    command = SERVICES[name]["command"]
    sub = cli.get_command(cli.make_context("slamon", list(command[1:])), command[1])
    assert isinstance(sub, click.Command)
    return sub.make_context(command[1], list(command[2:]))


# what slamon's own dependencies read from the environment
FOREIGN_ENVIRONMENT = {"FORWARDED_ALLOW_IPS"}  # uvicorn: whose X-Forwarded-For to trust


@pytest.mark.parametrize("name", SLAMON_SERVICES)
def test_environment_names_are_settings_that_exist(name: str) -> None:
    fields = set(Settings.model_fields)
    for key in set(SERVICES[name]["environment"]) - FOREIGN_ENVIRONMENT:
        assert key.startswith("SLAMON_")
        assert key.removeprefix("SLAMON_").lower() in fields
    assert SERVICES[name]["environment"].items() >= SERVICES["api"]["environment"].items()


def test_the_services_start_in_order_migrate_first() -> None:
    for name in ("worker", "beat", "api", "worker-a", "worker-b", "api-a", "api-b"):
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


@pytest.mark.parametrize("name", ["worker-a", "worker-b"])
def test_each_ha_worker_runs_a_scheduler_of_its_own(name: str) -> None:
    context = parsed(name)
    assert context.command.name == "worker"
    assert context.params["embed_beat"] is True
    assert context.params["vantage"] == parsed("worker").params["vantage"]
    # the leader is named host:pid; in a container the pid alone would not tell them apart
    assert SERVICES[name]["hostname"] == name


def haproxy_sections(text: str) -> dict[str, list[list[str]]]:
    """HAProxy's configuration as ``{"backend slamon_api": [[keyword, args...], ...]}``."""
    sections: dict[str, list[list[str]]] = {}
    current: list[list[str]] = []
    for raw in text.splitlines():
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        if not raw[0].isspace():
            current = sections.setdefault(" ".join(words), [])
        else:
            current.append(words)
    return sections


def test_the_balancer_sends_to_both_api_replicas_and_checks_their_healthz() -> None:
    lb = SERVICES["lb"]
    mounted = {v.split(":")[0]: v.split(":")[1] for v in lb["volumes"]}
    assert mounted["./deploy/haproxy.cfg"] == "/usr/local/etc/haproxy/haproxy.cfg"
    assert lb["image"].startswith("haproxy:")
    assert set(lb["depends_on"]) == {"api-a", "api-b"}
    sections = haproxy_sections(HAPROXY_CFG.read_text())
    (frontend,) = (s for name, s in sections.items() if name.startswith("frontend "))
    (bind,) = (line for line in frontend if line[0] == "bind")
    host_port, container_port = lb["ports"][0].split(":")
    assert bind[1] == f":{container_port}"
    assert host_port == SERVICES["api"]["ports"][0].split(":")[0]  # where the api alone was
    (default_backend,) = (line[1] for line in frontend if line[0] == "default_backend")
    backend = sections[f"backend {default_backend}"]
    servers = {line[1]: line[2] for line in backend if line[0] == "server"}
    # each server is an API replica at the port its `slamon api` listens on
    assert servers == {n: f"{n}:{parsed(n).params['port']}" for n in ("api-a", "api-b")}
    assert all(parsed(n).command.name == "api" for n in servers)
    assert all(parsed(n).params["host"] == "0.0.0.0" for n in servers)
    assert ["option", "httpchk"] in backend
    assert ["http-check", "send", "meth", "GET", "uri", "/healthz"] in backend
    assert ["http-check", "expect", "status", "200"] in backend
    (defaults,) = (line for line in backend if line[0] == "default-server")
    assert "check" in defaults  # the check runs on every server
    # the replicas limit failed authentications per client address: they must see it
    assert ["option", "forwardfor"] in sections["defaults"]
    assert all(SERVICES[n]["environment"]["FORWARDED_ALLOW_IPS"] == "*" for n in servers)
    assert "ports" not in SERVICES["api-a"]
    assert "ports" not in SERVICES["api-b"]  # "*" trusts only what can reach them: lb


def test_the_haproxy_configuration_is_valid_where_haproxy_is_installed() -> None:
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        pytest.skip("haproxy is not installed (the parsed checks above still ran)")
    done = subprocess.run(
        [haproxy, "-c", "-f", str(HAPROXY_CFG)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


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


# --- secrets: none in the file, every one from the environment --------------------------------

# Compose's interpolation (compose-spec "Interpolation"): ${NAME}, ${NAME:-default},
# ${NAME-default}, ${NAME:?error}, ${NAME?error}; $$ is a literal dollar.
INTERPOLATION = re.compile(r"\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")
SECRET_WORDS = ("PASSWORD", "SECRET", "TOKEN", "AUTH", "KEY")


class MissingVariable(Exception):
    pass


def interpolate(text: str, env: dict[str, str]) -> str:
    """What `docker compose config` does to the file's text before parsing it."""

    def one(match: re.Match[str]) -> str:
        name, op, arg = match["name"], match["op"], match["arg"]
        value = env.get(name)
        if op in (":?", "?") and (value is None or (op == ":?" and value == "")):
            raise MissingVariable(f"required variable {name} is missing a value: {arg}")
        if op in (":-", "-") and (value is None or (op == ":-" and value == "")):
            return arg
        return value or ""

    return INTERPOLATION.sub(one, text.replace("$$", "\0")).replace("\0", "$")


def dotenv(path: Path) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in pairs if not k.lstrip().startswith("#")}


COMPOSE_TEXT = (ROOT / "docker-compose.yml").read_text()


def test_compose_without_its_secrets_stops_naming_the_missing_one() -> None:
    with pytest.raises(MissingVariable, match=r"POSTGRES_PASSWORD.*slamon secrets init"):
        interpolate(COMPOSE_TEXT, {})
    for name in COMPOSE_SECRETS:
        others = {n: "x" for n in COMPOSE_SECRETS if n != name}
        with pytest.raises(MissingVariable, match=name):
            interpolate(COMPOSE_TEXT, others)


def test_every_interpolated_variable_is_a_secret_slamon_secrets_init_writes() -> None:
    used = {m["name"] for m in INTERPOLATION.finditer(COMPOSE_TEXT)}
    assert used == set(COMPOSE_SECRETS)
    for match in INTERPOLATION.finditer(COMPOSE_TEXT):
        assert match["op"] == ":?", f"{match[0]}: a secret never has a default"


def test_slamon_secrets_init_makes_compose_complete(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    result = CliRunner().invoke(cli, ["secrets", "init", "--path", str(env_file)])
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    env = dotenv(env_file)
    assert set(env) == set(COMPOSE_SECRETS)
    assert all(len(v) >= 32 and re.fullmatch(r"[0-9a-f]+", v) for v in env.values())
    assert len(set(env.values())) == len(env)
    services = yaml.safe_load(interpolate(COMPOSE_TEXT, env))["services"]
    slamon_env = services["api"]["environment"]
    assert make_url(slamon_env["SLAMON_DATABASE_URL"]).password == env["POSTGRES_PASSWORD"]
    assert urlsplit(slamon_env["SLAMON_BROKER_URL"]).password == env["REDIS_PASSWORD"]
    redis = services["redis"]
    assert redis["command"][redis["command"].index("--requirepass") + 1] == env["REDIS_PASSWORD"]
    assert redis["environment"]["REDISCLI_AUTH"] == env["REDIS_PASSWORD"]  # the healthcheck
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"] == env["POSTGRES_PASSWORD"]
    grafana = services["grafana"]["environment"]
    assert grafana["GF_SECURITY_ADMIN_PASSWORD"] == env["GRAFANA_ADMIN_PASSWORD"]
    assert grafana["SLAMON_GRAFANA_DB_PASSWORD"] == env["GRAFANA_DB_PASSWORD"]
    assert (
        services["postgres"]["environment"]["SLAMON_GRAFANA_DB_PASSWORD"]
        == env["GRAFANA_DB_PASSWORD"]
    )


def test_slamon_secrets_init_never_overwrites(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("POSTGRES_PASSWORD=in-use\n")
    result = CliRunner().invoke(cli, ["secrets", "init", "--path", str(env_file)])
    assert result.exit_code == 1
    assert "already exists" in result.output
    assert env_file.read_text() == "POSTGRES_PASSWORD=in-use\n"


def literal_secrets(services: dict[str, Any]) -> list[str]:
    """Every secret-looking value in the raw file that is not an interpolation."""
    found = []
    for name, service in services.items():
        environment = service.get("environment") or {}
        for key, value in environment.items():
            text = str(value)
            if any(word in key.upper() for word in SECRET_WORDS) and not INTERPOLATION.fullmatch(
                text
            ):
                found.append(f"{name}.{key}={text}")
            if "://" in text:
                password = urlsplit(text).password
                if password is not None and not password.startswith("${"):
                    found.append(f"{name}.{key}: password {password!r} in a URL")
        command = service.get("command") or []
        for flag, value in itertools.pairwise(command):
            if flag in ("--requirepass", "--password") and not INTERPOLATION.fullmatch(value):
                found.append(f"{name}: {flag} {value}")
    return found


def test_the_compose_file_holds_no_literal_secret() -> None:
    assert literal_secrets(COMPOSE["services"]) == []
    assert literal_secrets(COMPOSE["x-slamon"] and {"x-slamon": COMPOSE["x-slamon"]}) == []


def test_the_literal_secret_check_catches_each_kind() -> None:
    planted = {
        "db": {"environment": {"POSTGRES_PASSWORD": "slamon"}},
        "app": {"environment": {"SLAMON_DATABASE_URL": "postgresql://u:pw@db/x"}},
        "cache": {"command": ["redis-server", "--requirepass", "hunter2"]},
    }
    assert len(literal_secrets(planted)) == 3
