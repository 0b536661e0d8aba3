"""Pushing interruption notices to slamon the moment the agent hears them: ``POST
{url}/api/v1/events/notices/{target}``, from a thread of their own, so a notice waits neither
for the next reading's interval nor for a reading's push, and never holds the metadata watch up.

While slamon cannot be reached (or answers 5xx, 408, 425 or 429) the notices wait, in the order
they were heard, and are tried again after a doubling wait (1 s up to 30 s: a notice's deadline
is minutes away, not hours); none is dropped while the agent runs. A refusal of the notice itself
(413, 422) drops it and says why; a refusal of the agent (401, 403, 404: the token or the target
is wrong) keeps it and says why, as the operator can fix that without restarting the agent.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from monitor.agent.push import Backoff, Flushed, server_said
from monitor.interruptions import Notice

log = logging.getLogger("slamon.agent")

FIRST_WAIT_S = 1.0
MAX_WAIT_S = 30.0
MAX_DETAIL = 2000  # the endpoint's bound on the provider's words: cut here, not refused there


def notice_body(notice: Notice, acknowledged: bool = False) -> dict[str, Any]:
    """What the endpoint takes: the notice as heard, and whether the agent acknowledged it."""
    return {
        "cloud": notice.cloud,
        "kind": notice.kind,
        "deadline": notice.deadline.isoformat() if notice.deadline is not None else None,
        "key": notice.key,
        "detail": notice.detail[:MAX_DETAIL],
        "acknowledged": acknowledged,
    }


def _report(problem: str) -> None:
    log.warning("%s", problem)


@dataclass
class NoticePusher:
    """Pushes notices for ``target`` to slamon at ``url``: :meth:`push` queues one and wakes
    the pushing thread (:meth:`start`); :meth:`flush` tries what waits, once (``--once``)."""

    url: str
    target: str
    token: str | None
    client: httpx.Client
    timeout_s: float = 10.0
    report: Callable[[str], None] = _report
    backoff: Backoff = field(default_factory=lambda: Backoff(FIRST_WAIT_S, max_s=MAX_WAIT_S))
    pending: deque[dict[str, Any]] = field(default_factory=deque)
    dropped: int = 0  # notices slamon refused for good, since start
    _wake: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        return f"{self.url.rstrip('/')}/api/v1/events/notices/{quote(self.target, safe='')}"

    def push(self, notice: Notice, acknowledged: bool = False) -> None:
        """Queue ``notice`` and wake the pushing thread: it goes at once."""
        with self._lock:
            self.pending.append(notice_body(notice, acknowledged))
        self._wake.set()

    def flush(self) -> Flushed:
        """Push what waits, oldest first, each once; stop at the first failure worth retrying
        (or a refusal of the agent), which leaves it and the rest waiting."""
        sent, refused = 0, None
        while True:
            with self._lock:
                if not self.pending:
                    return Flushed(sent, refused=refused)
                body = self.pending[0]
            try:
                reply = self.client.post(
                    self.endpoint, json=body, headers=self._headers(), timeout=self.timeout_s
                )
            except httpx.HTTPError as exc:
                return Flushed(sent, f"{self.endpoint}: {type(exc).__name__}: {exc}", True, refused)
            if 200 <= reply.status_code < 300:
                self._done()
                sent += 1
                continue
            said = f"{self.endpoint}: HTTP {reply.status_code}: {server_said(reply)}"
            if reply.status_code in (413, 422):
                self._done()  # this notice never will be accepted
                self.dropped += 1
                refused = said
                self.report(f"interruption notice {body['kind']} {body['key']} refused: {said}")
                continue
            retry = reply.status_code in (408, 425, 429) or reply.status_code >= 500
            return Flushed(sent, said, retry, refused)

    def start(self) -> NoticePusher:
        """Push each queued notice from a daemon thread, retrying with backoff."""
        self._thread = threading.Thread(target=self._run, name="slamon-notice-push", daemon=True)
        self._thread.start()
        return self

    def close(self, timeout_s: float = 2.0) -> None:
        """Stop the thread; a notice still waiting is lost with the agent, and said so."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)
        if waiting := len(self.pending):
            self.report(f"{waiting} interruption notice(s) not pushed: the agent stopped")

    def _run(self) -> None:
        failing: str | None = None
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            flushed = self.flush()
            if flushed.problem is None:
                if failing is not None:
                    self.report(f"interruption notices pushed again ({flushed.sent} sent)")
                failing = None
                self.backoff.succeeded()
                continue
            wait = self.backoff.failed()
            if flushed.problem != failing:
                self.report(
                    f"interruption notice not pushed ({len(self.pending)} waiting, next try "
                    f"in {wait:.0f} s): {flushed.problem}"
                )
            failing = flushed.problem
            self._stop.wait(wait)
            self._wake.set()  # try again, whether or not another notice came

    def _done(self) -> None:
        with self._lock:
            self.pending.popleft()

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}
