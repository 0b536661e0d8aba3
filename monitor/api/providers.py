"""GET /api/v1/providers: providers with their feeds' polling health and open incidents."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter
from sqlalchemy import select

from monitor.api.auth import DbSession, ReadToken
from monitor.api.errors import error_responses
from monitor.api.queries import page
from monitor.api.schemas import Limit, Offset, ProviderPage
from monitor.api.targets import DEFAULT_LIMIT
from monitor.db.models import Feed, Provider
from monitor.history.incidents import unresolved_count

router = APIRouter(prefix="/api/v1", responses=error_responses(401, 403, 422, 429))


@router.get("/providers", response_model=ProviderPage, tags=["providers"])
def list_providers(
    _token: ReadToken, session: DbSession, limit: Limit = DEFAULT_LIMIT, offset: Offset = 0
) -> dict[str, Any]:
    """Providers by slug, with their feeds' polling health and how many incidents are open."""
    query = select(Provider, unresolved_count().label("open_incidents"))

    def out(rows: Sequence[Any]) -> list[dict[str, Any]]:
        ids = [row[0].id for row in rows]
        feeds: dict[int, list[Feed]] = {}
        if ids:
            for feed in session.scalars(
                select(Feed).where(Feed.provider_id.in_(ids)).order_by(Feed.id)
            ):
                feeds.setdefault(feed.provider_id, []).append(feed)
        return [
            {
                "slug": provider.slug,
                "name": provider.name,
                "sla_policy": provider.sla_policy,
                "regions": list(provider.regions or []),
                "feeds": [
                    {
                        "kind": f.kind,
                        "url": f.url,
                        "enabled": f.enabled,
                        "last_success_at": f.last_success_at,
                        "consecutive_failures": f.consecutive_failures,
                        "last_error": f.last_error,
                    }
                    for f in feeds.get(provider.id, [])
                ],
                "open_incidents": count or 0,
            }
            for provider, count in rows
        ]

    return page(session, query, [Provider.slug], limit, offset, out)
