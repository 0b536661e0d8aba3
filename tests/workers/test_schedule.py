from __future__ import annotations

from monitor.config import parse_config
from workers.schedule import build_beat_schedule


def test_beat_runs_each_task_at_the_configured_period_and_expires_before_the_next() -> None:
    config = parse_config("schedule: {tick: 10s}")
    entry = build_beat_schedule(config)["monitor-tick"]
    assert entry["task"] == "slamon.tick"
    assert entry["schedule"] == 10
    assert entry["options"]["queue"] == "default"
    assert 0 < entry["options"]["expires"] < 10


def test_every_scheduled_task_is_registered_by_name() -> None:
    from workers.app import app

    app.loader.import_default_modules()  # what a starting worker does with `include`
    schedule = build_beat_schedule(parse_config(""))
    assert {e["task"] for e in schedule.values()} <= set(app.tasks)


def test_alertmanager_channels_are_resent_at_the_shortest_resend_every() -> None:
    config = parse_config(
        "channels:\n"
        "  - {name: a, kind: alertmanager, url: 'http://a:9093', resend_every: 2m}\n"
        "  - {name: b, kind: alertmanager, url: 'http://b:9093', resend_every: 20s}\n"
    )
    from workers.app import app

    app.loader.import_default_modules()
    entry = build_beat_schedule(config)["alertmanager-resend"]

    assert (entry["task"], entry["schedule"]) == ("slamon.alerts.resend", 20)
    assert entry["options"]["queue"] == "deliveries"
    assert entry["task"] in app.tasks
    assert "alertmanager-resend" not in build_beat_schedule(parse_config(""))
