"""Who is asking: ``Authorization: Bearer <token>`` checked against the API tokens.

Missing, unknown and revoked tokens answer 401 with ``WWW-Authenticate: Bearer``; a valid
token whose scope is too small answers 403. Declare the auth dependency before anything that
reads the body, so an anonymous request is refused before its body is looked at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from monitor import tokens
from monitor.api.deps import app_state, db_session
from monitor.api.errors import ApiError
from monitor.api.throttle import AuthThrottle, keys_for, token_key
from monitor.db.models import ApiToken

bearer = HTTPBearer(auto_error=False, description="An API token: `slamon token create`.")

Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
DbSession = Annotated[Session, Depends(db_session)]


def unauthorized(message: str, *, invalid: bool = False) -> ApiError:
    """401 with the challenge RFC 6750 asks for (``error="invalid_token"`` when one was sent)."""
    challenge = 'Bearer error="invalid_token"' if invalid else "Bearer"
    return ApiError(401, message, headers={"WWW-Authenticate": challenge})


def presented_token(credentials: HTTPAuthorizationCredentials | None) -> str:
    """The bearer token's text; 401 when there is none."""
    if credentials is None or not credentials.credentials:
        raise unauthorized("send an API token as `Authorization: Bearer <token>`")
    return credentials.credentials


def authenticate(
    session: Session, credentials: HTTPAuthorizationCredentials | None, guard: AuthGuard
) -> ApiToken:
    """The live API token presented; 401 when it is missing, unknown or revoked, 429 while
    this token or this client has failed too often (monitor/api/throttle.py)."""
    plaintext = presented_token(credentials)
    guard.before_lookup(plaintext)
    token = tokens.verify(session, plaintext)
    if token is None:
        raise guard.refuse(plaintext, unauthorized("the token is unknown or revoked", invalid=True))
    if session.dirty:
        session.commit()  # the throttled last_used_at, before the handler's own work
    return token


@dataclass(frozen=True, slots=True)
class AuthGuard:
    """The throttle as one request sees it: its client address."""

    throttle: AuthThrottle
    address: str | None

    def before_lookup(self, plaintext: str) -> None:
        """429 while this token's prefix is over its limit, before the token is looked up."""
        if (wait := self.throttle.retry_after(token_key(plaintext))) is not None:
            raise too_many(wait)

    def refuse(self, plaintext: str, error: ApiError) -> ApiError:
        """Count a bad token; ``error`` (a 401), or 429 once the address or prefix is over."""
        keys = keys_for(self.address, plaintext)
        wait = self.throttle.retry_after(keys)  # over before this one: refused as such
        self.throttle.failed(keys)
        return error if wait is None else too_many(wait)


def too_many(wait: int) -> ApiError:
    return ApiError(
        429,
        f"too many failed authentications; try again in {wait} s",
        headers={"Retry-After": str(wait)},
    )


def auth_guard(request: Request) -> AuthGuard:
    return AuthGuard(app_state(request).throttle, request.client.host if request.client else None)


Guard = Annotated[AuthGuard, Depends(auth_guard)]


def insufficient_scope(needed: str) -> ApiError:
    return ApiError(403, f"this needs a token with the {needed} scope")


def require_scope(token: ApiToken, needed: str) -> ApiToken:
    if not tokens.scope_allows(token.scope, needed):
        raise insufficient_scope(needed)
    return token


def require_read(credentials: Credentials, session: DbSession, guard: Guard) -> ApiToken:
    """A dependency: a live token with the read (or admin) scope."""
    return require_scope(authenticate(session, credentials, guard), "read")


def require_admin(credentials: Credentials, session: DbSession, guard: Guard) -> ApiToken:
    """A dependency: a live token with the admin scope."""
    return require_scope(authenticate(session, credentials, guard), "admin")


ReadToken = Annotated[ApiToken, Depends(require_read)]
AdminToken = Annotated[ApiToken, Depends(require_admin)]
