"""`slamon export`: slamon's objectives and rules in the formats the rest of the stack reads.

Each subcommand reads the config (the source of truth) and writes a file another tool takes:
nothing here touches the database.
"""

from __future__ import annotations

import click


@click.group()
def export() -> None:
    """Write slamon's SLOs and rules for other tools (OpenSLO, Sloth, Prometheus)."""
