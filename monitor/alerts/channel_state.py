"""Disabling a dead channel and enabling it again, in the caller's transaction.

A receiver that says the channel itself is dead (``SendOutcome.dead``: a revoked Slack token, a
deleted Discord webhook, a 404 from a webhook URL) disables it: every later message would get the
same answer, and a channel that cannot be reached should say so once, not fail every delivery
one by one. Its deliveries are *held*, not failed: they stay pending and are not claimed while
the channel is disabled, so once it works again (its config changed, or `slamon alerts enable`)
they are sent, and nothing is lost because a webhook was rotated. A held delivery older than
``alerts.max_delivery_age`` expires, as a retried one would: stale news is not news.

A channel is enabled again when its config changes (its kind, URL or secret: the next delivery
sweep compares them with ``Channel.config_digest``) or by hand.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from monitor.config.models import ChannelConfig, Config
from monitor.db.models import Channel, Delivery
from monitor.events import emitting

DIGEST_SCHEME = "pbkdf2_sha256"
DIGEST_ITERATIONS = 100_000  # ~50 ms once per disabled channel and process: secrets stay secret
SALT_BYTES = 16


@dataclass(frozen=True, slots=True)
class ChannelState:
    """A channel as the CLI, the API and the status page show it. ``configured`` is False for
    a channel the database remembers but the config no longer names."""

    name: str
    kind: str
    enabled: bool
    disabled_at: datetime | None
    last_error: str | None
    configured: bool

    @property
    def state(self) -> Literal["enabled", "disabled"]:
        return "enabled" if self.enabled else "disabled"


# --------------------------------------------------------------------------- the config digest


def config_digest(channel: ChannelConfig, salt: bytes | None = None) -> str:
    """A salted, slow hash of what the channel sends to (kind, URL, secret): enough to tell that
    its config changed, of no use for recovering a webhook token or a signing secret."""
    salt = os.urandom(SALT_BYTES) if salt is None else salt
    material = _material(channel.kind, channel.url, channel.secret or "")
    digest = hashlib.pbkdf2_hmac("sha256", material, salt, DIGEST_ITERATIONS)
    return f"{DIGEST_SCHEME}${DIGEST_ITERATIONS}${salt.hex()}${digest.hex()}"


def same_config(digest: str | None, channel: ChannelConfig) -> bool:
    """Whether ``channel`` is the config that ``digest`` was made from. An unreadable or missing
    digest counts as the same: only a change we can see re-enables a channel by itself."""
    if not digest:
        return True
    return _same(digest, channel.kind, channel.url, channel.secret or "")


@functools.lru_cache(maxsize=256)
def _same(digest: str, kind: str, url: str, secret: str) -> bool:
    """Cached: a disabled channel is compared on every delivery sweep, with the same config."""
    scheme, _, rest = digest.partition("$")
    iterations, _, rest = rest.partition("$")
    salt, _, expected = rest.partition("$")
    if scheme != DIGEST_SCHEME or not iterations.isdigit():
        return True
    try:
        salt_bytes = bytes.fromhex(salt)
    except ValueError:
        return True
    material = _material(kind, url, secret)
    found = hashlib.pbkdf2_hmac("sha256", material, salt_bytes, int(iterations)).hex()
    return hmac.compare_digest(found, expected)


def _material(kind: str, url: str, secret: str) -> bytes:
    return json.dumps([kind, url, secret]).encode()


# --------------------------------------------------------------------------- disabling, enabling


def disable(
    session: Session,
    channel_id: int,
    config: ChannelConfig | None,
    error: str | None,
    now: datetime,
) -> bool:
    """Disable the channel with ``error`` (redacted already) as its last error; False when it
    was disabled already (two workers hearing the same answer print one line). The row is
    locked first, so on PostgreSQL the second worker waits and then sees it disabled."""
    row = session.get_one(Channel, channel_id, with_for_update=True)
    if not row.enabled:
        return False
    row.enabled, row.disabled_at, row.last_error = False, now, error
    row.config_digest = config_digest(config) if config is not None else None
    emitting.channel_disabled(session, row.name, row.kind, error)
    return True


def enable(session: Session, row: Channel, config: Config, now: datetime, why: str) -> int:
    """Enable ``row`` again and make its held deliveries due now; how many are. Those held
    past ``alerts.max_delivery_age`` expire first (they are not sent late)."""
    expire_held(session, config, now)
    row.enabled, row.disabled_at, row.last_error, row.config_digest = True, None, None, None
    held = session.execute(
        update(Delivery)
        .where(Delivery.channel_id == row.id, Delivery.status == "pending")
        .values(next_attempt_at=now)
    )
    count = int(held.rowcount or 0)  # type: ignore[attr-defined]
    emitting.channel_enabled(session, row.name, why, count)
    return count


def enable_changed(session: Session, config: Config, now: datetime) -> list[str]:
    """Enable every disabled channel whose config changed since it was disabled; their names."""
    configured = {c.name: c for c in config.channels}
    enabled = []
    for row in session.scalars(select(Channel).where(Channel.enabled.is_(False))):
        channel = configured.get(row.name)
        if channel is not None and not same_config(row.config_digest, channel):
            enable(session, row, config, now, "its config changed")
            enabled.append(row.name)
    return enabled


def expire_held(session: Session, config: Config, now: datetime) -> int:
    """Expire the held deliveries (pending, to a disabled channel) older than
    ``alerts.max_delivery_age``; how many."""
    cutoff = now - timedelta(seconds=config.alerts.max_delivery_age)
    query = (
        select(Delivery, Channel.name)
        .join(Channel)
        .where(Channel.enabled.is_(False), Delivery.status == "pending")
        .where(Delivery.created_at < cutoff)
    )
    expired = 0
    for delivery, name in session.execute(query).all():
        delivery.status = "expired"
        delivery.last_error = (
            f"held while channel {name!r} was disabled, past alerts.max_delivery_age"
        )
        payload = delivery.payload or {}
        labels = {str(k): str(v) for k, v in dict(payload.get("labels") or {}).items()}
        emitting.delivery_given_up(
            session,
            str(payload.get("rule", "?")),
            labels,
            name,
            delivery.attempts,
            delivery.last_error,
        )
        expired += 1
    return expired


# --------------------------------------------------------------------------- reading


def channel_states(session: Session, config: Config) -> list[ChannelState]:
    """Every channel the config names or the database remembers, by name."""
    rows = {row.name: row for row in session.scalars(select(Channel))}
    configured = {c.name: c for c in config.channels}
    states = []
    for name in sorted(rows.keys() | configured.keys()):
        row, channel = rows.get(name), configured.get(name)
        kind = channel.kind if channel is not None else row.kind if row is not None else "?"
        states.append(
            ChannelState(
                name=name,
                kind=kind,
                enabled=row.enabled if row is not None else True,
                disabled_at=row.disabled_at if row is not None else None,
                last_error=row.last_error if row is not None else None,
                configured=channel is not None,
            )
        )
    return states
