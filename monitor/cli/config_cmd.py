"""`slamon config check`."""

from __future__ import annotations

from pathlib import Path

import click

NO_PUBLIC_URL = (
    "alerts will carry no link: set SLAMON_PUBLIC_URL=https://… to the address users reach "
    "slamon at (its status page and API), in the environment of the worker and of `slamon run`"
)


@click.group()
def config() -> None:
    """Inspect the YAML config."""


@config.command("check")
@click.argument("file", required=False, type=click.Path(path_type=Path, dir_okay=False))
def check(file: Path | None) -> None:
    """Validate FILE (default: $SLAMON_CONFIG or slamon.yaml); one line per problem, exit 1."""
    from monitor.config import load_config
    from monitor.settings import Settings

    settings = Settings()
    path = file or settings.config
    loaded = load_config(path)
    from monitor.config.detection import detection_warnings
    from monitor.sla.policy_config import policies_for

    for warning in detection_warnings(loaded, policies_for(loaded.sla_policies)):
        click.echo(f"warning: {warning}", err=True)
    if settings.public_url is None:
        click.echo(f"note: {NO_PUBLIC_URL}", err=True)
    click.echo(
        f"{path}: ok ({len(loaded.providers)} providers, {len(loaded.targets)} targets, "
        f"{len(loaded.discovery)} discovery sources, "
        f"{len(loaded.account_events)} account event sources, "
        f"{len(loaded.channels)} channels, {len(loaded.routes)} routes)"
    )
