"""Watching a metadata source in daemon threads: each notice is handed to the callback once,
as soon as a poll sees it (AWS and Azure poll every ``pause_s``; GCE's server holds each
request until its value changes).

A notice that disappears and comes back later is a new notice. A source that fails is reported
once per episode through ``on_problem`` (a warning in the log by default) and retried every
``retry_s``; nothing reaches the caller's thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from monitor.interruptions.model import MetadataError, Notice
from monitor.interruptions.registry import find_source
from monitor.interruptions.source import Source

log = logging.getLogger("slamon.interruptions")


def _warn(problem: str) -> None:
    log.warning("interruption notices: %s", problem)


@dataclass
class Watch:
    """Watch ``cloud`` (or ``auto``) at ``base_url`` (the cloud's own by default), or a given
    ``source``; ``callback(notice)`` runs in a watch thread, once per notice, one at a time.
    With ``acknowledge``, each notice is acknowledged after its callback returns (Azure only)."""

    callback: Callable[[Notice], None]
    cloud: str = "auto"
    base_url: str | None = None
    acknowledge: bool = False
    source: Source | None = None
    on_problem: Callable[[str], None] = _warn
    retry_s: float = 5.0
    timeout_s: float = 2.0
    heard: list[Notice] = field(default_factory=list)
    problem: str | None = None  # why the watch is not watching (not on this cloud), if so
    _stop: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _threads: list[threading.Thread] = field(default_factory=list)
    _client: httpx.Client | None = None

    def start(self) -> Watch:
        """Find the source (in the background: a laptop's ``auto`` may take a timeout) and
        watch each of its streams in a daemon thread."""
        thread = threading.Thread(target=self._begin, name="slamon-notices", daemon=True)
        self._threads.append(thread)
        thread.start()
        return self

    def close(self) -> None:
        """Stop watching (a held GCE request is left to its daemon thread)."""
        self._stop.set()
        for thread in list(self._threads):
            if thread is not threading.current_thread():
                thread.join(timeout=0.5)
        if self._client is not None:
            self._client.close()

    def _begin(self) -> None:
        if self.source is None:
            self._client = httpx.Client(timeout=self.timeout_s)
            try:
                self.source = find_source(self.cloud, self._client, self.base_url)
            except MetadataError as exc:
                self.problem = str(exc)
                self.on_problem(f"not watched: {exc}")
                return
        for stream in self.source.streams():
            thread = threading.Thread(
                target=self._run, args=(stream,), name="slamon-notices", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _run(self, stream: Callable[[], list[Notice]]) -> None:
        assert self.source is not None
        seen: set[tuple[str, str]] = set()
        failing: str | None = None
        while not self._stop.is_set():
            try:
                notices = stream()
            except Exception as exc:  # a bug in a parser must not end the watch either
                problem = str(exc) if isinstance(exc, MetadataError) else repr(exc)
                if problem != failing:
                    self.on_problem(problem)
                failing = problem
                self._stop.wait(self.retry_s)
                continue
            if failing is not None:
                self.on_problem(f"{self.source.cloud} metadata answers again")
                failing = None
            now = {(n.kind, n.key) for n in notices}
            for notice in notices:
                if (notice.kind, notice.key) not in seen and not self._stop.is_set():
                    self._deliver(notice)
            seen = now
            self._stop.wait(self.source.pause_s)

    def ack(self, notice: Notice) -> bool:
        """Acknowledge ``notice`` now (for a caller that acknowledges after its checkpoint
        rather than after the callback); False, reported once, when it could not be."""
        if self.source is None:
            return False
        try:
            self.source.acknowledge(notice)
            return True
        except MetadataError as exc:
            self.on_problem(str(exc))
            return False

    def _deliver(self, notice: Notice) -> None:
        assert self.source is not None
        with self._lock:
            self.heard.append(notice)
            try:
                self.callback(notice)
            except Exception:
                log.exception("interruption callback")
            if self.acknowledge:
                self.ack(notice)
