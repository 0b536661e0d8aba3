"""`slamon agent`: read this box's GPUs and push them to slamon as heartbeats; with
``--metadata``, also print the box's interruption notices the moment its provider gives them."""

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
    type=click.Choice(["auto", "aws", "gcp", "azure"]),
    default=None,
    help="Watch this box's metadata service and print each interruption notice at once "
    "(not pushed to slamon yet). auto: the cloud whose service answers.",
)
@click.option(
    "--metadata-url",
    default=None,
    help="The metadata service's base URL (default: the cloud's own, e.g. http://169.254.169.254).",
)
@click.option(
    "--acknowledge",
    is_flag=True,
    help="Azure: acknowledge each scheduled event once printed, so it may start early.",
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
    with httpx.Client() as client, httpx.Client(timeout=2.0) as metadata_client:
        pusher = Pusher(url, target, token, client, Outbox(capacity))
        runner = Agent(reader, pusher, interval_s)
        notices = None
        if metadata is not None:
            from monitor.agent import notices as agent_notices

            box = agent_notices.open_source(metadata, metadata_client, metadata_url)
            if once:
                _print_notices_now(box)
            else:
                notices = agent_notices.watch(box, _echo, acknowledge)
                click.echo(f"slamon agent: watching {box.cloud} interruption notices", err=True)
        if once:
            flushed = runner.once()
            reader.close()
            problem = flushed.problem or flushed.refused
            if problem is not None or flushed.sent == 0:
                raise AgentError(problem or "slamon did not accept the reading")
            click.echo(f"pushed one reading ({reader.source}) to {pusher.endpoint}")
            return
        click.echo(
            f"slamon agent: {reader.source} every {interval_s:g} s -> {pusher.endpoint}", err=True
        )
        runner.run(stop)
        if notices is not None:
            notices.close()


def _echo(text: str) -> None:
    click.echo(text)
    sys.stdout.flush()  # at once, not when a pipe's buffer fills


def _print_notices_now(box: Any) -> None:
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
    if not polled:
        click.echo(f"no interruption notice from {box.cloud}'s metadata service", err=True)
