"""Two delivery workers running at once (separate connections, as two replicas would) never send
one delivery twice: claims are leased under SKIP LOCKED (PostgreSQL) / BEGIN IMMEDIATE (SQLite)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine

from monitor.alerts.delivery import deliver_due
from monitor.config import parse_config
from monitor.db.base import utcnow
from monitor.db.engine import make_engine, make_sessionmaker
from monitor.db.migrate import upgrade
from monitor.db.models import Alert, Channel, Delivery
from tests.support import PG_TEST_DB, WebhookReceiver, recreate_pg_database

DELIVERIES = 40


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def fresh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/replicas.db"
    else:
        request.getfixturevalue("postgresql_engine")  # skips or fails without the server
        url = recreate_pg_database(f"{PG_TEST_DB}_replicas")
    engine = make_engine(url)
    upgrade(engine)
    yield engine
    engine.dispose()


def test_two_workers_never_send_the_same_delivery_twice(fresh: Engine) -> None:
    receiver = WebhookReceiver()
    config = parse_config(f"channels: [{{name: ops, kind: webhook, url: '{receiver.url}'}}]")
    sessions = make_sessionmaker(fresh)
    now = utcnow()
    with sessions() as session, session.begin():
        channel = Channel(name="ops", kind="webhook", enabled=True)
        alert = Alert(
            fingerprint="f" * 32,
            rule="target_down",
            severity="critical",
            labels={"target": "gpu-0"},
            summary="gpu-0 is down",
            state="firing",
            started_at=now,
        )
        session.add_all([channel, alert])
        session.flush()
        payload = {
            "fingerprint": alert.fingerprint,
            "rule": "target_down",
            "severity": "critical",
            "labels": {"target": "gpu-0"},
            "summary": "gpu-0 is down",
            "started_at": now.isoformat(),
            "resolved_at": None,
            "event": "firing",
        }
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
            for i in range(DELIVERIES)
        )
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        try:
            with httpx.Client(timeout=5) as client:
                while deliver_due(sessions, client, config, name, batch_size=3).delivered:
                    pass
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    receiver.close()
    assert errors == []
    counts = Counter(receiver.accepted)
    senders = Counter(h.get("x-slamon-event", "") for h, _ in receiver.requests)
    assert sum(senders.values()) == DELIVERIES
    assert len(counts) == DELIVERIES
    assert max(counts.values()) == 1
