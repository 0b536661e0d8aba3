"""What the REST kinds (Azure, GCP) share: one GET of a JSON page, every failure one line.

A refusal names the HTTP status and the error the provider put in its body (Azure's and Google's
both answer ``{"error": {"code": …, "message": …}}``); a network failure names its cause; a body
that is not a JSON object, or one over the size limit, says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from monitor.errors import EventPollFailed

MAX_BYTES = 20 * 1024 * 1024  # a page of events is far smaller


def get_page(client: Any, url: str, headers: Mapping[str, str], where: str) -> dict[str, Any]:
    """The JSON object ``url`` answers with 200 (``client`` an ``httpx.Client``); raises
    :class:`EventPollFailed` with one line naming ``where`` otherwise."""
    import httpx  # loaded by a process that polls

    try:
        response = client.get(url, headers=dict(headers))
    except httpx.TimeoutException:
        raise failed(where, "timed out") from None
    except httpx.HTTPError as exc:
        raise failed(where, f"unreachable: {type(exc).__name__}: {exc}") from None
    if response.status_code != 200:
        raise failed(where, f"HTTP {response.status_code}{said(response.content)}")
    if len(response.content) > MAX_BYTES:
        raise failed(where, f"answered over {MAX_BYTES} bytes")
    try:
        page = json.loads(response.content)
    except ValueError:
        raise failed(where, "answered a body that is not JSON") from None
    if not isinstance(page, dict):
        raise failed(where, "answered JSON that is not an object")
    return page


def said(body: bytes) -> str:
    """``: <code>: <message>`` from a provider's error body, or nothing when it has none."""
    try:
        error = json.loads(body).get("error") or {}
    except (ValueError, AttributeError):
        return ""
    if not isinstance(error, Mapping):
        return f": {error}"
    words = [str(error[name]) for name in ("status", "code") if error.get(name)][:1]
    if error.get("message"):
        words.append(str(error["message"]))
    return f": {': '.join(words)}" if words else ""


def failed(where: str, what: str) -> EventPollFailed:
    """One line, at most 300 characters, whatever the provider sent."""
    return EventPollFailed(" ".join(f"{where}: {what}".split())[:300])
