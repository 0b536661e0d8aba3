"""`slamon discover once`: sweep the discovery sources now and say what each instance became."""

from __future__ import annotations

import json

import click


@click.group()
def discover() -> None:
    """Find instances in the clouds, Kubernetes and service-discovery files."""


@discover.command("once")
@click.option("--source", "name", help="Only this discovery source.")
@click.option("--dry-run", is_flag=True, help="Decide and print, but change nothing.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def once(name: str | None, dry_run: bool, as_json: bool) -> None:
    """Sweep now and print, one line per instance, what was added, updated, kept, retired or
    refused, and why. Exits 1 when a sweep failed (nothing was retired by it)."""
    from monitor.errors import ConfigError
    from monitor.fleet.sweep import sweep
    from workers.runtime import runtime

    rt = runtime()
    sources = rt.config.discovery
    if name is not None:
        sources = [s for s in sources if s.name == name]
        if not sources:
            known = ", ".join(s.name for s in rt.config.discovery) or "none configured"
            raise ConfigError(f"no discovery source named {name!r} (sources: {known})")
    if not sources:
        raise ConfigError("no discovery sources: add a `discovery:` list to the config")
    failed = 0
    for source in sources:
        outcome = sweep(rt.sessions, rt.config, source, dry_run=dry_run)
        if not outcome.ok:
            failed += 1
            click.echo(
                f"error: discovery {source.name}: {outcome.error} (nothing retired)", err=True
            )
            continue
        for step in outcome.steps:
            record = step.to_json(source.name)
            click.echo(json.dumps(record) if as_json else _line(record))
        if not as_json:
            counts = ", ".join(f"{n} {action}" for action, n in outcome.counts().items() if n)
            note = " (dry run: nothing changed)" if dry_run else ""
            click.echo(
                f"{source.name}: {outcome.instances} instances listed; {counts or 'no targets'}"
                f"{note}",
                err=True,
            )
    if failed:
        raise SystemExit(1)


def _line(r: dict[str, object]) -> str:
    return f"{r['action']:<8} {r['target']!s:<28} {r['external_id']!s:<22} {r['reason']}"
