"""An interruption notice as a box's metadata service gives it (pure values and time parsing).

httpx and the standard library only, like every module of ``monitor.interruptions``: the
training-loop hooks import these, and a training job installs nothing of slamon's but httpx.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

CLOUDS = ("aws", "gcp", "azure")
KINDS = (
    "preemption",
    "stop",
    "hibernate",
    "rebalance",
    "scheduled_maintenance",
    "reboot",
    "redeploy",
)


class MetadataError(Exception):
    """A metadata service that could not be read or said something unreadable: one line."""


class NotOnThisCloud(MetadataError):
    """No metadata service of that cloud answers here (refused, timed out, or another's)."""


@dataclass(frozen=True, slots=True)
class Notice:
    """One notice: which cloud, what will happen, by when (aware UTC; None when the provider
    names no time), the provider's own id for it, and the provider's words."""

    cloud: str  # aws | gcp | azure
    kind: str  # one of KINDS
    deadline: datetime | None
    key: str  # AWS: instance-action time+action, or EventId; Azure: EventId; GCE: the value
    detail: str

    def __post_init__(self) -> None:
        if self.cloud not in CLOUDS or self.kind not in KINDS:
            raise ValueError(f"notice: cloud {self.cloud!r}, kind {self.kind!r}")
        if self.deadline is not None and self.deadline.utcoffset() is None:
            raise ValueError("notice: deadline must be aware")

    def seconds_left(self, now: datetime) -> float | None:
        """Seconds from ``now`` to the deadline (negative once passed); None without one."""
        if self.deadline is None:
            return None
        return (self.deadline - now).total_seconds()


def iso_time(text: object, field: str) -> datetime:
    """``2017-09-18T08:22:00Z`` (AWS' instance-action and rebalance times) as aware UTC."""
    if not isinstance(text, str):
        raise MetadataError(f"{field}: expected a time, got {text!r}"[:200])
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise MetadataError(f"{field}: not a time: {text!r}"[:200]) from None
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def http_time(text: object, field: str) -> datetime | None:
    """``Mon, 19 Sep 2016 18:29:47 GMT`` (Azure) or ``21 Jan 2019 09:00:43 GMT`` (AWS'
    scheduled events) as aware UTC; None for an empty string (Azure: no time set)."""
    if text == "":
        return None
    if not isinstance(text, str):
        raise MetadataError(f"{field}: expected a time, got {text!r}"[:200])
    try:
        at = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        raise MetadataError(f"{field}: not a time: {text!r}"[:200]) from None
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def one_line(exc: BaseException) -> str:
    """An HTTP client's exception as one line: its type and first line."""
    text = " ".join(str(exc).split()) or "no detail"
    return f"{type(exc).__name__}: {text}"[:200]
