"""Misbehaving servers on loopback: one that accepts and never answers, one that streams a body
without a length (garbage, or a byte at a time), and a webhook receiver that can go away and
come back on the same port."""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
import time


class BlackHole:
    """Accepts TCP connections and never sends a byte (a hung upstream)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.held: list[socket.socket] = []
        self.closed = threading.Event()
        self.accepting = threading.Thread(target=self._accept, daemon=True)
        self.accepting.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                connection, _ = self.sock.accept()
            except OSError:
                return
            if self.closed.is_set():  # a poll that raced close(): never left open
                connection.close()
                return
            self.held.append(connection)

    def close(self) -> None:
        """Stops accepting (shutdown wakes the accept() blocked in its thread, which a close
        alone would not) and closes every connection it held."""
        self.closed.set()
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.accepting.join(timeout=5)
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
