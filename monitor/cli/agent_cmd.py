"""`slamon agent`: read this box's GPUs and push them to slamon as heartbeats; with
``--metadata``, also print the box's interruption notices the moment its provider gives them and
push each to slamon at once (``POST /api/v1/events/notices/{target}``)."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from types import FrameType
from typing import Any

import click

from monitor.config.durations import parse_duration


def _duration(value: str) -> float:
    try:
        seconds = parse_duration(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    if seconds < 0.1:
        raise click.BadParameter("at least 0.1 s")
    return seconds


@click.command()
@click.option("--url", required=True, help="slamon's API, e.g. http://slamon.internal:8080")
@click.option("--target", required=True, help="This box's target (kind heartbeat, with gpus).")
@click.option(
    "--token",
    envvar="SLAMON_AGENT_TOKEN",
    help="The target's heartbeat token (or SLAMON_AGENT_TOKEN).",
)
@click.option("--interval", default="15s", show_default=True, help="Between readings.")
@click.option(
    "--source",
    type=click.Choice(["auto", "nvml", "nvidia-smi"]),
    default="auto",
    show_default=True,
    help="auto: NVML, else nvidia-smi.",
)
@click.option("--nvidia-smi", "nvidia_smi", default="nvidia-smi", help="nvidia-smi to run.")
@click.option(
    "--buffer",
    "capacity",
    type=click.IntRange(1, 100_000),
    default=1000,
    show_default=True,
    help="Readings kept while slamon cannot be reached (the oldest dropped beyond).",
)
@click.option("--once", is_flag=True, help="Push one reading; exit 0 when slamon accepts it.")
@click.option(
    "--metadata",
    type=click.Choice(["auto", "aws", "gcp", "azure", "none"]),
    default=None,
    help="Watch this box's metadata service; print each interruption notice and push it to "
    "slamon at once. auto: the cloud whose service answers; none (the default): do not watch.",
)
@click.option(
    "--metadata-url",
    default=None,
    help="The metadata service's base URL (default: the cloud's own, e.g. http://169.254.169.254).",
)
@click.option(
    "--acknowledge",
    is_flag=True,
    help="Azure: acknowledge each scheduled event once printed, so it may start early "
    "(slamon stores it as accepted maintenance).",
)
def agent(
    url: str,
    target: str,
    token: str | None,
    interval: str,
    source: str,
    nvidia_smi: str,
    capacity: int,
    once: bool,
    metadata: str | None,
    metadata_url: str | None,
    acknowledge: bool,
) -> None:
    """Read this box's GPUs every interval and push them to slamon."""
    stop = threading.Event()

    def stop_on(signum: int, frame: FrameType | None) -> None:
        stop.set()

    # first: a stop asked for while NVML or nvidia-smi is still being opened is honoured too
    signal.signal(signal.SIGTERM, stop_on)
    signal.signal(signal.SIGINT, stop_on)

    import httpx

    from monitor.agent.model import AgentError
    from monitor.agent.push import Outbox, Pusher
    from monitor.agent.run import Agent, open_reader

    interval_s = _duration(interval)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    reader = open_reader(source, nvidia_smi)
    with (
        httpx.Client() as client,
        httpx.Client(timeout=2.0) as metadata_client,
        httpx.Client() as notice_client,
    ):
        pusher = Pusher(url, target, token, client, Outbox(capacity))
        runner = Agent(reader, pusher, interval_s)
        notices = notice_pusher = None
        notices_problem = None
        if metadata not in (None, "none"):
            from monitor.agent import notices as agent_notices
            from monitor.agent.notice_push import NoticePusher

            box = agent_notices.open_source(metadata, metadata_client, metadata_url)
            notice_pusher = NoticePusher(url, target, token, notice_client)
            if once:
                notices_problem = _push_notices_now(box, notice_pusher)
            else:
                notice_pusher.start()
                notices = agent_notices.watch(box, _echo, acknowledge, push=notice_pusher.push)
                click.echo(
                    f"slamon agent: watching {box.cloud} interruption notices "
                    f"-> {notice_pusher.endpoint}",
                    err=True,
                )
        if once:
            flushed = runner.once()
            reader.close()
            problem = flushed.problem or flushed.refused
            if problem is None and flushed.sent == 0:
                problem = "slamon did not accept the reading"
            if problem is not None or notices_problem is not None:
                raise AgentError("; ".join(p for p in (notices_problem, problem) if p))
            click.echo(f"pushed one reading ({reader.source}) to {pusher.endpoint}")
            return
        click.echo(
            f"slamon agent: {reader.source} every {interval_s:g} s -> {pusher.endpoint}", err=True
        )
        runner.run(stop)
        if notices is not None:
            notices.close()
        if notice_pusher is not None:
            notice_pusher.close()


def _echo(text: str) -> None:
    click.echo(text)
    sys.stdout.flush()  # at once, not when a pipe's buffer fills


def _push_notices_now(box: Any, notice_pusher: Any) -> str | None:
    """``--once``: print and push what the metadata service says now, each notice tried once;
    why one was not pushed, or None."""
    from datetime import UTC, datetime

    from monitor.agent.model import AgentError
    from monitor.agent.notices import notice_line
    from monitor.interruptions import MetadataError

    try:
        polled = box.poll()
    except MetadataError as exc:
        raise AgentError(f"--metadata {box.cloud}: {exc}") from None
    now = datetime.now(UTC)
    for notice in polled:
        _echo(notice_line(notice, now))
        notice_pusher.push(notice)
    if not polled:
        click.echo(f"no interruption notice from {box.cloud}'s metadata service", err=True)
        return None
    flushed = notice_pusher.flush()
    if flushed.problem is not None or flushed.refused is not None:
        return f"interruption notice not pushed: {flushed.problem or flushed.refused}"
    click.echo(f"pushed {flushed.sent} interruption notice(s) to {notice_pusher.endpoint}")
    return None
