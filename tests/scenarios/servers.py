"""The world a scenario drives slamon with, all on loopback: status feeds that change between
polls (with ETag/Last-Modified and 304s), a dcgm-exporter for 8 GPUs that develops faults, HTTP
and TCP targets that flip, a training job that pushes heartbeats, and a webhook receiver that
checks every signature before it records the alert."""

from __future__ import annotations

import copy
import email.utils
import hashlib
import hmac
import http.server
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from tests.support import FIXTURES, FeedServer

# The capture the Statuspage documents are built from: its page/status/components/incident
# shapes, with our own incident's ids, words and times put in.
STATUSPAGE_CAPTURE = FIXTURES / "feeds" / "statuspage" / "ai-status-cloudflare-summary-trimmed.json"


def iso(moment: datetime) -> str:
    """Statuspage's time format: ``2026-09-11T21:55:52.000Z``."""
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


class _Quiet(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def _serve(handler: type[http.server.BaseHTTPRequestHandler]) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


# --------------------------------------------------------------------------- status feeds


@dataclass
class _Document:
    body: bytes
    etag: str
    last_modified: float  # unix seconds, strictly increasing per path


@dataclass(frozen=True)
class FeedHit:
    path: str
    status: int
    conditional: bool  # the request carried If-None-Match or If-Modified-Since


class StatusFeeds:
    """Documents per path, answered with ``ETag`` and ``Last-Modified``; a conditional GET that
    matches gets ``304 Not Modified``. ``fail(path)`` makes a path answer 500 until
    ``recover(path)``; ``hits`` records what every request got."""

    def __init__(self) -> None:
        self.documents: dict[str, _Document] = {}
        self.failing: dict[str, int] = {}
        self.hits: list[FeedHit] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(_Quiet):
            def do_GET(self) -> None:
                status, headers, body = owner.answer(
                    self.path,
                    self.headers.get("If-None-Match"),
                    self.headers.get("If-Modified-Since"),
                )
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = _serve(Handler)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def publish(self, path: str, document: dict[str, Any]) -> None:
        """Serve ``document`` at ``path`` from now on (new validators when it changed)."""
        body = json.dumps(document, indent=1).encode()
        with self.lock:
            current = self.documents.get(path)
            if current is not None and current.body == body:
                return
            modified = time.time()
            if current is not None:
                modified = max(modified, current.last_modified + 1)
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            self.documents[path] = _Document(body, etag, modified)

    def fail(self, path: str, status: int = 500) -> None:
        self.failing[path] = status

    def recover(self, path: str) -> None:
        self.failing.pop(path, None)

    def answer(
        self, path: str, if_none_match: str | None, if_modified_since: str | None
    ) -> tuple[int, dict[str, str], bytes]:
        conditional = bool(if_none_match or if_modified_since)
        with self.lock:
            document = self.documents.get(path)
            failing = self.failing.get(path)
        if failing is not None or document is None:
            status = failing or 404
            self.hits.append(FeedHit(path, status, conditional))
            return status, {"Content-Type": "text/plain"}, b"unavailable"
        headers = {
            "Content-Type": "application/json; charset=utf-8",
            "ETag": document.etag,
            "Last-Modified": email.utils.formatdate(document.last_modified, usegmt=True),
            "Cache-Control": "max-age=0",
        }
        if _not_modified(document, if_none_match, if_modified_since):
            self.hits.append(FeedHit(path, 304, conditional))
            return 304, {"ETag": headers["ETag"], "Last-Modified": headers["Last-Modified"]}, b""
        self.hits.append(FeedHit(path, 200, conditional))
        return 200, headers, document.body

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _not_modified(document: _Document, if_none_match: str | None, since: str | None) -> bool:
    """RFC 9110 §13.2.2: If-None-Match decides when present, else If-Modified-Since."""
    if if_none_match:
        tags = {t.strip().removeprefix("W/") for t in if_none_match.split(",")}
        return document.etag in tags or "*" in tags
    if since:
        try:
            stamp = email.utils.parsedate_to_datetime(since).timestamp()
        except (TypeError, ValueError):
            return False
        return int(document.last_modified) <= stamp
    return False


def _capture() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(STATUSPAGE_CAPTURE.read_text())
    return document


def statuspage_document(slug: str, incidents: list[dict[str, Any]]) -> dict[str, Any]:
    """A Statuspage v2 document shaped like the capture: its page, status and components, with
    ``incidents`` as the incidents and no scheduled maintenances."""
    document = _capture()
    document["page"] = {
        **document["page"],
        "id": f"{slug}page0001",
        "name": f"{slug.title()} Status",
        "url": f"https://status.{slug}.example",
        "updated_at": iso(datetime.now(UTC)),
    }
    open_ones = [i for i in incidents if i["status"] not in ("resolved", "postmortem")]
    document["status"] = (
        {"indicator": "minor", "description": "Minor Service Outage"}
        if open_ones
        else {"indicator": "none", "description": "All Systems Operational"}
    )
    document["incidents"] = incidents
    document["scheduled_maintenances"] = []
    return document


@dataclass
class ScriptedIncident:
    """One incident as a provider's page tells it over time, built on the capture's first
    incident: opened, then updated (a new update appended), then resolved."""

    slug: str
    source_id: str
    name: str
    started_at: datetime
    updates: list[tuple[datetime, str, str]] = field(default_factory=list)
    resolved_at: datetime | None = None

    def _item(self, status: str) -> dict[str, Any]:
        template = _capture()["incidents"][0]
        item = copy.deepcopy(template)
        last = max([self.started_at, *(at for at, _, _ in self.updates)])
        item.update(
            {
                "id": self.source_id,
                "name": self.name,
                "status": status,
                "created_at": iso(self.started_at),
                "started_at": iso(self.started_at),
                "updated_at": iso(last),
                "monitoring_at": None,
                "resolved_at": iso(self.resolved_at) if self.resolved_at else None,
                "shortlink": f"https://status.{self.slug}.example/incidents/{self.source_id}",
                "page_id": f"{self.slug}page0001",
            }
        )
        shape = template["incident_updates"][-1]
        updates = []
        for n, (at, word, body) in enumerate(self.updates):
            update = copy.deepcopy(shape)
            update.update(
                {
                    "id": f"{self.source_id}u{n}",
                    "status": word,
                    "body": body,
                    "incident_id": self.source_id,
                    "created_at": iso(at),
                    "updated_at": iso(at),
                    "display_at": iso(at),
                }
            )
            updates.append(update)
        item["incident_updates"] = list(reversed(updates))  # the feed lists newest first
        shaped: dict[str, Any] = item
        return shaped

    def opened(self) -> dict[str, Any]:
        self.updates = [(self.started_at, "investigating", f"We are investigating {self.name}.")]
        return self._item("investigating")

    def updated(self, at: datetime) -> dict[str, Any]:
        self.updates.append((at, "identified", "The issue has been identified; a fix is rolling."))
        return self._item("identified")

    def resolved(self, at: datetime) -> dict[str, Any]:
        self.resolved_at = at
        self.updates.append((at, "resolved", "This incident has been resolved."))
        return self._item("resolved")


# --------------------------------------------------------------------------- DCGM exporter

DCGM_GAUGES = (
    ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", "temperature"),
    ("DCGM_FI_DEV_MEMORY_TEMP", "Memory temperature (in C).", "memory_temperature"),
    ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", "power"),
    ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "utilization"),
    ("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", "xid"),
    ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "Current clock throttle reasons.", "throttle"),
)
DCGM_COUNTERS = (
    ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Total number of double-bit volatile ECC errors.", "dbe_vol"),
    (
        "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
        "Total number of double-bit persistent ECC errors.",
        "dbe_agg",
    ),
)


