"""``http_sd``: Prometheus' HTTP service discovery. A GET of ``url`` answers the same list of
target groups a file_sd file holds (``application/json``, status 200); anything else fails the
sweep, which then retires nothing."""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import Field

from monitor.discovery.kind import DiscoveryKind, SourceOptions, SweepContext
from monitor.discovery.model import Instance
from monitor.discovery.prometheus_sd import DocumentError, instances
from monitor.errors import SweepFailed

MAX_BYTES = 50 * 1024 * 1024  # Prometheus' own http_sd limit is far smaller; 10,000 groups fit


class HttpSdOptions(SourceOptions):
    url: str = Field(pattern=r"^https?://")
    token: str | None = Field(default=None, repr=False)  # sent as a Bearer token


def list_instances(options: HttpSdOptions, context: SweepContext) -> Sequence[Instance]:
    import httpx  # loaded by a process that sweeps, not by every one that reads the config

    headers = {"Accept": "application/json", "User-Agent": "slamon-discovery"}
    if options.token:
        headers["Authorization"] = f"Bearer {options.token}"
    try:
        with httpx.Client(timeout=context.timeout_s, follow_redirects=True) as client:
            response = client.get(options.url, headers=headers)
    except httpx.HTTPError as exc:
        raise SweepFailed(f"http_sd: {options.url} unreachable: {exc!s}"[:300]) from None
    if response.status_code != 200:
        raise SweepFailed(f"http_sd: {options.url} answered HTTP {response.status_code}")
    if len(response.content) > MAX_BYTES:
        raise SweepFailed(f"http_sd: {options.url} answered over {MAX_BYTES} bytes")
    try:
        return instances(json.loads(response.content))
    except (ValueError, DocumentError) as exc:
        reason = str(exc).splitlines()[0]
        raise SweepFailed(f"http_sd: {options.url} answered a malformed document: {reason}") from (
            None
        )


KIND = DiscoveryKind(name="http_sd", options=HttpSdOptions, list_instances=list_instances)
