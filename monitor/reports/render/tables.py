"""The report's tables as text, once, for the two renderers people read (HTML and PDF).

Each function turns part of a :class:`MonthlyReport` into a :class:`Table` of display strings, so
the HTML page and the PDF show the same rows with the same wording. Numbers for people are
formatted here; exact numbers live in the JSON and CSV renderers.

Percentages of uptime are truncated, never rounded up: 99.99999 % shows as ``99.999%``, so a
report never claims 100 % for a month that had downtime.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_DOWN, Decimal
from typing import Any
from urllib.parse import urlsplit

from monitor.reports.model import (
    IncidentRow,
    LedgerRow,
    MonthlyReport,
    PoolReport,
    ProviderReport,
    TargetReport,
)

NONE = "—"
NO_DATA = "no data"
OPEN = "open"
NO_PROVIDER = "(no provider)"
HOUR = 3600.0


@dataclass(frozen=True, slots=True)
class Link:
    """A cell that links out (only ever an http/https URL; see :func:`link`)."""

    text: str
    href: str


Cell = str | Link


@dataclass(frozen=True, slots=True)
class Column:
    title: str
    numeric: bool = False  # right-aligned
    width: float = 1.0  # relative width in the PDF
    wrap: bool = False  # long free text: the HTML page wraps it (other cells stay on one line)


@dataclass(frozen=True, slots=True)
class Table:
    """Rows of display cells; ``flags[i]`` marks row i as ``bad``, ``muted`` or ``""``."""

    key: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    flags: tuple[str, ...] = ()
    caption: str = ""
    empty: str = "None."


# --- formatting -------------------------------------------------------------------------------


def pct(value: float | None, places: int = 3, missing: str = NO_DATA) -> str:
    """Uptime-style percentage, truncated to ``places`` decimals (``99.999%``)."""
    if value is None:
        return missing
    step = Decimal(1).scaleb(-places)
    return f"{Decimal(repr(value)).quantize(step, rounding=ROUND_DOWN)}%"


def number(value: float | None) -> str:
    """A setting as written (``99.99``, ``10``), for targets and credit percentages."""
    if value is None:
        return NONE
    text = repr(round(float(value), 3))  # a fleet-weighted credit is no exact setting
    return text.removesuffix(".0")


def duration(seconds: float | None) -> str:
    """``42.5s``, ``3m 04s``, ``2h 03m 04s``, ``1d 02h 03m 04s``."""
    if seconds is None:
        return NONE
    if round(seconds, 3) < 60:
        return f"{seconds:.3f}".rstrip("0").rstrip(".") + "s"
    rest = round(seconds)
    days, rest = divmod(rest, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h {minutes:02d}m {secs:02d}s"
    if hours:
        return f"{hours}h {minutes:02d}m {secs:02d}s"
    return f"{minutes}m {secs:02d}s"


def when(value: datetime | None, missing: str = NONE) -> str:
    """Exact UTC time: ``2025-06-03 14:02:07`` (fractional seconds kept when present)."""
    if value is None:
        return missing
    text = value.astimezone(UTC).replace(tzinfo=None).isoformat(" ")
    return text.rstrip("0") if "." in text else text


def money(value: float | None) -> str:
    """``1,234.57``; the currency is named once, in the column title (see :func:`in_currency`)."""
    return NONE if value is None else f"{value:,.2f}"


def hours(value: float | None) -> str:
    return NONE if value is None else f"{value:,.2f}"


def link(text: str, url: str | None) -> Cell:
    """A link only for http(s) URLs; anything else (``javascript:``…) stays plain text."""
    if url and urlsplit(url).scheme in ("http", "https"):
        return Link(text, url)
    return text


def in_currency(title: str, report: MonthlyReport) -> str:
    """``Money lost (USD)`` when the accounting policy names its ``currency``."""
    value = report.policy.get("currency")
    return f"{title} ({value})" if isinstance(value, str) and value else title


# --- ordering and status ----------------------------------------------------------------------


def ranked(providers: Iterable[ProviderReport]) -> list[ProviderReport]:
    """Scorecard order: the engine's rank, then higher uptime, then slug; no data last."""

    def key(p: ProviderReport) -> tuple[bool, int, bool, float, str]:
        return (p.rank is None, p.rank or 0, p.uptime_pct is None, -(p.uptime_pct or 0.0), p.slug)

    return sorted(providers, key=key)


