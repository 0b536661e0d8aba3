"""One kind of trouble as one process sees it (the database, the broker), so that a failure
that repeats every second prints once: pure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Episode:
    """One kind of trouble as one process sees it (the database, the broker): ``since`` when
    it began, None while all is well. Lets a failure that repeats every second print once."""

    since: datetime | None = None

    @property
    def active(self) -> bool:
        return self.since is not None

    def fail(self, at: datetime) -> tuple[Episode, bool]:
        """This episode after a failure at ``at``; True when that failure began it."""
        if self.since is not None:
            return self, False
        return Episode(at), True

    def recover(self, at: datetime) -> tuple[Episode, float | None]:
        """This episode after a success at ``at``; how long it lasted when that ended it."""
        if self.since is None:
            return self, None
        return Episode(), max(0.0, (at - self.since).total_seconds())
