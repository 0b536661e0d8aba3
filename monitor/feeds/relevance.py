"""Which incidents matter to this team: those touching the regions or components it uses."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from monitor.feeds.model import Incident

GLOBAL_REGIONS = frozenset({"global", "multi-regions", "all-regions"})


@dataclass(frozen=True, slots=True)
class Interest:
    """What the team cares about at one provider: configured regions and components, plus the
    regions its targets run in. Empty means "the whole provider"."""

    regions: frozenset[str] = frozenset()
    components: frozenset[str] = frozenset()

    @classmethod
    def of(cls, regions: Iterable[str], components: Iterable[str]) -> Interest:
        return cls(
            frozenset(r.strip().lower() for r in regions if r.strip()),
            frozenset(c.strip().lower() for c in components if c.strip()),
        )

    @property
    def everything(self) -> bool:
        return not self.regions and not self.components


def is_relevant(incident: Incident, interest: Interest) -> bool:
    """True when the incident touches what the team uses.

    An incident that names no region cannot be ruled out by region; it is relevant unless the
    team also named components and none of them match.
    """
    if interest.everything:
        return True
    regions = {r.lower() for r in incident.regions}
    if regions & (interest.regions | GLOBAL_REGIONS):
        return True
    if _component_matches(incident.components, interest.components):
        return True
    return not regions and not interest.components


def _component_matches(names: Iterable[str], wanted: frozenset[str]) -> bool:
    """Case-insensitive, either way round: "Compute Engine" matches "Google Compute Engine"."""
    lowered = [n.lower() for n in names]
    return any(w in n or n in w for n in lowered for w in wanted)