def status(uptime: float | None, target: float | None) -> tuple[str, str]:
    """(text, flag): ``no data``/muted, ``BREACH``/bad, ``met`` or ``no target``."""
    if uptime is None:
        return NO_DATA, "muted"
    if target is None:
        return "no target", ""
    return ("met", "") if uptime >= target else ("BREACH", "bad")


# --- the tables -------------------------------------------------------------------------------


def summary(report: MonthlyReport) -> list[tuple[str, str]]:
    """Headline figures: (label, value) pairs."""
    breaches = sum(status(t.uptime_pct, t.target_pct)[1] == "bad" for t in report.targets)
    open_outages = sum(o.end is None for t in report.targets for o in t.outages)
    return [
        (in_currency("Credit owed", report), money(credit_owed(report))),
        ("GPU-hours lost", hours(sum(t.gpu_hours_lost for t in report.targets))),
        (in_currency("Money lost", report), money(sum(t.cost_lost for t in report.targets))),
        ("Targets below SLA", f"{breaches} of {len(report.targets)}"),
        ("Targets without data", str(sum(t.uptime_pct is None for t in report.targets))),
        ("Outages", f"{sum(len(t.outages) for t in report.targets)} ({open_outages} open)"),
    ]


def credit_owed(report: MonthlyReport) -> float:
    """The month's credits: each target's own (its credit % of what it cost in the month), so
    a target counts whether or not it names a provider."""
    return sum(t.credit_amount for t in report.targets)


def scorecard(report: MonthlyReport) -> Table:
    rows, flags = [], []
    for i, p in enumerate(ranked(report.providers), start=1):
        text, flag = status(p.uptime_pct, p.target_pct)
        rows.append(
            (
                str(p.rank if p.rank is not None else i),
                p.name or p.slug,
                pct(p.uptime_pct),
                number(p.target_pct),
                text,
                duration(p.tta_median_s),
                duration(p.ttr_median_s),
                duration(p.status_page_lag_median_s),
                str(p.incidents),
                rate(p.spot_interruptions_per_1000h),
                money(p.effective_price_per_gpu_hour),
                _per_unit(p),
            )
        )
        flags.append(flag)
    cols = [
        Column("Rank", True, 0.5),
        Column("Provider", width=1.6),
        Column("Uptime", True),
        Column("Target %", True, 0.8),
        Column("SLA", width=0.8),
        Column("TTA median", True),
        Column("TTR median", True),
        Column("Status-page lag", True),
        Column("Incidents", True, 0.8),
        Column("Spot interruptions / 1,000 h", True, 1.2),
        Column(in_currency("Price / available GPU-h", report), True, 1.3),
        Column(in_currency("Price / M units of work", report), True, 1.3),
    ]
    caption = (
        "Ranked on the effective price per million units of training work delivered (where "
        "jobs report throughput: downtime, unusable GPUs and slowdowns priced in), then "
        "measured SLA-eligible availability, incident response and effective price per "
        "available GPU-hour (spend / GPU-hours the instances were up). Spot interruptions: "
        "the provider's spot instances preempted or ended by the provider, per 1,000 "
        "instance-hours (the interruption ledger's spot rows together; not ranked on)."
    )
    return _table("scorecard", "Provider scorecard", cols, rows, flags, caption)


def _per_unit(p: ProviderReport) -> str:
    if p.effective_price_per_million is None:
        return NONE
    return f"{unit_price(p.effective_price_per_million)} ({p.work_unit})"


