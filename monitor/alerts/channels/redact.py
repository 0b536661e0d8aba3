"""Keeping channel secrets out of logs, errors and API output.

Slack, Discord and Teams webhook URLs are credentials: whoever holds one can post to the channel.
Their secret sits in the path (Slack ``/services/T…/B…/TOKEN``, Discord ``/api/webhooks/ID/TOKEN``),
or in the query (Teams workflow URLs sign with ``?…&sig=…``). apprise URLs may carry a token in
the host part itself (``tgram://BOTTOKEN/CHAT``). So only an http(s) URL's scheme, host and port
are ever shown, and nothing but the scheme of any other URL.

httpx logs every request's full URL at INFO (``HTTP Request: POST https://hooks.slack.com/…``):
importing this module puts :class:`RedactUrlsInLogs` on the ``httpx`` logger, so no process that
can send a notification writes a channel URL to its log, whatever the log level.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit

import httpx

HIDDEN = "***"
MIN_FRAGMENT = 8  # shorter URL pieces ("api", "v2") are words, not credentials
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*")
_SEPARATORS = re.compile(r"[/@:?&=#;,]")


def redact_url(url: str) -> str:
    """``scheme://host[:port]/***`` for an http(s) URL (``/`` when nothing follows the host),
    ``scheme://***`` for any other; ``***`` when it cannot be read. Never raises."""
    try:
        parts = urlsplit(url.strip())
        scheme = parts.scheme.lower()
        if not _SCHEME.fullmatch(scheme):
            return HIDDEN
        if scheme not in ("http", "https") or not parts.hostname:
            return f"{scheme}://{HIDDEN}"
        port = parts.port
    except ValueError:  # a port that is not a number, brackets that do not close
        return HIDDEN
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    netloc = host if port is None else f"{host}:{port}"
    hidden = parts.path not in ("", "/") or parts.query or parts.fragment
    return f"{scheme}://{netloc}/{HIDDEN if hidden else ''}"


def url_secrets(url: str) -> tuple[str, ...]:
    """The pieces of ``url`` that :func:`redact_url` hides and that are long enough to be a
    credential: the URL itself, and each path segment, query value, userinfo or (for schemes
    other than http(s)) host part of at least ``MIN_FRAGMENT`` characters, as written and
    percent-decoded."""
    shown = redact_url(url)
    _, sep, rest = url.partition("://")
    if not sep:
        rest = url
    pieces = (url, rest, *_SEPARATORS.split(rest))
    pieces += tuple(unquote(p) for p in pieces)  # as a receiver may echo it back
    return tuple(dict.fromkeys(p for p in pieces if len(p) >= MIN_FRAGMENT and p not in shown))


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every non-empty secret replaced by ``***``, longest first (so a secret that
    contains another is hidden whole)."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, HIDDEN)
    return text


class RedactUrlsInLogs(logging.Filter):
    """Rewrites the URL arguments of a log record to their :func:`redact_url` form."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_redacted_if_url(arg) for arg in record.args)
        if "://" in str(record.msg):
            record.msg = " ".join(str(_redacted_if_url(w)) for w in str(record.msg).split(" "))
        return True


def _redacted_if_url(value: object) -> object:
    if isinstance(value, httpx.URL) or (isinstance(value, str) and "://" in value):
        return redact_url(str(value))
    return value


def redact_http_logs() -> None:
    """Put :class:`RedactUrlsInLogs` on the ``httpx`` logger (once)."""
    logger = logging.getLogger("httpx")
    if not any(isinstance(f, RedactUrlsInLogs) for f in logger.filters):
        logger.addFilter(RedactUrlsInLogs())


# On import, deliberately: every sender imports this module before its first request, and a
# filter installed by each entry point could be forgotten by the next one.
redact_http_logs()
