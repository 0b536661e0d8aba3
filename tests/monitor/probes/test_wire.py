"""The probe's HTTP client against real local servers that answer with scripted bytes: status
codes, every way a body can be delimited, limits, timeouts, refusals, garbage, TLS and IPv6."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from monitor.probes.kinds.dcgm import MAX_METRICS_BYTES
from monitor.probes.kinds.http import fetch, probe
from monitor.probes.model import ProbeResult, ProbeTarget
from monitor.probes.wire import ProbeClient, Reply, WireError, build_request, get, parse_head

CLIENT = ProbeClient()


def _loops() -> list[Any]:
    """The event loops a worker may probe on: asyncio's, and uvloop's where it is installed."""
    loops: list[Any] = [pytest.param(asyncio.new_event_loop, id="asyncio")]
    try:
        import uvloop
    except ImportError:
        return loops
    return [*loops, pytest.param(uvloop.new_event_loop, id="uvloop")]


@pytest.fixture(params=_loops(), autouse=True)
def runner(request: pytest.FixtureRequest) -> Iterator[asyncio.Runner]:
    """Every test runs on each loop implementation (error kinds must not depend on it)."""
    with asyncio.Runner(loop_factory=request.param) as each:
        global RUNNER
        RUNNER = each
        yield each


RUNNER: asyncio.Runner


class ScriptedServer:
    """A TCP server on loopback that reads each request head, records it, answers with
    ``answer`` (bytes written as they are) and closes; ``hang`` makes it accept and never
    answer, ``linger`` answer and then keep the connection open, ``eager`` answer on accept
    without reading. ``tls`` wraps every connection
    in that server-side context."""

    def __init__(
        self,
        answer: bytes = b"",
        *,
        hang: bool = False,
        linger: bool = False,
        eager: bool = False,
        host: str = "127.0.0.1",
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.answer, self.hang, self.linger, self.tls = answer, hang, linger, tls
        self.eager = eager
        self.requests: list[bytes] = []
        self.accepted = 0
        self.sni: list[str | None] = []
        self.stop = threading.Event()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            if self.tls is not None:
                conn.settimeout(5)
                conn = self.tls.wrap_socket(conn, server_side=True)
            conn.settimeout(5)
            head = b""
            while b"\r\n\r\n" not in head and not self.eager:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            self.requests.append(head)
            if self.hang:
                self.stop.wait(10)
                return
            conn.sendall(self.answer)
            if self.linger:
                self.stop.wait(10)
        except (OSError, ssl.SSLError):
            pass  # the client gave up (timeout test) or refused our certificate (TLS test)
        finally:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


@pytest.fixture
def serve() -> Iterator[list[ScriptedServer]]:
    """Start servers with ``ScriptedServer(...)`` appended to this list; all closed after."""
    servers: list[ScriptedServer] = []
    yield servers
    for server in servers:
        server.close()


def start(servers: list[ScriptedServer], answer: bytes = b"", **kwargs: object) -> ScriptedServer:
    server = ScriptedServer(answer, **kwargs)  # type: ignore[arg-type]
    servers.append(server)
    return server


def fetch_now(url: str, body_limit: int = 0, timeout_s: float = 2.0, **kwargs: object) -> Reply:
    client = ProbeClient(**kwargs) if kwargs else CLIENT  # type: ignore[arg-type]
    return RUNNER.run(get(client, url, timeout_s, body_limit))


def failure(url: str, body_limit: int = 0, timeout_s: float = 2.0, **kwargs: object) -> WireError:
    with pytest.raises(WireError) as caught:
        fetch_now(url, body_limit, timeout_s, **kwargs)
    return caught.value


OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
HEAD = b"HTTP/1.1 200 OK\r\n"  # a status line to build answers on
CHUNKED = HEAD + b"Transfer-Encoding: chunked\r\n\r\n"


@pytest.mark.parametrize(
    ("answer", "status"),
    [
        pytest.param(OK, 200, id="ok"),
        pytest.param(b"HTTP/1.1 503 Unavailable\r\n\r\n", 503, id="503"),
        pytest.param(b"HTTP/1.0 404 Not Found\r\n\r\n", 404, id="http-1.0"),
        pytest.param(b"HTTP/1.1 418 \r\n\r\n", 418, id="empty-reason"),
        pytest.param(b"HTTP/1.1 100 Continue\r\n\r\n" + OK, 200, id="interim-1xx-skipped"),
    ],
)
def test_the_status_code_is_read_from_the_status_line(
    serve: list[ScriptedServer], answer: bytes, status: int
) -> None:
    server = start(serve, answer)
    assert fetch_now(f"http://127.0.0.1:{server.port}/").status == status


def test_the_request_is_a_closing_get_with_host_path_query_and_user_agent(
    serve: list[ScriptedServer],
) -> None:
    server = start(serve, OK)
    fetch_now(f"http://127.0.0.1:{server.port}/health/ready?deep=1&x=%20y", user_agent="ua-test")
    [request] = server.requests
    lines = request.decode().split("\r\n")
    assert lines[0] == "GET /health/ready?deep=1&x=%20y HTTP/1.1"
    assert f"Host: 127.0.0.1:{server.port}" in lines
    assert "Connection: close" in lines
    assert "User-Agent: ua-test" in lines


def test_credentials_in_the_url_become_basic_auth_and_leave_the_host_header(
    serve: list[ScriptedServer],
) -> None:
    server = start(serve, OK)
    fetch_now(f"http://probe:s%40cret@127.0.0.1:{server.port}/")
    lines = server.requests[0].decode().split("\r\n")
    assert f"Host: 127.0.0.1:{server.port}" in lines
    assert "Authorization: Basic cHJvYmU6c0BjcmV0" in lines  # probe:s@cret


def test_a_redirect_is_a_status_and_is_not_followed(serve: list[ScriptedServer]) -> None:
    server = start(serve, b"HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\n\r\n")
    reply = fetch_now(f"http://127.0.0.1:{server.port}/")
    assert (reply.status, reply.header("location")) == (302, "/elsewhere")
    assert len(server.requests) == 1


def test_every_probe_opens_a_fresh_connection(serve: list[ScriptedServer]) -> None:
    keep_alive = HEAD + b"Content-Length: 2\r\nConnection: keep-alive\r\n\r\nok"
    server = start(serve, keep_alive, linger=True)  # it would serve no second request
    url = f"http://127.0.0.1:{server.port}/"

    async def twice() -> tuple[int, int]:
        first = await get(CLIENT, url, 2.0)
        second = await get(CLIENT, url, 2.0)
        return first.status, second.status

    assert RUNNER.run(twice()) == (200, 200)
    assert (server.accepted, len(server.requests)) == (2, 2)


@pytest.mark.parametrize(
    ("answer", "limit", "body"),
    [
        pytest.param(
            HEAD + b"Content-Length: 11\r\n\r\nhello world",
            100,
            b"hello world",
            id="content-length",
        ),
        pytest.param(
            HEAD + b"Content-Length: 11\r\n\r\nhello world",
            5,
            b"hello",
            id="content-length-over-limit",
        ),
        pytest.param(
            CHUNKED + b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n",
            100,
            b"hello world",
            id="chunked",
        ),
        pytest.param(
            CHUNKED + b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
            7,
            b"hello w",
            id="chunked-over-limit",
        ),
        pytest.param(
            HEAD + b"\r\nuntil the server closes",
            100,
            b"until the server closes",
            id="close-delimited",
        ),
        pytest.param(
            HEAD + b"\r\nuntil the server closes", 5, b"until", id="close-delimited-over-limit"
        ),
        pytest.param(b"HTTP/1.1 204 No Content\r\n\r\n", 100, b"", id="no-content-has-no-body"),
        pytest.param(OK, 0, b"", id="body-not-asked-for"),
    ],
)
def test_the_body_is_read_as_delimited_and_up_to_the_limit(
    serve: list[ScriptedServer], answer: bytes, limit: int, body: bytes
) -> None:
    server = start(serve, answer)
    assert fetch_now(f"http://127.0.0.1:{server.port}/", body_limit=limit).body == body


def test_a_large_body_is_read_whole_under_the_dcgm_limit(serve: list[ScriptedServer]) -> None:
    text = b"".join(b'DCGM_FI_DEV_GPU_TEMP{gpu="%d"} 41\n' % (i % 8) for i in range(40_000))
    assert 1024 * 1024 < len(text) < MAX_METRICS_BYTES
    server = start(serve, b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(text), text))
    assert fetch_now(f"http://127.0.0.1:{server.port}/metrics", MAX_METRICS_BYTES).body == text


@pytest.mark.parametrize(
    ("answer", "limit", "says"),
    [
        pytest.param(b"SSH-2.0-OpenSSH_9.6\r\n\r\n", 0, "status line", id="not-http"),
        pytest.param(b"\x00\xff\xfe garbage\r\n\r\n", 0, "status line", id="binary"),
        pytest.param(b"HTTP/1.1 abc OK\r\n\r\n", 0, "status line", id="bad-code"),
        pytest.param(b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", 0, "header", id="bad-header"),
        pytest.param(b"", 0, "without answering", id="closed-without-answer"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-", 0, "middle of the head", id="cut-in-head"),
        pytest.param(HEAD + b"Content-Length: 50\r\n\r\nshort", 100, "5 of 50", id="short-body"),
        pytest.param(HEAD + b"Content-Length: -1\r\n\r\n", 100, "Content-Length", id="bad-length"),
        pytest.param(CHUNKED + b"zz\r\n", 100, "chunk size", id="bad-chunk"),
        pytest.param(CHUNKED + b"5\r\nhel", 100, "ended after", id="cut-chunk"),
    ],
)
def test_a_malformed_answer_is_a_protocol_error_that_says_what_was_wrong(
    serve: list[ScriptedServer], answer: bytes, limit: int, says: str
) -> None:
    server = start(serve, answer)
    error = failure(f"http://127.0.0.1:{server.port}/", body_limit=limit)
    assert error.kind == "protocol"
    assert says in str(error)


def test_a_head_larger_than_the_limit_is_a_protocol_error(serve: list[ScriptedServer]) -> None:
    server = start(serve, b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 4000 + b"\r\n\r\n")
    error = failure(f"http://127.0.0.1:{server.port}/", max_head_bytes=1024)
    assert (error.kind, "too large" in str(error)) == ("protocol", True)


def test_a_server_that_accepts_and_never_answers_times_out_on_time(
    serve: list[ScriptedServer],
) -> None:
    server = start(serve, hang=True)
    started = time.monotonic()
    error = failure(f"http://127.0.0.1:{server.port}/", timeout_s=0.3)
    assert error.kind == "timeout"
    assert 0.3 <= time.monotonic() - started < 1.5


def test_a_body_that_stalls_times_out(serve: list[ScriptedServer]) -> None:
    server = start(serve, b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial", linger=True)
    assert failure(f"http://127.0.0.1:{server.port}/", 1000, timeout_s=0.3).kind == "timeout"


def test_a_refused_port_is_a_connect_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: the kernel refuses
        error = failure(f"http://127.0.0.1:{port}/")
    assert error.kind == "connect"
    assert "refused" in str(error).lower()


def test_a_name_that_does_not_resolve_is_a_connect_error() -> None:
    error = failure("http://no-such-host.invalid/", timeout_s=5.0)
    assert error.kind == "connect"


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("ftp://127.0.0.1/", id="scheme"),
        pytest.param("http:///path-only", id="no-host"),
        pytest.param("http://127.0.0.1:99999/", id="port-out-of-range"),
    ],
)
def test_a_url_no_probe_can_reach_is_a_connect_error(url: str) -> None:
    assert failure(url).kind == "connect"


def test_ipv6_loopback_with_an_explicit_port(serve: list[ScriptedServer]) -> None:
    try:
        server = start(serve, OK, host="::1")
    except OSError:
        pytest.skip("no IPv6 loopback on this machine")
    assert fetch_now(f"http://[::1]:{server.port}/").status == 200
    assert f"Host: [::1]:{server.port}".encode() in server.requests[0]


def test_a_hostname_is_resolved(serve: list[ScriptedServer]) -> None:
    server = start(serve, OK)
    assert fetch_now(f"http://localhost:{server.port}/").status == 200


# --- TLS -------------------------------------------------------------------------------------


def make_certificate(folder: Path, names: str) -> tuple[Path, Path]:
    """A self-signed certificate for ``names`` (a subjectAltName list), by the openssl CLI."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl CLI not installed")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=slamon-test",
            "-addext", f"subjectAltName={names}",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_certificate(tmp_path_factory.mktemp("tls"), "DNS:localhost,IP:127.0.0.1")


