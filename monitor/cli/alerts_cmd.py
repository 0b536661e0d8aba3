"""`slamon alerts list | enable | test`."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from monitor.alerts.channel_state import ChannelState


@click.group()
def alerts() -> None:
    """Alerts and notification channels."""


@alerts.command("list")
@click.option("--all", "show_all", is_flag=True, help="Resolved alerts too.")
@click.option("--channels", "only_channels", is_flag=True, help="Only the channels.")
@click.option(
    "--json", "as_json", is_flag=True, help="One JSON object per line: alerts, or channels."
)
def list_alerts(show_all: bool, only_channels: bool, as_json: bool) -> None:
    """Firing alerts (newest first), then each notification channel: enabled, or disabled
    since when and with the error that disabled it. With --json, the alerts only (or, with
    --channels, the channels only), so that every line has the same fields."""
    from sqlalchemy import select

    from monitor.alerts.channel_state import channel_states
    from monitor.db.models import Alert
    from workers.runtime import runtime

    rt = runtime()
    query = select(Alert).order_by(Alert.started_at.desc())
    if not show_all:
        query = query.where(Alert.state == "firing")
    with rt.sessions() as session:
        found = [] if only_channels else list(session.scalars(query))
        show_channels = only_channels or not as_json
        channels = channel_states(session, rt.config) if show_channels else []
        for alert in found:
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
    for channel in channels:
        click.echo(json.dumps(_channel_record(channel)) if as_json else _channel_line(channel))


def _channel_record(channel: ChannelState) -> dict[str, Any]:
    return {
        "channel": channel.name,
        "kind": channel.kind,
        "state": channel.state,
        "enabled": channel.enabled,
        "disabled_at": channel.disabled_at.isoformat() if channel.disabled_at else None,
        "last_error": channel.last_error,
        "configured": channel.configured,
    }


def _channel_line(channel: ChannelState) -> str:
    line = f"channel {channel.name} ({channel.kind}): {channel.state}"
    if channel.disabled_at is not None:
        line += f" since {channel.disabled_at:%Y-%m-%d %H:%M}"
    if not channel.enabled and channel.last_error:
        line += f": {channel.last_error}"
    return line if channel.configured else f"{line} (not in the config)"


@alerts.command("enable")
@click.argument("name")
def enable(name: str) -> None:
    """Enable channel NAME again after a receiver's answer disabled it (a revoked token, a
    deleted webhook): what it held is sent on the next delivery sweep. Changing the channel's
    config (its URL or secret) enables it too."""
    from sqlalchemy import select

    from monitor.alerts.channel_state import enable as enable_channel
    from monitor.db.base import utcnow
    from monitor.db.models import Channel
    from monitor.errors import SlamonError
    from workers.runtime import runtime

    rt = runtime()
    with rt.transaction() as session:
        row = session.scalars(select(Channel).where(Channel.name == name)).one_or_none()
        if row is None:
            raise SlamonError(f"no channel named {name!r} has been sent to yet")
        if row.enabled:
            click.echo(f"{name}: already enabled")
            return
        held = enable_channel(session, row, rt.config, utcnow(), "by hand")
    deliveries = "delivery" if held == 1 else "deliveries"
    click.echo(f"{name}: enabled; {held} held {deliveries} will be sent on the next sweep")


@alerts.command("test")
@click.option("--channel", "name", required=True, help="A channel from the config.")
def test(name: str) -> None:
    """Send a test message to one channel now and report what the receiver said (linking to
    the status page under SLAMON_PUBLIC_URL, when it is set, so the link can be tried too)."""
    from monitor.alerts.channels.model import AlertMessage
    from monitor.alerts.channels.send import send_message
    from monitor.alerts.links import alert_url
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
        url=alert_url(rt.settings.public_url, {}),
    )
    outcome = send_message(rt.http, channel, message, f"slamon-test:{int(now.timestamp())}", now)
    if not outcome.delivered:
        raise SlamonError(f"{name}: not delivered: {outcome.error}")
    click.echo(f"{name}: delivered (HTTP {outcome.status_code})")
