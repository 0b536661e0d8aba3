"""Pushing readings to slamon: a bounded outbox, oldest first, with backoff.

Each reading is stamped when it is taken and pushed with that time (``at``), so a reading that
waited out a network outage lands where it belongs. While the server cannot be reached the
readings wait in the outbox; when it is full the oldest is dropped and counted, and the count
rides along with the next push so the server's operator can see what was lost. What the server
refuses for good (422: the reading itself; 413: too big) is dropped and counted too; a refusal of
the agent itself (401, 403, 404: token or target wrong) keeps every reading and is reported, as
the operator can fix it without restarting the agent.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx

DEFAULT_CAPACITY = 1000  # readings: about four hours at the default 15 s interval
MAX_BACKOFF_S = 300.0


@dataclass
class Outbox:
    """Readings not yet accepted, oldest first; full, it drops the oldest."""

    capacity: int = DEFAULT_CAPACITY
    items: deque[dict[str, Any]] = field(default_factory=deque)
    dropped: int = 0  # readings lost to a full outbox or a permanent refusal, since start

    def add(self, reading: dict[str, Any]) -> None:
        if len(self.items) >= self.capacity:
            self.items.popleft()
            self.dropped += 1
        self.items.append(reading)


@dataclass(frozen=True, slots=True)
class Flushed:
    """What one flush did: readings accepted, and why it stopped early (None: outbox empty)."""

    sent: int
    problem: str | None = None
    retry: bool = True  # worth trying again soon (the server or the network), else config
    refused: str | None = None  # the last reading the server refused for good, and why


@dataclass
class Pusher:
    """Pushes an outbox's readings to ``POST {url}/api/v1/heartbeats/{target}``."""

    url: str
    target: str
    token: str | None
    client: httpx.Client
    outbox: Outbox = field(default_factory=Outbox)
    timeout_s: float = 10.0

    @property
    def endpoint(self) -> str:
        return f"{self.url.rstrip('/')}/api/v1/heartbeats/{quote(self.target, safe='')}"

    def flush(self) -> Flushed:
        sent, refused = 0, None
        while self.outbox.items:
            body = {**self.outbox.items[0], "agent": {"dropped": self.outbox.dropped}}
            try:
                reply = self.client.post(
                    self.endpoint, json=body, headers=self._headers(), timeout=self.timeout_s
                )
            except httpx.HTTPError as exc:
                return Flushed(sent, f"{self.endpoint}: {type(exc).__name__}: {exc}", True, refused)
            if 200 <= reply.status_code < 300:
                self.outbox.items.popleft()
                sent += 1
                continue
            said = f"{self.endpoint}: HTTP {reply.status_code}: {server_said(reply)}"
            if reply.status_code in (413, 422):
                self.outbox.items.popleft()  # this reading never will be accepted
                self.outbox.dropped += 1
                refused = said
                continue
            retry = reply.status_code in (408, 425, 429) or reply.status_code >= 500
            return Flushed(sent, said, retry, refused)
        return Flushed(sent, refused=refused)

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


def server_said(reply: httpx.Response) -> str:
    """The server's error text (slamon's ``error.message``, or a JSON ``detail``), on one
    short line."""
    try:
        body = reply.json()
        error = body.get("error")
        detail = error.get("message") if isinstance(error, dict) else None
        detail = detail or body.get("detail", reply.text)
    except (ValueError, AttributeError):
        detail = reply.text
    return " ".join(str(detail).split())[:300]


def stamped(reading: dict[str, Any], at: datetime) -> dict[str, Any]:
    return {"at": at.isoformat(), **reading}


@dataclass
class Backoff:
    """Doubling waits after failures, from ``base_s`` up to ``max_s``, with jitter."""

    base_s: float
    failures: int = 0
    jitter: Callable[[], float] = random.random
    max_s: float = MAX_BACKOFF_S

    def failed(self) -> float:
        self.failures += 1
        wait: float = min(self.base_s * 2.0 ** min(self.failures - 1, 60), self.max_s)
        return wait * (0.8 + 0.4 * self.jitter())

    def succeeded(self) -> None:
        self.failures = 0
