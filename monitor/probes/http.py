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


async def fetch(
    target: ProbeTarget, client: httpx.AsyncClient, body_limit: int
) -> tuple[ProbeResult, bytes]:
    """GET the target's URL, reading at most ``body_limit`` bytes of the body (0: none). The
    result is reachable with its status code and latency, or failed (timeout, connect, tls);
    status conditions are the caller's to judge. The caller bounds the total time."""
    assert target.url is not None
    at, start = utcnow(), time.perf_counter()
    try:
        async with client.stream("GET", target.url, timeout=target.timeout_s) as reply:
            body = await _read_some(reply, body_limit) if body_limit else b""
    except httpx.TimeoutException:
        message = f"no answer within {target.timeout_s:g} s"
        return ProbeResult(
            target.id, target.name, at, False, error_kind="timeout", error=message
        ), b""
    except httpx.TransportError as exc:
        message = f"{type(exc).__name__}: {exc}"[:500]
        return ProbeResult(
            target.id, target.name, at, False, error_kind=_kind(exc), error=message
        ), b""
    latency = (time.perf_counter() - start) * 1000
    return ProbeResult(target.id, target.name, at, True, latency, reply.status_code), body


async def probe(target: ProbeTarget, client: httpx.AsyncClient) -> ProbeResult:
    """GET the target's URL: expected status (default 2xx/3xx) and optional body text."""
    result, body = await fetch(target, client, MAX_BODY_BYTES if target.expect_body else 0)
    if not result.ok or result.status_code is None:
        return result
    if not status_ok(result.status_code, target.expect_status):
        return result.failed("http_status", f"HTTP {result.status_code}")
    if target.expect_body and target.expect_body.encode() not in body:
        return result.failed("body", f"body lacks {target.expect_body!r}")
    return result


async def _read_some(reply: httpx.Response, limit: int) -> bytes:
    chunks, size = [], 0
    async for chunk in reply.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(chunks)[:limit]


def _kind(exc: httpx.TransportError) -> ErrorKind:
    text = str(exc).lower()
    if "ssl" in text or "certificate" in text:
        return "tls"
    return "connect"
