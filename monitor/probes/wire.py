"""A small HTTP/1.1 GET client on asyncio streams: the probe hot path.

One fresh connection per probe, closed after the answer (``Connection: close``), as
blackbox_exporter does. That is what a probe should measure: that the instance accepts a new
connection *now*. A kept-alive connection can outlive the listener behind it, and it hides the
connect (and TLS handshake) that every real client of the instance pays. What is shared across
probes is only what costs nothing to share: one verifying ``ssl.SSLContext`` (loading the CA
store takes milliseconds), the user agent and the limits — a ``ProbeClient``.

Why not httpx here: it was most of a probe round's CPU. On the 2-core reference box a shared,
kept-alive httpx client cost about 2 CPU-ms per probe and a fresh one per probe over 20 ms; this
client, with a fresh connection each time, costs about 0.4 ms on asyncio's loop and 0.25 ms on
uvloop's, most of it the connect itself (``bench/probe_clients.py`` measures them side by side).
httpx stays the client for feeds, webhooks and Grafana.

What it is not: no redirects (a 3xx is a status like any other), no keep-alive, proxies,
cookies or content decoding. Failures raise ``WireError`` with the probe's error kind:
``timeout`` (the whole exchange, connect to last byte read), ``connect`` (DNS, refused,
unreachable, reset), ``tls`` (handshake or certificate verification), ``protocol`` (an answer
that is not HTTP/1.x).
"""

from __future__ import annotations

import asyncio
import base64
import functools
import ssl
from dataclasses import dataclass, field
from urllib.parse import SplitResult, unquote, urlsplit

from monitor.probes.model import ErrorKind

DEFAULT_PORTS = {"http": 80, "https": 443}
NO_BODY_STATUSES = frozenset({204, 304})


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """The process's verifying TLS context (system CA store, hostname checks), built once."""
    return ssl.create_default_context()


@dataclass(frozen=True, slots=True)
class ProbeClient:
    """What every probe of a worker shares: TLS settings, how it names itself, header limits."""

    ssl_context: ssl.SSLContext = field(default_factory=default_ssl_context)
    user_agent: str = "slamon-probe"
    max_head_bytes: int = 64 * 1024  # status line and headers together


@dataclass(frozen=True, slots=True)
class Reply:
    """An answer: status, headers (names lower-cased, in order) and at most the asked body."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""

    def header(self, name: str) -> str | None:
        """The last value of header ``name`` (lower-case), or None."""
        found = None
        for key, value in self.headers:
            if key == name:
                found = value
        return found


class WireError(Exception):
    """A probe that got no usable answer; ``kind`` is the probe's error kind."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind


@dataclass(frozen=True, slots=True)
class Request:
    """Where to connect and the bytes to send, from a URL (pure)."""

    host: str
    port: int
    tls: bool
    payload: bytes


@functools.lru_cache(maxsize=16384)  # a worker probes the same URLs round after round
def build_request(url: str, user_agent: str) -> Request:
    """The GET for ``url``; ``WireError("connect")`` for a URL no probe can reach."""
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise WireError("connect", f"not an http(s) URL with a host: {url!r}")
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
    except ValueError as exc:  # a port out of range or not a number
        raise WireError("connect", f"bad port in {url!r}: {exc}") from None
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    lines = [
        f"GET {target} HTTP/1.1",
        f"Host: {_host_header(parts)}",
        f"User-Agent: {user_agent}",
        "Accept: */*",
        "Connection: close",
    ]
    if parts.username is not None:
        secret = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        lines.append(f"Authorization: Basic {base64.b64encode(secret.encode()).decode()}")
    payload = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", errors="replace")
    return Request(parts.hostname, port, parts.scheme == "https", payload)


def _host_header(parts: SplitResult) -> str:
    """netloc without credentials; IPv6 literals keep their brackets."""
    return parts.netloc.rpartition("@")[2]


