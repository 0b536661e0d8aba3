"""The discovery source kinds, by name: one module per kind, one line each below.

A kind module defines ``KIND``, a :class:`~monitor.discovery.kind.DiscoveryKind`. The config
validates a source's options against its kind's record and checks its extra is installed; the
sweep calls its ``list_instances``. A new kind (another cloud, a CMDB) is its module plus one
line in ``_BUILT_IN``; a plug-in or a test's toy kind uses :func:`register`.
"""

from __future__ import annotations

from monitor.discovery.kind import DiscoveryKind
from monitor.discovery.kinds import azure, ec2, file_sd, gce, http_sd, kubernetes

_BUILT_IN = (file_sd.KIND, http_sd.KIND, ec2.KIND, gce.KIND, azure.KIND, kubernetes.KIND)

KINDS: dict[str, DiscoveryKind] = {kind.name: kind for kind in _BUILT_IN}


def register(kind: DiscoveryKind) -> DiscoveryKind:
    """Add ``kind``; a name already taken is refused."""
    if kind.name in KINDS:
        raise ValueError(f"discovery kind {kind.name!r} is already registered")
    KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove a kind added with :func:`register` (the built-ins stay)."""
    if any(kind.name == name for kind in _BUILT_IN):
        raise ValueError(f"discovery kind {name!r} is built in")
    KINDS.pop(name, None)
