"""TCP probe: can we open a connection to host:port?"""

from __future__ import annotations

import asyncio
import contextlib
import time
from urllib.parse import urlsplit

from monitor.db.base import utcnow
from monitor.probes.kind import ProbeKind, UrlRule
from monitor.probes.model import ProbeResult, ProbeTarget, failure
from monitor.probes.wire import ProbeClient


async def probe(target: ProbeTarget, client: ProbeClient) -> ProbeResult:
    """Connect and close. ``client`` is unused: the contract is the same for every kind."""
    parts = urlsplit(target.url or "")
    assert parts.hostname
    assert parts.port
    at, start = utcnow(), time.perf_counter()
    try:
        async with asyncio.timeout(target.timeout_s):
            _reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    except TimeoutError:
        return failure(target, at, "timeout", f"no connection within {target.timeout_s:g} s")
    except OSError as exc:
        return failure(target, at, "connect", exc.strerror or str(exc))
    latency = (time.perf_counter() - start) * 1000
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return ProbeResult(target.id, target.name, at, True, latency)


TCP_URL = UrlRule(
    ("tcp",),
    "tcp://host:port, e.g. tcp://10.0.0.5:22",
    r"^tcp://[^/:@\s]+:\d{1,5}$",
    needs_port=True,
)

KIND = ProbeKind("tcp", TCP_URL, probe=probe)
