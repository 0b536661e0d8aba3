"""HTTP probe: status code, optional body condition, latency."""

from __future__ import annotations

import time

from monitor.db.base import utcnow
from monitor.probes.kind import ProbeKind, UrlRule
from monitor.probes.model import ProbeResult, ProbeTarget, failure
from monitor.probes.wire import ProbeClient, WireError, get

MAX_BODY_BYTES = 64 * 1024


def status_ok(code: int, expected: tuple[int, ...]) -> bool:
    """The expected codes when given, else any 2xx or 3xx."""
    return code in expected if expected else 200 <= code < 400


async def fetch(
    target: ProbeTarget, client: ProbeClient, body_limit: int
) -> tuple[ProbeResult, bytes]:
    """GET the target's URL on a fresh connection, reading at most ``body_limit`` bytes of the
    body (0: none). The result is reachable with its status code and latency (connect to the last
    byte read), or failed (timeout, connect, tls, protocol); status conditions are the caller's
    to judge."""
    assert target.url is not None
    at, start = utcnow(), time.perf_counter()
    try:
        reply = await get(client, target.url, target.timeout_s, body_limit)
    except WireError as exc:
        return failure(target, at, exc.kind, str(exc)), b""
    latency = (time.perf_counter() - start) * 1000
    return ProbeResult(target.id, target.name, at, True, latency, reply.status), reply.body


async def probe(target: ProbeTarget, client: ProbeClient) -> ProbeResult:
    """GET the target's URL: expected status (default 2xx/3xx) and optional body text."""
    result, body = await fetch(target, client, MAX_BODY_BYTES if target.expect_body else 0)
    if not result.ok or result.status_code is None:
        return result
    if not status_ok(result.status_code, target.expect_status):
        return result.failed("http_status", f"HTTP {result.status_code}")
    if target.expect_body and target.expect_body.encode() not in body:
        return result.failed("body", f"body lacks {target.expect_body!r}")
    return result


HTTP_URL = UrlRule(("http", "https"), "http(s)://host/…", r"^https?://[^/:@\s]+")

KIND = ProbeKind("http", HTTP_URL, probe=probe)
