"""AWS: the instance metadata service (IMDSv2) of an EC2 instance.

A session token first (``PUT /latest/api/token`` with its TTL), then each read carries it; a 401
means the token expired, and one new token is fetched before the read is retried once. Three
documents say an interruption is coming: ``spot/instance-action`` (404 until a spot instance is
to be reclaimed; then about two minutes' notice), ``events/recommendations/rebalance`` (an
elevated risk of interruption, no deadline) and ``events/maintenance/scheduled`` (a list of
events with a window; completed and canceled ones stay listed and are skipped here).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from monitor.interruptions.model import (
    MetadataError,
    Notice,
    NotOnThisCloud,
    http_time,
    iso_time,
    one_line,
)

BASE_URL = "http://169.254.169.254"
TOKEN_TTL_S = 21600  # six hours, the most IMDS allows
INSTANCE_ACTION = "/latest/meta-data/spot/instance-action"
REBALANCE = "/latest/meta-data/events/recommendations/rebalance"
SCHEDULED = "/latest/meta-data/events/maintenance/scheduled"
ACTIONS = {"terminate": "preemption", "stop": "stop", "hibernate": "hibernate"}
EVENT_CODES = {
    "instance-reboot": "reboot",
    "system-reboot": "reboot",
    "system-maintenance": "scheduled_maintenance",
    "instance-stop": "stop",
    "instance-retirement": "stop",
}
DONE_STATES = ("completed", "canceled")


def _json(raw: bytes, what: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        raise MetadataError(f"{what}: not JSON: {raw[:80]!r}") from None


def parse_instance_action(raw: bytes) -> Notice:
    """``{"action": "terminate", "time": "2017-09-18T08:22:00Z"}`` as a notice."""
    body = _json(raw, "spot/instance-action")
    if not isinstance(body, dict) or body.get("action") not in ACTIONS:
        raise MetadataError(f"spot/instance-action: no known action in {raw[:80]!r}")
    action, deadline = body["action"], iso_time(body.get("time"), "spot/instance-action time")
    key = f"{deadline.strftime('%Y-%m-%dT%H:%M:%SZ')} {action}"
    return Notice("aws", ACTIONS[action], deadline, key, f"spot instance-action {action}")


def parse_rebalance(raw: bytes) -> Notice:
    """``{"noticeTime": "2020-10-27T08:22:00Z"}``: a rebalance recommendation (no deadline)."""
    body = _json(raw, "rebalance recommendation")
    if not isinstance(body, dict):
        raise MetadataError(f"rebalance recommendation: not an object: {raw[:80]!r}")
    at = iso_time(body.get("noticeTime"), "rebalance noticeTime")
    detail = f"rebalance recommendation since {at.strftime('%Y-%m-%dT%H:%M:%SZ')}"
    return Notice("aws", "rebalance", None, body["noticeTime"], detail)


def parse_scheduled(raw: bytes) -> list[Notice]:
    """The scheduled events still to come or under way (``NotBefore`` is the deadline)."""
    body = _json(raw, "events/maintenance/scheduled")
    if not isinstance(body, list) or not all(isinstance(e, dict) for e in body):
        raise MetadataError(f"events/maintenance/scheduled: not a list of events: {raw[:80]!r}")
    notices = []
    for event in body:
        if str(event.get("State", "")).lower() in DONE_STATES:
            continue
        code, key = event.get("Code"), event.get("EventId")
        if code not in EVENT_CODES or not isinstance(key, str):
            raise MetadataError(f"scheduled event: unknown Code {code!r} or no EventId")
        deadline = http_time(event.get("NotBefore"), f"scheduled event {key} NotBefore")
        detail = str(event.get("Description") or code)
        notices.append(Notice("aws", EVENT_CODES[code], deadline, key, detail))
    return notices


class AwsMetadata:
    """One poll of the three documents; ``pause_s`` between polls when watching."""

    cloud = "aws"
    pause_s = 1.0

    def __init__(self, client: httpx.Client, base_url: str | None = None) -> None:
        self.client = client
        self.base_url = (base_url or BASE_URL).rstrip("/")
        self.token: str | None = None

    def check(self) -> None:
        """Raise ``NotOnThisCloud`` unless an IMDSv2 answers with a token."""
        self._new_token()

    def streams(self) -> list[Any]:
        return [self.poll]

    def poll(self) -> list[Notice]:
        """Every notice the instance has now; ``MetadataError`` when it cannot be read."""
        notices = []
        action = self._get(INSTANCE_ACTION)
        if action is not None:
            notices.append(parse_instance_action(action))
        rebalance = self._get(REBALANCE)
        if rebalance is not None:
            notices.append(parse_rebalance(rebalance))
        scheduled = self._get(SCHEDULED)
        if scheduled is not None and scheduled.strip():
            notices.extend(parse_scheduled(scheduled))
        return notices

    def acknowledge(self, notice: Notice) -> None:
        """AWS takes no acknowledgement."""

    def _new_token(self) -> str:
        url = f"{self.base_url}/latest/api/token"
        headers = {"X-aws-ec2-metadata-token-ttl-seconds": str(TOKEN_TTL_S)}
        try:
            reply = self.client.put(url, headers=headers)
        except httpx.HTTPError as exc:
            raise NotOnThisCloud(f"no AWS metadata service at {url}: {one_line(exc)}") from None
        if reply.status_code != 200 or not reply.text.strip():
            raise NotOnThisCloud(f"no AWS metadata service at {url}: HTTP {reply.status_code}")
        self.token = reply.text.strip()
        return self.token

    def _get(self, path: str) -> bytes | None:
        """The document's body, or None where it is absent (404)."""
        token = self.token or self._new_token()
        reply = self._read(path, token)
        if reply.status_code == 401:  # the token expired: one new one, one more try
            reply = self._read(path, self._new_token())
        if reply.status_code == 404:
            return None
        if reply.status_code != 200:
            raise MetadataError(f"AWS metadata {path}: HTTP {reply.status_code}")
        return reply.content

    def _read(self, path: str, token: str) -> httpx.Response:
        try:
            return self.client.get(
                f"{self.base_url}{path}", headers={"X-aws-ec2-metadata-token": token}
            )
        except httpx.HTTPError as exc:
            raise MetadataError(f"AWS metadata {path}: {one_line(exc)}") from None
