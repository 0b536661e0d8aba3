"""The watchdog against a local receiver, with the real processes: the one scheduler (`slamon
worker --beat`) pings while slamon does its job; the pings stop within two intervals of the
schedule stopping (the leader SIGSTOPped, no other scheduler), of the broker lost, and of a
delivery backlog past its bound; and they come back after recovery. Figures in the summary."""

from __future__ import annotations

import http.server
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.servers import Processes, RedisServer, Slamon, free_port, write_config
from tests.support import FeedServer, WebhookReceiver, report_figure, wait_for

pytestmark = [pytest.mark.fault, pytest.mark.slow]

EVERY_S = 2.0  # watchdog.every
STOPS_WITHIN_S = 2 * EVERY_S  # the promise: no ping within two intervals
RESUMES_WITHIN_S = 2 * EVERY_S + 6.0  # a check's interval, the broker's reconnect, the machine


class PingReceiver:
    """Records when each watchdog ping (a GET) arrives."""

    def __init__(self) -> None:
        self.times: list[float] = []
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                owner.times.append(time.monotonic())
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"OK")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/ping/uuid-0"

    def after(self, moment: float) -> list[float]:
        return [t for t in self.times if t > moment]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def pings() -> Iterator[PingReceiver]:
    receiver = PingReceiver()
    yield receiver
    receiver.close()


@pytest.fixture
def webhook() -> Iterator[WebhookReceiver]:
    hook = WebhookReceiver(free_port())
    yield hook
    hook.stop()


def start(
    tmp_path: Path,
    processes: Processes,
    pings: PingReceiver,
    webhook: WebhookReceiver,
    target: FeedServer,
) -> Slamon:
    target.routes["/healthz"] = (200, b"ok")
    write_config(
        tmp_path / "slamon.yaml",
        f"watchdog: {{url: '{pings.url}', every: {EVERY_S}, timeout: 1, max_backlog: 3}}\n"
        "alerts: {retry_base: 1, retry_max: 2}\n"
        "schedule: {lease: 3, dispatch: 1, deliveries: 1, tick: 2, heartbeats: 3600,"
        " feeds: 3600, alerts: 2, rollup: 3600, vantages: 3600}\n"
        f"channels:\n  - {{name: ops, kind: webhook, url: '{webhook.url}'}}\n"
        f"targets:\n  - {{name: gpu-0, kind: http, url: '{target.url}/healthz', interval: 2,"
        " timeout: 1, confirmations: 1, recovery_confirmations: 1}\n",
    )
    worker = processes.start(
        "worker", "worker", "--beat", "--concurrency=4", env={"SLAMON_BROKER_GIVE_UP_AFTER": "600"}
    )
    wait_for(lambda: len(pings.times) >= 2, timeout=90, explain=lambda: worker.text()[-3000:])
    return worker


def stopped_and_resumed(
    what: str, pings: PingReceiver, fault_at: float, recovered_at: float, worker: Slamon
) -> None:
    """No ping later than two intervals after the fault until recovery; a ping again soon
    after it."""
    during = [t for t in pings.times if fault_at + STOPS_WITHIN_S < t <= recovered_at]
    before = [t for t in pings.times if t <= fault_at + STOPS_WITHIN_S]
    last = max(before) - fault_at if before else float("nan")
    wait_for(
        lambda: pings.after(recovered_at),
        timeout=RESUMES_WITHIN_S + 10,
        explain=lambda: worker.text()[-3000:],
    )
    back = pings.after(recovered_at)[0] - recovered_at
    report_figure(
        f"watchdog, {what}: last ping {last:+.1f} s from the fault, pings during the fault "
        f"after {STOPS_WITHIN_S:g} s: {len(during)}, first ping {back:.1f} s after recovery "
        f"(every {EVERY_S:g} s)"
    )
    assert during == [], worker.text()[-3000:]
    assert back <= RESUMES_WITHIN_S


def test_pings_stop_while_the_only_scheduler_is_paused(
    tmp_path: Path,
    processes: Processes,
    pings: PingReceiver,
    webhook: WebhookReceiver,
    http_server: FeedServer,
) -> None:
    worker = start(tmp_path, processes, pings, webhook, http_server)
    healthy_from = time.monotonic()
    time.sleep(3 * EVERY_S)
    steady = pings.after(healthy_from)
    assert len(steady) >= 2  # pinging while healthy
    fault_at = time.monotonic()
    worker.process.send_signal(signal.SIGSTOP)
    try:
        time.sleep(3 * EVERY_S)
    finally:
        worker.process.send_signal(signal.SIGCONT)
    stopped_and_resumed("the leader SIGSTOPped", pings, fault_at, time.monotonic(), worker)


def test_pings_stop_while_the_broker_is_lost(
    tmp_path: Path,
    processes: Processes,
    pings: PingReceiver,
    webhook: WebhookReceiver,
    http_server: FeedServer,
    redis_server: RedisServer,
) -> None:
    worker = start(tmp_path, processes, pings, webhook, http_server)
    fault_at = time.monotonic()
    redis_server.stop()
    try:
        time.sleep(4 * EVERY_S)
    finally:
        redis_server.start()
    recovered_at = time.monotonic()
    stopped_and_resumed("the broker lost", pings, fault_at, recovered_at, worker)
    assert "watchdog silent" in worker.text()


def test_pings_stop_while_deliveries_back_up(
    tmp_path: Path,
    processes: Processes,
    pings: PingReceiver,
    webhook: WebhookReceiver,
    http_server: FeedServer,
) -> None:
    worker = start(tmp_path, processes, pings, webhook, http_server)
    webhook.status = 500  # the alert cannot be delivered: the outbox backs up
    http_server.routes["/healthz"] = (503, b"")
    wait_for(lambda: webhook.requests, timeout=30)
    fault_at = time.monotonic()  # the delivery is pending from here; max_backlog is 3 s
    time.sleep(3 + 3 * EVERY_S)
    # recovered the moment the receiver takes deliveries again: the backlog clears and the
    # worker pings at once, sometimes before a poll here sees the delivery accepted
    recovered_at = time.monotonic()
    webhook.status = 200
    wait_for(lambda: webhook.accepted, timeout=30)
    # the bound is 3 s of backlog: the pings stop within two intervals of passing it
    stopped_and_resumed("a delivery backlog past 3 s", pings, fault_at + 3, recovered_at, worker)
    assert "oldest pending delivery" in worker.text()
