"""The probe kinds, by name: one module per kind, one line each below.

A kind module defines ``KIND``, a :class:`~monitor.probes.model.ProbeKind`. Everything that
depends on the kind (config validation, which targets the dispatcher claims, which are judged
from pushes, the alert a usable failure raises) reads it from here, so a new kind (a cloud-API
state check, an NVML reading) is its module plus one line in ``_BUILT_IN``.
"""

from __future__ import annotations

from monitor.probes.kind import ProbeKind
from monitor.probes.kinds import dcgm, heartbeat, http, tcp

_BUILT_IN = (http.KIND, tcp.KIND, dcgm.KIND, heartbeat.KIND)

KINDS: dict[str, ProbeKind] = {kind.name: kind for kind in _BUILT_IN}


def register(kind: ProbeKind) -> ProbeKind:
    """Add ``kind`` (a plug-in, or a test's toy kind); a name already taken is refused."""
    if kind.name in KINDS:
        raise ValueError(f"probe kind {kind.name!r} is already registered")
    KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove a kind added with :func:`register` (the built-ins stay)."""
    if any(kind.name == name for kind in _BUILT_IN):
        raise ValueError(f"probe kind {name!r} is built in")
    KINDS.pop(name, None)


def probed() -> list[str]:
    """Kinds slamon reaches out to (the dispatcher claims their targets)."""
    return sorted(name for name, kind in KINDS.items() if kind.probe is not None)


def kind_for_url(url: str) -> str:
    """The first probed kind whose URL rule takes ``url``'s scheme (the canary's kind)."""
    scheme = url.partition("://")[0]
    for kind in KINDS.values():
        if kind.probe is not None and kind.url is not None and scheme in kind.url.schemes:
            return kind.name
    raise ValueError(f"no probe kind takes {scheme}:// URLs")


def pushed() -> list[ProbeKind]:
    """Kinds judged from what the target pushed (the judge task runs their ``judge``)."""
    return [kind for kind in KINDS.values() if kind.judge is not None]


def usable_matters(name: str) -> bool:
    """Whether the kind's usable series can differ from reachability (GPU scrapes, progress)."""
    kind = KINDS.get(name)
    return kind is not None and bool(kind.usable)


def target_rules() -> tuple[str, ...]:
    """Every alert rule a target's series can raise: ``target_down`` and the usable rules."""
    usable = sorted({rule.rule for k in KINDS.values() for rule in k.usable})
    return ("target_down", *usable)
