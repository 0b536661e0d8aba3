"""Where an alert goes and whether it is muted (pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Protocol, TypeVar

from monitor.config.models import MaintenanceConfig, RouteConfig, SilenceConfig


def matches(match: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    """Every key of ``match`` has that value in ``labels`` (an empty match matches all)."""
    return all(labels.get(key) == value for key, value in match.items())


def route(
    labels: Mapping[str, str], routes: Sequence[RouteConfig], channels: Iterable[str]
) -> list[str]:
    """Channel names for ``labels``: routes in order, stopping after a match with
    ``continue: false``; with no routes configured, every channel."""
    if not routes:
        return sorted(channels)
    chosen: list[str] = []
    for rule in routes:
        if matches(rule.match, labels):
            chosen += [c for c in rule.channels if c not in chosen]
            if not rule.continue_:
                break
    return chosen


def silenced(labels: Mapping[str, str], silences: Iterable[SilenceConfig], now: datetime) -> bool:
    return any(
        (s.start is None or s.start <= now) and now < s.end and matches(s.match, labels)
        for s in silences
    )


def in_maintenance(
    labels: Mapping[str, str], windows: Iterable[MaintenanceConfig], now: datetime
) -> bool:
    """A planned window covering the alert's target (by name, or provider/region/pool)."""
    return any(w.start <= now < w.end for w in windows_for(labels, windows))


class MaintenanceScope(Protocol):
    """What a maintenance window covers: named targets, or a provider/region/pool scope
    (config windows and stored ones both have these fields)."""

    @property
    def targets(self) -> list[str]: ...
    @property
    def provider(self) -> str | None: ...
    @property
    def region(self) -> str | None: ...
    @property
    def pool(self) -> str | None: ...


W = TypeVar("W", bound=MaintenanceScope)


def covers(window: MaintenanceScope, labels: Mapping[str, str]) -> bool:
    """Whether ``window`` applies to what ``labels`` describe, at any time."""
    if window.targets:
        return labels.get("target") in window.targets
    scope = {"provider": window.provider, "region": window.region, "pool": window.pool}
    given = {k: v for k, v in scope.items() if v is not None}
    return bool(given) and all(labels.get(k) == v for k, v in given.items())


def windows_for(labels: Mapping[str, str], windows: Iterable[W]) -> list[W]:
    """The maintenance windows that apply to what ``labels`` describe, at any time."""
    return [window for window in windows if covers(window, labels)]
