"""Notification channels: one module per kind, one line each in ``REGISTRY`` (STYLE.md §2).

A builder is pure: ``build(message, channel, idempotency_key, now) -> Outgoing``; only
``send.send`` does I/O. ``apprise`` has no request to build (the apprise library sends), so it
is absent here and ``send.send_message`` hands it over. Adding a kind: a module beside these with
``build``, its line below, the kind in ``ChannelKind`` (monitor/config/models.py), and a test
checking the sent body against the service's documented shape; ``slack.py`` is the one to copy.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from monitor.alerts.channels import discord, pagerduty, slack, teams, webhook
from monitor.alerts.channels.model import AlertMessage, Outgoing
from monitor.config.models import ChannelConfig

Build = Callable[[AlertMessage, ChannelConfig, str, datetime], Outgoing]

REGISTRY: dict[str, Build] = {
    "webhook": webhook.build,
    "slack": slack.build,
    "pagerduty": pagerduty.build,
    "teams": teams.build,
    "discord": discord.build,
}
