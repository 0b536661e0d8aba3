"""An interruption notice an agent heard on its box's metadata service, as an account event
(pure): the one shape every surface reads, beside what the providers' APIs and pushes say.

A notice's own key is not unique beyond its box: AWS' spot instance-action is keyed by its time
and action, which two instances reclaimed at once share, Azure's EventId is shared by every VM
of one event, and GCE names only the value (``preempted``). So the stored key is the cloud, the
target the agent reported for and the notice's key, and for GCE also its deadline (each
preemption or maintenance of a box is its own event there). The same notice pushed again (an
agent retrying) has the same key.
"""

from __future__ import annotations

from datetime import UTC, datetime

from monitor.account.model import AccountEvent, EventKind, EventStatus, Provider
from monitor.interruptions.model import Notice

SOURCE = "agent"

# the metadata services' words (monitor.interruptions.model.KINDS) -> kind
NOTICE_KINDS: dict[str, EventKind] = {
    "preemption": "preemption",
    "stop": "preemption",
    "hibernate": "preemption",
    "rebalance": "preemption",
    "scheduled_maintenance": "scheduled_maintenance",
    "reboot": "scheduled_maintenance",
    "redeploy": "scheduled_maintenance",
}
CLOUD_NAMES: dict[str, str] = {"aws": "AWS", "gcp": "Google Cloud", "azure": "Azure"}
_PROVIDERS: dict[str, Provider] = {"aws": "aws", "gcp": "gcp", "azure": "azure"}


def notice_key(notice: Notice, target: str) -> str:
    """The stored key of ``notice`` heard on ``target``'s box (see the module's docstring)."""
    key = f"{notice.cloud}:{target}:{notice.key}"
    if notice.cloud == "gcp" and notice.deadline is not None:
        key += f"@{notice.deadline.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"
    return key


def notice_status(deadline: datetime | None, now: datetime) -> EventStatus:
    """``upcoming`` while the deadline is ahead; ``open`` once it has passed or when the
    provider names none (the interruption is under way)."""
    return "upcoming" if deadline is not None and deadline > now else "open"


def notice_title(notice: Notice) -> str:
    """``AWS preemption notice``, ``Azure redeploy notice``, ``Google Cloud scheduled
    maintenance notice``."""
    return f"{CLOUD_NAMES[notice.cloud]} {notice.kind.replace('_', ' ')} notice"


def notice_event(
    notice: Notice, target: str, now: datetime, external_id: str | None = None
) -> AccountEvent:
    """The account event of ``notice``, heard by the agent of ``target`` (whose instance is
    ``external_id``, when known) and received at ``now``. It carries no ``updated_at``: the
    metadata service gives no time of its own, so a later push of it replaces the stored one."""
    deadline = notice.deadline.astimezone(UTC) if notice.deadline is not None else None
    return AccountEvent(
        provider=_PROVIDERS[notice.cloud],
        source=SOURCE,
        key=notice_key(notice, target),
        kind=NOTICE_KINDS[notice.kind],
        status=notice_status(deadline, now),
        starts_at=deadline,
        title=notice_title(notice),
        detail=notice.detail,
        entities=(external_id,) if external_id else (),
        raw_type=f"metadata:{notice.kind}",
    )
