"""`slamon events poll` and `slamon events list`: what the providers told the account, read now
from the configured account event sources, or as stored."""

from __future__ import annotations

import json
from typing import Any

import click

from monitor.account.model import PROVIDERS


@click.group()
def events() -> None:
    """The providers' account events: retirements, maintenance, notices, issues."""


@events.command("poll")
@click.option("--source", "name", help="Only this account event source.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def poll_now(name: str | None, as_json: bool) -> None:
    """Poll the account event sources now, store what they list, and print one line per event
    with what storing it did (new, updated, unchanged, stale). Exits 1 when a poll failed (it
    stored nothing, and its checkpoint stays where it was)."""
    from monitor.errors import ConfigError
    from monitor.fleet.account_poll import poll
    from monitor.history.account_events import events as stored_events
    from workers.runtime import runtime

    rt = runtime()
    _sync_targets(rt)  # the events are scoped to the targets the config names now
    sources = rt.config.account_events
    if name is not None:
        sources = [s for s in sources if s.name == name]
        if not sources:
            known = ", ".join(s.name for s in rt.config.account_events) or "none configured"
            raise ConfigError(f"no account event source named {name!r} (sources: {known})")
    if not sources:
        raise ConfigError("no account event sources: add an `account_events:` list to the config")
    failed = 0
    for source in sources:
        outcome = poll(rt.sessions, source)
        if not outcome.ok:
            failed += 1
            click.echo(f"error: account events {source.name}: {outcome.error}", err=True)
            continue
        done = {item.id: item.outcome for item in outcome.recorded}
        with rt.sessions() as session:
            views = [v for v in stored_events(session) if v.id in done]
        for view in views:
            record = {"source": source.name, "outcome": done[view.id], **_record(view)}
            click.echo(json.dumps(record) if as_json else _line(record))
        if not as_json:
            counts = ", ".join(f"{n} {what}" for what, n in sorted(outcome.counts().items()))
            click.echo(f"{source.name}: {len(views)} events listed; {counts or 'none'}", err=True)
    if failed:
        raise SystemExit(1)


@events.command("list")
@click.option("--target", help="Only the events about this target.")
@click.option("--all", "show_all", is_flag=True, help="Closed events too.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_stored(target: str | None, show_all: bool, as_json: bool) -> None:
    """The stored account events, newest start first: upcoming and open ones (``--all``: closed
    ones too)."""
    from monitor.history.account_events import events as stored_events
    from workers.runtime import runtime

    statuses = () if show_all else ("upcoming", "open")
    rt = runtime()
    _sync_targets(rt)
    with rt.sessions() as session:
        views = stored_events(session, target=target, statuses=statuses)
    for view in views:
        record = _record(view)
        click.echo(json.dumps(record) if as_json else _line(record))
    if not as_json and not views:
        click.echo("no account events" + ("" if show_all else " upcoming or open"), err=True)


def _sync_targets(rt: Any) -> None:
    from monitor.db.base import utcnow
    from monitor.targets import sync_config_targets

    with rt.transaction() as session:
        sync_config_targets(session, rt.config, utcnow())


def _record(view: Any) -> dict[str, Any]:
    """One stored event as JSON: the same fields as ``GET /api/v1/events``."""

    def iso(moment: Any) -> str | None:
        return moment.isoformat() if moment is not None else None

    return {
        "provider": view.provider,
        "key": view.key,
        "kind": view.kind,
        "status": view.status,
        "starts_at": iso(view.starts_at),
        "ends_at": iso(view.ends_at),
        "region": view.region,
        "title": view.title,
        "targets": list(view.targets),
        "via": view.via,
    }


PROVIDER_WIDTH = max(map(len, PROVIDERS))  # prometheus: the team's own alerts


def _line(r: dict[str, Any]) -> str:
    when = r["starts_at"] or "-"
    targets = ", ".join(r["targets"]) or "-"
    outcome = f"{r['outcome']:<9} " if "outcome" in r else ""
    return (
        f"{outcome}{r['provider']:<{PROVIDER_WIDTH}} {r['kind']:<21} {r['status']:<8} {when:<25} "
        f"{targets}  {r['title']}"
    )
