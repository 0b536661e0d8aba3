"""API tokens and per-target heartbeat tokens: made here, shown once, stored only as hashes.

Scopes: ``read`` (every GET), ``admin`` (changes, and every heartbeat) and ``events`` (writing
account events only: the providers' pushes and the agents' interruption notices, the scope an
EventBridge API destination or an Azure action group is given); admin implies read and events.
A heartbeat token belongs to one target and only lets a job push heartbeats (and its agent's
interruption notices) for that target.

The functions that take a session add or change rows and never commit: the CLI command or the
API request commits.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.db.base import utcnow
from monitor.db.models import ApiToken, Target
from monitor.errors import SlamonError

API_PREFIX = "slm_"
HEARTBEAT_PREFIX = "slmhb_"
RANDOM_BYTES = 32
SCOPES = ("read", "admin", "events")
MAX_NAME_LENGTH = 100
MAX_TOKEN_LENGTH = 200  # far above any token we issue; longer input is not worth hashing
TOUCH_EVERY = timedelta(minutes=1)

_IMPLIED = {
    "admin": {"admin", "read", "events"},
    "read": {"read"},
    "events": {"events"},
}


# --------------------------------------------------------------------------- pure


def generate(prefix: str = API_PREFIX) -> str:
    """A new plaintext token: ``prefix`` + 32 random bytes, URL-safe base64."""
    return prefix + secrets.token_urlsafe(RANDOM_BYTES)


def hash_token(plaintext: str) -> str:
    """The stored form of a token: sha256, hex.

    A fast hash is right here: the token holds 256 random bits, so there is nothing to
    brute-force and a slow password hash (bcrypt, scrypt) would only cost every request time.
    """
    return hashlib.sha256(plaintext.encode()).hexdigest()


def scope_allows(granted: str, needed: str) -> bool:
    """Whether a token of scope ``granted`` may do what needs ``needed``."""
    return needed in _IMPLIED.get(granted, set())


def heartbeat_token_matches(target: Target, plaintext: str) -> bool:
    """Whether ``plaintext`` is the current heartbeat token of ``target``."""
    stored = target.heartbeat_token_hash
    if stored is None or not _plausible(plaintext, HEARTBEAT_PREFIX):
        return False
    return hmac.compare_digest(stored, hash_token(plaintext))


def _plausible(plaintext: str, prefix: str) -> bool:
    return plaintext.startswith(prefix) and len(plaintext) <= MAX_TOKEN_LENGTH


# --------------------------------------------------------------------------- repository


def create(session: Session, name: str, scope: str) -> str:
    """Add an API token called ``name``; its plaintext, which is never stored and cannot be
    shown again. Raises ``SlamonError`` for an unknown scope, a bad or taken name."""
    name = name.strip()
    if scope not in SCOPES:
        raise SlamonError(f"unknown scope {scope!r}: use one of {', '.join(SCOPES)}")
    if not name or len(name) > MAX_NAME_LENGTH:
        raise SlamonError(f"a token name must be 1 to {MAX_NAME_LENGTH} characters")
    existing = by_name(session, name)
    if existing is not None:
        state = " (revoked; names are never reused)" if existing.revoked_at else ""
        raise SlamonError(f"a token named {name!r} already exists{state}")
    plaintext = generate()
    session.add(ApiToken(name=name, token_hash=hash_token(plaintext), scope=scope))
    session.flush()
    return plaintext


def by_name(session: Session, name: str) -> ApiToken | None:
    return session.scalars(select(ApiToken).where(ApiToken.name == name)).one_or_none()


def list_tokens(session: Session) -> Sequence[ApiToken]:
    """Every token, revoked ones included, by name."""
    return session.scalars(select(ApiToken).order_by(ApiToken.name)).all()


def revoke(session: Session, name: str, now: datetime | None = None) -> ApiToken:
    """Revoke the token called ``name`` (a revoked token stays revoked at its first time).
    Raises ``SlamonError`` when there is none."""
    row = by_name(session, name)
    if row is None:
        raise SlamonError(f"no token named {name!r} (see `slamon token list`)")
    if row.revoked_at is None:
        row.revoked_at = now or utcnow()
    return row


def verify(session: Session, plaintext: str, now: datetime | None = None) -> ApiToken | None:
    """The live (not revoked) token whose plaintext this is, or None.

    Records the use in ``last_used_at``, at most once a minute so that reads do not turn every
    request into a write.
    """
    if not _plausible(plaintext, API_PREFIX):
        return None
    digest = hash_token(plaintext)
    # Looking the row up by the digest leaks no timing that helps: an attacker cannot choose
    # the digest's prefix. compare_digest is the constant-time check on what was found.
    row = session.scalars(select(ApiToken).where(ApiToken.token_hash == digest)).one_or_none()
    if row is None or row.revoked_at is not None:
        return None
    if not hmac.compare_digest(row.token_hash, digest):
        return None
    now = now or utcnow()
    if row.last_used_at is None or now - row.last_used_at >= TOUCH_EVERY:
        row.last_used_at = now
    return row


def create_heartbeat_token(session: Session, target: Target) -> str:
    """A fresh heartbeat token for ``target`` (replacing any earlier one); its plaintext."""
    plaintext = generate(HEARTBEAT_PREFIX)
    target.heartbeat_token_hash = hash_token(plaintext)
    session.flush()
    return plaintext
