"""Which targets a command or task should probe."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.db.models import Target
from monitor.errors import SlamonError


def live_probe_target_ids(session: Session, name: str | None = None) -> list[int]:
    """Ids of live, actively probed targets (all, or the one named); a clear error otherwise."""
    query = select(Target.id).where(Target.retired_at.is_(None), Target.kind != "heartbeat")
    if name is not None:
        query = query.where(Target.name == name)
    ids = list(session.scalars(query.order_by(Target.id)))
    if name is not None and not ids:
        raise SlamonError(f"no live probed target named {name!r} (see slamon.yaml or the API)")
    return ids
