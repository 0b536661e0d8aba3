"""Two `slamon api` processes on one PostgreSQL give the same answers (issue 32: stateless API
replicas behind any load balancer), and one keeps answering when the other is SIGKILLed.

What an API process keeps in memory, and why each is safe per process, is in
docs/operations.md ("API replicas"). The checks here are the ones a user behind a load
balancer would notice: a change made through one replica shows through the other at once (the
status page's cache is keyed on the database's change log, so it cannot hide it for its
``READ_MAX_AGE``), the REST API's JSON is byte for byte the same through both, a revoked token is
refused by both, and killing one replica loses nothing the other answers.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.faults.servers import Processes, Slamon, free_port, write_config
from tests.support import slamon_command, wait_for

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.fault, pytest.mark.slow]

START_S = 120.0  # a cold start on a busy 2-core machine
INTERVAL_S = 15  # the target's: its verdict stays fresh (3 intervals) for the whole comparison
# every read the REST API offers on what the test changes (the SLA is left out: its
# month-to-date figures count time up to each request's own `now`)
REST_PATHS = (
    "/api/v1/targets",
    "/api/v1/targets/gpu-0",
    "/api/v1/targets?include_retired=true",
    "/api/v1/alerts",
    "/api/v1/outages",
    "/api/v1/silences",
    "/api/v1/silences?expired=true",
    "/api/v1/vantages",
    "/api/v1/providers",
)
# the status page's verdicts: the summary banner, each target's row and each provider's card
ROW = re.compile(r'data-target="([^"]+)" data-state="([^"]+)"')
CARD = re.compile(r'data-provider="([^"]+)" data-state="([^"]+)"')
SUMMARY = re.compile(r'id="summary"[^>]*data-state="([^"]+)"')


class Api:
    """A client for slamon's HTTP surfaces at ``port``: a replica's own, or a balancer's."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10)

    def healthy(self) -> bool:
        try:
            return self.client.get("/healthz").status_code == 200
        except httpx.TransportError:
            return False

    def get(self, path: str, token: str) -> httpx.Response:
        return self.client.get(path, headers={"Authorization": f"Bearer {token}"})

    def json(self, path: str, token: str) -> Any:
        response = self.get(path, token)
        assert response.status_code == 200, (path, response.text)
        return response.json()

    def send(self, method: str, path: str, token: str, body: object = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"}
        return self.client.request(method, path, json=body, headers=headers)

    def page(self, path: str = "/") -> dict[str, Any]:
        """The verdicts a status page shows (not its "as of" time, its bars or durations)."""
        response = self.client.get(path)
        assert response.status_code == 200, response.text[:2000]
        html = response.text
        summary = SUMMARY.search(html)
        return {
            "summary": summary[1] if summary else None,
            "targets": dict(ROW.findall(html)),
            "providers": dict(CARD.findall(html)),
        }


class Replica(Api):
    """One `slamon api` process, and a client for it."""

    def __init__(self, processes: Processes, name: str) -> None:
        super().__init__(free_port())
        self.process: Slamon = processes.start(name, "api", f"--port={self.port}")

    def kill(self) -> None:
        self.process.process.send_signal(signal.SIGKILL)
        self.process.process.wait(timeout=20)


@pytest.fixture
def replicas(tmp_path: Path, processes: Processes) -> Iterator[tuple[Replica, Replica]]:
    write_config(
        tmp_path / "slamon.yaml",
        "probes: {retry_interval: 0.2}\n"
        "schedule: {tick: 1, dispatch: 1, deliveries: 1, alerts: 1, heartbeats: 3600,"
        " feeds: 3600, rollup: 3600}\n",
    )
    pair = (Replica(processes, "api-a"), Replica(processes, "api-b"))
    for replica in pair:
        wait_for(lambda r=replica: r.healthy() or not r.process.alive(), timeout=START_S)
        assert replica.process.alive(), replica.process.text()[-3000:]
    yield pair
    for replica in pair:
        replica.client.close()


def slamon(processes: Processes, *args: str) -> str:
    """``slamon *args`` on the replicas' database; its stdout (fails on a non-zero exit)."""
    done = subprocess.run(
        [*slamon_command(), *args],
        env=processes.env,
        cwd=processes.cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


def logs(processes: Processes) -> str:
    return "\n".join(f"--- {p.name}:\n{p.text()[-3000:]}" for p in processes.started)


def assert_same_rest_answers(a: Replica, b: Replica, token: str) -> dict[str, Any]:
    """Every REST read, through both: the same status and the same bytes. What they said."""
    said = {}
    for path in REST_PATHS:
        one, other = a.get(path, token), b.get(path, token)
        assert (one.status_code, one.content) == (other.status_code, other.content), path
        assert one.status_code == 200, (path, one.text)
        said[path] = one.json()
    return said


def test_two_api_replicas_answer_alike_and_one_survives_the_others_kill(
    processes: Processes, replicas: tuple[Replica, Replica]
) -> None:
    a, b = replicas
    admin = slamon(processes, "token", "create", "replicas-admin", "--scope", "admin")
    reader = slamon(processes, "token", "create", "replicas-read", "--scope", "read")

    # both render (and keep) the empty page first; a change through A shows on B's at once
    assert a.page()["targets"] == b.page()["targets"] == {}
    closed = free_port()  # nothing listens: the target is down from its first probe
    target = {
        "name": "gpu-0",
        "kind": "http",
        "url": f"http://127.0.0.1:{closed}/healthz",
        "interval": INTERVAL_S,
        "timeout": 1,
        "labels": {"team": "replicas"},
    }
    registered = a.send("POST", "/api/v1/targets", admin, target)
    assert registered.status_code == 201, registered.text
    assert b.page()["targets"] == {"gpu-0": "unknown"}
    assert b.json("/api/v1/targets/gpu-0", reader)["url"] == target["url"]

    # a silence opened through B is in force through A
    opened = b.send(
        "POST",
        "/api/v1/silences",
        admin,
        {"match": {"target": "gpu-0"}, "ends_at": "2999-01-01T00:00:00Z", "comment": "replicas"},
    )
    assert opened.status_code == 201, opened.text
    silence = opened.json()
    assert a.json("/api/v1/silences", reader)["items"] == [silence]

    # the monitor finds the target down and fires its alert, silenced; both replicas see it
    worker = processes.start(
        "worker",
        "worker",
        "--beat",
        "--pool=threads",
        "--concurrency=4",
        "--queues=default,probes,deliveries",
    )

    def down_and_alerted() -> bool:
        alerts = a.json("/api/v1/alerts?state=firing", reader)["items"]
        page = b.page()
        return bool(alerts) and page["targets"] == {"gpu-0": "down"}

    wait_for(down_and_alerted, timeout=START_S, explain=lambda: logs(processes))
    # who leads the schedulers is read from the database: both name the same one
    leaders = [
        (r.client.get("/healthz").json().get("scheduler") or {}).get("leader") for r in (a, b)
    ]
    assert leaders[0] == leaders[1], leaders
    assert worker.stop() is not None  # what the replicas read is still from here on
    said = assert_same_rest_answers(a, b, reader)
    assert said["/api/v1/targets/gpu-0"]["state"] == "down"
    (alert,) = said["/api/v1/alerts"]["items"]
    assert (alert["rule"], alert["state"], alert["suppressed"]) == ("target_down", "firing", True)
    assert {o["target"] for o in said["/api/v1/outages"]["items"]} == {"gpu-0"}
    assert a.page() == b.page()
    assert a.page()["targets"] == {"gpu-0": "down"}
    assert a.page("/targets/gpu-0")["summary"] == b.page("/targets/gpu-0")["summary"]
    for replica in (a, b):
        health = replica.client.get("/healthz").json()
        assert health["database"] == {"ok": True}
        assert health["broker"] == {"ok": True}
    assert a.client.get("/healthz").json()["status"] == b.client.get("/healthz").json()["status"]

    # the silence ended through A is over through B; a token revoked is refused by both
    assert a.send("DELETE", f"/api/v1/silences/{silence['id']}", admin).status_code == 204
    assert b.json("/api/v1/silences", reader)["items"] == []
    slamon(processes, "token", "revoke", "replicas-read")
    assert a.get("/api/v1/targets", reader).status_code == 401
    assert b.get("/api/v1/targets", reader).status_code == 401
    reader = slamon(processes, "token", "create", "replicas-read-2", "--scope", "read")
    before = assert_same_rest_answers(a, b, reader)

    # SIGKILL A: B keeps answering, the same, and takes changes
    a.kill()
    with pytest.raises(httpx.TransportError):
        a.client.get("/healthz")
    assert b.client.get("/healthz").status_code == 200
    for path, answer in before.items():
        assert b.json(path, reader) == answer, path
    assert b.page()["targets"] == {"gpu-0": "down"}
    target["name"] = "gpu-1"
    assert b.send("POST", "/api/v1/targets", admin, target).status_code == 201
    names = [t["name"] for t in b.json("/api/v1/targets", reader)["items"]]
    assert names == ["gpu-0", "gpu-1"]
    assert b.page()["targets"] == {"gpu-0": "down", "gpu-1": "unknown"}
    assert b.process.alive(), b.process.text()[-3000:]


def haproxy_config(a: Replica, b: Replica, port: int) -> str:
    """docker-compose's balancer config (deploy/haproxy.cfg) as it is, but for loopback: its
    frontend on ``port`` and its two servers at the replicas' ports."""
    text = (ROOT / "deploy/haproxy.cfg").read_text()
    swaps = {
        "bind :8080": f"bind 127.0.0.1:{port}",
        "server api-a api-a:8080": f"server api-a 127.0.0.1:{a.port}",
        "server api-b api-b:8080": f"server api-b 127.0.0.1:{b.port}",
    }
    for old, new in swaps.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    return text


def test_behind_the_compose_balancer_a_killed_replica_costs_no_failed_request(
    tmp_path: Path, processes: Processes, replicas: tuple[Replica, Replica]
) -> None:
    binary = shutil.which("haproxy")
    if binary is None:
        pytest.skip("haproxy is not installed (.ci/run installs it)")
    a, b = replicas
    admin = slamon(processes, "token", "create", "replicas-admin", "--scope", "admin")
    port = free_port()
    config = tmp_path / "haproxy.cfg"
    config.write_text(haproxy_config(a, b, port))
    with (tmp_path / "haproxy.log").open("wb") as log:
        balancer = subprocess.Popen(
            [binary, "-db", "-f", str(config)],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    lb = Api(port)
    try:
        wait_for(lambda: lb.healthy() or balancer.poll() is not None, timeout=30)
        assert balancer.poll() is None, (tmp_path / "haproxy.log").read_text()
        target = {"name": "gpu-0", "kind": "http", "url": "http://127.0.0.1:9/", "interval": 30}
        assert lb.send("POST", "/api/v1/targets", admin, target).status_code == 201
        # round robin: consecutive reads go to both replicas, and read the same
        answers = {lb.get("/api/v1/targets", admin).content for _ in range(6)}
        (listed,) = answers
        assert [t["name"] for t in httpx.Response(200, content=listed).json()["items"]] == ["gpu-0"]
        a.kill()
        # every request after the kill is answered: refused by A, it is sent on to B
        for _ in range(20):
            response = lb.get("/api/v1/targets", admin)
            assert (response.status_code, response.content) == (200, listed)
        target["name"] = "gpu-1"
        assert lb.send("POST", "/api/v1/targets", admin, target).status_code == 201
        assert lb.client.get("/healthz").status_code == 200
    finally:
        lb.client.close()
        balancer.terminate()
        balancer.wait(timeout=20)
