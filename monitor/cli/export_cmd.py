"""`slamon export`: slamon's objectives and rules in the formats the rest of the stack reads.

Each subcommand reads the config (the source of truth) and writes a file another tool takes:
nothing here touches the database.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.group()
def export() -> None:
    """Write slamon's SLOs and rules for other tools (OpenSLO, Sloth, Prometheus)."""


@export.command("prometheus-rules")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default="-")
def prometheus_rules(config_path: Path | None, out: Path) -> None:
    """Write Prometheus recording and alerting rules for the config's burn windows (default
    config: $SLAMON_CONFIG or slamon.yaml; default out: standard output): each target's
    availability, downtime ratio and burn rate over slamon's counters, SlamonSlaBurn as
    slamon's sla_burn judges, and SlamonTargetDown. Check them with `promtool check rules`."""
    from monitor.alerts.prometheus_rules import render, rule_groups
    from monitor.alerts.sla_rules import burn_windows
    from monitor.config import load_config
    from monitor.errors import SlamonError
    from monitor.settings import Settings

    config = load_config(config_path or Settings().config)
    text = render(rule_groups(burn_windows(config.alerts.burn_windows)))
    if str(out) == "-":
        click.echo(text, nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise SlamonError(f"{out}: {exc.strerror}") from None
