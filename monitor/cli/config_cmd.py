"""`slamon config check`."""

from __future__ import annotations

from pathlib import Path

import click


@click.group()
def config() -> None:
    """Inspect the YAML config."""


@config.command("check")
@click.argument("file", required=False, type=click.Path(path_type=Path, dir_okay=False))
def check(file: Path | None) -> None:
    """Validate FILE (default: $SLAMON_CONFIG or slamon.yaml); one line per problem, exit 1."""
    from monitor.config import load_config
    from monitor.settings import Settings

    path = file or Settings().config
    loaded = load_config(path)
    from monitor.config.detection import detection_warnings
    from monitor.sla.policy_config import policies_for

    for warning in detection_warnings(loaded, policies_for(loaded.sla_policies)):
        click.echo(f"warning: {warning}", err=True)
    click.echo(
        f"{path}: ok ({len(loaded.providers)} providers, {len(loaded.targets)} targets, "
        f"{len(loaded.channels)} channels, {len(loaded.routes)} routes)"
    )
