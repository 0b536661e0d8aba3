"""One event loop and one probe client per worker process, kept across rounds.

Celery tasks are synchronous; a fresh ``asyncio.run`` per round would rebuild the HTTP client
(TLS context, connection pool) every time. Instead a daemon thread runs one loop for the life of
the process, tasks submit coroutines to it, and kept-alive connections survive between rounds.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import httpx

from monitor.probes.runner import probe_client

T = TypeVar("T")


class ProbeLoop:
    def __init__(self, max_connections: int = 200) -> None:
        self.loop = asyncio.new_event_loop()
        self.pid = os.getpid()
        thread = threading.Thread(target=self.loop.run_forever, name="slamon-probes", daemon=True)
        thread.start()
        self.client: httpx.AsyncClient = self.run(self._make_client(max_connections))

    async def _make_client(self, max_connections: int) -> httpx.AsyncClient:
        return probe_client(max_connections)

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the shared loop and wait for its result (thread-safe)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def call(self, make: Callable[[httpx.AsyncClient], Awaitable[T]]) -> T:
        async def with_client() -> T:
            return await make(self.client)

        return self.run(with_client())


_shared: ProbeLoop | None = None
_lock = threading.Lock()


def shared_loop() -> ProbeLoop:
    """This process's probe loop, created on first use and again after a fork."""
    global _shared
    with _lock:
        if _shared is None or _shared.pid != os.getpid():
            _shared = ProbeLoop()
        return _shared
