"""What a kind of target is: everything slamon knows about one kind, in one record.

A ``ProbeKind`` says what the kind's config must give, how it is probed (or, for a pushed kind,
judged), and which alert its usable series raises. The kinds themselves, one module each, are
registered in ``monitor.probes.kinds``; nothing else names a kind.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from sqlalchemy.orm import Session

from monitor.probes.model import ProbeResult, ProbeTarget, UnusableCause
from monitor.probes.wire import ProbeClient

Probe = Callable[[ProbeTarget, ProbeClient], Awaitable[ProbeResult]]
Judge = Callable[[Session, datetime], list[ProbeResult]]


@dataclass(frozen=True, slots=True)
class UrlRule:
    """The URL a kind's config must give: one of ``schemes``, with a host unless not
    ``needs_host``, and a port where ``needs_port``. ``shape`` is said in the error,
    ``pattern`` in the JSON schema."""

    schemes: tuple[str, ...]
    shape: str
    pattern: str
    needs_port: bool = False
    needs_host: bool = True

    def problem(self, kind: str, url: str | None) -> str | None:
        """Why ``url`` will not do for a ``kind`` target; None when it will."""
        if not url:
            return f"url: a {kind} target needs one"
        parts = urlsplit(url)
        if parts.scheme not in self.schemes or (self.needs_host and not parts.hostname):
            return f"url: a {kind} target needs {self.shape}"
        if self.needs_port and parts.port is None:  # an out-of-range port raises ValueError
            return f"url: a {kind} target needs {self.shape}"
        return None


@dataclass(frozen=True, slots=True)
class UsableRule:
    """An alert a kind's usable series raises when it fails while the target is reachable:
    for an outage of ``cause``, or of any cause where ``cause`` is None."""

    rule: str
    severity: str
    what: str  # "<target> <what>": e.g. "is reachable but its GPUs are not usable"
    cause: UnusableCause | None = None


@dataclass(frozen=True, slots=True)
class ProbeKind:
    """One kind of target. Exactly one of ``probe`` (slamon reaches out: http, tcp, dcgm) and
    ``judge`` (the target pushes, slamon judges what arrived: heartbeat) is set.

    Every kind feeds the ``reachable`` series; ``usable`` rules mean its usable series can
    differ from reachability, and say which alert each cause of an unusable outage raises (a
    heartbeat's stalled step ``heartbeat_stalled``, its pushed GPU readings ``gpu_health``).
    ``remembers_detail``: the probe compares against what its last result stored (dcgm's GPU
    counters), so the round reads that back first.
    """

    name: str
    url: UrlRule | None
    probe: Probe | None = None
    judge: Judge | None = None
    usable: tuple[UsableRule, ...] = ()
    remembers_detail: bool = False

    def usable_rules(self, causes: Collection[str]) -> tuple[UsableRule, ...]:
        """The rules an unusable outage of ``causes`` raises: each rule for one of them and
        each rule for any cause; where that is none (no cause known), the kind's first rule."""
        chosen = tuple(r for r in self.usable if r.cause is None or r.cause in causes)
        return chosen or self.usable[:1]

    def __post_init__(self) -> None:
        if (self.probe is None) == (self.judge is None):
            raise ValueError(f"probe kind {self.name!r}: give exactly one of probe and judge")
