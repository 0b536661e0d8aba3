"""Notification channels: one module per kind, one line each in ``REGISTRY`` and in ``RULES``
(STYLE.md §2).

A builder is pure: ``build(message, channel, idempotency_key, now) -> Outgoing``; only
``send.send`` does I/O. ``apprise`` has no request to build (the apprise library sends), so it
is absent here and ``send.send_message`` hands it over. Adding a kind: a module beside these with
``build`` and ``verdict``, its lines below, the kind in ``ChannelKind``
(monitor/config/models.py), and tests checking the sent body against the service's documented
shape and the verdicts against its documented error answers; ``slack.py`` is the one to copy.

A rule is pure too: ``verdict(answer) -> "retry" | "failed" | "dead"`` for an answer that is not a
2xx (``model.Verdict``). Only the kind knows which of its service's answers mean the channel is
dead, as opposed to this one message being refused.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from monitor.alerts.channels import discord, pagerduty, slack, teams, webhook
from monitor.alerts.channels.model import AlertMessage, Answer, Outgoing, Verdict
from monitor.config.models import ChannelConfig

Build = Callable[[AlertMessage, ChannelConfig, str, datetime], Outgoing]
Rule = Callable[[Answer], Verdict]

REGISTRY: dict[str, Build] = {
    "webhook": webhook.build,
    "slack": slack.build,
    "pagerduty": pagerduty.build,
    "teams": teams.build,
    "discord": discord.build,
}

RULES: dict[str, Rule] = {
    "webhook": webhook.verdict,
    "slack": slack.verdict,
    "pagerduty": pagerduty.verdict,
    "teams": teams.verdict,
    "discord": discord.verdict,
}
