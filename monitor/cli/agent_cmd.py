"""`slamon agent`: read this box's GPUs and push them to slamon as heartbeats."""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType

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
def agent(
    url: str,
    target: str,
    token: str | None,
    interval: str,
    source: str,
    nvidia_smi: str,
    capacity: int,
    once: bool,
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
    with httpx.Client() as client:
        pusher = Pusher(url, target, token, client, Outbox(capacity))
        runner = Agent(reader, pusher, interval_s)
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
