"""A metadata service on loopback speaking each cloud's protocol (the stdlib's http.server:
``tests.support.ApiServer`` answers GETs only, and these need PUT, POST, response headers and
held requests).

- ``aws``: IMDSv2. ``PUT /latest/api/token`` with a TTL header hands out a token; a GET without a
  live token gets 401 (every GET with ``refuse_all``); ``expire_tokens()`` ends every token
  handed out; ``documents`` maps a path to ``(status, body)`` (absent: 404).
- ``gcp``: ``/computeMetadata/v1/instance/<name>`` answers ``values[name]`` with an ``ETag`` and
  ``Metadata-Flavor: Google``; a request without that header gets 403; with
  ``wait_for_change=true`` and a ``last_etag`` equal to the current one it is held until
  ``set_value`` changes it or ``timeout_sec`` runs out.
- ``azure``: ``/metadata/scheduledevents`` answers ``document`` (``Metadata: true`` required, else
  400); a POST records its JSON body in ``acknowledged``.

``requests`` records ``(method, path, query, headers lower-cased)``.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
import time
from urllib.parse import parse_qsl, urlsplit

GCE_PREFIX = "/computeMetadata/v1/instance/"


class MetadataServer:
    def __init__(self, cloud: str) -> None:
        self.cloud = cloud
        self.tokens: set[str] = set()
        self.handed_out = 0
        self.refuse_all = False  # every IMDS GET a 401, whatever its token
        self.documents: dict[str, tuple[int, bytes]] = {}
        self.values: dict[str, str] = {"maintenance-event": "NONE", "preempted": "FALSE"}
        self.document: bytes = b'{"DocumentIncarnation": 0, "Events": []}'
        self.acknowledged: list[object] = []
        self.requests: list[tuple[str, str, dict[str, str], dict[str, str]]] = []
        self.changed = threading.Condition()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _record(self) -> tuple[str, dict[str, str], dict[str, str]]:
                parts = urlsplit(self.path)
                query = dict(parse_qsl(parts.query, keep_blank_values=True))
                headers = {name.lower(): value for name, value in self.headers.items()}
                owner.requests.append((self.command, parts.path, query, headers))
                return parts.path, query, headers

            def _send(
                self, status: int, body: bytes, headers: dict[str, str] | None = None
            ) -> None:
                try:
                    self.send_response(status)
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting

            def do_PUT(self) -> None:
                path, _, headers = self._record()
                self.rfile.read(int(headers.get("content-length", 0) or 0))
                if owner.cloud != "aws" or path != "/latest/api/token":
                    return self._send(404, b"")
                if "x-aws-ec2-metadata-token-ttl-seconds" not in headers:
                    return self._send(400, b"")
                owner.handed_out += 1
                token = f"token-{owner.handed_out}"
                owner.tokens.add(token)
                self._send(200, token.encode())
                return None

            def do_POST(self) -> None:
                path, query, headers = self._record()
                body = self.rfile.read(int(headers.get("content-length", 0) or 0))
                if owner.cloud != "azure" or path != "/metadata/scheduledevents":
                    return self._send(404, b"")
                if headers.get("metadata") != "true" or "api-version" not in query:
                    return self._send(400, b"")
                owner.acknowledged.append(json.loads(body))
                self._send(200, b"")
                return None

            def do_GET(self) -> None:
                path, query, headers = self._record()
                if owner.cloud == "aws":
                    return self._aws(path, headers)
                if owner.cloud == "gcp":
                    return self._gcp(path, query, headers)
                if path != "/metadata/scheduledevents":
                    return self._send(404, b"")
                if headers.get("metadata") != "true" or "api-version" not in query:
                    return self._send(400, b'{"error": "Bad request"}')
                self._send(200, owner.document, {"Content-Type": "application/json"})
                return None

            def _aws(self, path: str, headers: dict[str, str]) -> None:
                token = headers.get("x-aws-ec2-metadata-token")
                if owner.refuse_all or token not in owner.tokens:
                    return self._send(401, b"")
                status, body = owner.documents.get(path, (404, b""))
                self._send(status, body)
                return None

            def _gcp(self, path: str, query: dict[str, str], headers: dict[str, str]) -> None:
                flavor = {"Metadata-Flavor": "Google"}
                name = path.removeprefix(GCE_PREFIX)
                if headers.get("metadata-flavor") != "Google":
                    return self._send(403, b"Missing Metadata-Flavor:Google header.", flavor)
                if not path.startswith(GCE_PREFIX) or name not in owner.values:
                    return self._send(404, b"not found", flavor)
                if query.get("wait_for_change") == "true":
                    until = time.monotonic() + float(query.get("timeout_sec", "60"))
                    with owner.changed:
                        while (
                            owner.etag(name) == query.get("last_etag") and time.monotonic() < until
                        ):
                            owner.changed.wait(until - time.monotonic())
                value = owner.values[name]
                self._send(200, value.encode(), {**flavor, "ETag": owner.etag(name)})
                return None

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def etag(self, name: str) -> str:
        return hashlib.sha1(f"{name}={self.values[name]}".encode()).hexdigest()[:16]

    def set_value(self, name: str, value: str) -> None:
        with self.changed:
            self.values[name] = value
            self.changed.notify_all()

    def expire_tokens(self) -> None:
        self.tokens.clear()

    def close(self) -> None:
        with self.changed:
            self.changed.notify_all()
        self.server.shutdown()
        self.server.server_close()


def closed_port() -> str:
    """A loopback URL nothing listens on (connections refused)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
