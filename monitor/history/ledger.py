"""The interruption ledger's lives: each instance that existed in a period, how long it existed
in it, and, where its life ended in the period, who ended it and how long it lived.

An instance is a target that names its ``instance_type`` or was found by a discovery source
(``discovered_by``): a training job's heartbeat target with neither is no instance. Its hours are
its life in the period (:func:`monitor.history.lifetimes.alive_in`: registration, or imported
history, to retirement), probed or not: an instance can be taken away whether or not we watched.
A life ends in the period when it was retired in it; a retirement no sweep explained
(``ended_by`` empty: the target was deleted or left the config) is the user's.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from monitor.db.models import Target
from monitor.history.lifetimes import alive_in, starts
from monitor.sla.interruptions import LedgerLine, Life, ledger
from monitor.sla.intervals import Span

HOUR = 3600.0
UNEXPLAINED_END = "user"  # a retirement without a sweep's word: deleted, or gone from the config


def is_instance(target: Target) -> bool:
    """Whether the ledger counts ``target``: it names an instance type or was discovered."""
    return bool(target.instance_type or target.discovered_by)


def lives_in(session: Session, period: Span) -> list[Life]:
    """Every instance's life in ``period``, by target name."""
    alive = [
        (a.target, a.lifetime)
        for a in alive_in(session, period)
        if a.lifetime is not None and is_instance(a.target)
    ]
    born = starts(session, [row.id for row, _ in alive if _ends_in(row, period)])
    lives = []
    for row, span in alive:
        end = row.retired_at if _ends_in(row, period) else None
        lives.append(
            Life(
                provider=row.provider,
                instance_type=row.instance_type,
                capacity=row.capacity or "unknown",
                hours_in_period=(span.end - span.start).total_seconds() / HOUR,
                ended_by=(row.ended_by or UNEXPLAINED_END) if end else None,
                lifetime_h=(end - born[row.id]).total_seconds() / HOUR if end else None,
            )
        )
    return lives


def ledger_in(session: Session, period: Span) -> list[LedgerLine]:
    """The interruption ledger of ``period``: one line per provider, instance type, capacity."""
    return ledger(lives_in(session, period))


def _ends_in(target: Target, period: Span) -> bool:
    return target.retired_at is not None and period.start < target.retired_at <= period.end
