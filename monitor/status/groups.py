"""The fleet in groups (pure): what keeps the status page readable at a thousand targets, and
what a pool's or a provider's badge says.

The front page lists groups, not targets: each provider (``Target.provider``; targets with none
form one group too), and under it the pools most of whose members it holds, and its targets in no
pool, each with its members counted by displayed state and its uptime pooled. A group drills down
to a page of its own: a pool to ``/pools/NAME`` (every member, whatever its provider), the rest to
``/fleet`` with the group's filter. The front page lists every target only while the fleet is
small (``FRONT_PAGE_TARGETS``); beyond, only those not up, so trouble stays in sight.

Everything is shaped from one ``StatusView`` (``monitor.status.view``), so the page, the pool
page, the badges and the fleet row of each member agree by construction:

- A group's **state** is the pools' rule (``PoolHealth.state``: up with ``min_up`` usable
  members, unknown when the members nobody can see could make up the shortfall, down when even
  they could not), told apart once more: ``degraded`` when it is up but some member is not (down,
  unusable or unknown). A pool needs its configured ``min_up``, any other group one usable
  member. A group with no member is unknown, except a configured pool: the page counts it down.
  Unknown is never up: a group whose members are all unknown is unknown.
- Its **uptime** over each window is the members' uptime weighted by the time each was
  observed: time seen up over time observed, summed over the members (a member nobody watched
  weighs nothing; a group nobody watched has no data).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import quote, urlencode

from monitor.history.notices import NoticeView
from monitor.status.health import PoolHealth, pool_health
from monitor.status.history import DOWN, UNKNOWN, UNUSABLE, UP, Uptime
from monitor.status.pages import scope_labels
from monitor.status.view import WINDOWS, StatusView, TargetView

DEGRADED = "degraded"
# the front page lists every target up to this many, and beyond only those not up (as many)
FRONT_PAGE_TARGETS = 100
POOL_PAGE = "/pools/{name:path}"  # a route template: names may hold any character
FLEET_PAGE = "/fleet"
NO_PROVIDER = "(no provider)"
# trouble first: a group's state, worst first
GROUP_ORDER = {DOWN: 0, UNUSABLE: 1, UNKNOWN: 2, DEGRADED: 3, UP: 4}


def pool_path(name: str) -> str:
    return "/pools/" + quote(name, safe="")


def fleet_path(
    provider: str | None = None, pool: str | None = None, states: Sequence[str] = ()
) -> str:
    """``/fleet`` narrowed to a provider, a pool and states; an empty ``provider`` or ``pool``
    selects the targets without one."""
    query: list[tuple[str, str]] = []
    if provider is not None:
        query.append(("provider", provider))
    if pool is not None:
        query.append(("pool", pool))
    query.extend(("state", s) for s in states)
    return FLEET_PAGE + ("?" + urlencode(query) if query else "")


# --------------------------------------------------------------------------- the rules


def group_state(health: PoolHealth, empty: str = UNKNOWN) -> str:
    """``health``'s state (``PoolHealth.state``), ``degraded`` when it is up but not every
    member is; ``empty`` for a group with no member."""
    if health.total == 0:
        return empty
    state = health.state
    return DEGRADED if state == UP and health.up < health.total else state


def pooled_uptime(uptimes: Iterable[Uptime], window: timedelta) -> Uptime:
    """The uptime of members over ``window``, weighted by the time each was observed: the time
    they were seen not up (each member's share of its observed time) over the time they were
    observed, summed. No data (None) when no member was observed."""
    observed = 0.0
    down = unusable = 0.0  # seconds not reachable; not usable
    for u in uptimes:
        seconds = u.observed.total_seconds()
        if seconds <= 0 or u.reachable_pct is None:
            continue
        observed += seconds
        down += seconds * (100.0 - u.reachable_pct) / 100.0
        usable = u.reachable_pct if u.usable_pct is None else u.usable_pct
        unusable += seconds * (100.0 - usable) / 100.0
    if observed <= 0:
        return Uptime(window, timedelta(0), None, None)
    return Uptime(
        window,
        timedelta(seconds=observed),
        _pct(100.0 * (1.0 - down / observed)),
        _pct(100.0 * (1.0 - unusable / observed)),
    )


def _pct(value: float) -> float:
    return min(100.0, max(0.0, value))


def pooled(members: Sequence[TargetView]) -> tuple[Uptime, ...]:
    """The members' uptime over each of ``WINDOWS``, pooled."""
    return tuple(
        pooled_uptime((m.uptime[i] for m in members if len(m.uptime) > i), w)
        for i, w in enumerate(WINDOWS)
    )


# --------------------------------------------------------------------------- groups


@dataclass(frozen=True, slots=True)
class Group:
    """Targets counted together: a pool, a provider's targets, or a provider's targets in no
    pool. ``key`` is what its page is found by (a pool's name, a provider's slug, "" for
    none)."""

    key: str
    name: str
    health: PoolHealth
    uptime: tuple[Uptime, ...]  # pooled over WINDOWS
    state: str  # up | degraded | unknown | down

    @property
    def counts(self) -> dict[str, int]:
        h = self.health
        return {UP: h.up, UNUSABLE: h.unusable, DOWN: h.down, UNKNOWN: h.unknown}


def group_of(
    key: str, name: str, members: Sequence[TargetView], min_up: int = 1, empty: str = UNKNOWN
) -> Group:
    health = pool_health(name, min_up, [m.state for m in members])
    return Group(key, name, health, pooled(members), group_state(health, empty))


def pool_group(health: PoolHealth, members: Sequence[TargetView]) -> Group:
    """A pool as a group: the page's ``PoolHealth`` (its ``min_up``), its members' uptime; a
    configured pool with no live member is down, as the page counts it."""
    return Group(health.name, health.name, health, pooled(members), group_state(health, DOWN))


@dataclass(frozen=True, slots=True)
class ProviderGroup:
    """A provider's targets, and the pools listed under it."""

    slug: str | None  # None: the targets naming no provider
    name: str  # the provider's name when slamon knows it, else its slug
    has_page: bool  # slamon knows it (``/providers/SLUG`` answers)
    group: Group
    pools: tuple[Group, ...]  # the pools most of whose members it holds, trouble first
    unpooled: Group | None  # its targets in no pool


def by_key(values: Iterable[TargetView], key: str) -> dict[str, list[TargetView]]:
    """Targets by their ``pool`` or ``provider`` ("" for none), in the order given."""
    found: dict[str, list[TargetView]] = {}
    for target in values:
        found.setdefault(getattr(target, key) or "", []).append(target)
    return found


def home_provider(members: Sequence[TargetView]) -> str:
    """The provider holding most of a pool's members ("" for none; a tie to the first by
    slug): where the front page lists the pool."""
    counts = Counter(m.provider or "" for m in members)
    if not counts:
        return ""
    return min(counts, key=lambda slug: (-counts[slug], slug))


def provider_groups(view: StatusView) -> tuple[ProviderGroup, ...]:
    """The front page's groups: each provider with a live target (or a pool listed under it), by
    name, the targets naming no provider last."""
    names = {p.slug: p.name for p in view.providers}
    members = by_key(view.fleet, "pool")
    pools_at: dict[str, list[Group]] = {}
    for health in view.pools:
        pool_members = members.get(health.name, [])
        pools_at.setdefault(home_provider(pool_members), []).append(
            pool_group(health, pool_members)
        )
    targets_at = by_key(view.fleet, "provider")
    groups = []
    for slug in set(targets_at) | set(pools_at):
        targets = targets_at.get(slug, [])
        unpooled = [t for t in targets if not t.pool]
        name = names.get(slug, slug) if slug else NO_PROVIDER
        groups.append(
            ProviderGroup(
                slug=slug or None,
                name=name,
                has_page=slug in names,
                group=group_of(slug, name, targets),
                pools=tuple(sorted(pools_at.get(slug, []), key=_trouble_first)),
                unpooled=group_of("", "no pool", unpooled) if unpooled else None,
            )
        )
    return tuple(sorted(groups, key=lambda g: (g.slug is None, g.name.lower(), g.slug or "")))


def _trouble_first(group: Group) -> tuple[int, str]:
    return GROUP_ORDER.get(group.state, 0), group.name


@dataclass(frozen=True, slots=True)
class FrontFleet:
    """The targets the front page lists: all of them in a small fleet, else those not up."""

    rows: tuple[TargetView, ...]
    total: int  # targets in the fleet
    trouble: int  # of them not up
    trimmed: bool  # only targets not up are listed (at most FRONT_PAGE_TARGETS)

    @property
    def unlisted(self) -> int:
        """Targets not up left off the list."""
        return self.trouble - len(self.rows) if self.trimmed else 0


def front_fleet(fleet: Sequence[TargetView], limit: int = FRONT_PAGE_TARGETS) -> FrontFleet:
    """``fleet`` (in the page's order: trouble first) as the front page lists it."""
    trouble = [t for t in fleet if t.state != UP]
    if len(fleet) <= limit:
        return FrontFleet(tuple(fleet), len(fleet), len(trouble), trimmed=False)
    return FrontFleet(tuple(trouble[:limit]), len(fleet), len(trouble), trimmed=True)


# --------------------------------------------------------------------------- drill-down pages


@dataclass(frozen=True, slots=True)
class PoolPage:
    """``/pools/NAME``: the pool as a group, its month so far, its members trouble first."""

    now: datetime
    month: str
    history_start: datetime | None
    group: Group
    providers: tuple[str, ...]  # the slugs its members name, most members first
    availability_pct: float | None  # month to date: share of time min_up members were up
    members: tuple[TargetView, ...]
    notices: tuple[NoticeView, ...] = ()  # the operators' about a member (or everything)


def pool_page(view: StatusView, name: str) -> PoolPage | None:
    """The pool ``name`` (named by a live target or the config); None when there is none."""
    health = next((p for p in view.pools if p.name == name), None)
    if health is None:
        return None
    members = tuple(t for t in view.fleet if t.pool == name)
    providers = Counter(m.provider for m in members if m.provider)
    report = view.report
    month = {p.name: p.availability_pct for p in report.pools} if report else {}
    return PoolPage(
        now=view.now,
        month=view.month,
        history_start=view.history_start,
        group=pool_group(health, members),
        providers=tuple(sorted(providers, key=lambda s: (-providers[s], s))),
        availability_pct=month.get(name),
        members=members,
        notices=tuple(n for n in view.notices if any(n.about(scope_labels(m)) for m in members)),
    )


@dataclass(frozen=True, slots=True)
class FleetFilter:
    """What ``/fleet`` lists: None matches anything; "" a target without a provider (a pool)."""

    provider: str | None = None
    pool: str | None = None
    states: frozenset[str] = frozenset()

    def matches(self, target: TargetView) -> bool:
        return (
            (self.provider is None or (target.provider or "") == self.provider)
            and (self.pool is None or (target.pool or "") == self.pool)
            and (not self.states or target.state in self.states)
        )

    @property
    def words(self) -> str:
        """The filter as the page's heading says it."""
        parts = []
        if self.provider is not None:
            parts.append(f"provider {self.provider}" if self.provider else "no provider")
        if self.pool is not None:
            parts.append(f"pool {self.pool}" if self.pool else "no pool")
        if self.states:
            parts.append(" or ".join(sorted(self.states, key=GROUP_ORDER.__getitem__)))
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class FleetPage:
    """``/fleet``: the targets ``selected`` matches, trouble first, as a group."""

    now: datetime
    history_start: datetime | None
    selected: FleetFilter
    group: Group
    rows: tuple[TargetView, ...]


def fleet_page(view: StatusView, selected: FleetFilter) -> FleetPage:
    rows = tuple(t for t in view.fleet if selected.matches(t))
    return FleetPage(
        view.now, view.history_start, selected, group_of("", selected.words, rows), rows
    )


def provider_members(view: StatusView, slug: str) -> list[TargetView] | None:
    """The live targets naming provider ``slug``; None when slamon knows no such provider
    (neither its catalog nor any live target names it)."""
    members = [t for t in view.fleet if t.provider == slug]
    known: Mapping[str, object] = {p.slug: p for p in view.providers}
    return members if members or slug in known else None