def tls_server(serve: list[ScriptedServer], certificate: tuple[Path, Path]) -> ScriptedServer:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    server = start(serve, OK, tls=context)
    context.sni_callback = lambda _sock, name, _ctx: server.sni.append(name)  # type: ignore[assignment]
    return server


def test_a_self_signed_certificate_fails_verification_as_tls(
    serve: list[ScriptedServer], certificate: tuple[Path, Path]
) -> None:
    server = tls_server(serve, certificate)
    error = failure(f"https://localhost:{server.port}/")
    assert error.kind == "tls"
    assert "certificate" in str(error).lower()
    assert server.requests == []  # nothing was sent over an unverified connection


def test_a_trusted_certificate_is_verified_with_sni_and_answers(
    serve: list[ScriptedServer], certificate: tuple[Path, Path]
) -> None:
    server = tls_server(serve, certificate)
    trusting = ssl.create_default_context(cafile=str(certificate[0]))
    reply = fetch_now(f"https://localhost:{server.port}/healthz", 100, ssl_context=trusting)
    assert (reply.status, reply.body) == (200, b"ok")
    assert server.sni == ["localhost"]
    by_address = fetch_now(f"https://127.0.0.1:{server.port}/", ssl_context=trusting)
    assert by_address.status == 200  # an IP address is checked against the IP SANs


