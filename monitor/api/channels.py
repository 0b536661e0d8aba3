"""GET /api/v1/channels: every notification channel and whether it is enabled."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends

from monitor.alerts.channel_state import channel_states
from monitor.api.auth import DbSession, ReadToken
from monitor.api.deps import AppState, app_state
from monitor.api.errors import error_responses
from monitor.api.schemas import ChannelOut

router = APIRouter(prefix="/api/v1", responses=error_responses(401, 403, 422, 429))


@router.get("/channels", response_model=list[ChannelOut], tags=["alerts"])
def list_channels(
    _token: ReadToken, session: DbSession, state: Annotated[AppState, Depends(app_state)]
) -> list[dict[str, Any]]:
    """Every notification channel the config names or slamon has sent to, by name: enabled, or
    disabled (``disabled_at``) because its receiver said it is dead, with that answer as
    ``last_error`` (redacted). A disabled channel holds its deliveries until its config changes
    or `slamon alerts enable NAME`. Not a page: a handful of channels."""
    return [
        {
            "name": c.name,
            "kind": c.kind,
            "state": c.state,
            "enabled": c.enabled,
            "disabled_at": c.disabled_at,
            "last_error": c.last_error,
            "configured": c.configured,
        }
        for c in channel_states(session, state.config)
    ]
