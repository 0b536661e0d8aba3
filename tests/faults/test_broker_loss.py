"""Processes that fail loudly, and Redis losing its data (issue 32).

A worker or a beat whose broker is gone for good (stopped, or frozen: it takes connections and
never answers) exits with code 75 within ``SLAMON_BROKER_GIVE_UP_AFTER``, saying so in one
line, and `slamon run` starts it again. Redis emptied under a running worker and beat
(``FLUSHALL``, or a restart without persistence) costs at most one probe interval and no alert.
Figures in the run's summary."""

from __future__ import annotations

import itertools
import signal
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
import redis
from sqlalchemy import Engine, func, select

from monitor.db.base import utcnow
from monitor.db.engine import make_engine
from monitor.db.models import Alert, Delivery, ProbeResult
from tests.faults.servers import Processes, RedisServer, Slamon, free_port, write_config
from tests.support import FeedServer, WebhookReceiver, report_figure, wait_for

pytestmark = [pytest.mark.fault, pytest.mark.slow]

GIVE_UP_S = 4.0  # SLAMON_BROKER_GIVE_UP_AFTER in these tests (180 s by default)
EXIT_CODE = 75  # workers/broker_watch.py: EX_TEMPFAIL
STOP_GRACE_S = 10.0  # workers/broker_watch.py: a stop that waits on the broker is cut short
# the watch looks every GIVE_UP_S / 5 and each look waits at most that long; start-up and
# Celery's own stop on the 2-core machine come on top
EXITS_WITHIN_S = GIVE_UP_S + 2 * GIVE_UP_S / 5 + 8.0
INTERVAL_S = 2.0  # the target's probe interval
# "at most one interval": the first probe after the fault is due within one interval, plus a
# reconnect (workers/reconnect.py: 0.5 s) after a restart, plus the machine's scheduling
RESUMES_WITHIN_S = INTERVAL_S + 0.5 + 1.5
MAX_GAP_S = 2 * INTERVAL_S + 1.5  # no more than one slot lost


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    engine = make_engine(database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    hook = WebhookReceiver(free_port(), started=False)
    hook.start()
    yield hook
    hook.stop()


@pytest.fixture
def redis_restored(redis_server: RedisServer) -> Iterator[RedisServer]:
    """The throwaway Redis, stopped after the test's processes whatever the test did to it (a
    SIGSTOPped server is killed): the next test's broker_url fixture starts a fresh one.
    Asked for before ``processes``, so that it is torn down after them."""
    yield redis_server
    if redis_server.process is not None:
        redis_server.process.send_signal(signal.SIGCONT)
        redis_server.stop()


def probe_config(tmp_path: Path, target: FeedServer, receiver: WebhookReceiver) -> None:
    target.routes["/healthz"] = (200, b"ok")
    write_config(
        tmp_path / "slamon.yaml",
        "probes: {retry_interval: 0.2}\n"
        "schedule: {tick: 1, dispatch: 1, deliveries: 1, heartbeats: 3600, feeds: 3600,"
        " alerts: 2, rollup: 3600, vantages: 3600}\n"
        f"channels:\n  - {{name: ops, kind: webhook, url: '{receiver.url}'}}\n"
        "targets:\n"
        f"  - {{name: gpu-0, kind: http, url: '{target.url}/healthz', interval: {INTERVAL_S},"
        " timeout: 1}\n",
    )


def start_worker(processes: Processes, name: str = "worker", **env: str) -> Slamon:
    worker = processes.start(
        name,
        "worker",
        "--pool=threads",
        "--concurrency=4",
        "--queues=default,probes,deliveries",
        env={"SLAMON_BROKER_GIVE_UP_AFTER": str(GIVE_UP_S), **env},
    )
    wait_for(lambda: " ready." in worker.text() or not worker.alive(), timeout=60)
    assert worker.alive(), worker.text()[-3000:]
    return worker


def exits_given_up(
    process: Slamon, lost_at: float, broker: str, what: str, within_s: float = EXITS_WITHIN_S
) -> float:
    """Wait for ``process`` to exit; check its code and its line; seconds since ``lost_at``."""
    wait_for(
        lambda: not process.alive(),
        timeout=within_s + 30,
        explain=lambda: process.text()[-3000:],
    )
    took = time.monotonic() - lost_at
    code = process.process.returncode
    report_figure(
        f"broker loss: {what} exited with code {code} {took:.1f} s after the broker was lost "
        f"(SLAMON_BROKER_GIVE_UP_AFTER={GIVE_UP_S:g})"
    )
    text = process.text()
    assert code == EXIT_CODE, text[-3000:]
    [line] = [line for line in text.splitlines() if "broker given up" in line]
    assert f"{broker} has not answered for " in line, line
    assert f"exiting with code {EXIT_CODE} to be started again" in line, line
    assert "Traceback" not in text.split("broker given up", 1)[1], text[-3000:]
    assert GIVE_UP_S <= took <= within_s, text[-3000:]
    return took


def test_a_worker_whose_redis_is_gone_for_good_exits_75_within_the_bound(
    redis_restored: RedisServer, processes: Processes
) -> None:
    worker = start_worker(processes)
    lost_at = time.monotonic()
    redis_restored.stop()  # SIGKILL, and never started again: connections are refused
    exits_given_up(worker, lost_at, redis_restored.url, "a worker (Redis stopped)")


def test_a_worker_whose_redis_is_frozen_exits_75_although_its_consumer_hangs(
    redis_restored: RedisServer, processes: Processes
) -> None:
    """A frozen Redis takes connections and never answers: Celery alone never notices, and
    its warm shutdown would wait for the broker for ever (so it is cut short)."""
    worker = start_worker(processes)
    assert redis_restored.process is not None
    lost_at = time.monotonic()
    redis_restored.process.send_signal(signal.SIGSTOP)
    within_s = EXITS_WITHIN_S + STOP_GRACE_S
    exits_given_up(worker, lost_at, redis_restored.url, "a worker (Redis frozen)", within_s)
    assert "ending now" in worker.text()  # the warm stop waited on the broker


@pytest.mark.parametrize("frozen", [False, True], ids=["stopped", "frozen"])
def test_a_beat_whose_redis_is_gone_for_good_exits_75_within_the_bound(
    redis_restored: RedisServer,
    tmp_path: Path,
    processes: Processes,
    http_server: FeedServer,
    receiver: WebhookReceiver,
    frozen: bool,
) -> None:
    """Frozen, its sends wait on the broker's socket: the stop breaks them."""
    probe_config(tmp_path, http_server, receiver)
    beat = processes.start("beat", "beat", env={"SLAMON_BROKER_GIVE_UP_AFTER": str(GIVE_UP_S)})
    wait_for(lambda: "leader elected" in beat.text() or not beat.alive(), timeout=60)
    assert beat.alive(), beat.text()[-3000:]
    assert redis_restored.process is not None
    lost_at = time.monotonic()
    if frozen:
        redis_restored.process.send_signal(signal.SIGSTOP)
    else:
        redis_restored.stop()
    what = f"a beat (Redis {'frozen' if frozen else 'stopped'})"
    exits_given_up(beat, lost_at, redis_restored.url, what)


def test_slamon_run_starts_a_worker_that_gave_its_broker_up_again(
    redis_restored: RedisServer,
    tmp_path: Path,
    processes: Processes,
    http_server: FeedServer,
    receiver: WebhookReceiver,
    engine: Engine,
) -> None:
    probe_config(tmp_path, http_server, receiver)
    run = processes.start(
        "run",
        "run",
        "--port",
        str(free_port()),
        env={"SLAMON_BROKER_GIVE_UP_AFTER": str(GIVE_UP_S)},
    )
    wait_for(lambda: len(result_times(engine)) >= 2, timeout=90, explain=lambda: run.text())
    redis_restored.stop()
    wait_for(
        lambda: f"(code {EXIT_CODE}); restarting in" in run.text(),
        timeout=EXITS_WITHIN_S + 30,
        explain=lambda: run.text()[-3000:],
    )
    redis_restored.start()
    back_at = utcnow()
    wait_for(
        lambda: [at for at in result_times(engine) if at > back_at],
        timeout=60,
        explain=lambda: run.text()[-3000:],
    )
    assert run.alive(), run.text()[-3000:]
    assert "broker given up" in run.text()


# ---------------------------------------------------------------------- Redis losing its data


def result_times(engine: Engine) -> list[datetime]:
    with engine.connect() as connection:
        return list(connection.scalars(select(ProbeResult.at).order_by(ProbeResult.at)))


def alerts_made(engine: Engine) -> tuple[int, int]:
    with engine.connect() as connection:
        alerts = connection.scalar(select(func.count()).select_from(Alert))
        deliveries = connection.scalar(select(func.count()).select_from(Delivery))
    return int(alerts or 0), int(deliveries or 0)


def start_monitor(tmp_path: Path, processes: Processes, engine: Engine) -> None:
    """A worker, then beat once the worker is up (see test_concurrent_start.py); probing."""
    start_worker(processes)
    processes.start("beat", "beat", env={"SLAMON_BROKER_GIVE_UP_AFTER": str(GIVE_UP_S)})
    wait_for(lambda: len(result_times(engine)) >= 3, timeout=60, explain=lambda: logs(processes))


def logs(processes: Processes) -> str:
    return "\n".join(f"--- {p.name}:\n{p.text()[-3000:]}" for p in processes.started)


def probing_resumes(
    what: str, engine: Engine, processes: Processes, receiver: WebhookReceiver, fault: datetime
) -> None:
    """The first probe after ``fault`` within one interval, no wider gap than one slot lost,
    no alert made or sent, every process still running."""
    wait_for(
        lambda: len([at for at in result_times(engine) if at > fault]) >= 4,
        timeout=30,
        explain=lambda: logs(processes),
    )
    times = result_times(engine)
    first_s = (next(at for at in times if at > fault) - fault).total_seconds()
    around = [at for at in times if (at - fault).total_seconds() > -3 * INTERVAL_S]
    widest = max((b - a).total_seconds() for a, b in itertools.pairwise(around))
    alerts, deliveries = alerts_made(engine)
    report_figure(
        f"Redis {what}: first probe {first_s:.1f} s after it, widest probe gap around it "
        f"{widest:.1f} s (interval {INTERVAL_S:g} s), alerts {alerts}, deliveries {deliveries},"
        f" webhook posts {len(receiver.requests)}"
    )
    assert first_s <= RESUMES_WITHIN_S, times
    assert widest <= MAX_GAP_S, times
    assert (alerts, deliveries, len(receiver.requests)) == (0, 0, 0)
    for running in processes.started:
        assert running.alive(), f"{running.name} exited:\n{running.text()[-3000:]}"


def test_flushall_under_a_running_worker_and_beat_costs_at_most_one_interval(
    redis_restored: RedisServer,
    tmp_path: Path,
    processes: Processes,
    engine: Engine,
    http_server: FeedServer,
    receiver: WebhookReceiver,
) -> None:
    probe_config(tmp_path, http_server, receiver)
    start_monitor(tmp_path, processes, engine)
    client = redis.Redis.from_url(redis_restored.url)
    try:
        assert client.keys("_kombu.binding.*")  # what FLUSHALL takes away, with every queue
        fault = utcnow()
        client.flushall()
    finally:
        client.close()
    probing_resumes("FLUSHALL", engine, processes, receiver, fault)


def test_redis_restarted_empty_under_a_running_worker_and_beat_costs_at_most_one_interval(
    redis_restored: RedisServer,
    tmp_path: Path,
    processes: Processes,
    engine: Engine,
    http_server: FeedServer,
    receiver: WebhookReceiver,
) -> None:
    probe_config(tmp_path, http_server, receiver)
    start_monitor(tmp_path, processes, engine)
    redis_restored.stop()  # SIGKILL, no persistence: it comes back empty
    redis_restored.start()
    fault = utcnow()
    probing_resumes("restarted empty", engine, processes, receiver, fault)
