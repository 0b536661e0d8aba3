"""Sending the outbox: claim due deliveries under a lease, send outside any transaction, record
the outcome. A worker killed mid-send leaves a lease that expires and the delivery is sent again
with the same Idempotency-Key; a receiver down for hours gets it later, with backoff. A receiver
that says the channel is dead disables it, and its deliveries are held until it is enabled again
(``monitor.alerts.channel_state``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
from sqlalchemy import or_, select
from sqlalchemy.orm import Session, sessionmaker

from monitor.alerts import channel_state
from monitor.alerts.channels.model import AlertMessage, SendOutcome
from monitor.alerts.channels.send import send_message
from monitor.config.models import ChannelConfig, Config
from monitor.db.base import utcnow
from monitor.db.models import Channel, Delivery
from monitor.events import emitting

LEASE = timedelta(seconds=60)  # longer than one send can take (send.DEFAULT_TIMEOUT_S per phase)


@dataclass(frozen=True, slots=True)
class Claimed:
    id: int
    channel: str
    key: str
    payload: dict[str, object]


@dataclass(frozen=True, slots=True)
class DeliveryRun:
    delivered: int = 0
    retrying: int = 0
    failed: int = 0
    held: int = 0  # the channel said it is dead: held until it is enabled again


def backoff(attempts: int, base_s: float, max_s: float) -> timedelta:
    """Exponential: base, 2×base, 4×base… capped."""
    return timedelta(seconds=min(max_s, base_s * 2 ** max(0, attempts - 1)))


def claim_due(session: Session, worker: str, now: datetime, limit: int = 50) -> list[Claimed]:
    """Pending deliveries that are due and not leased (SKIP LOCKED: replicas never share one),
    to channels that are enabled (a disabled channel's are held)."""
    query = (
        select(Delivery, Channel.name)
        .join(Channel)
        .where(Delivery.status == "pending", Delivery.next_attempt_at <= now)
        .where(Channel.enabled.is_(True))
        .where(or_(Delivery.lease_until.is_(None), Delivery.lease_until < now))
        .order_by(Delivery.next_attempt_at, Delivery.id)
        .limit(limit)
        .with_for_update(skip_locked=True, of=Delivery)
    )
    claimed = []
    for delivery, channel in session.execute(query):
        delivery.lease_until, delivery.leased_by = now + LEASE, worker
        claimed.append(
            Claimed(delivery.id, channel, delivery.idempotency_key, dict(delivery.payload))
        )
    return claimed


def message_of(payload: dict[str, object]) -> AlertMessage:
    """The message an outbox row holds (``AlertMessage.to_json``, or an older slamon's shape).
    Raises ValueError when the row is not one."""
    return AlertMessage.from_json(payload)


def record(
    session: Session, claimed: Claimed, outcome: SendOutcome, config: Config, now: datetime
) -> str:
    """Store the attempt; returns the delivery's new status. A dead channel's answer disables the
    channel and holds this delivery (pending, due again as soon as the channel is enabled):
    the message was not at fault."""
    delivery = session.get_one(Delivery, claimed.id)
    delivery.attempts += 1
    delivery.last_status_code, delivery.last_error = outcome.status_code, outcome.error
    delivery.lease_until = delivery.leased_by = None
    if outcome.delivered:
        delivery.status, delivery.delivered_at = "delivered", now
    elif outcome.dead:
        delivery.next_attempt_at = now
        channel = next((c for c in config.channels if c.name == claimed.channel), None)
        channel_state.disable(session, delivery.channel_id, channel, outcome.error, now)
    elif not outcome.retry:
        delivery.status = "failed"
    elif now - delivery.created_at > timedelta(seconds=config.alerts.max_delivery_age):
        delivery.status = "expired"
    else:
        wait = backoff(delivery.attempts, config.alerts.retry_base, config.alerts.retry_max)
        if outcome.retry_after_s:
            wait = max(wait, timedelta(seconds=min(outcome.retry_after_s, config.alerts.retry_max)))
        delivery.next_attempt_at = now + wait
    _tell(session, claimed, delivery)
    return delivery.status


def _tell(session: Session, claimed: Claimed, delivery: Delivery) -> None:
    """Delivered, or given up for good, is a console event; a retry still pending is not."""
    payload = claimed.payload
    rule, event = str(payload.get("rule", "?")), str(payload.get("event", "?"))
    stored = payload.get("labels")
    labels = {str(k): str(v) for k, v in stored.items()} if isinstance(stored, dict) else {}
    if delivery.status == "delivered":
        emitting.alert_delivered(session, rule, labels, claimed.channel, event)
    elif delivery.status in ("failed", "expired"):
        attempts, error = delivery.attempts, delivery.last_error
        emitting.delivery_given_up(session, rule, labels, claimed.channel, attempts, error)


def deliver_due(
    sessions: sessionmaker[Session],
    client: httpx.Client,
    config: Config,
    worker: str,
    clock: Callable[[], datetime] = utcnow,
    batch_size: int = 50,
) -> DeliveryRun:
    """One pass over (at most ``batch_size`` of) the due outbox, after enabling the disabled
    channels whose config changed and expiring what the others held too long.

    Each delivery is claimed just before it is sent, so its lease has to outlast one send (at
    most a few of the channel's timeouts), never a whole batch of slow sends: a batch claimed
    up front would outlive its lease and be claimed and sent again by the next sweep.
    """
    channels = {c.name: c for c in config.channels}
    counts = {"delivered": 0, "pending": 0, "failed": 0, "expired": 0, "held": 0}
    with sessions() as session, session.begin():
        counts["expired"] += channel_state.expire_held(session, config, clock())
        channel_state.enable_changed(session, config, clock())
    for _ in range(batch_size):
        with sessions() as session, session.begin():
            batch = claim_due(session, worker, clock(), limit=1)
        if not batch:
            break
        [claimed] = batch
        outcome = _send(client, channels.get(claimed.channel), claimed, clock())
        with sessions() as session, session.begin():
            status = record(session, claimed, outcome, config, clock())
            counts["held" if outcome.dead else status] += 1
    failed = counts["failed"] + counts["expired"]
    return DeliveryRun(counts["delivered"], counts["pending"], failed, counts["held"])


def _send(
    client: httpx.Client, channel: ChannelConfig | None, claimed: Claimed, now: datetime
) -> SendOutcome:
    if channel is None:
        return SendOutcome.permanent(None, f"channel {claimed.channel!r} is no longer configured")
    try:
        message = message_of(claimed.payload)
    except ValueError as exc:  # a row no slamon wrote: it fails alone, the sweep goes on
        return SendOutcome.permanent(None, f"the outbox row is not an alert message: {exc}")
    return send_message(client, channel, message, claimed.key, now)
