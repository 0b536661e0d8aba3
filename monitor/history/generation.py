"""Whether what happened has changed since a reader last looked, and a cache that knows.

The database logs every write to what the surfaces read (``history_changes``, filled by the
triggers of migration 0009 in the writing transaction). ``generation`` reads the log's size and
newest id in one statement; any committed write changes it (a write that commits after a
newer one still adds to the count). A reader reads the generation first, then its data, so
what it caches is never older than the generation it is filed under.

``ReadCache`` keeps one value per key and generation in this process, and never longer than
``max_age``: the probes' steady traffic (observed windows growing, heartbeats, feeds polled,
time passing an open outage) changes figures without a logged write, and ``max_age`` bounds
how late that shows. A state change, an outage, an incident or an alert shows at once, on
every API replica alike: each keeps its own cache, but reads the generation from the shared
database on every ``get`` (docs/operations.md, "API replicas").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Generic, TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.db.models import HistoryChange

T = TypeVar("T")
Generation = tuple[int, int]
# how long a surface may show figures no logged write has changed (observed time growing, an
# open outage lengthening, a verdict going stale): half the status page's own refresh
READ_MAX_AGE = timedelta(seconds=15)


def generation(session: Session) -> Generation:
    """(rows in the change log, its newest id): changes whenever a logged write commits."""
    count, newest = session.execute(select(func.count(), func.max(HistoryChange.id))).one()
    return int(count), int(newest or 0)


@dataclass(frozen=True, slots=True)
class Cached(Generic[T]):
    value: T
    generation: Generation
    built_at: datetime  # the ``now`` the value was built for


class ReadCache(Generic[T]):
    """A value per key, rebuilt when the generation moves or it is older than ``max_age``.
    Thread-safe; two threads missing at once both build (the later one is kept)."""

    def __init__(self, max_age: timedelta, size: int = 32) -> None:
        self.max_age = max_age
        self.size = size
        self._entries: dict[Hashable, Cached[T]] = {}
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(
        self, session: Session, key: Hashable, now: datetime, build: Callable[[], T]
    ) -> Cached[T]:
        """The value for ``key`` as of ``now``: the kept one if nothing changed and it is
        fresh enough, else ``build()``'s (read after the generation, so never older)."""
        current = generation(session)
        with self._lock:
            kept = self._entries.get(key)
        if (
            kept is not None
            and kept.generation == current
            and kept.built_at <= now < kept.built_at + self.max_age
        ):
            self.hits += 1
            return kept
        self.misses += 1
        fresh = Cached(build(), current, now)
        with self._lock:
            if len(self._entries) >= self.size and key not in self._entries:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = fresh
        return fresh

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
