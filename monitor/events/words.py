"""The console's event words, fixed so a person can scan the column and a script can grep it, and
the text of each event: pure functions of the facts (tested as tables)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

OUTAGE_OPENED = "outage opened"
OUTAGE_CLOSED = "outage closed"
INCIDENT_OPENED = "incident opened"
INCIDENT_RESOLVED = "incident resolved"
ALERT_FIRING = "alert firing"
ALERT_RESOLVED = "alert resolved"
ALERT_DELIVERED = "alert delivered"
DELIVERY_GIVEN_UP = "delivery given up"
CHANNEL_DISABLED = "channel disabled"
CHANNEL_ENABLED = "channel enabled"
FEED_FAILING = "feed failing"
FEED_BACK = "feed back"
FLEET_CHANGED = "fleet changed"
DISCOVERY_FAILING = "discovery failing"
DISCOVERY_BACK = "discovery back"
ACCOUNT_EVENT = "account event"  # a provider told the account something new about its doing
EVENTS_FAILING = "events failing"  # an account event source cannot be read
EVENTS_BACK = "events back"
DATABASE_LOST = "database lost"
DATABASE_BACK = "database back"
BROKER_LOST = "broker lost"
BROKER_BACK = "broker back"
BROKER_GIVEN_UP = "broker given up"  # no answer for too long: a worker or beat exits
PROCESS_EXITED = "process exited"
INTERRUPT_NOTICE = "interrupt notice"  # `slamon agent --metadata`: the box's provider warns
LEADER_ELECTED = "leader elected"  # this scheduler took the lease: it dispatches from now on
STANDING_BY = "standing by"  # another scheduler leads; this one takes over if it stops
LEASE_LOST = "lease lost"  # this scheduler no longer leads: it dispatches nothing
WATCHDOG_PINGING = "watchdog pinging"  # the leader pings the watchdog URL (again)
WATCHDOG_SILENT = "watchdog silent"  # slamon is not doing its job: no ping, so someone hears
WATCHDOG_FAILING = "watchdog failing"  # the watchdog URL did not take the ping
WORDS = (
    OUTAGE_OPENED,
    OUTAGE_CLOSED,
    INCIDENT_OPENED,
    INCIDENT_RESOLVED,
    ALERT_FIRING,
    ALERT_RESOLVED,
    ALERT_DELIVERED,
    DELIVERY_GIVEN_UP,
    CHANNEL_DISABLED,
    CHANNEL_ENABLED,
    FEED_FAILING,
    FEED_BACK,
    FLEET_CHANGED,
    DISCOVERY_FAILING,
    DISCOVERY_BACK,
    ACCOUNT_EVENT,
    EVENTS_FAILING,
    EVENTS_BACK,
    DATABASE_LOST,
    DATABASE_BACK,
    BROKER_LOST,
    BROKER_BACK,
    BROKER_GIVEN_UP,
    PROCESS_EXITED,
    INTERRUPT_NOTICE,
    LEADER_ELECTED,
    STANDING_BY,
    LEASE_LOST,
    WATCHDOG_PINGING,
    WATCHDOG_SILENT,
    WATCHDOG_FAILING,
)
WIDTH = max(len(word) for word in WORDS)  # the facts start in one column
MAX_FACT_CHARS = 240  # an error message is a clue, not a document


def line(word: str, facts: str) -> str:
    """``word`` padded to the events column, then ``facts`` (the time is the formatter's)."""
    return f"{word:<{WIDTH}} {facts}".rstrip()


def one_line(text: object, limit: int = MAX_FACT_CHARS) -> str:
    """The first non-blank line of ``text``, whitespace collapsed, cut at ``limit`` with "…":
    database drivers and HTTP errors write paragraphs, a console line holds one clue."""
    first = next((part for part in str(text).splitlines() if part.strip()), "")
    collapsed = " ".join(first.split())
    return collapsed if len(collapsed) <= limit else collapsed[: limit - 1].rstrip() + "…"


def clock(at: datetime, now: datetime) -> str:
    """``12:00:01Z``; with the date when ``at`` is not on ``now``'s (UTC) day."""
    if at.date() == now.date():
        return at.strftime("%H:%M:%SZ")
    return at.strftime("%Y-%m-%d %H:%M:%SZ")


def duration(seconds: float) -> str:
    """``42s``, ``3m 05s``, ``2h 03m``, ``3d 04h``: two units at most, rounded down."""
    total = max(0, int(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours:02d}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def exit_status(returncode: int) -> str:
    """How a child ended, as people say it: ``signal 9`` or ``code 1``."""
    return f"signal {-returncode}" if returncode < 0 else f"code {returncode}"


def subject(labels: Mapping[str, str]) -> str:
    """What an alert is about, in a word or two: the target, the vantage, else the provider
    and what of it."""
    if labels.get("target"):
        return labels["target"]
    if labels.get("vantage"):
        return f"vantage {labels['vantage']}"
    what = labels.get("incident") or labels.get("feed") or labels.get("region") or ""
    return " ".join(part for part in (labels.get("provider", ""), what) if part) or "-"


def _with_reason(facts: str, reason: str | None) -> str:
    return f"{facts}: {one_line(reason)}" if reason else facts


def _by(where: str | None, facts: str) -> str:
    """Facts seen by one of several processes are prefixed with its name (``probes-1: …``)."""
    return f"{where}: {facts}" if where else facts


@dataclass(frozen=True, slots=True)
class OutageChange:
    """An outage a probe round opened (``opened``; ``at`` is its start) or closed (``at`` is
    its end, ``lasted_s`` its length)."""

    target: str
    series: str
    opened: bool
    at: datetime
    error: str | None = None
    lasted_s: float | None = None


def outage_lines(changes: Iterable[OutageChange], now: datetime) -> list[tuple[str, str]]:
    """One (word, facts) per target and kind of change: a host that stops answering opens its
    reachable and usable outages in the same round, and that is one event, not two."""
    grouped: dict[tuple[str, bool, int | None], list[OutageChange]] = {}
    for change in changes:
        lasted = None if change.opened else int(change.lasted_s or 0)
        grouped.setdefault((change.target, change.opened, lasted), []).append(change)
    lines = []
    for (target, opened, lasted), group in grouped.items():
        series = ", ".join(sorted({c.series for c in group}, key=("reachable", "usable").index))
        if opened:
            first = min(group, key=lambda c: c.at)
            error = next((c.error for c in group if c.error), None)
            facts = _with_reason(f"{target} ({series}) at {clock(first.at, now)}", error)
            lines.append((OUTAGE_OPENED, facts))
        else:
            lines.append((OUTAGE_CLOSED, f"{target} ({series}) after {duration(lasted or 0)}"))
    return lines


def incident_opened_text(
    provider: str, title: str, *, maintenance: bool = False, relevant: bool = True
) -> str:
    facts = f"{provider}: {one_line(title)}"
    if maintenance:
        facts += " [maintenance]"
    return facts if relevant else f"{facts} (outside your regions)"


def incident_resolved_text(provider: str, title: str, lasted_s: float | None) -> str:
    facts = f"{provider}: {one_line(title)}"
    return facts if lasted_s is None else f"{facts} after {duration(lasted_s)}"


def alert_firing_text(rule: str, labels: Mapping[str, str], *, muted: bool = False) -> str:
    facts = f"{rule} {subject(labels)}"
    return f"{facts} (muted or grouped: not sent)" if muted else facts


def alert_resolved_text(rule: str, labels: Mapping[str, str]) -> str:
    return f"{rule} {subject(labels)}"


def alert_delivered_text(rule: str, labels: Mapping[str, str], channel: str, event: str) -> str:
    return f"{rule} {subject(labels)} → {channel} ({event})"


def delivery_given_up_text(
    rule: str, labels: Mapping[str, str], channel: str, attempts: int, error: str | None
) -> str:
    tries = "attempt" if attempts == 1 else "attempts"
    facts = f"{rule} {subject(labels)} → {channel} after {attempts} {tries}"
    return _with_reason(facts, error)


def channel_disabled_text(channel: str, kind: str, error: str | None) -> str:
    facts = _with_reason(f"{channel} ({kind})", error)
    return f"{facts}; deliveries held until `slamon alerts enable {channel}` or a config change"


def channel_enabled_text(channel: str, why: str, held: int) -> str:
    deliveries = "delivery" if held == 1 else "deliveries"
    return f"{channel} ({why}); {held} held {deliveries} due now"


def feed_failing_text(provider: str, url: str, error: str) -> str:
    # fetch errors start with the URL already
    return _with_reason(f"{provider} {url}", error.removeprefix(f"{url}: "))


def feed_back_text(provider: str, url: str, failures: int, down_s: float | None) -> str:
    polls = "poll" if failures == 1 else "polls"
    after = f" after {duration(down_s)}" if down_s is not None else ""
    return f"{provider} {url}{after} ({failures} failed {polls})"


def fleet_changed_text(source: str, counts: Mapping[str, int], ends: Iterable[str]) -> str:
    """``lab: 2 added, 1 retired (trainer-3 preempted)``: a sweep that changed the fleet."""
    parts = [f"{n} {action}" for action, n in counts.items() if n and action != "kept"]
    named = list(ends)
    shown = ", ".join(named[:5]) + (f", +{len(named) - 5} more" if len(named) > 5 else "")
    return f"{source}: {', '.join(parts)}" + (f" ({shown})" if named else "")


def account_event_text(
    provider: str,
    kind: str,
    title: str,
    starts_at: datetime | None,
    targets: Iterable[str] = (),
    *,
    now: datetime,
) -> str:
    """``aws retirement from 2026-12-10 09:00:00Z on trainer-3: The instance is scheduled for
    retirement``: what a provider told the account, and which targets it is about."""
    when = f" from {clock(starts_at, now)}" if starts_at else ""
    named = list(targets)
    shown = ", ".join(named[:5]) + (f", +{len(named) - 5} more" if len(named) > 5 else "")
    return f"{provider} {kind}{when}" + (f" on {shown}" if named else "") + f": {one_line(title)}"


def polls_back_text(source: str, failures: int) -> str:
    polls = "poll" if failures == 1 else "polls"
    return f"{source} ({failures} failed {polls})"


def discovery_back_text(source: str, failures: int) -> str:
    sweeps = "sweep" if failures == 1 else "sweeps"
    return f"{source} ({failures} failed {sweeps})"


def lost_text(reason: str, where: str | None = None) -> str:
    """``database lost`` / ``broker lost``: why, as the driver said it, on one line."""
    return _by(where, one_line(reason) or "no reason given")


def back_text(lasted_s: float, where: str | None = None) -> str:
    return _by(where, f"after {duration(lasted_s)}")


def broker_given_up_text(
    broker: str, silent_s: float, reason: str, code: int, where: str | None = None
) -> str:
    """``redis://cache:6379/0 has not answered for 3m 00s (Connection refused): exiting with
    code 75 to be started again``: the broker (its password hidden), how long, the last error."""
    why = one_line(reason) or "no reason given"
    return _by(
        where,
        f"{broker} has not answered for {duration(silent_s)} ({why}): "
        f"exiting with code {code} to be started again",
    )


def leader_elected_text(holder: str, token: int, previous: str | None) -> str:
    """``web-1:4242 (token 7), after web-2:1111``: who leads now, and who led before."""
    after = f", after {previous}" if previous and previous != holder else ""
    return f"{holder} (token {token}){after}"


def standing_by_text(holder: str, leader: str) -> str:
    return f"{holder}: {leader} leads"


def lease_lost_text(holder: str, token: int, why: str) -> str:
    return f"{holder} (token {token}): {one_line(why)}"


def watchdog_pinging_text(where: str, every_s: float, quiet_s: float | None = None) -> str:
    """``hc-ping.com every 1m 00s`` at the first ping; ``hc-ping.com again after 4m 10s`` (since
    the last ping taken) once it pings again after a silence or a failing receiver."""
    if quiet_s is None:
        return f"{where} every {duration(every_s)}"
    return f"{where} again after {duration(quiet_s)}"


def watchdog_silent_text(reasons: Iterable[str]) -> str:
    """``not pinging: dispatch 42s late (probes-dispatch; max_lag 30s)``: why, every reason."""
    return f"not pinging: {one_line('; '.join(reasons)) or 'unhealthy'}"


def watchdog_failing_text(where: str, error: str) -> str:
    return f"{where}: {one_line(error) or 'no answer'}"


def process_exited_text(name: str, returncode: int, restart_in_s: float) -> str:
    return f"{name} ({exit_status(returncode)}); restarting in {duration(restart_in_s)}"


def interrupt_notice_text(
    cloud: str,
    kind: str,
    deadline: datetime | None,
    seconds_left: float | None,
    detail: str,
    key: str,
    now: datetime,
) -> str:
    """``aws preemption by 22:02:00Z (in 1m 59s): spot instance-action terminate [key]``."""
    if deadline is None or seconds_left is None:
        when = " (no deadline given)"
    elif seconds_left < 0:
        when = f" at {clock(deadline, now)} ({duration(-seconds_left)} ago)"
    else:
        when = f" by {clock(deadline, now)} (in {duration(seconds_left)})"
    return f"{cloud} {kind}{when}: {one_line(detail, 120)} [{one_line(key, 80)}]"