def parse_head(raw: bytes) -> tuple[int, tuple[tuple[str, str], ...]]:
    """Status and headers of one response head (ending in a blank line); ``WireError("protocol")``
    for anything that is not HTTP/1.x."""
    status_line, _, rest = raw.partition(b"\r\n")
    version, _, tail = status_line.partition(b" ")
    code = tail[:3]
    if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise WireError("protocol", f"not an HTTP/1.x status line: {status_line[:80]!r}")
    headers = []
    for line in rest.split(b"\r\n"):
        if not line:
            continue
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip():
            raise WireError("protocol", f"malformed header line: {line[:80]!r}")
        headers.append((name.decode("latin-1").lower(), value.strip().decode("latin-1")))
    return int(code), tuple(headers)


async def get(client: ProbeClient, url: str, timeout_s: float, body_limit: int = 0) -> Reply:
    """GET ``url`` on a fresh connection within ``timeout_s`` (everything included), reading at
    most ``body_limit`` bytes of the body (0: none). Raises ``WireError``; never follows a redirect.
    """
    request = build_request(url, client.user_agent)
    try:
        async with asyncio.timeout(timeout_s):
            return await _exchange(client, request, body_limit)
    except TimeoutError:
        raise WireError("timeout", f"no answer within {timeout_s:g} s") from None


async def _exchange(client: ProbeClient, request: Request, body_limit: int) -> Reply:
    reader, writer = await _connect(client, request)
    try:
        writer.write(request.payload)
        status, headers = await _read_head(reader)
        reply = Reply(status, headers)
        if body_limit and status not in NO_BODY_STATUSES:
            reply = Reply(status, headers, await _read_body(reader, reply, body_limit))
        return reply
    except ssl.SSLError as exc:
        raise WireError("tls", _describe(exc)) from None
    except OSError as exc:  # reset or broken pipe mid-answer
        raise WireError("connect", _describe(exc)) from None
    finally:
        writer.close()  # no wait_closed: the answer is in, the close needs no waiting for


async def _connect(
    client: ProbeClient, request: Request
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    try:
        return await asyncio.open_connection(
            request.host,
            request.port,
            ssl=client.ssl_context if request.tls else None,
            limit=client.max_head_bytes,
        )
    except ssl.SSLError as exc:  # before OSError: it is one
        raise WireError("tls", _describe(exc)) from None
    except OSError as exc:  # DNS (socket.gaierror), refused, unreachable, reset
        raise WireError("connect", _describe(exc)) from None


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, tuple[tuple[str, str], ...]]:
    """The final head, skipping interim 1xx answers."""
    while True:
        try:
            raw = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            what = "without answering" if not exc.partial else "in the middle of the head"
            raise WireError("protocol", f"connection closed {what}") from None
        except asyncio.LimitOverrunError:
            raise WireError("protocol", "response head too large or never ended") from None
        status, headers = parse_head(raw)
        if not 100 <= status < 200 or status == 101:
            return status, headers


async def _read_body(reader: asyncio.StreamReader, reply: Reply, limit: int) -> bytes:
    if "chunked" in (reply.header("transfer-encoding") or "").lower():
        return await _read_chunked(reader, limit)
    length = reply.header("content-length")
    if length is not None:
        if not length.isdigit():
            raise WireError("protocol", f"bad Content-Length {length[:40]!r}")
        return await _read_exactly(reader, min(int(length), limit))
    return await _read_to_close(reader, limit)


async def _read_exactly(reader: asyncio.StreamReader, size: int) -> bytes:
    try:
        return await reader.readexactly(size)
    except asyncio.IncompleteReadError as exc:
        raise WireError(
            "protocol", f"body ended after {len(exc.partial)} of {size} bytes"
        ) from None


async def _read_to_close(reader: asyncio.StreamReader, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit:
        chunk = await reader.read(limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


async def _read_chunked(reader: asyncio.StreamReader, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit:
        try:
            line = await reader.readuntil(b"\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            raise WireError("protocol", "chunked body ended without its last chunk") from None
        try:
            chunk_size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise WireError("protocol", f"bad chunk size line {line[:40]!r}") from None
        if chunk_size == 0:
            break  # trailers, if any, are not read: the connection closes anyway
        chunk = await _read_exactly(reader, min(chunk_size, limit - size))
        chunks.append(chunk)
        size += len(chunk)
        if size < limit:
            await _read_exactly(reader, 2)  # the CRLF after the chunk
    return b"".join(chunks)


def _describe(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]
