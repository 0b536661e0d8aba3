"""How each configured discovery source is doing, judged once for every surface: the
``discovery_failing`` alert, ``GET /api/v1/discovery``, ``/metrics`` and the status page."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.config.models import Config
from monitor.db.models import DiscoverySource


@dataclass(frozen=True, slots=True)
class SourceHealth:
    """One source: never swept yet (``last_swept_at`` None: unknown, never fine), sweeping,
    or failing (its sweeps have failed for ``alerts.discovery_failing_after``)."""

    name: str
    kind: str
    every_s: float
    last_swept_at: datetime | None
    last_success_at: datetime | None
    consecutive_failures: int
    last_error: str | None
    instances: int
    failing: bool

    @property
    def state(self) -> str:
        if self.last_swept_at is None:
            return "unknown"
        if self.failing:
            return "failing"
        return "degraded" if self.consecutive_failures else "ok"


def is_failing(
    consecutive_failures: int, last_success_at: datetime | None, since: datetime,
    now: datetime, after: timedelta,
) -> bool:  # fmt: skip
    """Failing: the latest sweeps failed, and none has succeeded for ``after`` (counted from
    ``since``, when the source was first swept, if none ever has)."""
    return consecutive_failures > 0 and now - (last_success_at or since) >= after


def source_health(session: Session, config: Config, now: datetime) -> list[SourceHealth]:
    """Every source in the config, in its order, with what its sweeps left on record."""
    after = timedelta(seconds=config.alerts.discovery_failing_after)
    states = {s.name: s for s in session.scalars(select(DiscoverySource))}
    found = []
    for source in config.discovery:
        state = states.get(source.name)
        if state is None:
            found.append(SourceHealth(source.name, source.kind, source.every, None, None, 0,
                                      None, 0, False))  # fmt: skip
            continue
        failing = is_failing(
            state.consecutive_failures, state.last_success_at, state.created_at, now, after
        )
        found.append(
            SourceHealth(
                source.name,
                source.kind,
                source.every,
                state.last_swept_at,
                state.last_success_at,
                state.consecutive_failures,
                state.last_error,
                state.instances,
                failing,
            )
        )
    return found
