"""Failed authentication, limited per client address and per token prefix.

slamon's tokens carry 256 random bits, so guessing one is hopeless; the limit keeps a guesser
(or a job with a stale token in a crash loop) from filling the log and the database with
failed lookups. Only failures count, and a valid token is never refused: jobs behind one NAT
keep pushing heartbeats while a neighbour with a stale token is refused. A token prefix that
failed ``limit`` times within ``window_s`` answers 429 with ``Retry-After`` before any lookup;
an address over its limit gets 429 instead of 401 for each further bad token. Per API
process, in memory: bounded, and forgotten on restart. Replicas behind a balancer keep a count
each, so N of them allow N times the failures; still bounded, and a valid token is refused by
none (docs/operations.md, "API replicas").
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

PREFIX_CHARS = 12  # "slm_" or "slmhb_" and the first random characters
MAX_KEYS = 50_000  # beyond this, the keys with the oldest failures are forgotten first


def keys_for(address: str | None, token: str | None) -> list[str]:
    """What a failure counts against: the client's address and the token's prefix."""
    return [f"addr:{address or 'unknown'}", *token_key(token)]


def token_key(token: str | None) -> list[str]:
    """The key of the token's prefix alone."""
    return [f"token:{token[:PREFIX_CHARS]}"] if token else []


@dataclass
class AuthThrottle:
    limit: int = 20
    window_s: float = 60.0
    clock: Callable[[], float] = time.monotonic
    failures: dict[str, deque[float]] = field(default_factory=dict)

    def retry_after(self, keys: Iterable[str]) -> int | None:
        """Whole seconds until every key may try again; None when none is over the limit."""
        now = self.clock()
        waits = [self._wait(key, now) for key in keys]
        longest = max((w for w in waits if w is not None), default=None)
        return None if longest is None else max(1, math.ceil(longest))

    def failed(self, keys: Iterable[str]) -> None:
        now = self.clock()
        for key in keys:
            times = self.failures.pop(key, None) or deque()
            self._expire(times, now)
            times.append(now)
            while len(times) > self.limit:
                times.popleft()
            self.failures[key] = times  # re-inserted: dict order is oldest activity first
        while len(self.failures) > MAX_KEYS:
            del self.failures[next(iter(self.failures))]

    def _wait(self, key: str, now: float) -> float | None:
        times = self.failures.get(key)
        if times is None:
            return None
        self._expire(times, now)
        if len(times) < self.limit:
            return None
        return times[0] + self.window_s - now

    def _expire(self, times: deque[float], now: float) -> None:
        while times and times[0] <= now - self.window_s:
            times.popleft()
