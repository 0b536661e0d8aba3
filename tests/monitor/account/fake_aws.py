"""A stand-in for the two AWS APIs moto does not answer as the account kinds need: the Health API
(moto has none) and EC2's DescribeInstanceStatus with scheduled events (moto answers no
``Events``). A real HTTP server on loopback, spoken to by boto3 with ``endpoint_url``: the
Health API's JSON protocol (``X-Amz-Target: AWSHealth_20160804.<Operation>``, a JSON body) and
EC2's query protocol (a form body with ``Action``, an XML answer), as AWS documents them."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl

import pytest

# (operation, the request's parameters) -> (status, body: a JSON value or XML bytes)
Answer = Callable[[str, dict[str, Any]], tuple[int, object]]


class AwsServer:
    """Records each call as ``(operation, parameters)`` in ``calls``; ``delay_s`` holds answers
    back (a timeout test)."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.delay_s = 0.0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                target = self.headers.get("X-Amz-Target")
                if target:  # the JSON protocol
                    operation = target.rpartition(".")[2]
                    params: dict[str, Any] = json.loads(body or b"{}")
                else:  # the query protocol
                    params = dict(parse_qsl(body.decode()))
                    operation = params.pop("Action", "")
                owner.calls.append((operation, params))
                time.sleep(owner.delay_s)
                status, value = owner.answer(operation, params)
                data = value if isinstance(value, bytes) else json.dumps(value).encode()
                kind = "text/xml" if isinstance(value, bytes) else "application/x-amz-json-1.1"
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def aws_server(answer: Answer) -> Iterator[AwsServer]:
    """An :class:`AwsServer`, with test credentials in the environment and nothing else of the
    standard chain (no shared files, no instance metadata)."""
    with pytest.MonkeyPatch.context() as env:
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION"):
            env.delenv(name, raising=False)
        env.setenv("AWS_ACCESS_KEY_ID", "testing")
        env.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        env.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
        env.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
        env.setenv("AWS_EC2_METADATA_DISABLED", "true")
        server = AwsServer(answer)
        try:
            yield server
        finally:
            server.close()


def json_error(code: str, message: str) -> dict[str, str]:
    """The JSON protocol's error body."""
    return {"__type": code, "message": message}


def query_error(code: str, message: str) -> bytes:
    """The EC2 query protocol's error body."""
    return (
        f"<?xml version='1.0' encoding='UTF-8'?><Response><Errors><Error><Code>{code}</Code>"
        f"<Message>{message}</Message></Error></Errors><RequestID>r-1</RequestID></Response>"
    ).encode()
