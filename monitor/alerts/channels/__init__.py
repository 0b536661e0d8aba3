"""Notification channels: one module per kind, one line each in ``REGISTRY`` and in ``RULES``
(STYLE.md §2).

A builder is pure: ``build(message, channel, idempotency_key, now) -> Outgoing``; only
``send.send`` does I/O. A kind that only POSTs its JSON has ``build = json_post(payload)``
(``_format.json_post``). ``apprise`` has no request to build (the apprise library sends), so it
is absent from ``REGISTRY`` and ``send.send_message`` hands it over; ``KINDS`` names them all.
Adding a kind: a module beside these with ``build`` and ``verdict``, its lines below, its name in
``CHANNEL_KINDS`` (monitor/config/models.py: the config sits below the alerts, so it keeps the
names and a test holds them equal to ``KINDS``), and tests checking the sent body against the
service's documented shape and the verdicts against its documented error answers; ``slack.py``
is the one to copy.

A rule is pure too: ``verdict(answer) -> "retry" | "failed" | "dead"`` for an answer that is not a
2xx (``model.Verdict``). Only the kind knows which of its service's answers mean the channel is
dead, as opposed to this one message being refused.
"""

from __future__ import annotations

from collections.abc import Callable

from monitor.alerts.channels import alertmanager, discord, pagerduty, slack, teams, webhook
from monitor.alerts.channels._format import Build
from monitor.alerts.channels.model import Answer, Verdict

Rule = Callable[[Answer], Verdict]
SENT_BY_APPRISE = "apprise"

REGISTRY: dict[str, Build] = {
    "webhook": webhook.build,
    "slack": slack.build,
    "pagerduty": pagerduty.build,
    "teams": teams.build,
    "discord": discord.build,
    "alertmanager": alertmanager.build,
}

RULES: dict[str, Rule] = {
    "webhook": webhook.verdict,
    "slack": slack.verdict,
    "pagerduty": pagerduty.verdict,
    "teams": teams.verdict,
    "discord": discord.verdict,
    "alertmanager": alertmanager.verdict,
}

KINDS: tuple[str, ...] = (*REGISTRY, SENT_BY_APPRISE)
"""Every channel kind a config may name."""
