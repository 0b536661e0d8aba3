"""`slamon report monthly`, `slamon import outages` and `slamon import openslo`."""

from __future__ import annotations

import re
import sys
from datetime import datetime
from pathlib import Path

import click

MONTH = re.compile(r"[1-9]\d{3}-(0[1-9]|1[0-2])")
FORMATS = ("html", "pdf", "csv", "json")


@click.group()
def report() -> None:
    """SLA reports."""


@report.command("monthly")
@click.option("--month", required=True, help="YYYY-MM (UTC); the running month is reported so far.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="html", show_default=True)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the report ('-' for standard output).",
)
def monthly(month: str, fmt: str, out: Path) -> None:
    """Build the monthly SLA report: uptime vs target, credits, evidence, impact."""
    from monitor.db.base import utcnow
    from monitor.errors import SlamonError
    from monitor.reports.service import build_monthly, keep, record_claims, render
    from workers.runtime import runtime

    if not MONTH.fullmatch(month):
        raise SlamonError(f"--month must look like 2026-11, not {month!r}")
    rt = runtime()
    with rt.transaction() as session:
        rendered = render(build_monthly(session, month, utcnow(), rt.config), fmt)
        keep(session, rendered)
        record_claims(session, rendered.report)
    if str(out) == "-":
        sys.stdout.buffer.write(rendered.content)
        return
    try:
        out.write_bytes(rendered.content)
    except OSError as exc:
        raise SlamonError(f"{out}: {exc.strerror}") from None
    summary = rendered.report
    click.echo(
        f"{out}: {fmt} report for {month}, {len(summary.providers)} providers, "
        f"{len(summary.targets)} targets (policy {summary.policy_hash[:12]})",
        err=True,
    )


@report.command("claimed")
@click.option("--provider", required=True)
@click.option("--month", required=True, help="YYYY-MM")
def claimed(provider: str, month: str) -> None:
    """Mark a provider's credit for a month as claimed (its deadline reminder stops)."""
    from sqlalchemy import select

    from monitor.db.base import utcnow
    from monitor.db.models import CreditClaim
    from monitor.errors import SlamonError
    from workers.runtime import runtime

    with runtime().transaction() as session:
        rows = list(
            session.scalars(
                select(CreditClaim).where(
                    CreditClaim.provider == provider, CreditClaim.month == month
                )
            )
        )
        if not rows:
            raise SlamonError(
                f"no credit recorded for {provider} in {month} (run the report first)"
            )
        for row in rows:
            row.claimed_at = row.claimed_at or utcnow()
    click.echo(f"{provider} {month}: marked as claimed")


@click.group("import")
def import_() -> None:
    """Bring in history from elsewhere."""


@import_.command("outages")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--observed-from", required=True, help="ISO 8601 with offset: start of the observed window."
)
@click.option(
    "--observed-to", required=True, help="ISO 8601 with offset: end of the observed window."
)
@click.option(
    "--also-observed", multiple=True, help="A target watched over the window without outages."
)
def outages(
    file: Path, observed_from: str, observed_to: str, also_observed: tuple[str, ...]
) -> None:
    """Load outages (CSV columns target,start,end[,cause]); the targets count as observed over
    the window. All rows are checked before anything is written; re-importing is a no-op."""
    from monitor.db.base import utcnow
    from monitor.errors import SlamonError
    from monitor.reports.backfill import import_outages, read_rows
    from monitor.targets import sync_config_targets
    from workers.runtime import runtime

    lo, hi = _aware(observed_from, "--observed-from"), _aware(observed_to, "--observed-to")
    if hi <= lo:
        raise SlamonError("--observed-to must be after --observed-from")
    rows = read_rows(file.read_text(encoding="utf-8-sig"), lo, hi)
    rt = runtime()
    with rt.transaction() as session:
        sync_config_targets(session, rt.config, utcnow())
        result = import_outages(session, rows, lo, hi, list(also_observed))
    click.echo(
        f"{file}: {result.rows} rows, {result.outages_added} new outages, "
        f"{result.windows_added} new observed windows"
    )


@import_.command("openslo")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The YAML config whose targets' intervals bound the time slices "
    "(default: $SLAMON_CONFIG or slamon.yaml; none is fine).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per policy.")
def openslo(file: Path, config_path: Path | None, as_json: bool) -> None:
    """Read OpenSLO v1 SLOs (FILE, '-' for stdin) back as SLA policies, printed as config to
    paste under sla_policies; refuses an objective slamon cannot measure (a time slice shorter
    than the target's probe interval, a window other than the calendar month in UTC)."""
    from monitor.cli.export_cmd import import_openslo

    import_openslo(file, config_path, as_json)


def _aware(text: str, option: str) -> datetime:
    from monitor.errors import SlamonError
    from monitor.sla.times import parse_aware

    try:
        return parse_aware(text, f"{option}:")
    except ValueError as exc:
        raise SlamonError(str(exc)) from None
