"""`slamon alerts list | test`."""

from __future__ import annotations

import json

import click


@click.group()
def alerts() -> None:
    """Alerts and notification channels."""


@alerts.command("list")
@click.option("--all", "show_all", is_flag=True, help="Resolved alerts too.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_alerts(show_all: bool, as_json: bool) -> None:
    """Firing alerts (newest first)."""
    from sqlalchemy import select

    from monitor.db.models import Alert
    from workers.runtime import runtime

    query = select(Alert).order_by(Alert.started_at.desc())
    if not show_all:
        query = query.where(Alert.state == "firing")
    with runtime().sessions() as session:
        for alert in session.scalars(query):
            record = {
                "fingerprint": alert.fingerprint,
                "rule": alert.rule,
                "severity": alert.severity,
                "state": alert.state,
                "labels": alert.labels,
                "summary": alert.summary,
                "started_at": alert.started_at.isoformat(),
                "suppressed": alert.suppressed,
                "resolved_at": alert.resolved_at.isoformat() if alert.resolved_at else None,
            }
            when = f"{alert.started_at:%Y-%m-%d %H:%M}"
            line = f"{when} {alert.severity:<8} {alert.rule:<18} {alert.summary}"
            click.echo(json.dumps(record) if as_json else line)


@alerts.command("test")
@click.option("--channel", "name", required=True, help="A channel from the config.")
def test(name: str) -> None:
    """Send a test message to one channel now and report what the receiver said."""
    from monitor.alerts.channels.model import AlertMessage
    from monitor.alerts.channels.send import send_message
    from monitor.db.base import utcnow
    from monitor.errors import SlamonError
    from workers.runtime import runtime

    rt = runtime()
    channel = next((c for c in rt.config.channels if c.name == name), None)
    if channel is None:
        known = ", ".join(c.name for c in rt.config.channels) or "none configured"
        raise SlamonError(f"no channel named {name!r} (known: {known})")
    now = utcnow()
    message = AlertMessage(
        fingerprint="slamon-test",
        rule="test",
        severity="info",
        labels={"channel": name},
        summary="slamon test message: this channel works",
        started_at=now,
    )
    outcome = send_message(rt.http, channel, message, f"slamon-test:{int(now.timestamp())}", now)
    if not outcome.delivered:
        raise SlamonError(f"{name}: not delivered: {outcome.error}")
    click.echo(f"{name}: delivered (HTTP {outcome.status_code})")
