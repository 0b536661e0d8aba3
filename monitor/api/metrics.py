"""/metrics in the Prometheus text format (prometheus-client): process metrics plus the
deployment's state read from the database at scrape time."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from sqlalchemy.orm import Session

from monitor.api.deps import AppState, app_state, db_session
from monitor.metrics import SlamonCollector
from monitor.sla.policy_config import policies_for

router = APIRouter()


@router.get("/metrics", tags=["metrics"], include_in_schema=False)
def metrics(
    session: Annotated[Session, Depends(db_session)],
    state: Annotated[AppState, Depends(app_state)],
) -> Response:
    registry = CollectorRegistry()
    registry.register(SlamonCollector(session, policies_for(state.config.sla_policies)))
    body = generate_latest(REGISTRY) + generate_latest(registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
