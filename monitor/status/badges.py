"""What a badge says about a target, a pool or a provider (pure): read off the status page's
own view (``monitor.status.view``), so a badge, the page, the API and the report show one figure.

``/badges/{targets|pools|providers}/{name}/{metric}.svg``, the metrics:

- ``state``: a target's displayed state (up, unusable, down, unknown), a pool's or a provider's
  group state (``monitor.status.groups``: up, degraded, down, unknown). Green only for up.
- ``uptime-24h``, ``uptime-7d``, ``uptime-30d``: the status page's uptime over observed time
  (reachable; a group's pooled over its members' observed time), shown as the page shows it
  (two decimals, truncated), coloured by how high it is; ``no data`` when nothing was observed.
- ``sla``: month to date. A target's and a provider's as its SLA policy counts it (the monthly
  report's ``uptime_pct``, as ``/api/v1/sla`` and the page's SLA table give it) against the
  policy's objective: green when it meets it, red when not, blue without an objective; a pool's
  is its availability (the share of time ``min_up`` members were up), which has no objective.

No data, an unknown state, is grey: never green.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from monitor.status.badge_svg import Badge
from monitor.status.groups import (
    DEGRADED,
    group_of,
    pool_group,
    provider_members,
)
from monitor.status.history import DOWN, UNKNOWN, UNUSABLE, UP, Uptime, uptime_text
from monitor.status.view import StatusView

BADGE_PAGE = "/badges/{kind}/{name:path}/{metric}.svg"  # a route template
KINDS = ("targets", "pools", "providers")
STATE, SLA = "state", "sla"
UPTIMES = {"uptime-24h": 0, "uptime-7d": 1, "uptime-30d": 2}  # the index into view.WINDOWS
METRICS = (STATE, *UPTIMES, SLA)

STATE_COLOURS = {
    UP: "green",
    DEGRADED: "yellow",
    UNUSABLE: "orange",
    DOWN: "red",
    UNKNOWN: "grey",
}
# an uptime's colour: the first threshold it reaches (percent), red below them all
UPTIME_COLOURS = ((99.9, "green"), (99.0, "yellowgreen"), (95.0, "yellow"), (90.0, "orange"))
NOT_FOUND = Badge("slamon", "not found", "grey", "slamon: no such badge")


def badge_path(kind: str, name: str, metric: str) -> str:
    return f"/badges/{kind}/{quote(name, safe='')}/{metric}.svg"


@dataclass(frozen=True, slots=True)
class Subject:
    """A target, a pool or a provider as its badges tell it."""

    kind: str  # targets | pools | providers
    name: str
    state: str
    uptime: tuple[Uptime, ...]  # over view.WINDOWS
    sla_pct: float | None  # month to date; None: no data
    objective_pct: float | None  # None: no objective


def subject(view: StatusView, kind: str, name: str) -> Subject | None:
    """The ``kind`` named ``name`` (a live target, a pool named by one or by the config, a
    provider slamon knows or a live target names); None when there is none."""
    if kind == "targets":
        return _target(view, name)
    if kind == "pools":
        return _pool(view, name)
    if kind == "providers":
        return _provider(view, name)
    return None


def _target(view: StatusView, name: str) -> Subject | None:
    target = next((t for t in view.fleet if t.name == name), None)
    if target is None:
        return None
    report = next((r for r in view.report.targets if r.name == name), None) if view.report else None
    sla, objective = (report.uptime_pct, report.target_pct) if report else (None, None)
    return Subject("targets", name, target.state, target.uptime, sla, objective)


def _pool(view: StatusView, name: str) -> Subject | None:
    health = next((p for p in view.pools if p.name == name), None)
    if health is None:
        return None
    group = pool_group(health, [t for t in view.fleet if t.pool == name])
    pools = view.report.pools if view.report else ()
    availability = next((p.availability_pct for p in pools if p.name == name), None)
    return Subject("pools", name, group.state, group.uptime, availability, None)


def _provider(view: StatusView, slug: str) -> Subject | None:
    members = provider_members(view, slug)
    if members is None:
        return None
    group = group_of(slug, slug, members)
    row = next((s for s in view.sla if s.slug == slug), None)
    sla, objective = (row.uptime_pct, row.target_pct) if row else (None, None)
    return Subject("providers", slug, group.state, group.uptime, sla, objective)


# --------------------------------------------------------------------------- the words


def badge(found: Subject, metric: str, month: str, label: str | None = None) -> Badge | None:
    """``metric``'s badge of ``found`` (``month``: the running month, YYYY-MM), labelled
    ``label`` when given; None for a metric there is none of."""
    if metric == STATE:
        made = state_badge(found)
    elif metric in UPTIMES:
        made = uptime_badge(found, metric)
    elif metric == SLA:
        made = sla_badge(found, month)
    else:
        return None
    return made if label is None else Badge(label, made.value, made.colour, made.title)


def state_badge(found: Subject) -> Badge:
    colour = STATE_COLOURS.get(found.state, "grey")
    return Badge(found.name, found.state, colour, f"{found.name}: {found.state}")


def uptime_badge(found: Subject, metric: str) -> Badge:
    window = metric.removeprefix("uptime-")
    uptime = found.uptime[UPTIMES[metric]]
    value = uptime_text(uptime.reachable_pct)
    observed = uptime.observed.total_seconds() / 3600
    title = f"{found.name}: up {value} of the time observed in the last {window}"
    if uptime.reachable_pct is None:
        title = f"{found.name}: nothing observed in the last {window}"
    elif uptime.usable_pct is not None and uptime.usable_pct != uptime.reachable_pct:
        title += f" (usable {uptime_text(uptime.usable_pct)})"
    if uptime.reachable_pct is not None:
        title += f", {observed:.1f} h observed"
    return Badge(f"uptime {window}", value, uptime_colour(uptime.reachable_pct), title)


def uptime_colour(pct: float | None) -> str:
    """Grey without data; green from 99.9 %, then yellowgreen, yellow, orange, red below 90 %."""
    if pct is None:
        return "grey"
    return next((c for floor, c in UPTIME_COLOURS if pct >= floor), "red")


def sla_text(pct: float | None) -> str:
    """A month's SLA figure as the status page's SLA table shows it: three decimals."""
    return "no data" if pct is None else f"{pct:.3f}%"


def sla_badge(found: Subject, month: str) -> Badge:
    label = f"SLA {month}"
    value = sla_text(found.sla_pct)
    if found.sla_pct is None:
        return Badge(label, value, "grey", f"{found.name}: no data in {month} yet")
    if found.objective_pct is None:
        what = "availability" if found.kind == "pools" else "uptime"
        return Badge(label, value, "blue", f"{found.name}: {what} {value} in {month} so far")
    met = found.sla_pct >= found.objective_pct
    objective = f"{found.objective_pct:g}%"
    title = (
        f"{found.name}: {value} in {month} so far against an objective of {objective} "
        f"({'met' if met else 'missed'})"
    )
    return Badge(label, f"{value} / {objective}", "green" if met else "red", title)
