"""No single point of failure: two workers that both run beat (one leads), two APIs, a probed
target and a scripted outage overlapping each fault. For each fault the test measures the gap
in probing (at most two intervals), the slots probed twice (none), the alerts sent per event
(exactly one firing and one resolved), the API answering through the other replica, and who
leads afterwards; the figures are printed in the run's summary.

On PostgreSQL and Redis (throwaway servers, tests/faults/conftest.py), and on the embedded
default: `slamon run` with a second `slamon worker --beat` beside it on SQLite.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from celery import Celery

from monitor.db.base import utcnow
from tests.faults.cluster import (
    INTERVAL_S,
    LEASE_S,
    SLACK_S,
    Cluster,
    alerts_sent,
    doubled,
    gaps,
    ha_config,
    kill,
    outage,
)
from tests.faults.servers import Processes, RedisServer, Slamon, free_port
from tests.support import FeedServer, WebhookReceiver, report_figure, wait_for
from workers.leader import ENTRY, FENCE, SLOT

pytestmark = [pytest.mark.fault, pytest.mark.slow]

MAX_GAP_S = 2 * INTERVAL_S + SLACK_S  # at most one slot missed
TAKEOVER_S = LEASE_S + 1.0 + SLACK_S  # the lease, a standby's dispatch period, the machine


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    hook = WebhookReceiver(free_port())
    yield hook
    hook.stop()


@pytest.fixture
def cluster(
    tmp_path: Path,
    processes: Processes,
    database_url: str,
    http_server: FeedServer,
    receiver: WebhookReceiver,
) -> Cluster:
    ha_config(tmp_path / "slamon.yaml", http_server, receiver)
    running = Cluster(processes, database_url)
    running.start_worker("worker-a")
    running.start_worker("worker-b")
    running.start_api("api-a")
    running.start_api("api-b")
    wait_for(lambda: len(running.probe_times()) >= 2, timeout=60)
    return running


def check(
    fault: str,
    cluster: Cluster,
    receiver: WebhookReceiver,
    since_s: float,
    before: str,
    takeover_s: float | None = None,
) -> None:
    """The measures every fault is held to, reported as one figure line."""
    times = cluster.probe_times(utcnow() - timedelta(seconds=since_s))
    widest = max(gaps(times))
    twice = doubled(times)
    sent = alerts_sent(receiver)
    fenced, repeated = cluster.refused()
    after, token = cluster.lease()
    answering = [port for port in cluster.apis if cluster.answers(port, "/")]  # the status page
    taken = f"takeover {takeover_s:.1f} s, " if takeover_s is not None else ""
    report_figure(
        f"HA {fault}: widest probe gap {widest:.1f} s ({widest / INTERVAL_S:.2f} intervals), "
        f"{taken}slots probed twice {twice}, alerts sent {dict(sent)}, "
        f"refused fenced={fenced} repeated={repeated}, APIs answering {len(answering)}, "
        f"leader {before} -> {after} (token {token})"
    )
    assert widest <= MAX_GAP_S, times
    assert twice == 0, times
    assert sent == {("target_down", "firing"): 1, ("target_down", "resolved"): 1}, sent
    if takeover_s is not None:
        assert takeover_s <= TAKEOVER_S


def test_the_leader_killed(cluster: Cluster, http_server: FeedServer, receiver: WebhookReceiver):
    before, _ = cluster.lease()
    leader = cluster.leader()
    started = time.monotonic()
    outage(http_server, receiver, down=True)
    killed_at = time.monotonic()
    kill(leader)
    after, _ = cluster.wait_for_new_leader(before)
    takeover = time.monotonic() - killed_at
    time.sleep(2 * INTERVAL_S)
    outage(http_server, receiver, down=False)
    time.sleep(INTERVAL_S)
    check("leader SIGKILL", cluster, receiver, time.monotonic() - started, before, takeover)
    survivor = next(w for w in cluster.workers if w is not leader)
    assert after.endswith(f":{survivor.process.pid}")
    assert len([p for p in cluster.apis if cluster.answers(p, "/healthz")]) == 2


def test_the_leader_paused_past_its_lease_dispatches_nothing_when_it_wakes(
    cluster: Cluster, http_server: FeedServer, receiver: WebhookReceiver, broker_url: str
) -> None:
    before, old_token = cluster.lease()
    leader = cluster.leader()
    started = time.monotonic()
    outage(http_server, receiver, down=True)
    paused_at = time.monotonic()
    kill(leader, signal.SIGSTOP)
    try:
        after, token = cluster.wait_for_new_leader(before)
        takeover = time.monotonic() - paused_at
        time.sleep(LEASE_S)  # well past its lease
    finally:
        kill(leader, signal.SIGCONT)
    wait_for(lambda: "lease lost" in leader.text(), timeout=30, explain=lambda: leader.text())
    # what the woken leader would have sent had it been stopped between marking a slot and
    # sending it: a dispatch under its old token, which the workers refuse
    send_as_leader(broker_url, old_token, "probes-dispatch", utcnow())
    wait_for(lambda: cluster.refused()[0] == 1, timeout=30)
    time.sleep(2 * INTERVAL_S)
    outage(http_server, receiver, down=False)
    time.sleep(INTERVAL_S)
    check("leader SIGSTOP+SIGCONT", cluster, receiver, time.monotonic() - started, before, takeover)
    assert token == old_token + 1
    assert cluster.lease() == (after, token)  # the woken one stands by
    assert "standing by" in leader.text().split("lease lost")[-1]


def send_as_leader(broker_url: str, token: int, entry: str, slot: datetime) -> None:
    """Publish a periodic task's message with a leader's headers (workers/leader.py)."""
    app = Celery("stale-leader", broker=broker_url)
    try:
        app.send_task(
            "slamon.probes.dispatch",
            queue="default",
            headers={FENCE: token, ENTRY: entry, SLOT: slot.timestamp()},
        )
    finally:
        app.close()


def test_an_api_killed_leaves_the_other_answering(
    cluster: Cluster, http_server: FeedServer, receiver: WebhookReceiver
) -> None:
    before, _ = cluster.lease()
    started = time.monotonic()
    outage(http_server, receiver, down=True)
    first, second = list(cluster.apis)
    kill(cluster.apis[first])
    assert cluster.answers(first, "/healthz") is None
    page = cluster.answers(second, "/")
    assert isinstance(page, str)
    assert "gpu-0" in page
    time.sleep(INTERVAL_S)
    outage(http_server, receiver, down=False)
    time.sleep(INTERVAL_S)
    check("one API SIGKILL", cluster, receiver, time.monotonic() - started, before)
    assert cluster.lease()[0] == before


def test_a_worker_killed_mid_round(
    cluster: Cluster, http_server: FeedServer, receiver: WebhookReceiver
) -> None:
    """The standby worker is killed while a probe is in flight (the target answers slowly):
    if it held the round, that slot is lost, and the next is probed by the other worker."""
    before, _ = cluster.lease()
    standby = next(w for w in cluster.workers if w is not cluster.leader())
    started = time.monotonic()
    http_server.delays["/healthz"] = 1.0
    outage(http_server, receiver, down=True)
    hits = len(http_server.hits)
    wait_for(lambda: len(http_server.hits) > hits, timeout=30, every=0.02)
    kill(standby)  # a probe is in flight now
    time.sleep(2 * INTERVAL_S)
    outage(http_server, receiver, down=False)
    time.sleep(INTERVAL_S)
    check("standby worker SIGKILL mid-round", cluster, receiver, time.monotonic() - started, before)
    assert cluster.lease()[0] == before


def test_redis_restarted_empty(
    cluster: Cluster,
    http_server: FeedServer,
    receiver: WebhookReceiver,
    redis_server: RedisServer,
) -> None:
    before, _ = cluster.lease()
    started = time.monotonic()
    outage(http_server, receiver, down=True)
    redis_server.stop()
    redis_server.start()  # without persistence: every queue is gone
    time.sleep(2 * INTERVAL_S)
    outage(http_server, receiver, down=False)
    time.sleep(INTERVAL_S)
    check("Redis restarted empty", cluster, receiver, time.monotonic() - started, before)


@pytest.fixture
def embedded(
    tmp_path: Path, http_server: FeedServer, receiver: WebhookReceiver
) -> Iterator[tuple[Cluster, Slamon, int]]:
    """`slamon run` on SQLite and the filesystem broker, and `slamon worker --beat` beside it
    on the same files; the cluster, run's process and its API port."""
    ha_config(tmp_path / "slamon.yaml", http_server, receiver)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLAMON_")}
    env |= {"SLAMON_CONFIG": str(tmp_path / "slamon.yaml"), "SLAMON_VANTAGE": "fault"}
    processes = Processes(env, tmp_path)
    try:
        port = free_port()
        run = processes.start("run", "run", "--port", str(port))
        cluster = Cluster(processes, f"sqlite:///{tmp_path / 'slamon.db'}")
        cluster.apis[port] = run
        wait_for(lambda: "leader elected" in run.text() or not run.alive(), timeout=90)
        cluster.start_worker("second")
        wait_for(lambda: len(cluster.probe_times()) >= 2, timeout=60)
        yield cluster, run, port
    finally:
        processes.stop_all()


