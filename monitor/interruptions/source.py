"""What every cloud's metadata source offers (the watch runs any of them alike)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from monitor.interruptions.model import Notice


class Source(Protocol):
    cloud: str
    pause_s: float  # between two calls of a stream (0 where the server holds each request)

    def check(self) -> None:
        """``NotOnThisCloud`` unless its metadata service answers."""

    def poll(self) -> list[Notice]:
        """Every notice now, without waiting; ``MetadataError`` when it cannot say."""
        ...

    def streams(self) -> list[Callable[[], list[Notice]]]:
        """Each watched in a thread of its own: a call returns the notices it sees then."""
        ...

    def acknowledge(self, notice: Notice) -> None:
        """Let the event start early (Azure); nothing elsewhere."""
