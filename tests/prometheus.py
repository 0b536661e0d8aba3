"""Debian's Prometheus binaries for the tests that check slamon with the real tools:
``promtool`` (``check metrics``, ``check rules``, ``test rules``) and ``prometheus`` itself
(started on a free loopback port to scrape a running slamon). Missing binaries skip the test
on a laptop and fail it in CI (``tests.support.unavailable``)."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.faults.servers import free_port
from tests.support import unavailable

PROMTOOL = "/usr/bin/promtool"
PROMETHEUS = "/usr/bin/prometheus"
RULES = Path(__file__).parent.parent / "deploy" / "prometheus"
READY_S = 60.0  # a cold start on a busy 2-core machine


def binary(path: str) -> str:
    """``path`` if it is installed (else on PATH by its name); skips or fails the test if not."""
    found = path if Path(path).exists() else shutil.which(Path(path).name)
    if found is None:
        unavailable(Path(path).name, f"{path} is not installed (Debian's prometheus package)")
    return str(found)


def promtool(*args: str, stdin: str | None = None, cwd: Path | None = None) -> tuple[int, str]:
    """Run ``promtool args…``; its exit code and everything it printed."""
    done = subprocess.run(
        [binary(PROMTOOL), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )
    return done.returncode, done.stdout + done.stderr


def scrape_config(slamon_port: int, rule_files: Sequence[str] = (), every: str = "1s") -> str:
    """A prometheus.yml scraping slamon's ``/metrics`` on 127.0.0.1 every ``every``, its
    rules evaluated as often."""
    rules = "".join(f"  - {json.dumps(path)}\n" for path in rule_files)
    return (
        f"global:\n  scrape_interval: {every}\n  scrape_timeout: {every}\n"
        f"  evaluation_interval: {every}\n"
        + (f"rule_files:\n{rules}" if rules else "")
        + "scrape_configs:\n  - job_name: slamon\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{slamon_port}']\n"
    )


@dataclass
class PrometheusProcess:
    """Debian's Prometheus on a free 127.0.0.1 port with its own temporary storage: ``start()``
    waits until it is ready, ``query()`` asks its HTTP API, ``destroy()`` stops it and removes
    its folder."""

    config: str
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="slamon-prom-")))
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.root / "prometheus.log"

    def start(self) -> None:
        (self.root / "prometheus.yml").write_text(self.config)
        argv = [
            binary(PROMETHEUS),
            f"--config.file={self.root / 'prometheus.yml'}",
            f"--storage.tsdb.path={self.root / 'data'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--storage.tsdb.retention.time=1d",
        ]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"Prometheus exited ({self.process.returncode}):\n{self.text()}")
            if self.ready():
                return
            time.sleep(0.2)
        pytest.fail(f"Prometheus not ready within {READY_S} s:\n{self.text()}")

    def ready(self) -> bool:
        try:
            return httpx.get(f"{self.url}/-/ready", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        """``GET /api/v1/query``: the instant vector's samples (``metric``, ``value``)."""
        params = {"query": expr} | ({"time": f"{at:.3f}"} if at is not None else {})
        answer = httpx.get(f"{self.url}/api/v1/query", params=params, timeout=10)
        answer.raise_for_status()
        body = answer.json()
        assert body["status"] == "success", body
        return list(body["data"]["result"])

    def value(self, expr: str, at: float | None = None) -> float | None:
        """The one sample ``expr`` answers (None when it answers none)."""
        found = self.query(expr, at)
        assert len(found) <= 1, (expr, found)
        return float(found[0]["value"][1]) if found else None

    def samples(self, expr: str) -> list[tuple[float, float]]:
        """A range selector's raw samples, ``(Unix time, value)``, for ``expr`` like
        ``metric{…}[5m]`` (one series)."""
        found = self.query(expr)
        assert len(found) <= 1, (expr, found)
        return [(float(t), float(v)) for t, v in found[0]["values"]] if found else []

    def alerts(self) -> list[dict[str, Any]]:
        """``GET /api/v1/alerts``: the alerts its rules hold (pending and firing)."""
        answer = httpx.get(f"{self.url}/api/v1/alerts", timeout=10)
        answer.raise_for_status()
        return list(answer.json()["data"]["alerts"])

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def destroy(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        shutil.rmtree(self.root, ignore_errors=True)