def provider_sla(report: MonthlyReport) -> Table:
    rows, flags = [], []
    for p in ranked(report.providers):
        rows.append(
            (
                p.name or p.slug,
                p.sla or NONE,
                pct(p.uptime_pct),
                number(p.target_pct),
                number(p.credit_pct) + "%",
                money(p.credit_amount),
                when(p.claim_deadline),
                duration(p.observed_downtime_s),
                duration(p.acknowledged_downtime_s),
                duration(p.sla_downtime_s),
                duration(p.unknown_s),
                ", ".join(p.claim_event_ids) or NONE,
            )
        )
        flags.append(status(p.uptime_pct, p.target_pct)[1])
    cols = [
        Column("Provider", width=1.4),
        Column("SLA policy", width=1.6),
        Column("Uptime", True),
        Column("Target %", True, 0.8),
        Column("Credit", True, 0.7),
        Column(in_currency("Credit owed", report), True),
        Column("Claim by (UTC)", width=1.4),
        Column("Observed downtime", True),
        Column("Acknowledged downtime", True),
        Column("SLA-eligible downtime", True),
        Column("Unknown time", True),
        Column("Provider's event ids", width=2.4, wrap=True),
    ]
    caption = (
        "Three ledgers: observed (our probes), acknowledged (the provider's own incidents for "
        "your regions) and SLA-eligible (what the policy counts). Unknown time is never counted "
        "as up. A claim cites the provider's event ids: its own account events about the "
        "outages the credit counts."
    )
    return _table("sla", "SLA per provider", cols, rows, flags, caption)


def training_impact(report: MonthlyReport) -> Table:
    """Per provider, then one row for the targets that name none (their hours are lost too)."""
    lost: dict[str, float] = {}
    for t in report.targets:
        lost[t.provider or ""] = lost.get(t.provider or "", 0.0) + t.cost_lost
    rows: list[tuple[Cell, ...]] = [
        (
            p.name or p.slug,
            money(p.spend),
            hours(p.gpu_hours),
            hours(p.gpu_hours_lost),
            money(lost.get(p.slug, 0.0)),
            money(p.effective_price_per_gpu_hour),
        )
        for p in ranked(report.providers)
    ]
    listed = {p.slug for p in report.providers}
    unlisted: dict[str, list[TargetReport]] = {}
    for t in report.targets:
        if t.provider not in listed:
            unlisted.setdefault(t.provider or NO_PROVIDER, []).append(t)
    rows.extend(_impact_of(label, members) for label, members in sorted(unlisted.items()))
    cols = [
        Column("Provider", width=1.6),
        Column(in_currency("Spend", report), True),
        Column("GPU-hours", True),
        Column("GPU-hours lost", True),
        Column(in_currency("Money lost", report), True),
        Column(in_currency("Price / available GPU-h", report), True),
    ]
    caption = "GPU-hours lost = outage duration × GPUs; money lost = GPU-hours lost × price."
    return _table("impact", "Training impact", cols, rows, (), caption)


def unit_price(value: float | None) -> str:
    """A price per million units of work: four decimals (``0.5571``), as they are small."""
    return NONE if value is None else f"{value:,.4f}"


def work_price(report: MonthlyReport) -> Table:
    """Price / performance / stability per provider and instance type."""
    names = {p.slug: p.name or p.slug for p in report.providers}
    rows: list[tuple[Cell, ...]] = []
    for w in report.work:
        rows.append(
            (
                names.get(w.provider or "", w.provider or NO_PROVIDER),
                w.instance_type or NONE,
                pct(w.availability_pct),
                duration(w.ttr_median_s),
                hours((w.downtime_s + w.unusable_s + w.slow_s) / HOUR),
                hours(w.slow_s / HOUR),
                f"{w.work_done / 1e6:,.1f} M {w.work_unit}",
                unit_price(w.list_price_per_million),
                unit_price(w.effective_price_per_million),
            )
        )
    cols = [
        Column("Provider", width=1.4),
        Column("Instance type", width=1.2),
        Column("Availability", True),
        Column("TTR median", True),
        Column("Hours lost", True, 0.8),
        Column("of which slow", True, 0.8),
        Column("Work done", True, 1.2),
        Column(in_currency("List / M units", report), True),
        Column(in_currency("Effective / M units", report), True, 1.2),
    ]
    caption = (
        "Effective price = what the instances cost / the work their training jobs reported, "
        "per million samples or tokens: hours down, unusable or slow are paid for and deliver "
        "little or nothing. List price = hourly price at the job's median speed. Hours lost = "
        "down + unusable + slow (slow: up, but below its trailing median, training_slowdown)."
    )
    empty = "No training job reported throughput this month."
    return _table("work", "Price per unit of work", cols, rows, (), caption, empty)


