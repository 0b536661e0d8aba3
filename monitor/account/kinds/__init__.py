"""The account event source kinds, by name: one module per kind, one line each below.

A kind module defines ``KIND``, an :class:`~monitor.account.kind.AccountKind`; a poll calls its
``list_events``. A new kind is its module plus one line in ``_BUILT_IN``; a plug-in or a test's
toy kind uses :func:`register`.

Lambda Cloud has no kind: its published API (OpenAPI 1.5.3: instance types, instances,
launch, terminate, restart, SSH keys, file systems) offers no maintenance or event endpoint, and
an instance's ``unhealthy`` status is a health reading the probes and discovery already see,
not an announcement (docs/account-events.md).
"""

from __future__ import annotations

from monitor.account.kind import AccountKind
from monitor.account.kinds import aws_health, azure_resource_health, ec2_events, gcp_service_health

_BUILT_IN = (aws_health.KIND, ec2_events.KIND, azure_resource_health.KIND, gcp_service_health.KIND)

KINDS: dict[str, AccountKind] = {kind.name: kind for kind in _BUILT_IN}


def register(kind: AccountKind) -> AccountKind:
    """Add ``kind``; a name already taken is refused."""
    if kind.name in KINDS:
        raise ValueError(f"account event kind {kind.name!r} is already registered")
    KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove a kind added with :func:`register` (the built-ins stay)."""
    if any(kind.name == name for kind in _BUILT_IN):
        raise ValueError(f"account event kind {name!r} is built in")
    KINDS.pop(name, None)
