"""Azure: Scheduled Events from the VM's instance metadata service.

``GET /metadata/scheduledevents?api-version=2020-07-01`` with ``Metadata: true`` answers a
document of every event scheduled or started for the VM (``Preempt`` of a Spot VM gives at least
30 s, ``Freeze`` 15 minutes, ``Reboot``/``Redeploy`` 15 minutes, ``Terminate`` is configurable).
An event may be acknowledged (``POST`` ``{"StartRequests": [{"EventId": ...}]}``) to let it
start early: that is done here only when the caller asks, never by default.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from monitor.interruptions.model import MetadataError, Notice, NotOnThisCloud, http_time, one_line

BASE_URL = "http://169.254.169.254"
PATH = "/metadata/scheduledevents"
API_VERSION = "2020-07-01"
EVENT_TYPES = {
    "Preempt": "preemption",
    "Terminate": "stop",
    "Freeze": "scheduled_maintenance",
    "Reboot": "reboot",
    "Redeploy": "redeploy",
}


def parse_document(raw: bytes) -> list[Notice]:
    """Each event of a Scheduled Events document; ``NotBefore`` is the deadline (none once the
    event has started, when Azure sends an empty string)."""
    try:
        body = json.loads(raw)
    except ValueError:
        raise MetadataError(f"scheduledevents: not JSON: {raw[:80]!r}") from None
    events = body.get("Events") if isinstance(body, dict) else None
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise MetadataError(f"scheduledevents: no Events list in {raw[:80]!r}")
    return [_notice(event) for event in events]


def _notice(event: dict[str, Any]) -> Notice:
    key, kind = event.get("EventId"), EVENT_TYPES.get(event.get("EventType", ""))
    if not isinstance(key, str) or kind is None:
        raise MetadataError(
            f"scheduledevents: unknown EventType {event.get('EventType')!r} or no EventId"
        )
    deadline = http_time(event.get("NotBefore", ""), f"scheduled event {key} NotBefore")
    words = (
        f"{event['EventType']} {event.get('EventStatus', '')} by {event.get('EventSource', '?')}"
    )
    description = str(event.get("Description") or "").strip()
    return Notice("azure", kind, deadline, key, f"{words}: {description}" if description else words)


class AzureMetadata:
    """One poll of the document; ``acknowledge`` starts an event early (only when asked)."""

    cloud = "azure"
    pause_s = 1.0

    def __init__(self, client: httpx.Client, base_url: str | None = None) -> None:
        self.client = client
        self.url = f"{(base_url or BASE_URL).rstrip('/')}{PATH}"

    def check(self) -> None:
        try:
            self.poll()
        except NotOnThisCloud:
            raise
        except MetadataError as exc:
            raise NotOnThisCloud(str(exc)) from None

    def streams(self) -> list[Callable[[], list[Notice]]]:
        return [self.poll]

    def poll(self) -> list[Notice]:
        reply = self._send("GET")
        if reply.status_code != 200:
            raise MetadataError(f"Azure scheduledevents: HTTP {reply.status_code}")
        return parse_document(reply.content)

    def acknowledge(self, notice: Notice) -> None:
        """Tell Azure the VM is ready for the event: it may start at once."""
        reply = self._send("POST", {"StartRequests": [{"EventId": notice.key}]})
        if not 200 <= reply.status_code < 300:
            raise MetadataError(f"Azure acknowledgement of {notice.key}: HTTP {reply.status_code}")

    def _send(self, method: str, body: object = None) -> httpx.Response:
        try:
            return self.client.request(
                method,
                self.url,
                params={"api-version": API_VERSION},
                headers={"Metadata": "true"},
                json=body,
            )
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise NotOnThisCloud(
                f"no Azure metadata service at {self.url}: {one_line(exc)}"
            ) from None
        except httpx.HTTPError as exc:
            raise MetadataError(f"Azure scheduledevents: {one_line(exc)}") from None
