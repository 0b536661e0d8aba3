"""Thin tasks: take names or ids, call one function in `monitor`, commit at the boundary."""

from __future__ import annotations

from workers.app import app
from workers.runtime import runtime


@app.task(name="slamon.tick")
def tick() -> str:
    """Record that this vantage's monitor is alive now; gaps in these rows are unknown time."""
    from monitor.liveness import record_tick

    rt = runtime()
    with rt.transaction() as session:
        bucket = record_tick(session, rt.settings.vantage, rt.config.schedule.tick)
    return bucket.isoformat()
