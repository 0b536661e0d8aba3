"""Any apprise URL (``tgram://``, ``mailto://``, ``ntfy://``, ``json://``…) for the long tail of
services. There is no HTTP request to build: the apprise library sends, synchronously, with its
own per-service socket timeouts (4 s connect and read unless the URL sets ``cto=``/``rto=``).

apprise reports only success or failure, with no status code, so a failed send is retried (the
outbox's max age bounds it): nothing it says can tell a dead channel from a bad moment. A URL
apprise cannot parse is a dead channel (every message would fail until the config changes). apprise
URLs may hold a token anywhere, even in the host part, so errors show only the scheme. The
channel's ``secret`` is not used: apprise URLs carry their own credentials.
"""

from __future__ import annotations

import apprise

from monitor.alerts.channels._format import http_link, iso, ordered_labels, title
from monitor.alerts.channels.model import AlertMessage, SendOutcome
from monitor.alerts.channels.redact import redact_url
from monitor.config.models import ChannelConfig

NOTIFY_TYPES: dict[str, str] = {
    "critical": apprise.NotifyType.FAILURE,
    "warning": apprise.NotifyType.WARNING,
    "info": apprise.NotifyType.INFO,
    "resolved": apprise.NotifyType.SUCCESS,
}


def render(message: AlertMessage) -> tuple[str, str]:
    """``(title, body)`` as plain text."""
    lines = [message.summary, ""]
    lines += [f"{key}: {value}" for key, value in ordered_labels(message.labels)]
    lines.append(f"started: {iso(message.started_at)}")
    if message.resolved_at is not None:
        lines.append(f"resolved: {iso(message.resolved_at)}")
    lines.append(f"fingerprint: {message.fingerprint}")
    link = http_link(message)
    if link:
        lines.append(link)
    return title(message), "\n".join(lines)


def notify_type(message: AlertMessage) -> str:
    return NOTIFY_TYPES["resolved" if message.event == "resolved" else message.severity]


def send(channel: ChannelConfig, message: AlertMessage) -> SendOutcome:
    """Send through apprise. Never raises for what the service or the network does."""
    where = redact_url(channel.url)
    notifier = apprise.Apprise()
    if not notifier.add(channel.url):
        return SendOutcome.channel_dead(None, f"{where}: not a URL apprise can send to")
    heading, body = render(message)
    if notifier.notify(body=body, title=heading, notify_type=notify_type(message)):
        return SendOutcome.ok(None)
    return SendOutcome.retry_later(None, f"{where}: apprise could not deliver the notification")
