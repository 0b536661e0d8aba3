"""slamon's error hierarchy.

Transient errors may heal by themselves; permanent ones will not (retrying a document we cannot
read gives the same answer). A feed poll that fails transiently is retried by its task
(``slamon.feeds.poll``: three times, with exponential backoff), then the next scheduled poll is
the retry; a permanent failure waits for the next scheduled poll. Either is recorded on the feed
(a ``feed failing`` console line, and a ``feed_stale`` alert once the feed has not been read for
too long). Deliveries are retried from the outbox with backoff (monitor/alerts/delivery.py), by
the receiver's answer, not by exception::

    SlamonError
    ├── ConfigError              bad settings or YAML config; the message names the path
    ├── MonthNotStarted          a report asked for a month that has not begun (API: 404)
    ├── AgentError               `slamon agent`: no GPU source, or a push refused (agent/model.py)
    ├── TransientError           may heal: reported, and tried again on the next schedule
    │   ├── FeedUnavailable      timeout, connection error, HTTP 5xx/429 from a status feed
    │   ├── ServiceUnavailable   our own database or broker does not answer
    │   ├── SweepFailed          a discovery source's API did not answer, refused us, or said
    │   │                        something we cannot read: the sweep retires nothing
    │   └── EventPollFailed      an account event source could not be read: its checkpoint
    │                            stays where it was
    └── PermanentError           will not heal until someone changes something
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
    """Something outside us failed in a way that may heal."""


class FeedUnavailable(TransientError):
    """A status feed could not be fetched (timeout, connection error, 5xx, 429)."""


class ServiceUnavailable(TransientError):
    """The database or the broker does not answer."""


class SweepFailed(TransientError):
    """A discovery sweep could not list its source's instances (unreachable, unauthorized,
    throttled, a malformed answer). Nothing is retired on a failed sweep; the next scheduled
    sweep is the retry. The message is one line naming the source's API and what it said."""


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


class EventPollFailed(TransientError):
    """An account event source could not be read (unreachable, unauthorized, throttled, not
    subscribed, a malformed answer). The checkpoint does not advance; the next poll is the retry.
    The message is one line naming the source and what its provider said."""