def test_the_embedded_default_with_its_leader_killed(
    embedded: tuple[Cluster, Slamon, int], http_server: FeedServer, receiver: WebhookReceiver
) -> None:
    """The leader (run's main child) is killed: the supervisor restarts it 2 s later, and
    whichever scheduler asks first when the lease runs out leads."""
    cluster, run, port = embedded
    second = cluster.workers[0]
    before, _ = cluster.lease()
    started = time.monotonic()
    outage(http_server, receiver, down=True)
    killed_at = time.monotonic()
    os.kill(int(before.rsplit(":", 1)[1]), signal.SIGKILL)
    after, _ = cluster.wait_for_new_leader(before)
    takeover = time.monotonic() - killed_at
    assert after != before
    wait_for(lambda: run.text().count("beat: Starting") >= 2, timeout=60)  # restarted
    assert second.alive()
    time.sleep(INTERVAL_S)
    outage(http_server, receiver, down=False)
    time.sleep(INTERVAL_S)
    elapsed = time.monotonic() - started
    check("embedded leader SIGKILL", cluster, receiver, elapsed, before, takeover)
    assert cluster.answers(port, "/healthz") is not None


def test_the_embedded_default_with_its_leader_paused_past_its_lease(
    embedded: tuple[Cluster, Slamon, int], http_server: FeedServer, receiver: WebhookReceiver
) -> None:
    """On SQLite too: the paused leader loses the lease, and on waking stands by."""
    cluster, _, _ = embedded
    before, old_token = cluster.lease()
    pid = int(before.rsplit(":", 1)[1])
    started = time.monotonic()
    outage(http_server, receiver, down=True)
    paused_at = time.monotonic()
    os.kill(pid, signal.SIGSTOP)
    try:
        after, token = cluster.wait_for_new_leader(before)
        takeover = time.monotonic() - paused_at
        time.sleep(LEASE_S)
    finally:
        os.kill(pid, signal.SIGCONT)
    time.sleep(2 * INTERVAL_S)
    outage(http_server, receiver, down=False)
    time.sleep(INTERVAL_S)
    elapsed = time.monotonic() - started
    check("embedded leader SIGSTOP+SIGCONT", cluster, receiver, elapsed, before, takeover)
    assert token == old_token + 1
    assert cluster.lease() == (after, token)
