"""Celery task durations, for /metrics.

Workers serve no HTTP of their own and run as several processes, so each process tallies its
tasks' runs in memory and adds them to the ``task_stats`` table now and then; whichever process
serves /metrics reads the table. Adding deltas (never overwriting totals) keeps several workers'
figures correct, and a flush that fails keeps its deltas for the next one: a database outage
delays the figures, it does not lose them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Table, case
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from monitor.db.models import TaskStat

FLUSH_EVERY_S = 10.0


@dataclass(slots=True)
class TaskTally:
    """Runs of one task since the last flush."""

    runs: int = 0
    failures: int = 0
    seconds_total: float = 0.0
    last_seconds: float = 0.0
    last_finished_at: datetime | None = None

    def add(self, seconds: float, failed: bool, finished_at: datetime) -> None:
        self.runs += 1
        self.failures += int(failed)
        self.seconds_total += seconds
        self.last_seconds = seconds
        self.last_finished_at = finished_at


@dataclass
class TaskStatsBuffer:
    """One process's unflushed tallies by task name."""

    flush_every_s: float = FLUSH_EVERY_S
    tallies: dict[str, TaskTally] = field(default_factory=dict)
    last_flush_at: datetime | None = None

    def record(self, task: str, seconds: float, failed: bool, finished_at: datetime) -> None:
        self.tallies.setdefault(task, TaskTally()).add(max(0.0, seconds), failed, finished_at)

    def due(self, now: datetime) -> bool:
        if not self.tallies:
            return False
        if self.last_flush_at is None:
            return True
        return (now - self.last_flush_at).total_seconds() >= self.flush_every_s

    def take(self, now: datetime) -> dict[str, TaskTally]:
        """Hand the tallies over for a flush; ``give_back`` them if it fails."""
        taken, self.tallies, self.last_flush_at = self.tallies, {}, now
        return taken

    def give_back(self, taken: dict[str, TaskTally]) -> None:
        for task, tally in taken.items():
            mine = self.tallies.setdefault(task, TaskTally())
            mine.runs += tally.runs
            mine.failures += tally.failures
            mine.seconds_total += tally.seconds_total
            if tally.last_finished_at and (
                mine.last_finished_at is None or tally.last_finished_at > mine.last_finished_at
            ):
                mine.last_seconds, mine.last_finished_at = (
                    tally.last_seconds,
                    tally.last_finished_at,
                )


def add_tallies(session: Session, tallies: dict[str, TaskTally]) -> None:
    """Add ``tallies`` to the stored totals, one upsert per task (``runs = runs + n``)."""
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    table: Table = TaskStat.__table__  # type: ignore[assignment]
    for task, tally in sorted(tallies.items()):  # a fixed order: no deadlock between workers
        assert tally.last_finished_at is not None
        stmt = insert(table).values(
            task=task,
            runs=tally.runs,
            failures=tally.failures,
            seconds_total=tally.seconds_total,
            last_seconds=tally.last_seconds,
            last_finished_at=tally.last_finished_at,
        )
        newer = stmt.excluded.last_finished_at >= table.c.last_finished_at
        stmt = stmt.on_conflict_do_update(
            index_elements=["task"],
            set_={
                "runs": table.c.runs + stmt.excluded.runs,
                "failures": table.c.failures + stmt.excluded.failures,
                "seconds_total": table.c.seconds_total + stmt.excluded.seconds_total,
                # workers flush in any order: the latest finished run wins
                "last_seconds": case(
                    (newer, stmt.excluded.last_seconds), else_=table.c.last_seconds
                ),
                "last_finished_at": case(
                    (newer, stmt.excluded.last_finished_at), else_=table.c.last_finished_at
                ),
            },
        )
        session.execute(stmt)
