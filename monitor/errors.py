"""slamon's error hierarchy.

Transient errors are worth retrying with backoff; permanent ones are not (retrying a document we
cannot read gives the same answer), they are reported and alerted on instead::

    SlamonError
    ├── ConfigError              bad settings or YAML config; the message names the path
    ├── MonthNotStarted          a report asked for a month that has not begun (API: 404)
    ├── TransientError           retry with backoff (Celery ``autoretry_for`` names only this)
    │   ├── FeedUnavailable      timeout, connection error, HTTP 5xx/429 from a status feed
    │   ├── DeliveryFailed       a webhook receiver is down or answered 5xx/429
    │   └── ServiceUnavailable   our own database or broker does not answer
    └── PermanentError           do not retry
        ├── FeedParseError       a feed document we cannot read at all
        ├── FeedRejected         the feed answered 4xx (other than 429): wrong URL or forbidden
        └── FeedTooLarge         a feed response over the size limit
"""

from __future__ import annotations


class SlamonError(Exception):
    """Base of every error slamon raises on purpose."""


class ConfigError(SlamonError):
    """Settings or the YAML config are invalid. ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


class MonthNotStarted(SlamonError):
    """A report or SLA for a month that has not begun: there is nothing to report yet."""

    def __init__(self, month: str) -> None:
        self.month = month
        super().__init__(f"{month} has not started yet")


class TransientError(SlamonError):
    """Something outside us failed in a way that may heal: retry with backoff."""


class FeedUnavailable(TransientError):
    """A status feed could not be fetched (timeout, connection error, 5xx, 429)."""


class DeliveryFailed(TransientError):
    """A notification could not be delivered; the receiver may recover."""


class ServiceUnavailable(TransientError):
    """The database or the broker does not answer."""


class PermanentError(SlamonError):
    """Retrying gives the same answer; report it and move on."""


class FeedParseError(PermanentError):
    """A feed document could not be read at all. Names the feed kind and the reason."""

    def __init__(self, kind: str, reason: str) -> None:
        self.kind = kind
        self.reason = reason
        super().__init__(f"{kind} feed: {reason}")


class FeedRejected(PermanentError):
    """The feed URL answered a 4xx other than 429; retrying will not help until it is fixed."""


class FeedTooLarge(PermanentError):
    """A feed response exceeded the configured byte limit."""
