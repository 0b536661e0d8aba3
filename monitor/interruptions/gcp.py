"""Google Compute Engine: the VM's metadata server.

``instance/maintenance-event`` reads ``NONE`` until host maintenance is about to happen (then
``MIGRATE_ON_HOST_MAINTENANCE`` or ``TERMINATE_ON_HOST_MAINTENANCE``, about 60 s ahead), and
``instance/preempted`` reads ``TRUE`` once a Spot or preemptible VM is being reclaimed (about
30 s left). Each is watched with ``wait_for_change=true`` and the ``ETag`` of the last answer:
the server holds the request until the value changes or ``timeout_sec`` runs out, so a notice
is heard the moment it is set. Every request carries ``Metadata-Flavor: Google`` and every
answer must too (else it is not GCE's server).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx

from monitor.interruptions.model import MetadataError, Notice, NotOnThisCloud, one_line

BASE_URL = "http://metadata.google.internal"
PREFIX = "/computeMetadata/v1/instance/"
MAINTENANCE_EVENT = "maintenance-event"
PREEMPTED = "preempted"
MAINTENANCE_NOTICE_S = 60  # what GCE documents for host maintenance
PREEMPTION_NOTICE_S = 30  # what GCE documents for a preempted VM
WAIT_S = 60


def parse_maintenance_event(value: str, now: datetime) -> Notice | None:
    """None for ``NONE``; else a notice whose deadline is 60 s after ``now`` (when it was read)."""
    value = value.strip()
    if not value or not value.replace("_", "").isalnum() or not value.isupper():
        raise MetadataError(f"maintenance-event: not a value: {value[:80]!r}")
    if value == "NONE":
        return None
    deadline = now + timedelta(seconds=MAINTENANCE_NOTICE_S)
    return Notice("gcp", "scheduled_maintenance", deadline, value, f"maintenance-event {value}")


def parse_preempted(value: str, now: datetime) -> Notice | None:
    """None for ``FALSE``; for ``TRUE`` a preemption 30 s after ``now``."""
    value = value.strip()
    if value not in ("TRUE", "FALSE"):
        raise MetadataError(f"preempted: neither TRUE nor FALSE: {value[:80]!r}")
    if value == "FALSE":
        return None
    deadline = now + timedelta(seconds=PREEMPTION_NOTICE_S)
    return Notice("gcp", "preemption", deadline, "preempted", "preempted TRUE")


PARSERS: dict[str, Callable[[str, datetime], Notice | None]] = {
    MAINTENANCE_EVENT: parse_maintenance_event,
    PREEMPTED: parse_preempted,
}


class GceMetadata:
    """Both values, each in a stream of its own (held requests); ``poll`` reads both at once."""

    cloud = "gcp"
    pause_s = 0.0  # the server holds each request: no pause between them

    def __init__(
        self,
        client: httpx.Client,
        base_url: str | None = None,
        wait_s: int = WAIT_S,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.client = client
        self.base_url = (base_url or BASE_URL).rstrip("/")
        self.wait_s = wait_s
        self.clock = clock
        self.etags: dict[str, str] = {}

    def check(self) -> None:
        """Raise ``NotOnThisCloud`` unless GCE's metadata server answers."""
        try:
            self._get(PREEMPTED, wait=False)
        except NotOnThisCloud:
            raise
        except MetadataError as exc:
            raise NotOnThisCloud(str(exc)) from None

    def streams(self) -> list[Callable[[], list[Notice]]]:
        return [lambda: self.read(MAINTENANCE_EVENT, True), lambda: self.read(PREEMPTED, True)]

    def poll(self) -> list[Notice]:
        return [*self.read(MAINTENANCE_EVENT, False), *self.read(PREEMPTED, False)]

    def acknowledge(self, notice: Notice) -> None:
        """GCE takes no acknowledgement."""

    def read(self, name: str, wait: bool) -> list[Notice]:
        """The value's notice (or none); with ``wait``, once it changes or the wait runs out."""
        notice = PARSERS[name](self._get(name, wait), self.clock())
        return [] if notice is None else [notice]

    def _get(self, name: str, wait: bool) -> str:
        url = f"{self.base_url}{PREFIX}{name}"
        params: dict[str, str] = {}
        if wait:
            params = {"wait_for_change": "true", "timeout_sec": str(self.wait_s)}
            if name in self.etags:
                params["last_etag"] = self.etags[name]
        timeout = httpx.Timeout(5.0, read=self.wait_s + 5.0 if wait else 5.0)
        try:
            reply = self.client.get(
                url, params=params, headers={"Metadata-Flavor": "Google"}, timeout=timeout
            )
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise NotOnThisCloud(f"no GCE metadata server at {url}: {one_line(exc)}") from None
        except httpx.HTTPError as exc:
            raise MetadataError(f"GCE metadata {name}: {one_line(exc)}") from None
        if reply.headers.get("Metadata-Flavor") != "Google":
            raise NotOnThisCloud(f"not GCE's metadata server at {url}: HTTP {reply.status_code}")
        if reply.status_code != 200:
            raise MetadataError(f"GCE metadata {name}: HTTP {reply.status_code}")
        if "ETag" in reply.headers:
            self.etags[name] = reply.headers["ETag"]
        return reply.text
