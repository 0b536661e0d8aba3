"""Pruning the change log the history triggers write (``history_changes``, migration 0009)."""

from __future__ import annotations

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from monitor.db.models import HistoryChange

KEEP = 1000  # rows kept behind the newest: readers only compare counts and the newest id


def prune_changes(session: Session) -> int:
    """Delete all but the newest ``KEEP`` rows; returns how many went."""
    newest = session.scalar(select(func.max(HistoryChange.id)))
    if newest is None or newest <= KEEP:
        return 0
    result = session.execute(delete(HistoryChange).where(HistoryChange.id <= newest - KEEP))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
