"""Which planned maintenance windows apply to a target (pure).

One rule for "is this window about this target", shared by the alert router (mute while in
maintenance) and the SLA report (subtract maintenance where the policy excludes it): a window
names targets, or scopes a provider/region/pool, and labels describe the target.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Protocol, TypeVar


class MaintenanceScope(Protocol):
    """What a maintenance window covers: named targets, or a provider/region/pool scope
    (config windows and stored ones both have these fields)."""

    @property
    def targets(self) -> Sequence[str]: ...
    @property
    def provider(self) -> str | None: ...
    @property
    def region(self) -> str | None: ...
    @property
    def pool(self) -> str | None: ...


class MaintenanceWindow(MaintenanceScope, Protocol):
    """A scope with a time: ``[start, end)``, UTC."""

    @property
    def start(self) -> datetime: ...
    @property
    def end(self) -> datetime: ...


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


def in_maintenance(
    labels: Mapping[str, str], windows: Iterable[MaintenanceWindow], now: datetime
) -> bool:
    """A planned window covering the target (by name, or provider/region/pool) at ``now``."""
    return any(w.start <= now < w.end for w in windows_for(labels, windows))
