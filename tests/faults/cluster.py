"""The HA layout on loopback, for the fault tests and the soak benchmark: workers that all run
beat (one leads), API replicas, a probed target and a webhook receiver; and the measures taken
of it: gaps in probing, slots probed twice, alerts sent per event, who leads.

The target is probed with one confirmation each way, so every stored result is one slot's
probe: two results closer than half an interval are one slot probed twice.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx
from sqlalchemy import func, select

from monitor.db.engine import make_engine
from monitor.db.models import ProbeResult, SchedulerLease, ScheduleSlot, Target
from tests.faults.servers import Processes, Slamon, free_port, write_config
from tests.support import FeedServer, WebhookReceiver, wait_for

INTERVAL_S = 4.0  # the target's probe interval
LEASE_S = 3.0  # the schedulers' lease: a standby takes over within it plus a dispatch period
SLACK_S = 1.0  # the 2-core machine's scheduling, on top of a bound
TARGET = "gpu-0"


def ha_config(
    path: Path,
    target: FeedServer,
    receiver: WebhookReceiver,
    interval: float = INTERVAL_S,
    lease: float = LEASE_S,
) -> Path:
    target.routes["/healthz"] = (200, b"ok")
    return write_config(
        path,
        f"schedule: {{lease: {lease}, dispatch: 1, deliveries: 1, tick: 2, heartbeats: 3600,"
        " feeds: 3600, alerts: 2, rollup: 3600, vantages: 3600}\n"
        f"channels:\n  - {{name: ops, kind: webhook, url: '{receiver.url}'}}\n"
        "targets:\n"
        f"  - {{name: {TARGET}, kind: http, url: '{target.url}/healthz', interval: {interval},"
        " timeout: 2, confirmations: 1, recovery_confirmations: 1}\n",
    )


@dataclass
class Cluster:
    processes: Processes
    database_url: str
    workers: list[Slamon] = field(default_factory=list)
    apis: dict[int, Slamon] = field(default_factory=dict)  # by port

    # ------------------------------------------------------------------ starting

    def start_worker(self, name: str, *extra: str) -> Slamon:
        worker = self.processes.start(name, "worker", "--beat", "--concurrency=4", *extra)
        self.workers.append(worker)
        wait_for(
            lambda: (
                "leader elected" in worker.text()
                or "standing by" in worker.text()
                or not worker.alive()
            ),
            timeout=90,
            explain=lambda: worker.text()[-3000:],
        )
        assert worker.alive(), worker.text()[-3000:]
        return worker

    def start_api(self, name: str) -> int:
        port = free_port()
        api = self.processes.start(name, "api", "--port", str(port))
        self.apis[port] = api
        wait_for(lambda: self.answers(port, "/healthz") is not None, timeout=60)
        return port

    # ------------------------------------------------------------------ reading

    def lease(self) -> tuple[str, int]:
        """(holder, token) of the lease as stored."""
        engine = make_engine(self.database_url)
        try:
            with engine.connect() as connection:
                row = connection.execute(
                    select(SchedulerLease.holder, SchedulerLease.token)
                ).first()
        finally:
            engine.dispose()
        return (row.holder, row.token) if row else ("", 0)

    def leader(self) -> Slamon:
        """The worker process that holds the lease."""
        holder, _ = self.lease()
        pid = int(holder.rsplit(":", 1)[1])
        return next(w for w in self.workers if w.process.pid == pid)

    def wait_for_new_leader(self, old: str, timeout: float = 60) -> tuple[str, int]:
        return wait_for(  # type: ignore[return-value]
            lambda: (lease := self.lease())[0] not in ("", old) and lease,
            timeout=timeout,
            every=0.05,
        )

    def probe_times(self, since: datetime | None = None) -> list[datetime]:
        engine = make_engine(self.database_url)
        try:
            with engine.connect() as connection:
                query = (
                    select(ProbeResult.at)
                    .join(Target, Target.id == ProbeResult.target_id)
                    .where(Target.name == TARGET)
                    .order_by(ProbeResult.at)
                )
                if since is not None:
                    query = query.where(ProbeResult.at >= since)
                return list(connection.scalars(query))
        finally:
            engine.dispose()

    def refused(self) -> tuple[int, int]:
        """(messages fenced, slots delivered again) the workers refused, in all."""
        engine = make_engine(self.database_url)
        try:
            with engine.connect() as connection:
                fenced, repeated = connection.execute(
                    select(func.sum(ScheduleSlot.fenced), func.sum(ScheduleSlot.repeated))
                ).one()
        finally:
            engine.dispose()
        return int(fenced or 0), int(repeated or 0)

    def answers(self, port: int, path: str) -> object | None:
        try:
            response = httpx.get(f"http://127.0.0.1:{port}{path}", timeout=5)
        except httpx.HTTPError:
            return None
        if response.status_code != 200:
            return None
        is_json = response.headers.get("content-type", "").startswith("application/json")
        return response.json() if is_json else response.text


def kill(process: Slamon, sig: int = signal.SIGKILL) -> None:
    os.kill(process.process.pid, sig)


def gaps(times: list[datetime]) -> list[float]:
    return [(b - a).total_seconds() for a, b in itertools.pairwise(times)]


def doubled(times: list[datetime], interval: float = INTERVAL_S) -> int:
    """Slots probed twice: consecutive results closer than half an interval."""
    return sum(gap < interval / 2 for gap in gaps(times))


def alerts_sent(receiver: WebhookReceiver) -> Counter[tuple[str, str]]:
    """Webhook posts by (rule, event), every post counted (a repeat is a double send)."""
    sent: Counter[tuple[str, str]] = Counter()
    for _, body in list(receiver.requests):
        payload = json.loads(body)
        sent[(payload["alert"]["rule"], payload["event"])] += 1
    return sent


def outage(target: FeedServer, receiver: WebhookReceiver, down: bool) -> None:
    """Take the target down (or bring it back) and wait for the alert's webhook."""
    target.routes["/healthz"] = (503, b"") if down else (200, b"ok")
    event = "firing" if down else "resolved"
    wait_for(
        lambda: alerts_sent(receiver)[("target_down", event)] >= 1,
        timeout=60,
        explain=lambda: dict(alerts_sent(receiver)),
    )
