"""Alert messages and channels shared by the channel tests. The URLs and keys are shaped like
the real ones, and each holds a recognisable secret that must never leak."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from monitor.alerts.channels.model import AlertMessage
from monitor.config.models import ChannelConfig

NOW = datetime(2025, 3, 14, 12, 0, 0, tzinfo=UTC)
STARTED = NOW - timedelta(minutes=7)
RESOLVED = NOW - timedelta(seconds=30)

SLACK_TOKEN = "sl4ckT0kenS3cretValue24x"
SLACK_URL = f"https://hooks.slack.com/services/T0SLAMON1/B0SLAMON1/{SLACK_TOKEN}"
DISCORD_TOKEN = "d1sc0rdT0kenS3cret-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ_klmno"
DISCORD_URL = f"https://discord.com/api/webhooks/1234567890123456789/{DISCORD_TOKEN}"
TEAMS_SIG = "t3amsS1gnatureS3cretValue0123456789abcdefgh"
TEAMS_URL = (
    "https://prod-42.westeurope.logic.azure.com:443/workflows/0f1e2d3c4b5a69788796a5b4c3d2e1f0"
    "/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun"
    f"&sv=1.0&sig={TEAMS_SIG}"
)
PAGERDUTY_URL = "https://events.pagerduty.com/v2/enqueue"
ROUTING_KEY = "R0UT1NGK3YS3CRETR0UT1NGK3YS3CRET"
WEBHOOK_URL = "https://hooks.example.com/slamon"
WEBHOOK_SECRET = "whsec-slamon-test-secret"
ALERTMANAGER_PASSWORD = "am-basic-auth-pa55word"
ALERTMANAGER_URL = f"http://slamon:{ALERTMANAGER_PASSWORD}@alertmanager.example:9093"
KEY = "delivery-42-attempt-independent"

CHANNELS = {
    "webhook": ChannelConfig(name="ops", kind="webhook", url=WEBHOOK_URL, secret=WEBHOOK_SECRET),
    "slack": ChannelConfig(name="chat", kind="slack", url=SLACK_URL),
    "pagerduty": ChannelConfig(
        name="pager", kind="pagerduty", url=PAGERDUTY_URL, secret=ROUTING_KEY
    ),
    "teams": ChannelConfig(name="teams", kind="teams", url=TEAMS_URL),
    "discord": ChannelConfig(name="discord", kind="discord", url=DISCORD_URL),
    "alertmanager": ChannelConfig(name="am", kind="alertmanager", url=ALERTMANAGER_URL),
}
# What must never be shown, per channel kind.
SECRETS = {
    "webhook": WEBHOOK_SECRET,
    "slack": SLACK_TOKEN,
    "pagerduty": ROUTING_KEY,
    "teams": TEAMS_SIG,
    "discord": DISCORD_TOKEN,
    "alertmanager": ALERTMANAGER_PASSWORD,
}

LABELS = {"target": "trainer-0", "provider": "aws", "region": "us-east-1", "pool": "h100-pool"}


def firing(**changes: Any) -> AlertMessage:
    message = AlertMessage(
        fingerprint="5f2b8c0e9a1d4e7f",
        rule="target_down",
        severity="critical",
        labels=dict(LABELS),
        summary="trainer-0 (p5.48xlarge, 8 GPUs) has not answered for 7 minutes",
        started_at=STARTED,
        url="https://slamon.example.com/targets/trainer-0",
        extra={"confirmations": 2},
    )
    return replace(message, **changes)


def resolved(**changes: Any) -> AlertMessage:
    return firing(event="resolved", resolved_at=RESOLVED, **changes)


def parse_iso(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    assert moment.utcoffset() is not None, text
    return moment
