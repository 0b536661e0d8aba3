"""/metrics in the Prometheus text format (prometheus-client): process metrics plus the
deployment's state read from the database (kept while nothing happened, at most
``READ_MAX_AGE``: ``monitor.history.generation``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from sqlalchemy.orm import Session

from monitor.api.deps import AppState, app_state, db_session
from monitor.db.base import utcnow
from monitor.history.generation import READ_MAX_AGE, ReadCache
from monitor.metrics import HealthCollector, SlamonCollector, TrainingCollector

router = APIRouter()
# the deployment's part of a scrape, until something happened (this process's own metrics,
# the training jobs' latest heartbeats and slamon's own health are read live); a scrape
# reflects a state change, an outage or an alert at once
SCRAPES: ReadCache[bytes] = ReadCache(READ_MAX_AGE)


@router.get("/metrics", tags=["metrics"], include_in_schema=False)
def metrics(
    session: Annotated[Session, Depends(db_session)],
    state: Annotated[AppState, Depends(app_state)],
) -> Response:
    now = utcnow()

    def deployment() -> bytes:
        registry = CollectorRegistry()
        registry.register(SlamonCollector(session, state.config, now))
        return generate_latest(registry)

    kept = SCRAPES.get(session, id(state.config), now, deployment)
    live = CollectorRegistry()
    live.register(TrainingCollector(session))
    live.register(HealthCollector(session, state.config))
    body = generate_latest(REGISTRY) + kept.value + generate_latest(live)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
