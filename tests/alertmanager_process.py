"""The real Alertmanager (Debian's ``prometheus-alertmanager``) on loopback, for tests.

Alertmanager keeps alerts in memory only, so a test that restarts it checks what a real restart
loses; and its API (``/api/v2/alerts``) is the judge of what slamon posted, not an imitation.

    with running_alertmanager() as am:          # default config: one receiver that drops all
        ...                                     # slamon posts to am.url
        assert am.alerts()[0]["labels"]["alertname"] == "target_down"
        am.restart()                            # same port, config and storage; alerts gone

Each instance listens on a free 127.0.0.1 port with its own temporary ``--storage.path``.
Clustering is off (``--cluster.listen-address=``) unless ``cluster=True``; ``peers`` then names
other members' ``cluster_address`` to gossip with. The binary missing is a skip on a laptop and
a failure under ``SLAMON_TEST_REQUIRE_SERVICES=1`` (``tests.support.unavailable``).
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import unavailable

BINARY_NAMES = ("/usr/bin/prometheus-alertmanager", "prometheus-alertmanager", "alertmanager")
READY_TIMEOUT_S = 30.0

# Routes everything to a receiver with no integrations: alerts are kept and shown by the API,
# nothing is sent anywhere. Short group waits so a test's webhook receiver hears quickly.
DROP_ALL_CONFIG = """\
route:
  receiver: drop
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: drop
"""


def alertmanager_binary() -> str:
    """The Alertmanager binary's path; skips (or fails in CI) when it is not installed."""
    for name in BINARY_NAMES:
        found = shutil.which(name)
        if found:
            return found
    unavailable("Alertmanager (prometheus-alertmanager)", "not installed")
    raise AssertionError("unreachable")  # unavailable() skips or fails


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class AlertmanagerProcess:
    """One Alertmanager process: ``start()``, ``stop()``, ``restart()`` keep port and config."""

    binary: str
    config: str = DROP_ALL_CONFIG
    cluster: bool = False
    peers: Sequence[str] = ()
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="slamon-am-")))
    port: int = field(default_factory=_free_port)
    cluster_port: int = field(default_factory=_free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The base URL slamon's channel is given (``/api/v2/alerts`` lies under it)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def cluster_address(self) -> str:
        return f"127.0.0.1:{self.cluster_port}"

    @property
    def log(self) -> Path:
        return self.root / "alertmanager.log"

    def argv(self) -> list[str]:
        cluster = [f"--cluster.listen-address={self.cluster_address if self.cluster else ''}"]
        if self.cluster:
            cluster += [f"--cluster.peer={peer}" for peer in self.peers]
            cluster += ["--cluster.settle-timeout=2s", "--cluster.gossip-interval=100ms"]
        return [
            self.binary,
            f"--config.file={self.root / 'alertmanager.yml'}",
            f"--storage.path={self.root / 'data'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            f"--web.external-url=http://127.0.0.1:{self.port}",
            "--log.level=debug",
            *cluster,
        ]

    def start(self) -> None:
        """Starts it and waits until ``/-/ready`` answers 200; fails the test with the log if
        it exits or stays unready."""
        (self.root / "alertmanager.yml").write_text(self.config)
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                self.argv(), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"Alertmanager exited ({self.process.returncode}):\n{self.text()}")
            if self.ready():
                return
            time.sleep(0.1)
        pytest.fail(f"Alertmanager not ready within {READY_TIMEOUT_S} s:\n{self.text()}")

    def ready(self) -> bool:
        try:
            return httpx.get(f"{self.url}/-/ready", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        """SIGTERM (a clean shutdown), SIGKILL after 10 s; the port is free afterwards."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self) -> None:
        """Stop and start again on the same port, config and storage: alerts are lost (they
        live in memory), silences and the notification log are kept."""
        self.stop()
        self.start()

    def alerts(self, **filters: str) -> list[dict[str, Any]]:
        """``GET /api/v2/alerts``: every alert it holds (``active``, ``silenced`` ... as
        query parameters; by default Alertmanager returns active, silenced and inhibited,
        not resolved ones)."""
        answer = httpx.get(f"{self.url}/api/v2/alerts", params=filters, timeout=5)
        answer.raise_for_status()
        return list(answer.json())

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def destroy(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def start_alertmanager(
    config: str = DROP_ALL_CONFIG, *, cluster: bool = False, peers: Sequence[str] = ()
) -> AlertmanagerProcess:
    """A started Alertmanager; the caller ``destroy()``s it (``running_alertmanager`` does)."""
    server = AlertmanagerProcess(alertmanager_binary(), config, cluster, peers)
    try:
        server.start()
    except BaseException:
        server.destroy()
        raise
    return server


@contextlib.contextmanager
def running_alertmanager(
    config: str = DROP_ALL_CONFIG, *, cluster: bool = False, peers: Sequence[str] = ()
) -> Iterator[AlertmanagerProcess]:
    """A started Alertmanager, stopped and its folder removed when the block ends."""
    server = start_alertmanager(config, cluster=cluster, peers=peers)
    try:
        yield server
    finally:
        server.destroy()


@contextlib.contextmanager
def running_cluster(
    count: int = 2, config: str = DROP_ALL_CONFIG
) -> Iterator[list[AlertmanagerProcess]]:
    """``count`` Alertmanagers gossiping as one HA cluster (each peers with the first)."""
    binary = alertmanager_binary()
    first = AlertmanagerProcess(binary, config, cluster=True)
    members = [first] + [
        AlertmanagerProcess(binary, config, cluster=True, peers=[first.cluster_address])
        for _ in range(count - 1)
    ]
    try:
        for member in members:
            member.start()
        yield members
    finally:
        for member in members:
            member.destroy()


__all__ = [
    "DROP_ALL_CONFIG",
    "AlertmanagerProcess",
    "alertmanager_binary",
    "running_alertmanager",
    "running_cluster",
    "start_alertmanager",
]
