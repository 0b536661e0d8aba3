"""Time every task this process runs and add the figures to ``task_stats`` (see
monitor/task_stats.py), at most every few seconds so that timing costs no write per task."""

from __future__ import annotations

import logging
import os
import time
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_process_shutdown

from monitor.db.base import utcnow
from monitor.task_stats import TaskStatsBuffer, add_tallies

log = logging.getLogger(__name__)

FAILED_STATES = frozenset({"FAILURE", "RETRY"})

_started: dict[str, float] = {}
_buffer = TaskStatsBuffer()
_buffer_pid = os.getpid()


def connect(app: Celery) -> None:
    """Hook the timing into Celery's task signals (once per process, whatever the app)."""
    task_prerun.connect(_on_prerun, weak=False, dispatch_uid="slamon-timing-prerun")
    task_postrun.connect(_on_postrun, weak=False, dispatch_uid="slamon-timing-postrun")
    worker_process_shutdown.connect(_on_shutdown, weak=False, dispatch_uid="slamon-timing-stop")


def _buffer_for_this_process() -> TaskStatsBuffer:
    """A forked pool child starts with its own empty buffer, not a copy of its parent's."""
    global _buffer, _buffer_pid
    if _buffer_pid != os.getpid():
        _buffer, _buffer_pid = TaskStatsBuffer(), os.getpid()
        _started.clear()
    return _buffer


def _on_prerun(task_id: str, **_: Any) -> None:
    _buffer_for_this_process()
    _started[task_id] = time.perf_counter()


def _on_postrun(task_id: str, task: Any, state: str | None = None, **_: Any) -> None:
    started = _started.pop(task_id, None)
    if started is None:
        return
    buffer = _buffer_for_this_process()
    now = utcnow()
    buffer.record(task.name, time.perf_counter() - started, state in FAILED_STATES, now)
    if buffer.due(now):
        flush(buffer)


def _on_shutdown(**_: Any) -> None:
    flush(_buffer_for_this_process())


def flush(buffer: TaskStatsBuffer) -> None:
    """Write the buffer's tallies; on a database error keep them for the next flush."""
    from workers.runtime import runtime

    taken = buffer.take(utcnow())
    if not taken:
        return
    try:
        with runtime().transaction() as session:
            add_tallies(session, taken)
    except Exception as exc:  # metrics must never fail a task or a worker
        buffer.give_back(taken)
        log.warning("task timings not saved yet (%s); kept for the next flush", type(exc).__name__)
