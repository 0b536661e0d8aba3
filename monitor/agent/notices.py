"""`slamon agent --metadata`: the box's metadata service watched beside the GPU readings, each
interruption notice printed at once as a console event line (``interrupt notice``).

Notices are not pushed to slamon yet: the API has no endpoint for them (a later part of issue 31
adds one), so this says on the console, the moment the provider does, what is coming and by when.
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
) -> Watch:
    """Watch ``source`` in daemon threads, echoing each notice's line once, as it appears."""
    return Watch(
        lambda notice: echo(notice_line(notice, clock())),
        source.cloud,
        source=source,
        acknowledge=acknowledge,
    ).start()
