"""Per-process resources for tasks: settings, config, engine and one long-lived HTTP client.

Built lazily and rebuilt after a fork (prefork pool children must not share a connection pool
or sockets with their parent).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property

import httpx
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from monitor.config import Config, load_config
from monitor.db.engine import make_engine, make_sessionmaker
from monitor.settings import Settings

HTTP_TIMEOUT = httpx.Timeout(10.0, connect=5.0)


@dataclass
class Runtime:
    settings: Settings
    config: Config
    pid: int = field(default_factory=os.getpid)

    @cached_property
    def engine(self) -> Engine:
        return make_engine(self.settings.database_url)

    @cached_property
    def sessions(self) -> sessionmaker[Session]:
        return make_sessionmaker(self.engine)

    @cached_property
    def http(self) -> httpx.Client:
        """The process's HTTP client for feeds, webhooks and Grafana (not for probes)."""
        return httpx.Client(timeout=HTTP_TIMEOUT, follow_redirects=True, headers=_headers())

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        with self.sessions() as session, session.begin():
            yield session


def _headers() -> dict[str, str]:
    from monitor import __version__

    return {"User-Agent": f"slamon/{__version__} (+https://github.com/slamon/slamon)"}


_current: Runtime | None = None
_building = threading.Lock()


def runtime() -> Runtime:
    """This process's runtime, created on first use and again after a fork (once: the threads
    of a threads-pool worker all start by asking for it)."""
    global _current
    with _building:
        if _current is None or _current.pid != os.getpid():
            settings = Settings()
            config = load_config(settings.config, missing_ok=True)
            _current = Runtime(settings=settings, config=config)
        return _current
