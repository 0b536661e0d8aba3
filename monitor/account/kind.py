"""What a kind of account event source is: everything slamon knows about one kind, in one record.

An ``AccountKind`` names the options it takes (a pydantic model, validated where it is
configured), the extra that installs its SDK (checked before a poll, so a source configured
without it fails with one line naming the extra), and how it lists events. The kinds, one module
each, are registered in ``monitor.account.kinds``; nothing else names a kind. It mirrors
:mod:`monitor.discovery.kind`, a peer it does not import.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from monitor.account.model import AccountEvent, Provider
from monitor.extras import missing_extra


class SourceOptions(BaseModel):
    """Base of each kind's own options: unknown keys are refused, as everywhere in the config."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass(frozen=True, slots=True)
class EventPollContext:
    """What a kind's ``list_events`` is given besides its options: the source's name (for
    messages), the time now (UTC), the per-request timeout in seconds, and the checkpoint:
    ``since``, the last update time of a clean poll (None: everything the provider still has).
    A kind asks its provider for events updated since then where the API can filter so; the
    caller advances the checkpoint only after a poll that raised nothing."""

    source: str
    now: datetime
    timeout_s: float = 20.0
    since: datetime | None = None


# options, context -> events; raises monitor.errors.EventPollFailed when the source cannot be read
ListEvents = Callable[[Any, EventPollContext], Sequence[AccountEvent]]


@dataclass(frozen=True, slots=True)
class AccountKind:
    """One kind of account event source.

    ``requires`` are the modules its SDK provides and ``extra`` the package extra that installs
    them (``slamon[aws]``); a kind that needs nothing beyond slamon leaves both empty.
    ``list_events`` imports the SDK inside itself, so it loads only in a process that polls.
    """

    name: str
    provider: Provider
    options: type[SourceOptions]
    list_events: ListEvents
    requires: tuple[str, ...] = ()
    extra: str | None = None

    def missing_extra(self) -> str | None:
        """One line saying which extra to install, when a module it needs is missing."""
        return missing_extra(self.name, self.requires, self.extra)
