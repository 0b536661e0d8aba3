"""The peer: Prometheus + blackbox_exporter (+ Alertmanager for alerts), from Debian's packages,
started on loopback with configs written here, in a temporary folder, on non-default ports.

Nothing here uses systemd or the packages' own daemons: if the packages started any at install,
they keep running on their default ports and are never touched.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from measure import Meter, count_window, fixed, per_probe, wait_for

PACKAGES = {  # binary -> Debian package
    "prometheus": "prometheus",
    "prometheus-blackbox-exporter": "prometheus-blackbox-exporter",
    "prometheus-alertmanager": "prometheus-alertmanager",
    "promtool": "prometheus",
}
PROMETHEUS_PORT = 19490
BLACKBOX_PORT = 19415
ALERTMANAGER_PORT = 19493
PROMETHEUS = f"http://127.0.0.1:{PROMETHEUS_PORT}"


def ensure_installed() -> None:
    """apt-get install whatever binary is missing (and say so); nothing when all are there."""
    missing = sorted({pkg for binary, pkg in PACKAGES.items() if shutil.which(binary) is None})
    if missing:
        print(f"peer: installing {' '.join(missing)} with apt-get", flush=True)
        subprocess.run(["apt-get", "install", "-y", *missing], check=True)


def versions() -> dict[str, str]:
    """First line of each binary's --version, e.g. 'prometheus, version 2.42.0+ds …'."""
    found = {}
    for binary in ("prometheus", "prometheus-blackbox-exporter", "prometheus-alertmanager"):
        out = subprocess.run([binary, "--version"], capture_output=True, text=True)
        found[binary] = (out.stdout or out.stderr).splitlines()[0].split(" (")[0]
    return found


# --- configs (pure: text from parameters) --------------------------------------------------


def probe_timeout(interval_s: float) -> float:
    """The probe timeout both sides use: 2 s, or the interval when that is shorter."""
    return min(2.0, interval_s)


def _duration(seconds: float) -> str:
    """Prometheus durations take no fractions: 2.5 s is '2500ms'."""
    return f"{round(seconds * 1000)}ms"


def prometheus_yml(targets: list[str], interval_s: float, alerting: bool) -> str:
    # blackbox answers within (scrape timeout − 0.5 s), so the scrape timeout is the probe
    # timeout + 0.5 s, capped by the interval (Prometheus refuses a timeout above it).
    scrape_timeout = min(interval_s, probe_timeout(interval_s) + 0.5)
    config: dict[str, Any] = {
        "global": {
            "scrape_interval": _duration(interval_s),
            "scrape_timeout": _duration(scrape_timeout),
            "evaluation_interval": "1s",
        },
        "scrape_configs": [
            {
                "job_name": "blackbox",
                "metrics_path": "/probe",
                "params": {"module": ["http_2xx"]},
                "static_configs": [{"targets": targets}],
                "relabel_configs": [
                    {"source_labels": ["__address__"], "target_label": "__param_target"},
                    {"source_labels": ["__param_target"], "target_label": "instance"},
                    {"target_label": "__address__", "replacement": f"127.0.0.1:{BLACKBOX_PORT}"},
                ],
            }
        ],
    }
    if alerting:
        config["rule_files"] = ["rules.yml"]
        config["alerting"] = {
            "alertmanagers": [{"static_configs": [{"targets": [f"127.0.0.1:{ALERTMANAGER_PORT}"]}]}]
        }
    return json.dumps(config, indent=1)  # JSON is YAML


def blackbox_yml(interval_s: float) -> str:
    timeout = probe_timeout(interval_s)
    module = {
        "prober": "http",
        "timeout": _duration(timeout),
        "http": {"preferred_ip_protocol": "ip4"},
    }
    return json.dumps({"modules": {"http_2xx": module}}, indent=1)


def rules_yml(for_s: float) -> str:
    rule = {"alert": "TargetDown", "expr": "probe_success == 0", "for": _duration(for_s)}
    return json.dumps({"groups": [{"name": "bench", "interval": "1s", "rules": [rule]}]}, indent=1)


def alertmanager_yml(webhook_url: str) -> str:
    route = {
        "receiver": "hook",
        "group_by": ["alertname", "instance"],
        "group_wait": "0s",
        "group_interval": "1s",
        "repeat_interval": "24h",
    }
    receiver = {"name": "hook", "webhook_configs": [{"url": webhook_url, "send_resolved": True}]}
    return json.dumps({"route": route, "receivers": [receiver]}, indent=1)


# --- processes ------------------------------------------------------------------------------