def rate(value: float | None) -> str:
    """Interruptions per 1,000 instance-hours: three significant decimals (``0.417``)."""
    return NONE if value is None else f"{value:,.3f}"


def ledger(report: MonthlyReport) -> Table:
    """The interruption ledger: per provider, instance type and capacity class."""
    names = {p.slug: p.name or p.slug for p in report.providers}
    rows = [_ledger_row(line, names) for line in report.ledger]
    flags = ["muted" if line.small_sample else "" for line in report.ledger]
    cols = [
        Column("Provider", width=1.2),
        Column("Instance type", width=1.3),
        Column("Capacity", width=0.8),
        Column("Instances", True, 0.7),
        Column("Instance-hours", True),
        Column("Preemptions", True, 0.8),
        Column("Provider ends", True, 0.8),
        Column("Median lifetime", True),
        Column("Per 1,000 h", True, 0.8),
        Column("95% interval", True, 1.2),
        Column("Sample", width=0.9),
    ]
    caption = (
        "How often instances were taken away: preemptions and provider-caused ends (a "
        "retirement, a host failure) per 1,000 hours the instances existed, with the exact 95% "
        "Poisson (Garwood) interval. Ends by the user are lives, not interruptions. Median "
        "lifetime: of the lives that ended this month, any cause, from birth to end. A small "
        "sample (under 1,000 instance-hours or 3 interruptions) is shown muted: its interval "
        "is wide."
    )
    empty = "No instances (targets with an instance type, or discovered) this month."
    return _table("ledger", "Interruption ledger", cols, rows, flags, caption, empty)


def _ledger_row(line: LedgerRow, names: dict[str, str]) -> tuple[Cell, ...]:
    interval = NONE if line.low is None else f"{rate(line.low)} – {rate(line.high)}"
    return (
        names.get(line.provider or "", line.provider or NO_PROVIDER),
        line.instance_type or NONE,
        line.capacity,
        str(line.instances),
        hours(line.instance_hours),
        str(line.preemptions),
        str(line.provider_ends),
        duration(None if line.median_lifetime_h is None else line.median_lifetime_h * HOUR),
        rate(line.per_1000h),
        interval,
        "small sample" if line.small_sample else "",
    )


def _impact_of(label: str, members: Sequence[TargetReport]) -> tuple[Cell, ...]:
    """Training impact of targets that no provider row counts (most often: they name no
    provider), figured as a provider's is."""
    spend = sum(t.hourly_price * (t.observed_s + t.unknown_s) / HOUR for t in members)
    gpu_hours = sum(t.gpus * (t.observed_s + t.unknown_s) / HOUR for t in members)
    lost = sum(t.gpu_hours_lost for t in members)
    available = gpu_hours - lost
    return (
        label,
        money(spend),
        hours(gpu_hours),
        hours(lost),
        money(sum(t.cost_lost for t in members)),
        money(spend / available if available > 0 else None),
    )


def targets(report: MonthlyReport) -> Table:
    rows, flags = [], []
    for t in report.targets:
        text, flag = status(t.uptime_pct, t.target_pct)
        rows.append(_target_row(t, text))
        flags.append(flag)
    cols = [
        # widths in points of the PDF's landscape A4 (774 pt): the common values fit unwrapped
        Column("Target", width=90),
        Column("Provider", width=46),
        Column("Region / zone", width=76),
        Column("Pool", width=50),
        Column("SLA policy", width=80),
        Column("GPUs", True, 27),
        Column("Uptime", True, 40),
        Column("Target %", True, 34),
        Column("SLA", width=36),
        Column("Downtime", True, 44),
        Column("SLA downtime", True, 44),
        Column("Unusable", True, 44),
        Column("Unknown", True, 62),
        Column("Credit", True, 29),
        Column("GPU-h lost", True, 36),
        Column(in_currency("Money lost", report), True, 44),
    ]
    caption = (
        "Downtime: observed by our probes. SLA downtime: what the target's policy counts. "
        "Unusable: training's ledger (unreachable or a GPU unhealthy)."
    )
    return _table("targets", "Targets", cols, rows, flags, caption)


