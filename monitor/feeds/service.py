"""Feed-layer entry points for tasks and the CLI: sync the catalog, list feeds to poll."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.config import Config
from monitor.db.models import Feed, Provider
from monitor.feeds.catalog import providers_for
from monitor.feeds.store import sync_providers


def sync_catalog(session: Session, config: Config) -> None:
    """Bring providers and feeds in the database in line with the catalog and the config."""
    sync_providers(session, providers_for(config))


def feeds_to_poll(session: Session, provider: str | None = None) -> list[int]:
    """Ids of enabled feeds, optionally of one provider, in a stable order."""
    query = select(Feed.id).join(Provider).where(Feed.enabled.is_(True)).order_by(Feed.id)
    if provider is not None:
        query = query.where(Provider.slug == provider)
    return list(session.scalars(query))
