"""`slamon secrets init`: the passwords docker-compose.yml asks for, written once to a `.env`.

The compose file holds no secret of its own: every password is ``${NAME:?…}``, so ``docker
compose up`` stops naming the one that is missing. This writes strong random values for all of
them to a new file readable by its owner only, and never overwrites one that exists (rotating a
database password means changing it in the database too).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import click

# Every secret docker-compose.yml interpolates, and what it guards.
COMPOSE_SECRETS = {
    "POSTGRES_PASSWORD": "PostgreSQL password of slamon's own database user",
    "GRAFANA_DB_PASSWORD": "PostgreSQL password of slamon_grafana, the SELECT-only role",
    "REDIS_PASSWORD": "Redis requirepass; the broker URL carries it",
    "GRAFANA_ADMIN_PASSWORD": "Grafana's admin user",
}


def generate() -> dict[str, str]:
    """A fresh value per secret: 32 random bytes as hex, safe in a connection URL and as a
    command-line argument (never a leading dash)."""
    return {name: secrets.token_hex(32) for name in COMPOSE_SECRETS}


def env_text(values: dict[str, str]) -> str:
    lines = ["# slamon's compose secrets (slamon secrets init). Keep this file private.\n"]
    for name, value in values.items():
        lines.append(f"# {COMPOSE_SECRETS[name]}\n{name}={value}\n")
    return "".join(lines)


def write_new(path: Path, text: str) -> None:
    """Create ``path`` with mode 0600; FileExistsError if it is there (never overwritten)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)


@click.group("secrets")
def secrets_group() -> None:
    """The secrets a docker compose deployment needs."""


@secrets_group.command("init")
@click.option(
    "--path",
    "path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path(".env"),
    show_default=True,
    help="Where to write them; docker compose reads .env beside docker-compose.yml.",
)
def init(path: Path) -> None:
    """Write strong random passwords for docker-compose.yml to a new .env (mode 0600)."""
    try:
        write_new(path, env_text(generate()))
    except FileExistsError:
        raise click.ClickException(
            f"{path} already exists; not overwriting it (its passwords may already be in use). "
            "Remove it first to start a fresh deployment, or pass --path."
        ) from None
    click.echo(f"wrote {', '.join(COMPOSE_SECRETS)} to {path} (mode 0600)")
