"""Why an outage happened, from what else was down at the same time (pure).

Order of the verdicts: our own side first (many unrelated targets failing together means our
network or vantage, not the provider), then GPU hardware (unusable while reachable), then the
provider's scope: provider-wide, regional, or a single instance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

SIMULTANEOUS = timedelta(minutes=1)  # outages starting this close together are one event
OUR_SIDE_SHARE = 0.8  # this share of all watched targets down together points at us


@dataclass(frozen=True, slots=True)
class OutageFact:
    target: str
    provider: str | None
    region: str | None
    zone: str | None
    series: str
    start: datetime
    end: datetime


@dataclass(frozen=True, slots=True)
class IncidentFact:
    provider: str
    regions: tuple[str, ...]
    start: datetime
    end: datetime


def classify(
    outage: OutageFact,
    others: Sequence[OutageFact],
    incidents: Sequence[IncidentFact],
    watched_targets: int,
    watched_providers: int,
    reachable_down: bool,
) -> str:
    """The cause of ``outage``; ``others`` are all outages of the month (any target)."""
    together = [o for o in others if o.series == "reachable" and _same_event(o, outage)]
    providers = {o.provider for o in together}
    if (
        watched_providers > 1
        and len(providers) > 1
        and watched_targets >= 3
        and len({o.target for o in together}) >= OUR_SIDE_SHARE * watched_targets
    ):
        return "vantage"
    if outage.series == "usable" and not reachable_down:
        return "gpu_hardware"
    if outage.provider is None:
        return "single_instance"  # no provider named: nothing to correlate with
    overlapping = [i for i in incidents if i.provider == outage.provider and _overlaps(i, outage)]
    same_provider = [o for o in together if o.provider == outage.provider]
    if any(not i.regions or "global" in i.regions for i in overlapping):
        return "provider_wide"
    if len({o.region for o in same_provider if o.region}) > 1:
        return "provider_wide"
    if outage.region is None:
        return "single_instance"
    if any(outage.region in i.regions for i in overlapping):
        return "regional"
    if len({o.target for o in same_provider if o.region == outage.region}) > 1:
        return "regional"
    return "single_instance"


class EventIndex:
    """Outages bucketed by start minute, so finding what failed together is not quadratic."""

    def __init__(self, facts: Sequence[OutageFact]) -> None:
        self.buckets: dict[int, list[OutageFact]] = {}
        for fact in facts:
            self.buckets.setdefault(_minute(fact.start), []).append(fact)

    def around(self, outage: OutageFact) -> list[OutageFact]:
        """Outages that may have started within ``SIMULTANEOUS`` of ``outage``."""
        minute = _minute(outage.start)
        return [f for m in (minute - 1, minute, minute + 1) for f in self.buckets.get(m, ())]


def _minute(at: datetime) -> int:
    return int(at.timestamp() // 60)


def _same_event(a: OutageFact, b: OutageFact) -> bool:
    return abs(a.start - b.start) <= SIMULTANEOUS


def _overlaps(incident: IncidentFact, outage: OutageFact) -> bool:
    return incident.start < outage.end and outage.start < incident.end
