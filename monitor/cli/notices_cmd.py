"""`slamon notices post | list | end`: the operators' notices and maintenance announced ahead,
as the status page and the feed show them (``monitor.notices`` writes them, as the API does)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from monitor.history.notices import NoticeView

# the API's field names as the options that set them
OPTIONS = {
    "title": "--title",
    "body": "--body",
    "kind": "--kind",
    "severity": "--severity",
    "starts_at": "--starts",
    "ends_at": "--ends",
    "provider": "--provider",
    "region": "--region",
    "pool": "--pool",
    "targets": "--target",
}


@click.group()
def notices() -> None:
    """Notices and maintenance announced on the status page and in its feed."""


@notices.command("post")
@click.option("--title", required=True, help="One line, at most 200 characters.")
@click.option("--body", default="", help="Plain text, at most 4,000 characters.")
@click.option(
    "--kind",
    type=click.Choice(["notice", "maintenance"]),
    default="notice",
    show_default=True,
    help="maintenance with a scope is also a maintenance window for the SLA.",
)
@click.option(
    "--severity",
    type=click.Choice(["info", "minor", "major", "critical"]),
    default="info",
    show_default=True,
)
@click.option("--starts", help="ISO 8601 with an offset (default: now); later: announced ahead.")
@click.option("--ends", help="ISO 8601 with an offset; maintenance needs --ends or --for.")
@click.option("--for", "lasting", help="How long from the start, e.g. 2h or 1h30m.")
@click.option("--provider", help="Scope: the targets of this provider.")
@click.option("--region", help="Scope: the targets in this region.")
@click.option("--pool", help="Scope: the targets of this pool.")
@click.option("--target", "targets", multiple=True, help="Scope: this target (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print the notice as one JSON object.")
def post(
    title: str,
    body: str,
    kind: str,
    severity: str,
    starts: str | None,
    ends: str | None,
    lasting: str | None,
    provider: str | None,
    region: str | None,
    pool: str | None,
    targets: tuple[str, ...],
    as_json: bool,
) -> None:
    """Post a notice (or announce maintenance) and print it. Without a scope it is about the
    whole deployment; without an end it shows until `slamon notices end`."""
    from monitor import notices as writer
    from monitor.db.base import utcnow
    from monitor.errors import SlamonError
    from workers.runtime import runtime

    now = utcnow()
    start = _moment(starts, "--starts") if starts else now
    draft = writer.NoticeDraft(
        title=title,
        body=body,
        kind=kind,
        severity=severity,
        starts_at=start,
        ends_at=_end(start, ends, lasting),
        provider=provider,
        region=region,
        pool=pool,
        targets=targets,
    )
    try:
        with runtime().transaction() as session:
            posted = writer.post(session, draft, _operator(), now)
    except writer.NoticeRefused as refused:
        raise SlamonError(
            f"{OPTIONS.get(refused.field, refused.field)}: {refused.reason}"
        ) from None
    click.echo(record(posted, now) if as_json else line(posted, now))


@notices.command("list")
@click.option("--all", "show_all", is_flag=True, help="Past notices too.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def list_(show_all: bool, as_json: bool) -> None:
    """Current notices, then upcoming ones (--all: then past ones, newest first)."""
    from monitor.db.base import utcnow
    from monitor.history.notices import PHASES, Phase, listing, view
    from workers.runtime import runtime

    now = utcnow()
    phases: tuple[Phase, ...] = PHASES if show_all else ("current", "upcoming")
    query, order = listing(now, phases)
    with runtime().sessions() as session:
        found = [view(row) for row in session.scalars(query.order_by(*order))]
    for notice in found:
        click.echo(record(notice, now) if as_json else line(notice, now))
    if not as_json and not found:
        click.echo("no notices" + ("" if show_all else " current or upcoming"), err=True)


@notices.command("end")
@click.argument("notice_id", metavar="ID", type=click.IntRange(min=1))
def end(notice_id: int) -> None:
    """End notice ID now (call it off if it has not begun), and its maintenance window."""
    from monitor import notices as writer
    from monitor.db.base import utcnow
    from workers.runtime import runtime

    now = utcnow()
    with runtime().transaction() as session:
        ended, changed = writer.end(session, notice_id, _operator(), now)
    if not changed:
        click.echo(f"notice {notice_id} was already over; left as it was")
        return
    click.echo(line(ended, now))


# --------------------------------------------------------------------------- helpers


def _moment(text: str, option: str) -> datetime:
    from monitor.errors import SlamonError
    from monitor.sla.times import parse_aware

    try:
        return parse_aware(text, option)
    except ValueError as exc:
        raise SlamonError(str(exc)) from None


def _end(start: datetime, ends: str | None, lasting: str | None) -> datetime | None:
    from monitor.config.durations import parse_duration
    from monitor.errors import SlamonError

    if ends and lasting:
        raise SlamonError("give --ends or --for, not both")
    if ends:
        return _moment(ends, "--ends")
    if not lasting:
        return None
    try:
        seconds = parse_duration(lasting)
    except ValueError as exc:
        raise SlamonError(f"--for: {exc}") from None
    if seconds <= 0:
        raise SlamonError("--for: must be longer than nothing")
    try:
        return start + timedelta(seconds=seconds)
    except OverflowError:
        raise SlamonError("--for: ends after the year 9999") from None


def _operator() -> str:
    """Who posts from the command line: ``cli:USER`` (``cli`` when the user has no name)."""
    import getpass

    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def record(notice: NoticeView, now: datetime) -> str:
    """A notice as one JSON line: the fields ``GET /api/v1/notices`` answers."""
    return json.dumps(notice.fields(now), default=datetime.isoformat)


def line(notice: NoticeView, now: datetime) -> str:
    """``3 upcoming maintenance  2026-12-09 02:00 UTC – 2026-12-09 04:00 UTC  Fabric swap  [pool
    a100] (SLA window)``: one notice on one line."""
    end = notice.end
    until = f"{end:%Y-%m-%d %H:%M} UTC" if end else "until ended"
    when = f"{notice.starts_at:%Y-%m-%d %H:%M} UTC – {until}"
    scope = [*notice.targets] + [
        f"{word} {value}"
        for word, value in (
            ("provider", notice.provider),
            ("region", notice.region),
            ("pool", notice.pool),
        )
        if value
    ]
    about = f"  [{', '.join(scope)}]" if scope else ""
    sla = " (SLA window)" if notice.in_sla else ""
    label = "maintenance" if notice.kind == "maintenance" else notice.severity
    return f"{notice.id} {notice.phase(now)} {label}  {when}  {notice.title}{about}{sla}"
