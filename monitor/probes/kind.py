"""What a kind of target is: everything slamon knows about one kind, in one record.

A ``ProbeKind`` says what the kind's config must give, how it is probed (or, for a pushed kind,
judged), and which alert its usable series raises. The kinds themselves, one module each, are
registered in ``monitor.probes.kinds``; nothing else names a kind.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from sqlalchemy.orm import Session

from monitor.probes.model import ProbeResult, ProbeTarget
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
    """The alert a kind's usable series raises when it fails while the target is reachable."""

    rule: str
    severity: str
    what: str  # "<target> <what>": e.g. "is reachable but its GPUs are not usable"


@dataclass(frozen=True, slots=True)
class ProbeKind:
    """One kind of target. Exactly one of ``probe`` (slamon reaches out: http, tcp, dcgm) and
    ``judge`` (the target pushes, slamon judges what arrived: heartbeat) is set.

    Every kind feeds the ``reachable`` series; ``usable`` set means its usable series can differ
    from reachability and raises that rule, or ``usable_with_gpus`` for a target with ``gpus``
    where the kind judges GPUs only then (a heartbeat box running `slamon agent`).
    ``remembers_detail``: the probe compares against what its last result stored (dcgm's GPU
    counters), so the round reads that back first.
    """

    name: str
    url: UrlRule | None
    probe: Probe | None = None
    judge: Judge | None = None
    usable: UsableRule | None = None
    remembers_detail: bool = False
    usable_with_gpus: UsableRule | None = None

    def usable_rule(self, gpus: int) -> UsableRule | None:
        """The rule a target of this kind with ``gpus`` GPUs raises for its usable series."""
        if gpus > 0 and self.usable_with_gpus is not None:
            return self.usable_with_gpus
        return self.usable

    def __post_init__(self) -> None:
        if (self.probe is None) == (self.judge is None):
            raise ValueError(f"probe kind {self.name!r}: give exactly one of probe and judge")
