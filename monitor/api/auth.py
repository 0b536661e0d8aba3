"""Who is asking: ``Authorization: Bearer <token>`` checked against the API tokens.

Missing, unknown and revoked tokens answer 401 with ``WWW-Authenticate: Bearer``; a valid
token whose scope is too small answers 403. Declare the auth dependency before anything that
reads the body, so an anonymous request is refused before its body is looked at.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from monitor import tokens
from monitor.api.deps import db_session
from monitor.api.errors import ApiError
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


def authenticate(session: Session, credentials: HTTPAuthorizationCredentials | None) -> ApiToken:
    """The live API token presented; 401 when it is missing, unknown or revoked."""
    token = tokens.verify(session, presented_token(credentials))
    if token is None:
        raise unauthorized("the token is unknown or revoked", invalid=True)
    if session.dirty:
        session.commit()  # the throttled last_used_at, before the handler's own work
    return token


def insufficient_scope(needed: str) -> ApiError:
    return ApiError(403, f"this needs a token with the {needed} scope")


def require_scope(token: ApiToken, needed: str) -> ApiToken:
    if not tokens.scope_allows(token.scope, needed):
        raise insufficient_scope(needed)
    return token


def require_read(credentials: Credentials, session: DbSession) -> ApiToken:
    """A dependency: a live token with the read (or admin) scope."""
    return require_scope(authenticate(session, credentials), "read")


def require_admin(credentials: Credentials, session: DbSession) -> ApiToken:
    """A dependency: a live token with the admin scope."""
    return require_scope(authenticate(session, credentials), "admin")


ReadToken = Annotated[ApiToken, Depends(require_read)]
AdminToken = Annotated[ApiToken, Depends(require_admin)]