def _target_row(t: TargetReport, status_text: str) -> tuple[Cell, ...]:
    where = " / ".join(x for x in (t.region, t.zone) if x) or NONE
    return (
        t.name,
        t.provider or NONE,
        where,
        t.pool or NONE,
        t.sla or NONE,
        str(t.gpus),
        pct(t.uptime_pct),
        number(t.target_pct),
        status_text,
        duration(t.downtime_s),
        duration(t.sla_downtime_s),
        duration(t.usable_downtime_s),
        duration(t.unknown_s),
        number(t.credit_pct) + "%",
        hours(t.gpu_hours_lost),
        money(t.cost_lost),
    )


def outages(report: MonthlyReport) -> Table:
    rows, flags = [], []
    for t in report.targets:
        for o in t.outages:
            rows.append(
                (
                    t.name,
                    when(o.start),
                    when(o.end, OPEN),
                    duration(o.duration_s),
                    duration(o.sla_counted_s),
                    duration(o.excluded_by_maintenance_s),
                    duration(o.excluded_by_events_s),
                    o.cause,
                    o.series,
                    ", ".join(dict.fromkeys(e.kind for e in o.evidence)) or NONE,
                )
            )
            flags.append("bad" if o.end is None else "")
    cols = [
        Column("Target", width=1.8),
        Column("Start (UTC)", width=1.5),
        Column("End (UTC)", width=1.5),
        Column("Duration", True),
        Column("SLA counts", True),
        Column("Maintenance", True),
        Column("On the provider's record", True),
        Column("Cause", width=1.1),
        Column("Series", width=0.9),
        Column("Provider's record", width=1.3, wrap=True),
    ]
    caption = (
        "The evidence for a claim: every outage, exact to the probe that confirmed it. An open "
        "outage is counted up to the end of the report period. Maintenance: inside a "
        "configured window; on the provider's record: left out as the user's own doing or as "
        "maintenance the user accepted (see the exclusions). Provider's record: the kinds of "
        "the account events that overlap it."
    )
    return _table("outages", "Outages", cols, rows, flags, caption, empty="No outages.")


def evidence(report: MonthlyReport) -> Table:
    """Every account event that is an outage's evidence, in the provider's words."""
    rows: list[tuple[Cell, ...]] = []
    for t in report.targets:
        for o in t.outages:
            rows.extend(
                (
                    t.name,
                    when(o.start),
                    e.event_id,
                    e.provider,
                    e.kind,
                    e.source,
                    when(e.start),
                    when(e.end, OPEN),
                    words(e.title, e.detail),
                )
                for e in o.evidence
            )
    cols = [
        Column("Target", width=1.4),
        Column("Outage start (UTC)", width=1.4),
        Column("Event id", width=2.4, wrap=True),
        Column("Provider", width=0.7),
        Column("Kind", width=1.3),
        Column("Source", width=1.3),
        Column("Event start (UTC)", width=1.4),
        Column("Event end (UTC)", width=1.4),
        Column("The provider's words", width=3.2, wrap=True),
    ]
    caption = (
        "The provider's own record of each outage: the account events about the target whose "
        "window overlaps it (a retirement or an issue explains an outage and is still counted)."
    )
    empty = "No outage overlaps an account event."
    return _table("evidence", "The provider's record", cols, rows, (), caption, empty)


REASONS = {
    "user_initiated": "user-initiated (exclude_user_initiated)",
    "accepted_maintenance": "maintenance the user accepted (exclude_maintenance)",
}


def exclusions(report: MonthlyReport) -> Table:
    """The downtime each target's policy left out on the provider's record, and why."""
    rows = [
        (
            t.name,
            when(x.start),
            when(x.end),
            duration(x.seconds),
            REASONS.get(x.reason, x.reason),
            x.event_id,
            x.provider_words or NONE,
        )
        for t in report.targets
        for x in t.exclusions
    ]
    cols = [
        Column("Target", width=1.4),
        Column("Start (UTC)", width=1.4),
        Column("End (UTC)", width=1.4),
        Column("Excluded", True, 0.9),
        Column("Why", width=2.0, wrap=True),
        Column("Event id", width=2.4, wrap=True),
        Column("The provider's words", width=3.0, wrap=True),
    ]
    caption = (
        "Downtime left out of SLA downtime on the provider's record, where the target's policy "
        "says so: the part of an outage inside a user-initiated event's window, or inside "
        "maintenance the user scheduled or accepted. A second is left out once, under the "
        "first event, and not at all where a configured maintenance window already left it out. "
        "Observed downtime keeps it."
    )
    empty = "No downtime was left out on the provider's record."
    return _table("exclusions", "Excluded on the provider's record", cols, rows, (), caption, empty)