@dataclass
class Gpu:
    index: int
    temperature: float = 41.0
    memory_temperature: float = 38.0
    power: float = 412.5
    utilization: float = 97.0
    xid: int = 0
    throttle: int = 0
    dbe_vol: int = 0
    dbe_agg: int = 0

    @property
    def uuid(self) -> str:
        return f"GPU-5c3e7a11-90d2-4b8e-a1f0-0000000000{self.index:02d}"


@dataclass
class GpuBox:
    """One node's 8 GPUs as dcgm-exporter reports them; a GPU in ``missing`` has fallen off the
    bus and is absent from the text."""

    host: str
    gpus: list[Gpu] = field(default_factory=lambda: [Gpu(i) for i in range(8)])
    missing: set[int] = field(default_factory=set)

    def text(self) -> str:
        present = [g for g in self.gpus if g.index not in self.missing]
        lines: list[str] = []
        for kind, families in (("gauge", DCGM_GAUGES), ("counter", DCGM_COUNTERS)):
            for metric, help_text, attribute in families:
                lines += [f"# HELP {metric} {help_text}", f"# TYPE {metric} {kind}"]
                lines += [
                    f'{metric}{{gpu="{g.index}",UUID="{g.uuid}",'
                    f'pci_bus_id="00000000:{0x18 + g.index:02X}:00.0",'
                    f'device="nvidia{g.index}",modelName="NVIDIA H100 80GB HBM3",'
                    f'Hostname="{self.host}",DCGM_FI_DRIVER_VERSION="550.90.07"}} '
                    f"{getattr(g, attribute)}"
                    for g in present
                ]
        return "\n".join(lines) + "\n"