def test_a_trusted_certificate_for_another_name_fails_as_tls(
    serve: list[ScriptedServer], tmp_path: Path
) -> None:
    other = make_certificate(tmp_path, "DNS:other.example")
    server = tls_server(serve, other)
    trusting = ssl.create_default_context(cafile=str(other[0]))
    error = failure(f"https://localhost:{server.port}/", ssl_context=trusting)
    assert error.kind == "tls"
    assert "localhost" in str(error)


def test_a_plain_http_server_on_an_https_url_is_a_tls_error(serve: list[ScriptedServer]) -> None:
    server = start(serve, OK, eager=True)  # its answer arrives where a TLS record should
    assert failure(f"https://127.0.0.1:{server.port}/").kind == "tls"


# --- the http probe on top ---------------------------------------------------------------------


def run_probe(url: str, **fields: Any) -> ProbeResult:
    return RUNNER.run(probe(ProbeTarget(1, "t", "http", url, timeout_s=2.0, **fields), CLIENT))


def test_the_http_probe_judges_status_and_body_and_times_latency(
    serve: list[ScriptedServer],
) -> None:
    ready = start(serve, b'HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n{"ready": true}')
    teapot = start(serve, b"HTTP/1.1 418 I'm a teapot\r\nContent-Length: 0\r\n\r\n")
    good = run_probe(f"http://127.0.0.1:{ready.port}/", expect_body='"ready": true')
    assert (good.ok, good.status_code, good.error_kind) == (True, 200, None)
    assert good.latency_ms is not None
    assert 0 < good.latency_ms < 2000
    lacking = run_probe(f"http://127.0.0.1:{ready.port}/", expect_body="healthy")
    assert (lacking.ok, lacking.error_kind) == (False, "body")
    status = run_probe(f"http://127.0.0.1:{teapot.port}/")
    assert (status.ok, status.error_kind, status.status_code) == (False, "http_status", 418)
    expected = run_probe(f"http://127.0.0.1:{teapot.port}/", expect_status=(418,))
    assert expected.ok is True


