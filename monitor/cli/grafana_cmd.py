"""`slamon grafana push`: create or update slamon's datasource and dashboards in a Grafana.

The datasource's database credentials (how *Grafana* reaches PostgreSQL; use a SELECT-only
role) come from ``--database-url-for-grafana`` or these environment variables:

- ``SLAMON_GRAFANA_DB_URL``       postgresql://user:password@host:port/database
- ``SLAMON_GRAFANA_DB_HOST``      host:port as Grafana sees it (e.g. ``postgres:5432``)
- ``SLAMON_GRAFANA_DB_NAME``      database name
- ``SLAMON_GRAFANA_DB_USER``      user
- ``SLAMON_GRAFANA_DB_PASSWORD``  password
- ``SLAMON_GRAFANA_DB_SSLMODE``   disable | require | verify-full (default disable)

The Grafana token may come from ``SLAMON_GRAFANA_TOKEN``; it is never printed.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.group()
def grafana() -> None:
    """Grafana dashboards."""


@grafana.command("push")
@click.option("--url", required=True, envvar="SLAMON_GRAFANA_URL", help="Grafana's base URL.")
@click.option(
    "--token",
    envvar="SLAMON_GRAFANA_TOKEN",
    help="A service-account token (Bearer); env SLAMON_GRAFANA_TOKEN.",
)
@click.option("--folder", default="slamon", show_default=True, help="Folder for the dashboards.")
@click.option(
    "--database-url-for-grafana",
    "db_url",
    envvar="SLAMON_GRAFANA_DB_URL",
    help="postgresql://user:pw@host:port/db as Grafana reaches it; env SLAMON_GRAFANA_DB_URL.",
)
@click.option("--db-host", envvar="SLAMON_GRAFANA_DB_HOST", help="host:port (overrides the URL).")
@click.option("--db-name", envvar="SLAMON_GRAFANA_DB_NAME", help="Database name.")
@click.option("--db-user", envvar="SLAMON_GRAFANA_DB_USER", help="Database user.")
@click.option("--db-password", envvar="SLAMON_GRAFANA_DB_PASSWORD", help="Database password.")
@click.option("--db-sslmode", envvar="SLAMON_GRAFANA_DB_SSLMODE", help="PostgreSQL sslmode.")
@click.option(
    "--dashboards",
    "dashboards_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Folder of dashboard JSON (default: the checkout's dashboards/).",
)
def push(
    url: str,
    token: str | None,
    folder: str,
    db_url: str | None,
    db_host: str | None,
    db_name: str | None,
    db_user: str | None,
    db_password: str | None,
    db_sslmode: str | None,
    dashboards_dir: Path | None,
) -> None:
    """Create or update the datasource and every dashboard, idempotently."""
    import httpx

    from monitor import grafana as g

    database = g.GrafanaDatabase.resolve(
        db_url,
        host=db_host,
        database=db_name,
        user=db_user,
        password=db_password,
        sslmode=db_sslmode,
    )
    dashboards = g.load_dashboards(dashboards_dir or g.DASHBOARDS_DIR)
    with httpx.Client(timeout=g.TIMEOUT) as client:
        api = g.connect(url, token, client)
        result = g.push(api, g.datasource_payload(database), dashboards, folder)
    click.echo(
        f"datasource {g.DATASOURCE_UID} {result.datasource}; folder {result.folder_uid}"
        f"{' created' if result.folder_created else ''}; "
        f"{len(result.dashboards)} dashboards pushed: {', '.join(result.dashboards)}"
    )