class DcgmExporter:
    """dcgm-exporter's ``/metrics`` for several boxes, one per path (``/<box>/metrics``)."""

    def __init__(self) -> None:
        self.boxes: dict[str, GpuBox] = {}
        owner = self

        class Handler(_Quiet):
            def do_GET(self) -> None:
                box = owner.boxes.get(self.path.split("/")[1])
                if box is None:
                    self.send_error(404)
                    return
                body = box.text().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = _serve(Handler)

    def add(self, name: str) -> GpuBox:
        self.boxes[name] = GpuBox(host=f"{name}-node")
        return self.boxes[name]

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/{name}/metrics"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --------------------------------------------------------------------------- HTTP and TCP targets


class HttpTargets:
    """Health endpoints per name on one server: ``up(name)`` answers 200, ``down(name)`` 503."""

    def __init__(self) -> None:
        self.server = FeedServer()

    def url(self, name: str) -> str:
        return f"{self.server.url}/{name}/healthz"

    def up(self, name: str) -> None:
        self.server.routes[f"/{name}/healthz"] = (200, b"ok")

    def down(self, name: str) -> None:
        self.server.routes[f"/{name}/healthz"] = (503, b"overloaded")

    def close(self) -> None:
        self.server.close()


class TcpTarget:
    """A TCP port that is listening (accepts and closes) or closed (connections refused)."""

    def __init__(self) -> None:
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = int(probe.getsockname()[1])
        probe.close()
        self.sock: socket.socket | None = None
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"tcp://127.0.0.1:{self.port}"

    def listen(self) -> None:
        if self.sock is not None:
            return
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen(64)
        sock.settimeout(0.1)
        self.sock, self.stopping = sock, threading.Event()
        self.thread = threading.Thread(target=self._accept, args=(sock, self.stopping), daemon=True)
        self.thread.start()

    @staticmethod
    def _accept(sock: socket.socket, stopping: threading.Event) -> None:
        while not stopping.is_set():
            try:
                connection, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            connection.close()

    def close(self) -> None:
        if self.sock is None:
            return
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout=5)
        self.sock.close()
        self.sock = None


# --------------------------------------------------------------------------- heartbeats


class HeartbeatJob:
    """A training job pushing ``POST /api/v1/heartbeats/{target}`` every ``every_s``: its step
    advances, or stays put (``stall()``), or it stops pushing at all (``silence()``)."""

    def __init__(self, base_url: str, target: str, token: str, every_s: float = 0.5) -> None:
        self.url = f"{base_url}/api/v1/heartbeats/{target}"
        self.headers = {"Authorization": f"Bearer {token}"}
        self.every_s = every_s
        self.step = 0
        self.mode = "advancing"
        self.answers: list[int] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def advance(self) -> None:
        self.mode = "advancing"

    def stall(self) -> None:
        self.mode = "stalled"

    def silence(self) -> None:
        self.mode = "silent"

    def _run(self) -> None:
        with httpx.Client(timeout=5) as client:
            while not self.stopping.wait(self.every_s):
                if self.mode == "silent":
                    continue
                if self.mode == "advancing":
                    self.step += 100
                try:
                    reply = client.post(
                        self.url,
                        json={"step": self.step, "throughput": 1800.0},
                        headers=self.headers,
                    )
                    self.answers.append(reply.status_code)
                except httpx.TransportError:
                    self.answers.append(0)  # slamon restarting: the job keeps trying

    def stop(self) -> None:
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(timeout=10)


# --------------------------------------------------------------------------- webhooks


@dataclass(frozen=True)
class Received:
    """One POST the receiver got: whether its signature held, and the JSON it carried."""

    at: float
    verified: bool
    idempotency_key: str
    payload: dict[str, Any] | None


def signature_holds(secret: str, header: str | None, body: bytes, now: float) -> bool:
    """``t=<unix>,v1=<hex>`` where hex = HMAC-SHA256(secret, "<t>." + body), t within 5 min."""
    if not header:
        return False
    fields: dict[str, list[str]] = {}
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        fields.setdefault(key, []).append(value)
    stamps = fields.get("t", [])
    if len(stamps) != 1 or not stamps[0].isdigit() or abs(now - int(stamps[0])) > 300:
        return False
    expected = hmac.new(secret.encode(), stamps[0].encode() + b"." + body, hashlib.sha256)
    return any(hmac.compare_digest(expected.hexdigest(), v) for v in fields.get("v1", []))


class SignedWebhookReceiver:
    """The generic webhook channel's receiver: verifies ``X-Slamon-Signature`` with ``secret``
    on the raw body, then records the parsed JSON; always answers 200."""

    def __init__(self, secret: str) -> None:
        self.secret = secret
        self.received: list[Received] = []
        owner = self

        class Handler(_Quiet):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                now = time.time()
                verified = signature_holds(
                    owner.secret, self.headers.get("X-Slamon-Signature"), body, now
                )
                try:
                    payload = json.loads(body)
                except ValueError:
                    payload = None
                key = self.headers.get("Idempotency-Key", "")
                owner.received.append(Received(now, verified, key, payload))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = _serve(Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