def words(title: str, detail: str) -> str:
    """The provider's words: its title and detail, as far as it gave them."""
    return "; ".join(text for text in (title.strip(), detail.strip()) if text) or NONE


def pools(report: MonthlyReport) -> Table:
    rows = [_pool_row(p) for p in report.pools]
    flags = ["muted" if p.availability_pct is None else "" for p in report.pools]
    cols = [
        Column("Pool", width=2.0),
        Column("Members", True),
        Column("Needs up", True),
        Column("Availability", True),
        Column("Unknown time", True),
    ]
    caption = "Availability: share of the time at least the needed number of members were up."
    return _table("pools", "Pools", cols, rows, flags, caption, empty="No pools.")


def _pool_row(p: PoolReport) -> tuple[Cell, ...]:
    return (
        p.name,
        str(p.members),
        f"{p.min_up} of {p.members}",
        pct(p.availability_pct),
        duration(p.unknown_s),
    )


def incidents(report: MonthlyReport) -> Table:
    rows = [_incident_row(i) for i in report.incidents]
    flags = ["bad" if i.resolved_at is None else "" for i in report.incidents]
    cols = [
        Column("Provider", width=0.8),
        Column("Incident", width=2.6, wrap=True),
        Column("Impact", width=0.7),
        Column("Regions", width=1.1),
        Column("Started (UTC)", width=1.4),
        Column("Resolved (UTC)", width=1.4),
        Column("TTA", True, 0.8),
        Column("TTR", True, 0.8),
        Column("Status-page lag", True, 0.9),
    ]
    caption = (
        "Provider incidents that touched your regions. TTA/TTR from the incident's start; "
        "status-page lag from our own first detection to the provider's first update."
    )
    return _table("incidents", "Provider incidents", cols, rows, flags, caption, "No incidents.")


def _incident_row(i: IncidentRow) -> tuple[Cell, ...]:
    return (
        i.provider,
        link(i.title or i.source_id, i.url),
        i.impact,
        ", ".join(i.regions) or NONE,
        when(i.started_at),
        when(i.resolved_at, OPEN),
        duration(i.tta_s),
        duration(i.ttr_s),
        duration(i.status_page_lag_s),
    )


def policy(report: MonthlyReport) -> Table:
    rows = [(key, value) for key, value in flatten(report.policy)]
    cols = [Column("Setting", width=1.0), Column("Value", width=3.0, wrap=True)]
    caption = f"Every setting the numbers depend on. Policy hash: {report.policy_hash}"
    return _table("policy", "Accounting policy", cols, rows, (), caption, "No settings.")


def flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Nested settings as ``(dotted.key, text)`` pairs; lists of scalars on one line."""
    if isinstance(value, dict) and value:
        pairs: list[tuple[str, str]] = []
        for k, v in value.items():
            pairs.extend(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return pairs
    if isinstance(value, list | tuple) and any(isinstance(v, dict) for v in value):
        return [p for i, v in enumerate(value) for p in flatten(v, f"{prefix}[{i}]")]
    return [(prefix, _setting(value))]


def _setting(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def all_tables(report: MonthlyReport) -> list[Table]:
    """Every table in reading order (charts go beside scorecard and outages)."""
    return [
        scorecard(report),
        provider_sla(report),
        training_impact(report),
        work_price(report),
        ledger(report),
        targets(report),
        outages(report),
        evidence(report),
        exclusions(report),
        pools(report),
        incidents(report),
        policy(report),
    ]


def _table(
    key: str,
    title: str,
    columns: Sequence[Column],
    rows: Sequence[tuple[Cell, ...]],
    flags: Sequence[str],
    caption: str,
    empty: str = "None.",
) -> Table:
    return Table(key, title, tuple(columns), tuple(rows), tuple(flags), caption, empty)
