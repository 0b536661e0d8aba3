"""A worker SIGKILLed in the middle of a probe shard: the shard is redelivered (acks_late and
reject_on_worker_lost), re-probes, and the outage, alert and delivery exist once each."""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from sqlalchemy import func, select

from monitor.db.engine import make_engine
from monitor.db.models import Alert, Delivery, Outage, ProbeResult
from tests.faults.servers import Processes, free_port, write_config
from tests.support import FeedServer, WebhookReceiver, wait_for

pytestmark = [pytest.mark.fault, pytest.mark.slow]

SLOW_S = 1.5  # each probe of the target takes this long: the window to kill the worker in


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    hook = WebhookReceiver(free_port(), started=False)
    hook.start()
    yield hook
    hook.stop()


def counts(database_url: str) -> dict[str, int]:
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            return {
                model.__tablename__: connection.scalar(select(func.count()).select_from(model))
                for model in (ProbeResult, Outage, Alert, Delivery)
            }
    finally:
        engine.dispose()


def outages(database_url: str) -> list[tuple[object, ...]]:
    engine = make_engine(database_url)
    try:
        with engine.connect() as connection:
            query = select(Outage.series, Outage.start, Outage.end, Outage.cause)
            return [tuple(row) for row in connection.execute(query.order_by(Outage.id))]
    finally:
        engine.dispose()


def assert_one_outage_per_series(database_url: str) -> None:
    """One open outage for the reachable series (and at most one for any other series that
    follows it, such as usable), all starting at the confirmed failure."""
    found = outages(database_url)
    per_series = Counter(series for series, *_ in found)
    assert per_series["reachable"] == 1, found
    assert set(per_series.values()) == {1}, found
    assert len({start for _, start, _, _ in found}) == 1, found


def slow_down_target(
    tmp_path: Path, target: FeedServer, receiver: WebhookReceiver, interval: int
) -> None:
    """A target that answers 503 after ``SLOW_S``; confirming it down takes two probes."""
    target.routes["/healthz"] = (503, b"")
    target.delays["/healthz"] = SLOW_S
    write_config(
        tmp_path / "slamon.yaml",
        "probes: {retry_interval: 0.2}\n"
        "schedule: {tick: 3600, dispatch: 1, deliveries: 1, heartbeats: 3600, feeds: 3600,"
        " alerts: 3600, rollup: 3600}\n"
        f"channels:\n  - {{name: ops, kind: webhook, url: '{receiver.url}'}}\n"
        f"targets:\n  - {{name: gpu-0, kind: http, url: '{target.url}/healthz',"
        f" interval: {interval}, timeout: 3, confirmations: 2}}\n",
    )


def start_worker(processes: Processes, name: str, pool: str) -> None:
    worker = processes.start(
        name, "worker", f"--pool={pool}", "--concurrency=1", "--queues=default,probes,deliveries"
    )
    wait_for(lambda: " ready." in worker.text() or not worker.alive(), timeout=60)
    assert worker.alive(), worker.text()[-3000:]


def test_a_pool_process_killed_mid_shard_has_its_shard_redelivered_and_nothing_doubled(
    tmp_path: Path,
    processes: Processes,
    database_url: str,
    http_server: FeedServer,
    receiver: WebhookReceiver,
) -> None:
    slow_down_target(tmp_path, http_server, receiver, interval=120)  # one dispatch in this test
    start_worker(processes, "worker", "prefork")
    worker = processes.started[0]
    processes.start("beat", "beat")

    # the first pass has stored its failure; the confirming second probe is in flight
    wait_for(lambda: len(http_server.hits) >= 2, timeout=60)
    assert counts(database_url)["probe_results"] == 1
    [child] = worker.children()
    os.kill(child, signal.SIGKILL)

    wait_for(lambda: counts(database_url)["deliveries"] >= 1, timeout=30)
    wait_for(lambda: receiver.accepted, timeout=30)
    assert "WorkerLostError" in worker.text() or "signal 9" in worker.text(), worker.text()[-3000:]
    assert worker.alive()
    assert len(http_server.hits) == 3  # the redelivered shard probed once more, and confirmed
    found = counts(database_url)
    assert (found["probe_results"], found["alerts"], found["deliveries"]) == (2, 1, 1)
    assert_one_outage_per_series(database_url)
    assert Counter(receiver.accepted).most_common(1)[0][1] == 1


def test_a_whole_worker_killed_mid_shard_keeps_its_message_and_a_new_worker_takes_over(
    tmp_path: Path,
    processes: Processes,
    database_url: str,
    broker_url: str,
    http_server: FeedServer,
    receiver: WebhookReceiver,
) -> None:
    slow_down_target(tmp_path, http_server, receiver, interval=4)
    start_worker(processes, "first", "threads")
    processes.start("beat", "beat")
    wait_for(lambda: len(http_server.hits) >= 2, timeout=60)
    processes.started[0].process.send_signal(signal.SIGKILL)

    broker = redis.Redis.from_url(broker_url)
    try:  # acks_late: the shard it was running is not lost, it waits out the visibility timeout
        unacked = broker.hgetall("unacked")
    finally:
        broker.close()
    assert any(b"slamon.probes.run_shard" in message for message in unacked.values()), unacked

    start_worker(processes, "second", "threads")
    wait_for(lambda: counts(database_url)["deliveries"] >= 1, timeout=30)
    wait_for(lambda: counts(database_url)["probe_results"] >= 4, timeout=30)
    wait_for(lambda: receiver.accepted, timeout=30)
    found = counts(database_url)
    assert (found["alerts"], found["deliveries"]) == (1, 1)
    assert_one_outage_per_series(database_url)
    assert len(receiver.accepted) == 1
