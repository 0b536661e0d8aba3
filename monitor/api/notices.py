"""Operator notices over the API: post one (a notice, or maintenance announced ahead), list
them (current, upcoming, past), end one now. ``monitor.notices`` writes them and the
maintenance window a scoped maintenance notice holds; ``monitor.history.notices`` reads them."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response
from fastapi import Path as FastApiPath
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, Field

from monitor import notices
from monitor.api.auth import AdminToken, DbSession, ReadToken
from monitor.api.errors import ApiError, body_reader, error_responses, parse_body
from monitor.api.queries import page
from monitor.api.schemas import Instant, Limit, Offset
from monitor.api.targets import DEFAULT_LIMIT, NO_NUL
from monitor.db.base import utcnow
from monitor.history.notices import Phase, listing, view

router = APIRouter(
    prefix="/api/v1/notices",
    tags=["notices"],
    responses=error_responses(401, 403, 404, 413, 422, 429),
)
MAX_ID = 2**31 - 1  # the id column is a 32-bit integer: larger ids cannot exist
ONE_LINE = r"^[^\x00\r\n]*\S[^\x00\r\n]*$"  # not blank, no line break, no NUL


def _name(most: int) -> Any:
    return Field(default=None, min_length=1, max_length=most, pattern=NO_NUL)


class NoticeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: Annotated[str, Field(max_length=notices.MAX_TITLE, pattern=ONE_LINE)]
    body: Annotated[str, Field(max_length=notices.MAX_BODY, pattern=NO_NUL)] = Field(
        default="", description="Plain text, shown as written (line breaks kept)."
    )
    kind: Literal["notice", "maintenance"] = Field(
        default="notice",
        description="maintenance with a scope is also a maintenance window for the SLA "
        "(from starts_at, never before it was posted, to ends_at).",
    )
    severity: Literal["info", "minor", "major", "critical"] = "info"
    starts_at: Instant | None = Field(default=None, description="Default: now; later: upcoming.")
    ends_at: Instant | None = Field(
        default=None,
        description="After starts_at and after now (422 otherwise); required for maintenance. "
        "Without it a notice shows until it is ended.",
    )
    provider: Annotated[str | None, _name(notices.MAX_NAME["provider"])]
    region: Annotated[str | None, _name(notices.MAX_NAME["region"])]
    pool: Annotated[str | None, _name(notices.MAX_NAME["pool"])]
    targets: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=200, pattern=NO_NUL)]],
        Field(max_length=notices.MAX_TARGETS),
    ] = []


class ScopeOut(BaseModel):
    provider: str | None
    region: str | None
    pool: str | None
    targets: list[str]


class NoticeOut(BaseModel):
    id: int
    title: str
    body: str
    kind: str
    severity: str
    phase: Phase
    starts_at: datetime
    ends_at: datetime | None = Field(description="as announced")
    ended_at: datetime | None = Field(description="when an operator ended it early")
    scope: ScopeOut = Field(description="all empty: the whole deployment")
    in_sla: bool = Field(description="a maintenance window the SLA arithmetic subtracts")
    created_at: datetime
    created_by: str | None
    ended_by: str | None


class NoticePage(BaseModel):
    items: list[NoticeOut]
    total: int
    limit: int
    offset: int
    next_offset: int | None


@router.get("", response_model=NoticePage)
def list_notices(
    _token: ReadToken,
    session: DbSession,
    phase: Annotated[
        list[Phase] | None,
        Query(description="Repeat for several; default: current and upcoming."),
    ] = None,
    limit: Limit = DEFAULT_LIMIT,
    offset: Offset = 0,
) -> dict[str, Any]:
    """Notices in the phases asked for: current ones first (newest start first), then
    upcoming, then past."""
    now = utcnow()
    query, order = listing(now, tuple(phase or ("current", "upcoming")))
    return page(
        session,
        query,
        order,
        limit,
        offset,
        lambda rows: [view(r).fields(now) for (r,) in rows],
    )


@router.post(
    "",
    status_code=201,
    response_model=NoticeOut,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": NoticeIn.model_json_schema()}},
        }
    },
)
def post_notice(
    token: AdminToken,
    session: DbSession,
    raw: Annotated[bytes, Depends(body_reader())],
) -> dict[str, Any]:
    """Post a notice, or announce maintenance. Beyond the schema: ``ends_at`` must be after
    ``starts_at`` and after now, and maintenance needs one (422 naming the field otherwise)."""
    body = parse_body(NoticeIn, raw)
    now = utcnow()
    draft = notices.NoticeDraft(
        title=body.title,
        body=body.body,
        kind=body.kind,
        severity=body.severity,
        starts_at=body.starts_at or now,
        ends_at=body.ends_at,
        provider=body.provider,
        region=body.region,
        pool=body.pool,
        targets=tuple(body.targets),
    )
    try:
        posted = notices.post(session, draft, token.name, now)
    except notices.NoticeRefused as refused:
        error = {"type": "value_error", "loc": ("body", refused.field), "msg": refused.reason}
        raise RequestValidationError([error]) from None
    session.commit()
    return posted.fields(now)


@router.delete("/{notice_id}", status_code=204, response_class=Response)
def end_notice(
    notice_id: Annotated[int, FastApiPath(ge=1, le=MAX_ID)], token: AdminToken, session: DbSession
) -> Response:
    """End a notice now (call it off if it has not begun), and the maintenance window it
    holds; it stays listed with ``phase=past``. A notice already past is left as it was."""
    try:
        notices.end(session, notice_id, token.name, utcnow())
    except notices.NoticeNotFound as missing:
        raise ApiError(404, str(missing)) from None
    session.commit()
    return Response(status_code=204)
