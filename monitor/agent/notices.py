"""`slamon agent --metadata`: the box's metadata service watched beside the GPU readings, each
interruption notice printed at once as a console event line (``interrupt notice``) and handed to
the notice pusher (``monitor/agent/notice_push.py``), which sends it to slamon at once: the
moment the provider says what is coming and by when, the console and slamon say it too.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import httpx

from monitor.agent.model import AgentError
from monitor.events.words import INTERRUPT_NOTICE, interrupt_notice_text, line
from monitor.interruptions import MetadataError, Notice, Source, Watch, find_source

CHOICES = ("auto", "aws", "gcp", "azure")


def notice_line(notice: Notice, now: datetime) -> str:
    """The console line of one notice: its time, the event word, the facts."""
    facts = interrupt_notice_text(
        notice.cloud,
        notice.kind,
        notice.deadline,
        notice.seconds_left(now),
        notice.detail,
        notice.key,
        now,
    )
    return f"{now:%Y-%m-%d %H:%M:%S}Z  {line(INTERRUPT_NOTICE, facts)}"


def open_source(cloud: str, client: httpx.Client, base_url: str | None = None) -> Source:
    """The metadata source, checked now: ``AgentError`` in one line when it does not answer
    (the option was asked for, so it is said at start, like a missing GPU source)."""
    try:
        return find_source(cloud, client, base_url)
    except MetadataError as exc:
        raise AgentError(f"--metadata {cloud}: {exc}") from None


def watch(
    source: Source,
    echo: Callable[[str], None],
    acknowledge: bool = False,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    push: Callable[[Notice, bool], None] | None = None,
) -> Watch:
    """Watch ``source`` in daemon threads: each notice, once, as it appears, is echoed as its
    line, acknowledged when asked (Azure), then handed to ``push`` with whether it was."""

    def heard(notice: Notice) -> None:
        echo(notice_line(notice, clock()))
        acknowledged = acknowledge and watching.ack(notice)
        if push is not None:
            push(notice, acknowledged)

    watching = Watch(heard, source.cloud, source=source)
    return watching.start()