@dataclass
class Peer:
    """Prometheus + blackbox_exporter (+ Alertmanager when ``webhook_url`` is given)."""

    targets: list[str]
    interval_s: float
    webhook_url: str | None = None
    for_s: float = 5.0
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="slamon-peer-")))
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def __enter__(self) -> Peer:
        self.write_configs()
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, exc_type: object, *_exc: object) -> None:
        self.stop()
        if exc_type is None:  # keep configs, logs and data for a post-mortem when it failed
            shutil.rmtree(self.folder, ignore_errors=True)

    @property
    def tsdb(self) -> Path:
        return self.folder / "tsdb"

    def write_configs(self) -> None:
        alerting = self.webhook_url is not None
        (self.folder / "prometheus.yml").write_text(
            prometheus_yml(self.targets, self.interval_s, alerting)
        )
        (self.folder / "blackbox.yml").write_text(blackbox_yml(self.interval_s))
        if self.webhook_url is not None:
            (self.folder / "rules.yml").write_text(rules_yml(self.for_s))
            (self.folder / "alertmanager.yml").write_text(alertmanager_yml(self.webhook_url))

    def start(self) -> None:
        self._spawn(
            "blackbox",
            "prometheus-blackbox-exporter",
            f"--config.file={self.folder / 'blackbox.yml'}",
            f"--web.listen-address=127.0.0.1:{BLACKBOX_PORT}",
        )
        if self.webhook_url is not None:
            self._spawn(
                "alertmanager",
                "prometheus-alertmanager",
                f"--config.file={self.folder / 'alertmanager.yml'}",
                f"--storage.path={self.folder / 'alertmanager'}",
                f"--web.listen-address=127.0.0.1:{ALERTMANAGER_PORT}",
                "--cluster.listen-address=",
            )
        self._spawn(
            "prometheus",
            "prometheus",
            f"--config.file={self.folder / 'prometheus.yml'}",
            f"--storage.tsdb.path={self.tsdb}",
            f"--web.listen-address=127.0.0.1:{PROMETHEUS_PORT}",
        )
        ready = {
            "blackbox": f"http://127.0.0.1:{BLACKBOX_PORT}/-/healthy",
            "alertmanager": f"http://127.0.0.1:{ALERTMANAGER_PORT}/-/ready",
            "prometheus": f"{PROMETHEUS}/-/ready",
        }
        for name in self.processes:
            wait_for(lambda url=ready[name]: _get(url).status == 200, 30, f"peer {name}")  # type: ignore[misc]

    def _spawn(self, name: str, *argv: str) -> None:
        log = (self.folder / f"{name}.log").open("wb")
        self.processes[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def pids(self, *names: str) -> list[int]:
        return [self.processes[n].pid for n in names if n in self.processes]

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        params = {"query": expr} | ({"time": f"{at:.3f}"} if at is not None else {})
        url = f"{PROMETHEUS}/api/v1/query?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=120) as response:
            body = json.load(response)
        if body.get("status") != "success":
            raise RuntimeError(f"prometheus query {expr!r} failed: {body}")
        return list(body["data"]["result"])


def _get(url: str) -> Any:
    return urllib.request.urlopen(url, timeout=5)


def du(path: Path) -> int:
    """Bytes of the files under ``path`` (apparent sizes)."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# --- workload 1: probe cost -----------------------------------------------------------------


def sample_times(peer: Peer, end: float, span_s: float) -> dict[str, list[float]]:
    """Timestamps of every probe_success sample in (end − span, end], per target."""
    rows = peer.query(f'probe_success{{job="blackbox"}}[{span_s:g}s]', at=end)
    return {r["metric"]["instance"]: [float(v[0]) for v in r["values"]] for r in rows}


def probe_cost(
    urls: list[str],
    interval_s: float,
    window_s: float,
    warmup_s: float,
) -> dict[str, Any]:
    """Run the peer over ``urls`` for warm-up + window; CPU of prometheus + blackbox_exporter,
    probes done, missed and late, peak RSS, WAL bytes per probe at the margin."""
    with Peer(urls, interval_s) as peer:
        time.sleep(warmup_s)
        meter = Meter(
            {
                "prometheus": fixed(*peer.pids("prometheus")),
                "blackbox": fixed(*peer.pids("blackbox")),
            }
        )
        wal_before, start = du(peer.tsdb / "wal"), time.time()
        meter.start()
        time.sleep(window_s)
        readings, end = meter.stop(), time.time()
        wal_after = du(peer.tsdb / "wal")
        time.sleep(min(3.0, interval_s))  # let the scrapes that started before `end` land
        times = sample_times(peer, end + interval_s, window_s + 3 * interval_s)
        ok = peer.query(
            f'sum(sum_over_time(probe_success{{job="blackbox"}}[{window_s:g}s]))',
            at=end,
        )
        series_per_target = peer.query('count({job="blackbox"}) / count(up{job="blackbox"})')
    executed, late = count_window(times, start, end, interval_s)
    expected = round(len(urls) * window_s / interval_s)
    cpu_s = readings["prometheus"].cpu_s + readings["blackbox"].cpu_s
    return {
        "targets": len(urls),
        "interval_s": interval_s,
        "window_s": round(end - start, 2),
        "expected": expected,
        "executed": executed,
        "ok": int(float(ok[0]["value"][1])) if ok else 0,
        "missed": max(0, expected - executed),
        "late": late,
        "probes_per_s": round(executed / (end - start), 1),
        "cpu_s": {
            "prometheus": round(readings["prometheus"].cpu_s, 2),
            "blackbox_exporter": round(readings["blackbox"].cpu_s, 2),
        },
        "cpu_ms_per_probe": per_probe(cpu_s * 1000, executed, 3),
        "peak_rss_mib": round(meter.peak_total_mib, 1),
        "wal_bytes_per_probe": per_probe(wal_after - wal_before, executed, 1),
        "series_per_probe": float(series_per_target[0]["value"][1]) if series_per_target else None,
    }
