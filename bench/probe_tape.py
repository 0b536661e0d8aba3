"""Every probe slamon stores, read while it is stored.

slamon's record is compact: the rollup deletes a routine success's raw row about three minutes
after its probe (its minute bucket keeps the count and latencies; ``monitor.probes.rollup``).
A benchmark that counts probes, gaps and late slots after its window would find most of the
window gone, so it reads the rows as they land: a thread polls ``probe_results`` every
``period`` seconds for rows at or after the newest it has seen, less ``OVERLAP_S`` (a round
committed late), and keeps each row once (by id). Kept compactly: per target, the probe times
(epoch seconds, an ``array('d')``) and outcomes (``array('b')``: 1, 0, -1 for unknown), about
9 bytes a probe (two hours of 1,000 targets every 5 s: 13 MB).

The poll is a range read on ``ix_probe_results_at`` (a few thousand rows every 10 s at 200
probes a second); on SQLite it reads beside the writers (WAL), never blocking them.
"""

from __future__ import annotations

import threading
from array import array
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from monitor.db.models import ProbeResult

OVERLAP_S = 60.0  # a round's rows can commit this long after the newest row already read
OUTCOME = {True: 1, False: 0, None: -1}


class ProbeTape:
    """Probe times and outcomes per target from ``since`` on, read every ``period`` seconds
    until :meth:`stop`; :meth:`times` and :meth:`outcomes` answer for any span seen."""

    def __init__(self, engine: sa.Engine, since: datetime, period: float = 10.0) -> None:
        self.engine, self.period = engine, period
        self._since = since
        self._at: dict[int, array[float]] = {}
        self._ok: dict[int, array[int]] = {}
        self._seen: dict[int, float] = {}  # id -> probe time, for rows inside the overlap
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.polls = 0

    def __enter__(self) -> ProbeTape:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """A last read, then no more."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self._poll()

    def times(self, since: datetime, until: datetime) -> dict[int, list[float]]:
        """Probe times (epoch seconds, in order) per target in [since, until)."""
        a, b = since.timestamp(), until.timestamp()
        with self._lock:
            return {
                target: sorted(t for t in stamps if a <= t < b)
                for target, stamps in self._at.items()
            }

    def outcomes(
        self, since: datetime, until: datetime
    ) -> dict[int, list[tuple[datetime, bool | None]]]:
        """``(at, ok)`` per target in [since, until), in time order."""
        a, b = since.timestamp(), until.timestamp()
        back = {1: True, 0: False, -1: None}
        found: dict[int, list[tuple[datetime, bool | None]]] = {}
        with self._lock:
            for target, stamps in self._at.items():
                oks = self._ok[target]
                rows = sorted((t, oks[i]) for i, t in enumerate(stamps) if a <= t < b)
                found[target] = [(datetime.fromtimestamp(t, UTC), back[o]) for t, o in rows]
        return found

    def count(self, since: datetime, until: datetime) -> int:
        return sum(len(v) for v in self.times(since, until).values())

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self._poll()

    def _poll(self) -> None:
        r = ProbeResult
        query = sa.select(r.id, r.target_id, r.at, r.ok).where(r.at >= self._since)
        with self.engine.connect() as c:
            rows = c.execute(query).all()
        newest = self._since.timestamp()
        with self._lock:
            for row_id, target, at, ok in rows:
                if row_id in self._seen:
                    continue
                stamp = (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp()
                self._seen[row_id] = stamp
                self._at.setdefault(target, array("d")).append(stamp)
                self._ok.setdefault(target, array("b")).append(OUTCOME[ok])
                newest = max(newest, stamp)
            floor = newest - OVERLAP_S
            self._seen = {i: t for i, t in self._seen.items() if t >= floor}
        self._since = max(self._since, datetime.fromtimestamp(floor, UTC))
        self.polls += 1


def window_start(start: datetime, interval_s: float) -> datetime:
    """Where a tape for a window starting at ``start`` begins: three intervals earlier, so the
    window's first probes have the one before them (late slots are gaps)."""
    return start - timedelta(seconds=3 * interval_s)
