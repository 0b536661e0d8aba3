"""Where an alert goes and whether a silence mutes it (pure); maintenance windows are matched
by ``monitor.sla.maintenance``, shared with the report."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from monitor.config.models import RouteConfig, SilenceConfig


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
