"""Silences over the API: mute alerts whose labels match, for a while (config silences too)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response
from fastapi import Path as FastApiPath
from pydantic import BaseModel, ConfigDict, Field, model_validator
from sqlalchemy import select

from monitor.api.auth import AdminToken, DbSession, ReadToken
from monitor.api.errors import ApiError, body_reader, error_responses, parse_body
from monitor.api.schemas import Instant
from monitor.db.base import utcnow
from monitor.db.models import Silence

router = APIRouter(
    prefix="/api/v1/silences",
    tags=["alerts"],
    responses=error_responses(401, 403, 404, 413, 422, 429),
)
Label = Annotated[str, Field(min_length=1, max_length=200)]
MAX_ID = 2**31 - 1  # the id column is a 32-bit integer: larger ids cannot exist


class SilenceIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    match: Annotated[dict[Label, Label], Field(min_length=1, max_length=20)]
    starts_at: Instant | None = Field(default=None, description="Default: now.")
    ends_at: Instant = Field(description="Must be after starts_at (422 otherwise).")
    comment: Annotated[str, Field(max_length=2000)] = ""

    @model_validator(mode="after")
    def _ends_later(self) -> SilenceIn:
        if self.starts_at is not None and self.ends_at <= self.starts_at:
            raise ValueError("ends_at: must be after starts_at")
        return self


def silence_out(row: Silence) -> dict[str, Any]:
    return {
        "id": row.id,
        "match": row.matchers,
        "starts_at": row.starts_at,
        "ends_at": row.ends_at,
        "comment": row.comment,
        "created_by": row.created_by,
        "created_at": row.created_at,
    }


@router.get("")
def list_silences(_token: ReadToken, session: DbSession, expired: bool = False) -> dict[str, Any]:
    """Silences in force now (``expired=true``: all)."""
    query = select(Silence).order_by(Silence.ends_at.desc())
    if not expired:
        query = query.where(Silence.ends_at > utcnow())
    return {"items": [silence_out(s) for s in session.scalars(query)]}


@router.post(
    "",
    status_code=201,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": SilenceIn.model_json_schema()}},
        }
    },
)
def create_silence(
    token: AdminToken,
    session: DbSession,
    raw: Annotated[bytes, Depends(body_reader())],
) -> dict[str, Any]:
    """Mute alerts whose labels match ``match`` until ``ends_at``. Beyond the schema:
    ``ends_at`` must be after ``starts_at``, and no string may hold a NUL character (422
    otherwise)."""
    body = parse_body(SilenceIn, raw)
    row = Silence(
        matchers=dict(body.match),
        starts_at=body.starts_at or utcnow(),
        ends_at=body.ends_at,
        comment=body.comment,
        created_by=token.name,
        source="api",
    )
    session.add(row)
    session.commit()
    return silence_out(row)


@router.delete("/{silence_id}", status_code=204, response_class=Response)
def expire_silence(
    silence_id: Annotated[int, FastApiPath(ge=1, le=MAX_ID)], _token: AdminToken, session: DbSession
) -> Response:
    """End a silence now (it stays listed with ``expired=true``)."""
    row = session.get(Silence, silence_id)
    if row is None:
        raise ApiError(404, f"no silence {silence_id}")
    row.ends_at = min(row.ends_at, utcnow())
    session.commit()
    return Response(status_code=204)
