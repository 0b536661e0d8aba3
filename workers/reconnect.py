"""A broker connection that reconnects within half a second of the broker coming back.

kombu retries a lost connection after 2 s, then 4, 6… up to 30 s between tries, and Celery's
consumer takes those defaults: a Redis restart of four seconds cost six before the next probe.
slamon promises that probing resumes within one interval of the broker being back, so its
connections retry every half second, at most every two (a broker down for long is polled
gently, and each failed try is one cheap TCP connect).

Closing a lost connection must not end the worker either. When Redis goes away while the
consumer holds unacknowledged messages (probe shards waiting for their slots), Celery 5.7
closes the broken connection, the channel tries to put those messages back on their queues,
and kombu's Redis transport, its client already let go, raises ``AttributeError`` ("'NoneType'
object has no attribute 'hostname'"), which no one catches: "Unrecoverable error" and the
worker exits. The channel is then closed as if the broker had refused it: the messages stay in
Redis' unacked set and come back after the visibility timeout (a shard has expired by then;
the next round probes its targets)."""

from __future__ import annotations

from typing import Any

from celery.app.amqp import AMQP
from kombu import Connection  # type: ignore[attr-defined]

RETRY_FIRST_S = 0.5
RETRY_STEP_S = 0.5
RETRY_MAX_S = 2.0


class QuickReconnect(Connection):
    def maybe_close_channel(self, channel: Any) -> None:
        try:
            channel.close()
        except (*self.connection_errors, *self.channel_errors, AttributeError):
            pass  # the connection is gone: what the channel could not put back waits in Redis

    def _ensure_connection(  # type: ignore[override]
        self,
        errback: Any = None,
        max_retries: int | None = None,
        interval_start: float = RETRY_FIRST_S,
        interval_step: float = RETRY_STEP_S,
        interval_max: float = RETRY_MAX_S,
        **kwargs: Any,
    ) -> Any:
        return super()._ensure_connection(  # type: ignore[no-untyped-call]
            errback, max_retries, interval_start, interval_step, interval_max, **kwargs
        )


class SlamonAMQP(AMQP):  # type: ignore[misc]
    """Celery's AMQP helper with :class:`QuickReconnect` connections (``Celery(amqp=…)``)."""

    Connection = QuickReconnect
