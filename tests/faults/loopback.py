"""Misbehaving servers on loopback: one that accepts and never answers, one that streams a body
without a length (garbage, or a byte at a time), and a webhook receiver that can go away and
come back on the same port."""

from __future__ import annotations

import http.server
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field


class BlackHole:
    """Accepts TCP connections and never sends a byte (a hung upstream)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.held: list[socket.socket] = []
        self.closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(connection)

    def close(self) -> None:
        self.closed.set()
        self.sock.close()
        for connection in self.held:
            connection.close()


class Streamer:
    """Answers 200 and then streams ``size`` bytes of ``chunk`` with no Content-Length (the body
    ends when the connection closes), pausing ``pause_s`` between chunks; counts bytes sent."""

    def __init__(self, size: int, chunk: bytes, pause_s: float = 0.0) -> None:
        self.sent = 0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                try:
                    while owner.sent < size and not owner.stopping.is_set():
                        self.wfile.write(chunk)
                        owner.sent += len(chunk)
                        if pause_s:
                            time.sleep(pause_s)
                except OSError:
                    pass  # the client gave up: what we want it to do

        self.stopping = threading.Event()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Receiver:
    """A webhook receiver on a fixed loopback port that the test stops (connections refused)
    and starts again. ``delay_s`` holds each answer back after the request was recorded (so a
    sender can be killed mid-send); ``on_request`` runs with each request's headers before it is
    answered. ``accepted`` holds the Idempotency-Key of every 2xx."""

    port: int
    status: int = 204
    delay_s: float = 0.0
    requests: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    on_request: Callable[[dict[str, str]], None] | None = None
    server: http.server.ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> None:
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.requests.append((headers, body))
                if owner.on_request is not None:
                    owner.on_request(headers)
                time.sleep(owner.delay_s)
                if 200 <= owner.status < 300:
                    owner.accepted.append(headers.get("idempotency-key", ""))
                self.send_response(owner.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
