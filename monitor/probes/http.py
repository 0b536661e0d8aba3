"""HTTP probe: status code, optional body condition, latency."""

from __future__ import annotations

import time

import httpx

from monitor.db.base import utcnow
from monitor.probes.model import ErrorKind, ProbeResult, ProbeTarget

MAX_BODY_BYTES = 64 * 1024


def status_ok(code: int, expected: tuple[int, ...]) -> bool:
    """The expected codes when given, else any 2xx or 3xx."""
    return code in expected if expected else 200 <= code < 400


async def probe(target: ProbeTarget, client: httpx.AsyncClient) -> ProbeResult:
    """GET the target's URL. The caller bounds the total time; this measures it."""
    assert target.url is not None
    at, start = utcnow(), time.perf_counter()
    try:
        async with client.stream("GET", target.url, timeout=target.timeout_s) as reply:
            body = await _read_some(reply) if target.expect_body else b""
    except httpx.TimeoutException:
        return ProbeResult(
            target.id,
            target.name,
            at,
            False,
            error_kind="timeout",
            error=f"no answer within {target.timeout_s:g} s",
        )
    except httpx.TransportError as exc:
        return ProbeResult(
            target.id,
            target.name,
            at,
            False,
            error_kind=_kind(exc),
            error=f"{type(exc).__name__}: {exc}"[:500],
        )
    latency = (time.perf_counter() - start) * 1000
    result = ProbeResult(target.id, target.name, at, True, latency, reply.status_code)
    if not status_ok(reply.status_code, target.expect_status):
        return result.failed("http_status", f"HTTP {reply.status_code}")
    if target.expect_body and target.expect_body.encode() not in body:
        return result.failed("body", f"body lacks {target.expect_body!r}")
    return result


async def _read_some(reply: httpx.Response) -> bytes:
    chunks, size = [], 0
    async for chunk in reply.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= MAX_BODY_BYTES:
            break
    return b"".join(chunks)


def _kind(exc: httpx.TransportError) -> ErrorKind:
    text = str(exc).lower()
    if "ssl" in text or "certificate" in text:
        return "tls"
    return "connect"
