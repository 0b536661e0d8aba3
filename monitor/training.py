"""Training-loop hooks: a job reports its step and throughput to slamon as heartbeats.

    from monitor import training

    beats = training.start("http://slamon:8080", target="llm-run-7", token=HEARTBEAT_TOKEN)
    for step, batch in enumerate(loader):
        ...
        beats.beat(step=step, samples=len(batch))   # cheap: a lock and two additions
    beats.close()

``beat`` only records; a daemon thread pushes every ``interval_s`` the latest step and the
throughput since the last push (samples, or tokens, per second), so the loop never waits on
the network and never sees an exception from it: when slamon is down the pushes fail quietly
(counted, logged once) and the next one carries the throughput over the whole gap. Thread-safe:
several data-loader or rank threads may call ``beat``.

Interruption notices: ``on_interruption(callback)`` watches the box's metadata service (AWS,
GCE or Azure; ``cloud="auto"`` finds which) in a daemon thread and calls ``callback(notice)``
once per notice, as soon as it appears, with its ``deadline`` (``notice.seconds_left(now)``):

    heard = threading.Event()
    watch = training.on_interruption(lambda notice: heard.set(), cloud="aws")
    for step, batch in enumerate(loader):
        ...
        if heard.is_set():
            save_checkpoint(model, "ckpt.pt")   # in the loop's own thread, between steps
            heard.clear()

The callback runs in the watch thread: set a flag there and save from the loop. Off a cloud the
watch logs one warning line and does nothing.

Framework callbacks (PyTorch Lightning, Hugging Face ``transformers.Trainer``) are in
``monitor.training_callbacks``, imported only where used. This module imports httpx and
``monitor.interruptions`` (itself httpx and the standard library only), nothing else of slamon's.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from monitor.interruptions import Notice, Watch

log = logging.getLogger("slamon.training")

UNITS = ("samples", "tokens")
__all__ = ["Heartbeats", "Notice", "Progress", "on_interruption", "start", "throughput"]


@dataclass(frozen=True, slots=True)
class Progress:
    """What the loop has reported so far (cumulative), and when."""

    step: int | None = None
    work: float = 0.0  # samples (or tokens) processed since start
    at: float = 0.0  # monotonic seconds


def throughput(before: Progress, now: Progress) -> float | None:
    """Work per second between two reports; None when nothing can be said (no time passed,
    or no work was reported at all)."""
    elapsed = now.at - before.at
    if elapsed <= 0 or now.work <= 0:
        return None
    return max(0.0, now.work - before.work) / elapsed


@dataclass
class Heartbeats:
    """Reports a training loop to ``POST {url}/api/v1/heartbeats/{target}``."""

    url: str
    target: str
    token: str | None = None
    interval_s: float = 15.0
    unit: str = "samples"
    timeout_s: float = 5.0
    clock: Callable[[], float] = time.monotonic
    failures: int = 0  # pushes that failed since start
    _progress: Progress = field(default_factory=Progress)
    _pushed: Progress | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None
    _client: httpx.Client | None = None
    _failing: bool = False
    _watches: list[Watch] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise ValueError(f"unit: one of {', '.join(UNITS)}")

    def beat(self, step: int | None = None, samples: float = 0, tokens: float = 0) -> None:
        """Record progress: the step reached and the samples (or tokens) done since the last
        call. Never blocks on I/O and never raises for slamon's sake."""
        work = samples if self.unit == "samples" else tokens
        with self._lock:
            before = self._progress
            self._progress = Progress(
                step if step is not None else before.step, before.work + max(0, work), self.clock()
            )

    def start(self) -> Heartbeats:
        if self._thread is None:
            self._client = httpx.Client(timeout=self.timeout_s)
            self._thread = threading.Thread(target=self._run, name="slamon-heartbeats", daemon=True)
            self._thread.start()
        return self

    def on_interruption(
        self,
        callback: Callable[[Notice], None],
        cloud: str = "auto",
        base_url: str | None = None,
        acknowledge: bool = False,
    ) -> Watch:
        """``on_interruption`` below, stopped with these heartbeats' ``close``."""
        watch = on_interruption(callback, cloud, base_url, acknowledge)
        self._watches.append(watch)
        return watch

    def close(self) -> None:
        """Push the last progress and stop the thread (within ``timeout_s``)."""
        for watch in self._watches:
            watch.close()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.timeout_s + 1)
        if self._client is not None:
            self.push()
            self._client.close()

    def push(self) -> bool:
        """One heartbeat now with the latest step and the throughput since the last push."""
        with self._lock:
            now = self._progress
        body: dict[str, Any] = {"unit": self.unit}
        if now.step is not None:
            body["step"] = now.step
        rate = throughput(self._pushed, now) if self._pushed is not None else None
        if rate is not None:
            body["throughput"] = round(rate, 3)
        if now.at == 0.0:
            return False  # nothing reported yet: a heartbeat would claim progress
        ok = self._send(body)
        if ok:
            self._pushed = now
        return ok

    def _send(self, body: dict[str, Any]) -> bool:
        client = self._client or httpx.Client(timeout=self.timeout_s)
        endpoint = f"{self.url.rstrip('/')}/api/v1/heartbeats/{quote(self.target, safe='')}"
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        try:
            reply = client.post(endpoint, json=body, headers=headers)
            ok = 200 <= reply.status_code < 300
            problem = None if ok else f"HTTP {reply.status_code}"
        except Exception as exc:
            ok, problem = False, f"{type(exc).__name__}: {exc}"
        finally:
            if client is not self._client:
                client.close()
        if not ok:
            self.failures += 1
            if not self._failing:
                log.warning(
                    "slamon heartbeat to %s failed: %s (will keep trying)", endpoint, problem
                )
        elif self._failing:
            log.warning("slamon heartbeats to %s are getting through again", endpoint)
        self._failing = not ok
        return ok

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.push()
            except Exception:
                log.exception("slamon heartbeat thread")


def start(
    url: str,
    target: str,
    token: str | None = None,
    interval_s: float = 15.0,
    unit: str = "samples",
) -> Heartbeats:
    """Start reporting to slamon; ``beat`` the returned object from the loop."""
    return Heartbeats(url, target, token, interval_s, unit).start()


def on_interruption(
    callback: Callable[[Notice], None],
    cloud: str = "auto",
    base_url: str | None = None,
    acknowledge: bool = False,
) -> Watch:
    """Watch this box's metadata service (``aws``, ``gcp``, ``azure`` or ``auto``; ``base_url``
    for a test's server) and call ``callback(notice)`` once per notice from a daemon thread: AWS
    is polled every second, GCE's server holds each request until its value changes, Azure is
    polled every second. ``acknowledge`` (Azure): let the event start once the callback returns.
    ``close()`` the returned watch to stop; ``watch.problem`` says why it is not watching."""
    return Watch(callback, cloud, base_url, acknowledge).start()
