"""A worker runs a periodic task's message only if the database admits it: sent under the
lease's current fencing token, for a slot not run yet (``monitor.scheduler.lease.admit``).

Every slamon task has this base (``Celery(task_cls=…)``). A message without the leader's
headers (a task another task or the command line sent) runs as before; one with them is
admitted in one short transaction first, and a refused one returns without running, with a
line on the console's log (counted on the entry's row, and on /metrics).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from celery import Task

from workers.leader import ENTRY, FENCE, SLOT

log = logging.getLogger(__name__)


class FencedTask(Task):  # type: ignore[misc]
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        token = self.request.get(FENCE) if self.request is not None else None
        if token is not None and not admitted(
            str(self.request.get(ENTRY)), float(self.request.get(SLOT)), int(token)
        ):
            return None
        return super().__call__(*args, **kwargs)


def admitted(entry: str, slot_epoch: float, token: int) -> bool:
    from monitor.scheduler.lease import admit
    from workers.runtime import runtime

    slot = datetime.fromtimestamp(slot_epoch, UTC)
    with runtime().transaction() as session:
        verdict = admit(session, entry, slot, token)
    if verdict == "run":
        return True
    why = "its leader has lost the lease" if verdict == "fenced" else "that slot already ran"
    log.warning("not running %s for %s (token %d): %s", entry, slot.isoformat(), token, why)
    return False
