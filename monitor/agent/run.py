"""The agent's loop: read the GPUs every interval, queue the reading, push what is queued.

Reading and pushing never stop the loop: a reading that fails becomes a reading of no GPUs with
the error (a box whose driver died has no usable GPU, and the server should say so), and a push
that fails leaves the readings queued and waits (doubling, up to five minutes) before the next
try, while readings go on being taken.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Protocol

from monitor.agent.model import AgentError, BoxReading
from monitor.agent.push import Backoff, Flushed, Pusher, stamped

log = logging.getLogger("slamon.agent")

SOURCES = ("auto", "nvml", "nvidia-smi")


class Reader(Protocol):
    source: str

    def read(self) -> BoxReading: ...

    def close(self) -> None: ...


def open_reader(source: str, nvidia_smi: str = "nvidia-smi") -> Reader:
    """NVML for ``nvml``; nvidia-smi for ``nvidia-smi``; ``auto`` tries NVML, then nvidia-smi.
    ``AgentError`` naming both failures when neither works."""
    from monitor.agent.nvml import NvmlReader, load_nvml
    from monitor.agent.smi import SmiReader

    if source not in SOURCES:
        raise AgentError(f"unknown source {source!r}: one of {', '.join(SOURCES)}")
    nvml_problem = None
    if source in ("auto", "nvml"):
        try:
            return NvmlReader(load_nvml())
        except AgentError as exc:
            if source == "nvml":
                raise
            nvml_problem = str(exc)
    reader = SmiReader(binary=nvidia_smi)
    try:
        reader.read()  # say now, not at the first interval, when it cannot work
    except AgentError as exc:
        if nvml_problem:
            raise AgentError(f"no GPU source: {nvml_problem}; {exc}") from None
        raise
    return reader


@dataclass
class Agent:
    reader: Reader
    pusher: Pusher
    interval_s: float
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    backoff: Backoff = field(init=False)
    next_push: float = 0.0  # monotonic time before which a failed push is not retried
    problem: str | None = None  # the failure being reported, so it is logged once

    def __post_init__(self) -> None:
        self.backoff = Backoff(self.interval_s)

    def take_reading(self) -> None:
        try:
            reading = self.reader.read().to_json()
        except AgentError as exc:
            log.warning("GPU reading failed: %s", exc)
            reading = {"source": self.reader.source, "gpus": [], "error": str(exc)[:500]}
        self.pusher.outbox.add(stamped(reading, self.clock()))

    def push(self) -> Flushed:
        """Push what is queued, unless a failure's wait has not run out."""
        if time.monotonic() < self.next_push:
            return Flushed(0, self.problem)
        flushed = self.pusher.flush()
        if flushed.problem is None:
            if self.problem is not None:
                log.warning("pushing again: %d queued readings sent", flushed.sent)
            self.problem = None
            self.backoff.succeeded()
            return flushed
        wait = self.backoff.failed()
        self.next_push = time.monotonic() + wait
        if flushed.problem != self.problem:
            queued = len(self.pusher.outbox.items)
            log.warning("push failed (%d readings queued, next try in %.0f s): %s",
                        queued, wait, flushed.problem)  # fmt: skip
        self.problem = flushed.problem
        return flushed

    def once(self) -> Flushed:
        self.take_reading()
        return self.pusher.flush()

    def run(self, stop: threading.Event) -> None:
        """Until ``stop`` is set: a reading every interval, on a steady grid."""
        started = time.monotonic()
        ticks = 0
        while not stop.is_set():
            self.take_reading()
            self.push()
            ticks += 1
            stop.wait(max(0.0, started + ticks * self.interval_s - time.monotonic()))
        self.reader.close()