def test_fetch_turns_a_wire_failure_into_a_failed_result(serve: list[ScriptedServer]) -> None:
    server = start(serve, b"garbage\r\n\r\n")
    target = ProbeTarget(7, "g", "http", f"http://127.0.0.1:{server.port}/", timeout_s=2.0)
    result, body = RUNNER.run(fetch(target, CLIENT, 100))
    assert (result.ok, result.error_kind, result.target_id, body) == (False, "protocol", 7, b"")
    assert result.error is not None


# --- pure parts --------------------------------------------------------------------------------


def test_build_request_uses_default_ports_and_a_root_path() -> None:
    plain, secure = (
        build_request("http://a.example", "ua"),
        build_request("https://a.example", "ua"),
    )
    assert (plain.port, plain.tls, secure.port, secure.tls) == (80, False, 443, True)
    assert plain.payload.startswith(b"GET / HTTP/1.1\r\nHost: a.example\r\n")


def test_parse_head_lowercases_names_and_keeps_order() -> None:
    status, headers = parse_head(b"HTTP/1.1 200 OK\r\nX-A: 1\r\nx-a:  2 \r\n\r\n")
    assert status == 200
    assert headers == (("x-a", "1"), ("x-a", "2"))
    assert Reply(status, headers).header("x-a") == "2"
