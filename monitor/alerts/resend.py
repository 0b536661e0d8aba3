"""Posting an alertmanager channel's alerts again on a timer, as Prometheus does.

Alertmanager keeps alerts in memory only, and a firing alert it is not told about again ends
at its ``endsAt`` (``channels/alertmanager.py``: four resend periods ahead). So every
``resend_every`` (60 s by default) each enabled alertmanager channel is told again, in batches
of 64, of every alert that slamon told it and that still stands:

- an alert firing whose latest delivery to the channel is its firing (the message that
  delivery holds, with ``endsAt`` moved on): a restarted Alertmanager has it back within one
  period, and if slamon stops, the alert ends there by itself;
- an alert resolved in the last 15 minutes whose latest delivery to the channel is its resolve
  (with ``endsAt`` its resolve time): an Alertmanager that was away when it resolved still
  hears it end (Prometheus keeps resolved alerts 15 minutes for the same reason).

What was never delivered to the channel is not resent: an alert muted when it fired (a silence,
a maintenance window, grouped under an incident), a notice (sent once), a message the
Alertmanager refused (a ``failed`` delivery). An alert the routes no longer send to the channel
stops being resent and ends at its ``endsAt``; a silence made after an alert was delivered
does not take it back (silence it in Alertmanager), as slamon's own re-notifications do not.

The task runs every period of the channel resent most often; a channel resent less often is
due in the run whose period holds one of its own slots (``due``). A resend is idempotent for
Alertmanager, so a run lost or doubled changes nothing. An Alertmanager that does not take a
resend is logged (a warning per address and run) and asked again next period; nothing is
recorded, and the worker carries on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session, sessionmaker

from monitor.alerts.channels import RULES, alertmanager
from monitor.alerts.channels.model import AlertMessage
from monitor.alerts.channels.send import DEFAULT_TIMEOUT_S, at_each_address, send
from monitor.alerts.engine import matchable
from monitor.alerts.routing import route
from monitor.config.models import ChannelConfig, Config
from monitor.db.engine import reading
from monitor.db.models import Alert, Channel, Delivery
from monitor.scheduler.slots import interval_slot

KIND = "alertmanager"
RESOLVED_KEPT = timedelta(minutes=15)  # resolved alerts are resent this long (Prometheus' too)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ResendRun:
    """One run: the channels resent to, the alerts resent (per channel), the POSTs an
    Alertmanager took and those it did not."""

    channels: int = 0
    alerts: int = 0
    accepted: int = 0
    refused: int = 0


def channels_of(config: Config) -> list[ChannelConfig]:
    return [channel for channel in config.channels if channel.kind == KIND]


def period(config: Config) -> float | None:
    """How often the resend task runs: the shortest ``resend_every`` of the alertmanager
    channels; None without one (then it is not scheduled)."""
    periods = [channel.resend_s for channel in channels_of(config)]
    return min(periods) if periods else None


def due(now: datetime, run_every_s: float, every_s: float) -> bool:
    """Whether a channel resent every ``every_s`` is due in the run at ``now`` of a task run
    every ``run_every_s`` (≤ ``every_s``): one of its slots began in that run's period."""
    run_slot = interval_slot(now, run_every_s)
    previous = run_slot - timedelta(seconds=run_every_s)
    return interval_slot(run_slot, every_s) > interval_slot(previous, every_s)


def standing(session: Session, channel: str, now: datetime) -> list[AlertMessage]:
    """The messages to tell ``channel`` again at ``now``: each alert's latest delivery to it,
    where that still stands (see the module's docstring), oldest alert first."""
    recent = now - RESOLVED_KEPT
    latest = (
        select(func.max(Delivery.id))
        .join(Channel, Channel.id == Delivery.channel_id)
        .join(Alert, Alert.id == Delivery.alert_id)
        .where(Channel.name == channel, Channel.enabled.is_(True))
        .where(or_(Alert.state == "firing", Alert.resolved_at >= recent))
        .group_by(Delivery.alert_id)
    )
    still = or_(
        and_(Alert.state == "firing", Delivery.event == "firing"),
        and_(
            Alert.state == "resolved",
            Delivery.event == "resolved",
            Alert.resolved_at >= recent,
        ),
    )
    query = (
        select(Delivery.payload)
        .join(Alert, Alert.id == Delivery.alert_id)
        .where(Delivery.id.in_(latest), Delivery.status != "failed", still)
        .order_by(Alert.started_at, Alert.id)
    )
    return list(_messages(session.scalars(query)))


def routed(messages: Sequence[AlertMessage], channel: str, config: Config) -> list[AlertMessage]:
    """Those of ``messages`` the routes still send to ``channel``."""
    names = [c.name for c in config.channels]
    return [
        message
        for message in messages
        if channel
        in route(matchable(message.labels, message.rule, message.severity), config.routes, names)
    ]


def resend(
    sessions: sessionmaker[Session],
    client: httpx.Client,
    config: Config,
    now: datetime,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> ResendRun:
    """Tell each alertmanager channel due at ``now`` again what stands (``standing``,
    ``routed``); never raises for what an Alertmanager or the network does."""
    run_every = period(config)
    if run_every is None:
        return ResendRun()
    channels = [c for c in channels_of(config) if due(now, run_every, c.resend_s)]
    with reading(sessions) as session:
        told = {c.name: routed(standing(session, c.name, now), c.name, config) for c in channels}
    totals = [0, 0, 0, 0]
    for channel in channels:
        accepted, refused = _post(client, channel, told[channel.name], now, timeout)
        for i, count in enumerate((1, len(told[channel.name]), accepted, refused)):
            totals[i] += count
    return ResendRun(*totals)


def _post(
    client: httpx.Client,
    channel: ChannelConfig,
    messages: list[AlertMessage],
    now: datetime,
    timeout: float,
) -> tuple[int, int]:
    accepted = refused = 0
    key = f"slamon-resend:{channel.name}:{int(now.timestamp())}"
    for batch in _batches(messages, alertmanager.MAX_BATCH):
        for one in at_each_address(channel):
            outgoing = alertmanager.build_batch(batch, one, key, now)
            outcome = send(client, outgoing, timeout, RULES[KIND])
            if outcome.delivered:
                accepted += 1
                continue
            refused += 1
            log.warning(
                "alertmanager channel %r: %d alerts not resent: %s",
                channel.name,
                len(batch),
                outcome.error,
            )
    return accepted, refused


def _batches(messages: list[AlertMessage], size: int) -> Iterator[list[AlertMessage]]:
    for start in range(0, len(messages), size):
        yield messages[start : start + size]


def _messages(payloads: Iterable[dict[str, Any]]) -> Iterator[AlertMessage]:
    for payload in payloads:
        try:
            yield AlertMessage.from_json(payload)
        except ValueError:  # a row no slamon wrote: the delivery sweep fails it on its own
            continue
