"""A webhook receiver that is gone for a long stretch, then back: every alert's delivery arrives
exactly once. And a slow receiver with a backlog: a lease that runs out mid-batch must not let
a second sender send what the first one is still going to send."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from monitor.alerts.delivery import LEASE, deliver_due
from monitor.config import parse_config
from monitor.db.base import utcnow
from monitor.db.engine import make_engine, make_sessionmaker
from monitor.db.models import Alert, Channel, Delivery
from tests.faults.servers import Processes, free_port, write_config
from tests.support import FeedServer, WebhookReceiver, wait_for

pytestmark = [pytest.mark.fault, pytest.mark.slow]

TARGETS = ("gpu-0", "gpu-1", "gpu-2")
OUTAGE_S = 12.0


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    # not started: the receiver is down to begin with
    hook = WebhookReceiver(free_port(), started=False)
    yield hook
    hook.stop()


def delivery_rows(database_url: str) -> list[tuple[str, str, int, str | None]]:
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            query = select(
                Delivery.event, Delivery.status, Delivery.attempts, Delivery.last_error
            ).order_by(Delivery.id)
            return [tuple(row) for row in connection.execute(query)]  # type: ignore[misc]
    finally:
        engine.dispose()


def test_a_receiver_gone_for_a_long_stretch_gets_every_delivery_once_when_back(
    tmp_path: Path,
    processes: Processes,
    database_url: str,
    http_server: FeedServer,
    receiver: WebhookReceiver,
) -> None:
    for name in TARGETS:
        http_server.routes[f"/{name}"] = (503, b"")
    targets = "".join(
        f"  - {{name: {n}, kind: http, url: '{http_server.url}/{n}', interval: 1, timeout: 1}}\n"
        for n in TARGETS
    )
    write_config(
        tmp_path / "slamon.yaml",
        "probes: {retry_interval: 0.2}\n"
        "alerts: {retry_base: 1s, retry_max: 2s}\n"
        "schedule: {tick: 1, dispatch: 1, deliveries: 1, heartbeats: 3600, feeds: 3600,"
        " alerts: 3600, rollup: 3600}\n"
        f"channels:\n  - {{name: ops, kind: webhook, url: '{receiver.url}', secret: s3cret}}\n"
        f"targets:\n{targets}",
    )
    worker = processes.start(
        "worker", "worker", "--beat", "--pool=threads", "--concurrency=4",
        "--queues=default,probes,deliveries",
    )  # fmt: skip

    def attempted_while_down() -> bool:
        rows = delivery_rows(database_url)
        return len(rows) == len(TARGETS) and all(attempts >= 4 for _, _, attempts, _ in rows)

    wait_for(attempted_while_down, timeout=OUTAGE_S + 30)  # many refused attempts, backing off
    assert all("ConnectError" in (error or "") for *_, error in delivery_rows(database_url))
    receiver.start()
    for name in TARGETS:  # and the targets recover while the backlog drains
        http_server.routes[f"/{name}"] = (200, b"ok")

    def all_delivered() -> bool:
        rows = delivery_rows(database_url)
        return len(rows) == 2 * len(TARGETS) and all(s == "delivered" for _, s, _, _ in rows)

    wait_for(all_delivered, timeout=40)
    assert worker.alive()
    keys = Counter(receiver.accepted)
    assert len(keys) == 2 * len(TARGETS)
    assert set(keys.values()) == {1}, keys  # every delivery arrived, each exactly once
    assert len(receiver.requests) == 2 * len(TARGETS)
    events = Counter(event for event, *_ in delivery_rows(database_url))
    assert events == {"firing": len(TARGETS), "resolved": len(TARGETS)}


def test_a_lease_running_out_mid_batch_does_not_send_a_delivery_twice(
    database_url: str, receiver: WebhookReceiver
) -> None:
    """Sender A claims a backlog and each send is slow (its clock moves 10 s per step); when A
    is past its lease, sender B sweeps (as a second worker or thread would, every few seconds)."""
    receiver.start()
    config = parse_config(f"channels: [{{name: ops, kind: webhook, url: '{receiver.url}'}}]")
    engine = make_engine(database_url)
    sessions = make_sessionmaker(engine)
    start = utcnow()
    backlog = 5
    add_backlog(sessions, start, backlog)
    clock = [start]

    def a_clock() -> datetime:
        clock[0] += timedelta(seconds=10)
        return clock[0]

    swept = threading.Event()

    def sweep_when_a_is_past_its_lease(_headers: dict[str, str]) -> None:
        if clock[0] - start > LEASE and not swept.is_set():
            swept.set()
            with httpx.Client(timeout=5) as client:
                deliver_due(
                    sessions, client, config, "B", clock=lambda: clock[0] + timedelta(seconds=5)
                )

    receiver.on_request = sweep_when_a_is_past_its_lease
    with httpx.Client(timeout=5) as client:
        deliver_due(sessions, client, config, "A", clock=a_clock)
    assert swept.is_set()
    with sessions() as session:
        delivered = session.scalar(
            select(func.count()).select_from(Delivery).where(Delivery.status == "delivered")
        )
    engine.dispose()
    assert delivered == backlog
    sends = Counter(headers["idempotency-key"] for headers, _ in receiver.requests)
    assert set(sends.values()) == {1}, sends


def add_backlog(sessions: object, now: datetime, count: int) -> None:
    with sessions() as session, session.begin():  # type: ignore[operator]
        channel = Channel(name="ops", kind="webhook", enabled=True)
        alert = Alert(
            fingerprint="f" * 32, rule="target_down", severity="critical",
            labels={"target": "gpu-0"}, summary="gpu-0 is down", state="firing", started_at=now,
        )  # fmt: skip
        session.add_all([channel, alert])
        session.flush()
        payload = {
            "fingerprint": alert.fingerprint, "rule": "target_down", "severity": "critical",
            "labels": {"target": "gpu-0"}, "summary": "gpu-0 is down",
            "started_at": now.isoformat(), "resolved_at": None, "event": "firing",
        }  # fmt: skip
        session.add_all(
            Delivery(
                alert_id=alert.id,
                channel_id=channel.id,
                event="firing",
                payload=payload,
                idempotency_key=f"key-{i}",
                next_attempt_at=now,
                created_at=now,
            )
            for i in range(count)
        )
