"""The beat schedule, built by a pure function from the config (STYLE.md §8).

Each entry ``expires`` before its next run, so a backlog after an outage is dropped instead of
replayed in a burst: a missed round is re-done by the next one, not duplicated.
"""

from __future__ import annotations

from typing import Any

from celery.schedules import crontab

from monitor.alerts import resend
from monitor.config.models import Config

QUEUES = ("default", "feeds", "probes", "deliveries")


def build_beat_schedule(config: Config) -> dict[str, dict[str, Any]]:
    """Beat entries by name: task name, period in seconds, queue and expiry."""
    schedule = config.schedule
    return {
        **_alertmanager_resend(config),
        "monitor-tick": _entry("slamon.tick", schedule.tick, "default"),
        "feeds-poll-all": _entry("slamon.feeds.poll_all", schedule.feeds, "feeds"),
        "targets-sync": _entry("slamon.targets.sync", schedule.tick, "default"),
        "probes-dispatch": _entry("slamon.probes.dispatch", schedule.dispatch, "default"),
        "probes-rollup": _entry("slamon.probes.rollup", schedule.rollup, "default"),
        "probes-prune": _entry("slamon.probes.prune", schedule.retention, "default"),
        "alerts-evaluate": _entry("slamon.alerts.evaluate", schedule.alerts, "default"),
        "vantages-judge": _entry("slamon.probes.judge_vantages", schedule.vantages, "default"),
        "alerts-deliver": _entry("slamon.alerts.deliver", schedule.deliveries, "deliveries"),
        # cloud APIs answer in seconds: on the feeds queue, beside the other outside reads
        "discovery-sweep": _entry("slamon.discovery.sweep_due", schedule.discovery, "feeds"),
        "account-events-poll": _entry("slamon.account.poll_due", schedule.account_events, "feeds"),
        "reports-monthly": {
            "task": "slamon.reports.monthly",
            "schedule": crontab(minute=0, hour=2, day_of_month=1),  # after the month has closed
            "options": {"queue": "default", "expires": 6 * 3600},
        },
        "heartbeats-judge": _entry(
            "slamon.probes.judge_heartbeats", schedule.heartbeats, "default"
        ),
    }


def _alertmanager_resend(config: Config) -> dict[str, dict[str, Any]]:
    """With an alertmanager channel, its resend (every shortest ``resend_every``)."""
    every_s = resend.period(config)
    if every_s is None:
        return {}
    return {"alertmanager-resend": _entry("slamon.alerts.resend", every_s, "deliveries")}


def _entry(task: str, every_s: float, queue: str) -> dict[str, Any]:
    return {
        "task": task,
        "schedule": every_s,
        "options": {"queue": queue, "expires": max(1.0, every_s * 0.9)},
    }


def task_routes() -> dict[str, dict[str, str]]:
    """Which queue each task family goes to, so a hung feed host cannot starve the probes."""
    return {
        "slamon.feeds.*": {"queue": "feeds"},
        "slamon.probes.run_shard": {"queue": "probes"},
        "slamon.alerts.*": {"queue": "deliveries"},
    }
