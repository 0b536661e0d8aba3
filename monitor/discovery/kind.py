"""What a kind of discovery source is: everything slamon knows about one kind, in one record.

A ``DiscoveryKind`` names the options its config takes (a pydantic model: the config validates
them, so `slamon config check` reports a bad option with its path), the extra that installs its
SDK (checked at config time, so a source configured without it fails with one line naming the
extra), and how it lists instances. The kinds, one module each, are registered in
``monitor.discovery.kinds``; nothing else names a kind.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from monitor.discovery.model import Instance
from monitor.extras import missing_extra


class SourceOptions(BaseModel):
    """Base of each kind's own options: unknown keys are refused, as everywhere in the config."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True, slots=True)
class SweepContext:
    """What a kind's ``list_instances`` is given besides its options: the source's name (for
    messages), the time now (UTC), and the per-request timeout in seconds."""

    source: str
    now: datetime
    timeout_s: float = 20.0


# options -> instances; raises monitor.errors.SweepFailed when the source cannot be read
ListInstances = Callable[[Any, SweepContext], Sequence[Instance]]


@dataclass(frozen=True, slots=True)
class DiscoveryKind:
    """One kind of discovery source.

    ``requires`` are the modules its SDK provides and ``extra`` the package extra that installs
    them (``slamon[aws]``); a kind that needs nothing beyond slamon leaves both empty.
    ``list_instances`` is imported lazily by the kind's module, so the SDK loads only in a
    process that sweeps that kind.
    """

    name: str
    options: type[SourceOptions]
    list_instances: ListInstances
    requires: tuple[str, ...] = ()
    extra: str | None = None

    def missing_extra(self) -> str | None:
        """One line saying which extra to install, when a module it needs is missing."""
        return missing_extra(self.name, self.requires, self.extra)
