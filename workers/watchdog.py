"""The watchdog ping: the leading scheduler pings ``watchdog.url`` every ``watchdog.every``, but
only while slamon is doing its job (``monitor.health``: the database and the broker answer, a
scheduler leads, the schedule is on time, deliveries drain, feeds are polled). The outside
service (healthchecks.io, Dead Man's Snitch, Better Stack, any URL) alerts when the pings
stop, which is also what happens when every slamon process is gone.

The leader calls :meth:`Watchdog.beat` on every scheduler tick, from the beat thread, so it
never blocks: when a check is due it runs in a thread of its own, at most one at a time (a
broker that hangs delays the next check, never the schedule). The console says when the pings
stop and why (``watchdog silent``, again when the trouble changes, not as its figures grow),
when the receiver does not take them (``watchdog failing``, once per error) and when they
start or resume (``watchdog pinging``). Each attempt is recorded in ``watchdog_pings`` for
every API replica's /metrics.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from urllib.parse import urlsplit

import httpx
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from monitor.config import Config
from monitor.db.base import utcnow
from monitor.events.emitting import emit
from monitor.events.words import (
    WATCHDOG_FAILING,
    WATCHDOG_PINGING,
    WATCHDOG_SILENT,
    one_line,
    watchdog_failing_text,
    watchdog_pinging_text,
    watchdog_silent_text,
)
from monitor.health.assess import BROKER_TIMEOUT_S, assess
from monitor.health.model import Reason
from monitor.health.read import record_ping
from monitor.settings import Settings

log = logging.getLogger(__name__)


class Watchdog:
    """Pings ``config.watchdog.url`` while this scheduler leads and slamon is healthy.

    ``sessions`` reach the database the judgement reads and the ping is recorded in;
    ``settings`` name the broker to check; ``holder`` is this scheduler as the lease names it
    (``host:pid``); ``clock`` is monotonic seconds (tests pass their own)."""

    def __init__(
        self,
        config: Config,
        settings: Settings,
        sessions: sessionmaker[Session],
        *,
        holder: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.settings = settings
        self.sessions = sessions
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}"
        self._clock = clock
        self._client: httpx.Client | None = None
        self._running = threading.Lock()  # held while a check is in flight
        self._thread: threading.Thread | None = None
        self._leading = False
        self._due_at: float | None = None  # monotonic; None: at the next beat while leading
        # what the console was last told
        self._silent: tuple[str, ...] = ()  # the kinds of the reasons for not pinging
        self._failing: str | None = None  # the receiver's last error
        self._last_taken: datetime | None = None  # the last ping the receiver took
        self._trouble_since: datetime | None = None  # when the pings stopped being taken

    @property
    def where(self) -> str:
        """The URL's host: the rest of it is a secret (the URL is the credential)."""
        url = self.config.watchdog.url or ""
        parts = urlsplit(url)
        return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else "?"

    def beat(self, leading: bool) -> None:
        """Called by the scheduler on every tick: when leading and a check is due, start one in
        the background (unless one is still running); never blocks, never raises."""
        self._leading = leading
        watchdog = self.config.watchdog
        if not leading or watchdog.url is None:
            self._due_at = None  # a leader again (this one or a new term) checks at once
            return
        now = self._clock()
        if self._due_at is not None and now < self._due_at:
            return
        if not self._running.acquire(blocking=False):
            return  # the last check still runs (a broker that hangs): never two at once
        self._due_at = now + watchdog.every
        try:
            self._thread = threading.Thread(target=self._run, name="slamon-watchdog", daemon=True)
            self._thread.start()
        except RuntimeError:  # no thread to be had (the interpreter is shutting down)
            self._running.release()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the check in flight, if any; True when none is left running."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def close(self, timeout: float | None = None) -> None:
        """Wait for the check in flight (at most ``timeout``) and close the HTTP client."""
        self._leading = False
        self.wait(timeout)
        if self._client is not None:
            self._client.close()
            self._client = None

    def check(self, leading: Callable[[], bool] = lambda: True) -> bool:
        """One check, now, in the caller's thread: judge, and ping if healthy and
        ``leading()`` still says so after judging. True when a ping was sent and taken."""
        watchdog = self.config.watchdog
        if watchdog.url is None:
            return False
        timeout = min(BROKER_TIMEOUT_S, watchdog.timeout)
        found = assess(self.sessions, self.settings, self.config, broker_timeout_s=timeout)
        if not found.ok:
            self._tell_silent(found.reasons)
            return False
        if not leading():
            return False  # the lease went while judging: the new leader pings
        return self._ping(watchdog.url)

    # ------------------------------------------------------------------------------ inside

    def _run(self) -> None:
        try:
            self.check(lambda: self._leading)
        except Exception:  # a bug must not end the schedule: said, and the next check comes
            log.exception("watchdog check failed")
        finally:
            self._running.release()

    def _ping(self, url: str) -> bool:
        at = utcnow()
        try:
            response = self._http().get(url)
            error = None if response.is_success else f"HTTP {response.status_code}"
        except httpx.HTTPError as exc:
            error = one_line(str(exc).replace(url, self.where)) or type(exc).__name__
        self._record(at, error)
        if error is not None:
            self._tell_failing(error, at)
            return False
        self._tell_pinging(at)
        return True

    def _http(self) -> httpx.Client:
        if self._client is None:
            timeout = httpx.Timeout(self.config.watchdog.timeout)
            self._client = httpx.Client(timeout=timeout, follow_redirects=True)
        return self._client

    def _record(self, at: datetime, error: str | None) -> None:
        """For /metrics: best effort (the ping itself is what matters)."""
        try:
            with self.sessions() as session, session.begin():
                record_ping(session, self.holder, at, taken=error is None, error=error)
        except SQLAlchemyError as exc:
            log.debug("watchdog ping not recorded: %s", exc)

    def _tell_silent(self, reasons: Sequence[Reason]) -> None:
        kinds = tuple(reason.kind for reason in reasons)
        if kinds == self._silent:
            return
        self._silent, self._failing = kinds, None
        self._trouble_since = self._trouble_since or utcnow()
        emit(WATCHDOG_SILENT, watchdog_silent_text(reason.text for reason in reasons))

    def _tell_failing(self, error: str, at: datetime) -> None:
        self._silent = ()
        self._trouble_since = self._trouble_since or at
        if error != self._failing:
            self._failing = error
            emit(WATCHDOG_FAILING, watchdog_failing_text(self.where, error))

    def _tell_pinging(self, at: datetime) -> None:
        every = self.config.watchdog.every
        if self._last_taken is None:  # the first ping this process sends
            emit(WATCHDOG_PINGING, watchdog_pinging_text(self.where, every))
        elif self._trouble_since is not None:  # again, after a silence or a failing receiver
            quiet_s = (at - self._last_taken).total_seconds()
            emit(WATCHDOG_PINGING, watchdog_pinging_text(self.where, every, quiet_s))
        self._silent, self._failing, self._trouble_since = (), None, None
        self._last_taken = at
