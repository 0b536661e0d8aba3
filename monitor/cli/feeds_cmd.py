"""`slamon feeds list | parse | poll`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from monitor.cli.report_cmd import MONTH


@click.group()
def feeds() -> None:
    """Provider status feeds: the catalog, parsing a document, polling now."""


@feeds.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_feeds(as_json: bool) -> None:
    """The provider catalog merged with the config, one line per feed."""
    from monitor.config import load_config
    from monitor.feeds.catalog import providers_for
    from monitor.settings import Settings

    for spec in providers_for(load_config(Settings().config, missing_ok=True)):
        rows: list[tuple[str | None, str | None]] = [(f.kind, f.url) for f in spec.feeds]
        rows = rows or [(None, None)]
        for kind, url in rows:
            record = {
                "provider": spec.slug,
                "name": spec.name,
                "kind": kind,
                "url": url,
                "source": spec.source,
                "regions": list(spec.regions),
                "notes": spec.notes,
            }
            if as_json:
                click.echo(json.dumps(record))
            else:
                click.echo(f"{spec.slug:<13} {kind or '-':<12} {url or spec.notes}")


@feeds.command("parse")
@click.option("--kind", required=True, help="Feed kind, e.g. statuspage, gcp, aws-rss.")
@click.option("--provider", help="Provider slug to put on the incidents.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
def parse(kind: str, provider: str | None, as_json: bool, file: Path) -> None:
    """Print the normalized incidents in FILE (a saved feed document; - reads stdin)."""
    from monitor.errors import SlamonError
    from monitor.feeds.kinds import feed_kind

    parser = feed_kind(kind).parse
    try:
        raw = sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()
    except OSError as exc:
        raise SlamonError(f"{file}: {exc.strerror}") from None
    for incident in parser(raw, provider):
        record = incident.to_json()
        click.echo(json.dumps(record, ensure_ascii=False) if as_json else _line(record))


def _line(record: dict[str, Any]) -> str:
    start = (record["started_at"] or "?")[:16]
    regions = ",".join(record["regions"]) or "-"
    return (
        f"{start:<16} {record['status']:<13} {record['impact']:<11} {regions:<20} {record['title']}"
    )


@feeds.command("poll")
@click.option("--provider", help="Only this provider's feeds.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def poll(provider: str | None, as_json: bool) -> None:
    """Poll now, store, and print what changed (exit 1 when any feed failed)."""
    from monitor.errors import SlamonError
    from monitor.feeds.poll import poll_feed
    from monitor.feeds.service import feeds_to_poll, sync_catalog
    from workers.runtime import runtime

    rt = runtime()
    with rt.transaction() as session:
        sync_catalog(session, rt.config)
        feed_ids = feeds_to_poll(session, provider)
    if not feed_ids:
        raise SlamonError(f"no feeds to poll{f' for provider {provider!r}' if provider else ''}")
    failed = 0
    for feed_id in feed_ids:
        outcome = poll_feed(rt.sessions, rt.http, feed_id)
        failed += outcome.result == "failed"
        click.echo(json.dumps(outcome.to_json()) if as_json else _poll_line(outcome.to_json()))
    if failed:
        sys.exit(1)


def _poll_line(r: dict[str, Any]) -> str:
    head = f"{r['provider']:<13} {r['kind']:<12}"
    if r["result"] == "failed":
        return f"{head} failed: {r['error']}"
    if r["result"] != "stored":
        return f"{head} {r['result'].replace('_', ' ')}"
    return (
        f"{head} {r['incidents']} incidents: {r['new']} new, {r['changed']} changed, "
        f"{r['updates_added']} updates added, {r['closed']} closed"
    )


@feeds.command("stats")
@click.option("--month", required=True, help="YYYY-MM (UTC).")
@click.option("--relevant", is_flag=True, help="Only incidents touching your regions.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def stats(month: str, relevant: bool, as_json: bool) -> None:
    """Incident count and median/p90 time to acknowledge and resolve, per provider."""
    from monitor.errors import SlamonError
    from monitor.feeds.stats import response_stats
    from workers.runtime import runtime

    if not MONTH.fullmatch(month):
        raise SlamonError(f"--month must look like 2026-11, not {month!r}")
    with runtime().sessions() as session:
        rows = response_stats(session, month, relevant_only=relevant)
    for row in rows:
        record = row.to_json()
        click.echo(json.dumps(record) if as_json else _stats_line(record))


def _minutes(seconds: object) -> str:
    return "-" if seconds is None else f"{float(seconds) / 60:.0f}m"  # type: ignore[arg-type]


def _stats_line(r: dict[str, Any]) -> str:
    return (
        f"{r['provider']:<13} {r['incidents']:>3} incidents  TTA median "
        f"{_minutes(r['tta_median_s'])} p90 {_minutes(r['tta_p90_s'])}  TTR median "
        f"{_minutes(r['ttr_median_s'])} p90 {_minutes(r['ttr_p90_s'])}"
    )
