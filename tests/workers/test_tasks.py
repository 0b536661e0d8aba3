"""The Celery tasks (workers/tasks.py) run in this process, eagerly, on a real SQLite database
and a real local target: what a worker does each tick, without a broker in between."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from monitor.db.base import utcnow
from monitor.db.engine import make_engine
from monitor.db.migrate import upgrade
from monitor.db.models import Alert, Incident, Provider, Target, TargetState
from monitor.db.models import ProbeResult as ResultRow
from tests.support import FeedServer, WebhookReceiver
from workers import runtime as runtime_module
from workers import tasks
from workers.app import app


@pytest.fixture
def worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: FeedServer) -> Iterator[Path]:
    """A worker's environment: config and database files, tasks run eagerly in this process."""
    database = tmp_path / "slamon.db"
    config = tmp_path / "slamon.yaml"
    config.write_text(
        "targets:\n"
        f"  - {{name: web, kind: http, url: '{server.url}/healthz', interval: 5,"
        " confirmations: 1}\n"
        "  - {name: job, kind: heartbeat, interval: 60}\n"
    )
    engine = make_engine(f"sqlite:///{database}")
    upgrade(engine)
    engine.dispose()
    monkeypatch.setenv("SLAMON_DATABASE_URL", f"sqlite:///{database}")
    monkeypatch.setenv("SLAMON_CONFIG", str(config))
    monkeypatch.setenv("SLAMON_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(runtime_module, "_current", None)
    monkeypatch.setitem(app.conf, "task_always_eager", True)
    yield config
    if runtime_module._current is not None:
        runtime_module._current.engine.dispose()


def test_sync_dispatch_and_a_shard_store_a_result_per_probed_target(
    worker: Path, server: FeedServer
) -> None:
    assert tasks.sync_targets() == 2
    assert tasks.sync_targets() == 0  # unchanged config: nothing to write
    assert tasks.dispatch_probes() == 1  # the heartbeat target is judged, not claimed
    rt = runtime_module.runtime()
    with rt.sessions() as session:
        rows = session.execute(
            select(Target.name, ResultRow.ok).join(Target, Target.id == ResultRow.target_id)
        ).all()
    assert rows == [("web", True)]


def test_a_failing_shard_confirms_the_outage_and_raises_its_alert(
    worker: Path, server: FeedServer
) -> None:
    tasks.sync_targets()
    rt = runtime_module.runtime()
    with rt.sessions() as session:
        web = session.scalars(select(Target.id).where(Target.name == "web")).one()
    server.routes["/healthz"] = (503, b"down")
    assert tasks.run_probe_shard.apply(args=([web],)).get() == 1
    with rt.sessions() as session:
        state = session.get_one(TargetState, (web, "*", "reachable"))
        alerts = [(a.rule, a.state) for a in session.scalars(select(Alert))]
    assert state.state == "down"
    assert alerts == [("target_down", "firing")]


def test_the_judge_task_gives_each_pushed_target_a_verdict(worker: Path) -> None:
    tasks.sync_targets()
    assert tasks.judge_heartbeats() == 1
    rt = runtime_module.runtime()
    with rt.sessions() as session:
        states = session.scalars(select(TargetState.vantage).distinct())
        assert set(states) == {"push"}


def test_the_vantage_task_stores_each_vantages_verdict_and_the_sweep_alerts_on_it(
    worker: Path,
) -> None:
    """The vantage verdict has a beat task of its own; the alert sweep only reads it."""
    from monitor.db.models import Vantage

    tasks.sync_targets()
    rt = runtime_module.runtime()
    now = utcnow()
    with rt.sessions() as session:
        web = session.scalars(select(Target.id).where(Target.name == "web")).one()
        for vantage, state in (("*", "up"), ("east", "up"), ("west", "down")):
            session.add(
                TargetState(
                    target_id=web,
                    vantage=vantage,
                    series="reachable",
                    state=state,
                    since=now,
                    last_probe_at=now,
                    detail={},
                )
            )
        session.commit()
    assert tasks.evaluate_alerts() == 0  # the sweep judges no vantage itself
    with rt.sessions() as session:
        assert list(session.scalars(select(Vantage.name))) == []
    assert tasks.judge_vantages() == 0  # judged: west disagrees, not yet for long enough
    with rt.sessions() as session:
        stored = {v.name: v.disagreeing for v in session.scalars(select(Vantage))}
    assert stored == {"east": 0, "west": 1}


def test_the_prune_task_deletes_what_is_past_retention_and_the_rollup_keeps_it(
    worker: Path,
) -> None:
    """Pruning runs every ``schedule.retention`` as a task of its own, not in each rollup."""
    from sqlalchemy import func, insert

    from monitor.db.models import ProbeEvidence, ProbeRollup

    tasks.sync_targets()
    rt = runtime_module.runtime()
    hour = utcnow().replace(minute=0, second=0, microsecond=0)
    old, recent = hour - timedelta(days=20), hour - timedelta(days=1)
    with rt.sessions() as session, session.begin():
        web = session.scalars(select(Target.id).where(Target.name == "web")).one()
        session.execute(
            insert(ProbeRollup),
            [
                {"target_id": web, "resolution": resolution, "bucket_start": at,
                 "count": 12, "failures": 1, "unknown": 0}
                for at in (old, recent, hour - timedelta(hours=1))
                for resolution in ("minute", "hour")
            ],
        )  # fmt: skip
        session.execute(
            insert(ProbeEvidence),
            [{"target_id": web, "vantage": "*", "at": at, "ok": False} for at in (old, recent)],
        )

    def kept() -> tuple[list[datetime], list[datetime]]:
        with rt.sessions() as session:
            minutes = session.scalars(
                select(ProbeRollup.bucket_start)
                .where(ProbeRollup.resolution == "minute")
                .order_by(ProbeRollup.bucket_start)
            )
            evidence = session.scalars(select(ProbeEvidence.at).order_by(ProbeEvidence.at))
            return list(minutes), list(evidence)

    tasks.roll_up_results()
    assert kept() == ([old, recent, hour - timedelta(hours=1)], [old, recent])
    assert tasks.prune_expired() == 2  # 14 days by default: the 20-day-old minute and probe
    assert kept() == ([recent, hour - timedelta(hours=1)], [recent])
    with rt.sessions() as session:
        hours = session.scalar(select(func.count()).where(ProbeRollup.resolution == "hour"))
    assert hours == 3  # hour rollups are kept for ever


def test_pruning_is_scheduled_every_schedule_retention() -> None:
    from monitor.config import parse_config
    from workers.schedule import build_beat_schedule

    entry = build_beat_schedule(parse_config("schedule: {retention: 15m}"))["probes-prune"]
    assert (entry["task"], entry["schedule"]) == ("slamon.probes.prune", 900)
    assert entry["task"] in app.tasks


@pytest.fixture
def linked(worker: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WebhookReceiver]:
    """The worker with ``SLAMON_PUBLIC_URL`` set and a webhook channel every alert routes to."""
    receiver = WebhookReceiver()
    worker.write_text(
        worker.read_text()
        + f"channels: [{{name: ops, kind: webhook, url: '{receiver.url}'}}]\n"
        + "routes: [{match: {}, channels: [ops]}]\n"
    )
    monkeypatch.setenv("SLAMON_PUBLIC_URL", "https://slamon.example.com/")
    yield receiver
    receiver.close()


def _urls(receiver: WebhookReceiver) -> dict[str, str | None]:
    sent = [json.loads(body)["alert"] for _, body in receiver.requests]
    return {alert["rule"]: alert["url"] for alert in sent}


def test_a_probe_alert_links_to_its_target_under_the_public_url(
    linked: WebhookReceiver, server: FeedServer
) -> None:
    tasks.sync_targets()
    rt = runtime_module.runtime()
    with rt.sessions() as session:
        web = session.scalars(select(Target.id).where(Target.name == "web")).one()
    server.routes["/healthz"] = (503, b"down")

    tasks.run_probe_shard.apply(args=([web],)).get()  # delivers at once (eager)

    assert _urls(linked) == {"target_down": "https://slamon.example.com/targets/web"}


def test_an_evaluated_alert_links_to_its_provider_under_the_public_url(
    linked: WebhookReceiver,
) -> None:
    rt = runtime_module.runtime()
    with rt.sessions() as session, session.begin():
        provider = Provider(slug="acme", name="Acme Cloud", regions=[], components=[])
        session.add(provider)
        session.flush()
        session.add(
            Incident(
                provider_id=provider.id,
                source_id="i-1",
                title="GPUs unavailable",
                status="investigating",
                impact="major",
                started_at=utcnow(),
                relevant=True,
                content_hash="i-1",
            )
        )

    tasks.evaluate_alerts()

    assert _urls(linked)["provider_incident"] == "https://slamon.example.com/providers/acme"
