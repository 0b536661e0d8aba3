"""One event loop and one probe client per worker process, kept across rounds.

Celery tasks are synchronous; a fresh ``asyncio.run`` per round would build a new loop (and its
executor) every time. Instead a daemon thread runs one loop for the life of the process and
tasks submit coroutines to it. The client (TLS context, user agent) lives as long; connections
do not: every probe opens its own (``monitor.probes.wire``).

The loop is uvloop's where uvloop is installed: a fresh connection per probe costs about half
the CPU there (bench/probe_clients.py --loop uvloop), and nothing else changes (the probe tests
run on both loops).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from monitor.probes.runner import probe_client
from monitor.probes.wire import ProbeClient

T = TypeVar("T")


class ProbeLoop:
    def __init__(self) -> None:
        self.loop = new_event_loop()
        self.pid = os.getpid()
        thread = threading.Thread(target=self.loop.run_forever, name="slamon-probes", daemon=True)
        thread.start()
        self.client: ProbeClient = probe_client()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the shared loop and wait for its result (thread-safe)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def call(self, make: Callable[[ProbeClient], Awaitable[T]]) -> T:
        async def with_client() -> T:
            return await make(self.client)

        return self.run(with_client())


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop where it is installed, else asyncio's."""
    try:
        import uvloop  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return asyncio.new_event_loop()
    loop: asyncio.AbstractEventLoop = uvloop.new_event_loop()
    return loop


_shared: ProbeLoop | None = None
_lock = threading.Lock()


def shared_loop() -> ProbeLoop:
    """This process's probe loop, created on first use and again after a fork."""
    global _shared
    with _lock:
        if _shared is None or _shared.pid != os.getpid():
            _shared = ProbeLoop()
        return _shared
