"""Sending built notifications: the only I/O in the channels besides apprise.

Outcomes, not exceptions: a 2xx is delivered; 408, 425, 429, 5xx, timeouts and connection errors
are worth retrying; any other answer (4xx, and 3xx, since a signed POST is not replayed to
wherever a redirect points) is judged by the channel kind's rule (``RULES``): either it refuses
this one message, or it says the channel is dead and every later message would fail the same
way. What this module knows without the kind is the same for all of them: a URL the network layer
cannot use, or a channel that cannot be built for, is dead until its config changes. Error text
names the receiver by its redacted URL and never holds a secret.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

import httpx

from monitor.alerts.channels import REGISTRY, RULES, Rule
from monitor.alerts.channels.model import AlertMessage, Answer, Outgoing, SendOutcome, by_status
from monitor.alerts.channels.redact import redact_url, scrub, url_secrets
from monitor.config.models import ChannelConfig
from monitor.errors import ConfigError

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "at_each_address",
    "classify",
    "combined",
    "redact_url",
    "send",
    "send_message",
]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 10.0
SNIPPET_BYTES = 1024  # of an error answer, to say why ("invalid_payload", "Unknown Webhook")
SNIPPET_CHARS = 200
# The channel's URL is one the network layer cannot use: every message to it fails the same way.
DEAD_URL_ERRORS = (httpx.UnsupportedProtocol, httpx.InvalidURL)
# We built a request the network layer refuses (a header, say): this message fails, not the rest.
PERMANENT_ERRORS = (httpx.LocalProtocolError,)


def send(
    client: httpx.Client, outgoing: Outgoing, timeout: float, rule: Rule = by_status
) -> SendOutcome:
    """Send ``outgoing`` with ``client`` within ``timeout`` seconds (connect, write, each read);
    an answer that is not a 2xx is judged by ``rule`` (the channel kind's).

    Never raises for what the receiver or the network does. Redirects are not followed.
    """
    where = redact_url(outgoing.url)
    secrets = (*outgoing.secrets, *url_secrets(outgoing.url))
    try:
        with client.stream(
            outgoing.method,
            outgoing.url,
            headers=outgoing.headers,
            content=outgoing.body,
            timeout=timeout,
            follow_redirects=False,
        ) as reply:
            return _outcome(reply, where, secrets, rule)
    except httpx.TimeoutException as exc:
        return SendOutcome.retry_later(None, f"{where}: timed out ({type(exc).__name__})")
    except DEAD_URL_ERRORS as exc:
        return SendOutcome.channel_dead(None, scrub(f"{where}: {_describe(exc)}", secrets))
    except PERMANENT_ERRORS as exc:
        return SendOutcome.permanent(None, scrub(f"{where}: {_describe(exc)}", secrets))
    except httpx.TransportError as exc:
        return SendOutcome.retry_later(None, scrub(f"{where}: {_describe(exc)}", secrets))


def classify(
    status_code: int,
    error: str,
    retry_after_s: float | None = None,
    *,
    body: str = "",
    rule: Rule = by_status,
) -> SendOutcome:
    """The outcome of an answer with ``status_code`` and ``body`` (its start, on one line) as
    ``rule`` judges it; ``error`` is kept unless delivered. Transient statuses are retried
    whatever the rule says, so no rule can disable a channel for a receiver's bad moment."""
    if 200 <= status_code < 300:
        return SendOutcome.ok(status_code)
    answer = Answer(status_code, body)
    verdict = "retry" if answer.transient else rule(answer)
    return SendOutcome.judged(verdict, status_code, error, retry_after_s)


def send_message(
    client: httpx.Client,
    channel: ChannelConfig,
    message: AlertMessage,
    key: str,
    now: datetime,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> SendOutcome:
    """Build ``message`` for ``channel`` with idempotency key ``key`` at ``now``, and send it
    (through apprise for an apprise channel), judging the answer by the kind's rule; to each
    of its addresses, when it has several (``combined``: one that accepts is enough). A channel
    that cannot be built for (a pagerduty channel without a routing key) is a dead channel, not
    an exception: no message to it can be sent until its config changes."""
    if channel.kind == "apprise":
        # apprise loads its hundred service plugins on import (2 MiB): only where one is used
        from monitor.alerts.channels import apprise as apprise_channel

        return apprise_channel.send(channel, message)
    builder = REGISTRY.get(channel.kind)
    if builder is None:
        return SendOutcome.channel_dead(None, f"channel {channel.name!r}: no sender for its kind")
    try:
        outgoings = [builder(message, one, key, now) for one in at_each_address(channel)]
    except ConfigError as exc:
        return SendOutcome.channel_dead(None, str(exc))
    rule = RULES.get(channel.kind, by_status)
    outcomes = [send(client, outgoing, timeout, rule) for outgoing in outgoings]
    outcome = combined(outcomes)
    if outcome.delivered and len(outcomes) > 1:
        for missed in (o for o in outcomes if not o.delivered):
            log.warning(
                "channel %r: delivered, but not to every address: %s", channel.name, missed.error
            )
    return outcome


def at_each_address(channel: ChannelConfig) -> list[ChannelConfig]:
    """The channel once per address it sends to (``ChannelConfig.addresses``: each
    Alertmanager of an HA cluster), each with that address as its ``url``."""
    if len(channel.addresses) == 1:
        return [channel]
    return [channel.model_copy(update={"url": url, "urls": None}) for url in channel.addresses]


def combined(outcomes: Sequence[SendOutcome]) -> SendOutcome:
    """One outcome for one message sent to several addresses (non-empty ``outcomes``):
    delivered when one of them accepted it (an Alertmanager cluster shares what it was told);
    else retried when one of them may take it later; else dead when every one said the channel
    is dead; else failed. The errors are joined, each naming its (redacted) address."""
    if len(outcomes) == 1:
        return outcomes[0]
    accepted = next((o for o in outcomes if o.delivered), None)
    if accepted is not None:
        return accepted
    error = "; ".join(o.error or "?" for o in outcomes)
    retried = [o for o in outcomes if o.retry]
    if retried:
        waits = [o.retry_after_s for o in retried if o.retry_after_s is not None]
        return SendOutcome.retry_later(retried[0].status_code, error, min(waits, default=None))
    if all(o.dead for o in outcomes):
        return SendOutcome.channel_dead(outcomes[0].status_code, error)
    return SendOutcome.permanent(outcomes[0].status_code, error)


def _outcome(
    reply: httpx.Response, where: str, secrets: tuple[str, ...], rule: Rule
) -> SendOutcome:
    code = reply.status_code
    if 200 <= code < 300:
        return SendOutcome.ok(code)  # the body is not read: nothing in it changes the outcome
    snippet = _snippet(reply)
    error = scrub(f"HTTP {code} from {where}" + (f": {snippet}" if snippet else ""), secrets)
    return classify(code, error, _retry_after(reply), body=snippet, rule=rule)


def _snippet(reply: httpx.Response) -> str:
    """The start of an error answer, on one line. A receiver that cannot send it in time, or
    breaks off, leaves it empty: the status code already decided the outcome."""
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in reply.iter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= SNIPPET_BYTES:
                break
    except httpx.HTTPError:
        pass
    text = b"".join(chunks)[:SNIPPET_BYTES].decode("utf-8", "replace")
    line = " ".join(text.split())
    return line if len(line) <= SNIPPET_CHARS else line[: SNIPPET_CHARS - 1] + "…"


def _retry_after(reply: httpx.Response) -> float | None:
    """Retry-After in seconds; its HTTP-date form is rare from webhook receivers and ignored."""
    value = reply.headers.get("Retry-After", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if 0 <= seconds < 86400 else None


def _describe(exc: Exception) -> str:
    detail = str(exc)
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
