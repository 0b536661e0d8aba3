"""Is the Celery broker reachable? Asked at start-up and by /healthz."""

from __future__ import annotations

import os

from kombu import Connection  # type: ignore[attr-defined]

from monitor.errors import ServiceUnavailable
from monitor.settings import Settings


def check_broker(settings: Settings, timeout: float = 3.0) -> None:
    """Raise ``ServiceUnavailable`` with a readable reason when the broker does not answer."""
    if settings.uses_filesystem_broker:
        folder = settings.broker_folder
        if folder.exists() and not os.access(folder, os.W_OK):
            raise ServiceUnavailable(f"broker folder {folder} is not writable")
        return
    # Redis takes its timeouts from the transport options, not connect_timeout: without them a
    # broker that accepts the connection but never answers (a frozen Redis) hangs this for ever
    waits = {"socket_connect_timeout": timeout, "socket_timeout": timeout}
    try:
        with Connection(  # type: ignore[no-untyped-call]
            settings.broker_url, connect_timeout=timeout, transport_options=waits
        ) as connection:
            connection.ensure_connection(max_retries=1, timeout=timeout)
    except Exception as exc:  # kombu raises transport-specific errors
        raise ServiceUnavailable(
            f"broker {_redact(settings.broker_url)} unreachable: {exc}"
        ) from None


def _redact(url: str) -> str:
    """The URL without its password, for messages."""
    scheme, sep, rest = url.partition("://")
    if "@" not in rest:
        return url
    creds, _, host = rest.rpartition("@")
    user = creds.split(":", 1)[0]
    return f"{scheme}{sep}{user}:***@{host}" if user else f"{scheme}{sep}***@{host}"
