"""`slamon probe once`."""

from __future__ import annotations

import json
from typing import Any

import click


@click.group()
def probe() -> None:
    """Probe the configured and registered targets."""


@probe.command("once")
@click.option("--target", "name", help="Only this target.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def once(name: str | None, as_json: bool) -> None:
    """Probe now (with quick confirmation re-probes), store the results, print them."""
    from monitor.db.base import utcnow
    from monitor.probes.round import Prober
    from monitor.probes.schedule import live_probe_target_ids
    from monitor.targets import sync_config_targets
    from workers.runtime import runtime

    rt = runtime()
    with rt.transaction() as session:
        sync_config_targets(session, rt.config, utcnow())
        ids = live_probe_target_ids(session, name)
    report = Prober(rt.sessions, rt.settings.vantage, rt.config.probes).round(ids)
    for result in report.results:
        record = _record(
            result, rt.settings.vantage, report.states.get(result.target_id, "unknown")
        )
        click.echo(json.dumps(record) if as_json else _line(record))


def _record(result: Any, vantage: str, state: str) -> dict[str, Any]:
    record = {
        "target": result.target,
        "at": result.at.isoformat().replace("+00:00", "Z"),
        "vantage": vantage,
        "ok": result.ok,
        "state": state,
        "latency_ms": None if result.latency_ms is None else round(result.latency_ms, 2),
        "status_code": result.status_code,
        "error": result.error,
    }
    if result.gpus_seen is not None or result.usable is not None:
        record["gpus_seen"] = result.gpus_seen
        record["usable"] = result.usable
    return record


def _line(r: dict[str, Any]) -> str:
    latency = "-" if r["latency_ms"] is None else f"{r['latency_ms']:.1f}ms"
    verdict = "ok" if r["ok"] else ("unknown" if r["ok"] is None else "FAIL")
    tail = f"  {r['error']}" if r["error"] else ""
    return f"{r['target']:<24} {verdict:<7} {r['state']:<8} {latency:>9}{tail}"
