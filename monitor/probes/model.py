"""What a probe is given and what it returns. A failed probe is a value, not an exception."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

PUSH_VANTAGE = "push"  # where pushed kinds' verdicts are recorded: not a place that probes

ErrorKind = Literal[
    "timeout",
    "connect",
    "tls",
    "protocol",  # it answered, but not in HTTP/1.x
    "http_status",
    "body",
    "parse",
    "gpu",
    "stalled",  # a pushed step that stopped advancing
    "vantage",
    "internal",
]

# Why a reachable target is not usable: its GPU readings fail the dcgm rules (or cannot be read),
# or its training step stopped advancing. An outage may have both; its cause names them sorted,
# joined by "+" ("gpu_hardware+stalled_step"), in the report's words for a GPU fault.
UnusableCause = Literal["gpu_hardware", "stalled_step"]
CAUSE_SEPARATOR = "+"


def cause_text(causes: frozenset[str]) -> str | None:
    """The outage row's ``cause`` for ``causes``; None for none."""
    return CAUSE_SEPARATOR.join(sorted(causes)) or None


def causes_of(text: str | None) -> frozenset[str]:
    """The causes an outage row's ``cause`` names (an imported outage's single word too)."""
    return frozenset(text.split(CAUSE_SEPARATOR)) if text else frozenset()


@dataclass(frozen=True, slots=True)
class ProbeTarget:
    """A target as the probe sees it: where to go and what counts as healthy."""

    id: int
    name: str
    kind: str
    url: str | None
    timeout_s: float
    expect_status: tuple[int, ...] = ()
    expect_body: str | None = None
    gpus: int = 0
    confirmations: int = 2
    recovery_confirmations: int | None = None  # None: as many as ``confirmations``
    gpu_baseline: dict[str, Any] | None = None  # dcgm: counters remembered from the last scrape

    @property
    def probes_to_confirm(self) -> int:
        """The most verdicts in a row a round may need to confirm either way."""
        return max(self.confirmations, self.recovery_confirmations or 0)


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """One probe. ``ok`` is reachability (None: unknown, our side failed); ``usable`` adds what
    training needs (all GPUs present, no fatal GPU signal); None where the kind cannot tell.
    ``causes``: why a reachable target is not usable, for kinds that can tell (empty otherwise)."""

    target_id: int
    target: str
    at: datetime
    ok: bool | None
    latency_ms: float | None = None
    status_code: int | None = None
    error_kind: ErrorKind | None = None
    error: str | None = None
    usable: bool | None = None
    degraded: bool = False
    gpus_seen: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    causes: frozenset[UnusableCause] = frozenset()
    # For kinds whose verdict compares against what the target's last result left remembered
    # (dcgm's GPU counters): this reading judged again against another memory. Recording calls
    # it with the memory stored once it holds the target's recording lock (probes/record.py), so
    # overlapping rounds (a target probed every second, its quick re-probes) never judge against
    # a memory another round has replaced since this one read it.
    rejudge: Callable[[Mapping[str, Any]], ProbeResult] | None = field(
        default=None, compare=False, repr=False
    )

    @property
    def usable_ok(self) -> bool | None:
        """The usable series' verdict: reachable and (where known) usable."""
        if self.ok is None:
            return None
        return self.ok and self.usable is not False

    def failed(self, kind: ErrorKind, message: str, **extra: Any) -> ProbeResult:
        """A copy of this result marked failed (used by probes that build on a success)."""
        return replace(self, ok=False, error_kind=kind, error=message, **extra)


def failure(target: ProbeTarget, at: datetime, kind: ErrorKind, error: str) -> ProbeResult:
    """A failed probe of ``target`` started at ``at``."""
    return ProbeResult(target.id, target.name, at, False, error_kind=kind, error=error)
