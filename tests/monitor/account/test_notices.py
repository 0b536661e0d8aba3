"""An agent's interruption notice as an account event (pure): the kind of each metadata word,
the status from the deadline, a key unique to the box (and, for GCE, to the occurrence)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from monitor.account.model import AccountEvent
from monitor.account.notices import NOTICE_KINDS, notice_event, notice_key, notice_status
from monitor.interruptions.model import KINDS, Notice

NOW = datetime(2026, 12, 4, 22, 0, tzinfo=UTC)
SOON = NOW + timedelta(minutes=2)


def test_every_metadata_word_has_a_kind() -> None:
    assert set(NOTICE_KINDS) == set(KINDS)


@pytest.mark.parametrize(
    ("cloud", "kind", "event_kind", "title"),
    [
        ("aws", "preemption", "preemption", "AWS preemption notice"),
        ("aws", "stop", "preemption", "AWS stop notice"),
        ("aws", "hibernate", "preemption", "AWS hibernate notice"),
        ("aws", "rebalance", "preemption", "AWS rebalance notice"),
        ("aws", "reboot", "scheduled_maintenance", "AWS reboot notice"),
        ("gcp", "preemption", "preemption", "Google Cloud preemption notice"),
        ("gcp", "scheduled_maintenance", "scheduled_maintenance",
         "Google Cloud scheduled maintenance notice"),
        ("azure", "preemption", "preemption", "Azure preemption notice"),
        ("azure", "reboot", "scheduled_maintenance", "Azure reboot notice"),
        ("azure", "redeploy", "scheduled_maintenance", "Azure redeploy notice"),
    ],
)  # fmt: skip
def test_each_notice_maps_to_its_kind(cloud: str, kind: str, event_kind: str, title: str) -> None:
    notice = Notice(cloud, kind, SOON, "K-1", "the provider's words")
    event = notice_event(notice, "box", NOW, "i-0abc")
    assert (event.provider, event.kind, event.title) == (cloud, event_kind, title)
    assert (event.source, event.raw_type) == ("agent", f"metadata:{kind}")


def test_the_whole_event_of_an_aws_spot_notice() -> None:
    notice = Notice("aws", "preemption", SOON, "2026-12-04T22:02:00Z terminate",
                    "spot instance-action terminate")  # fmt: skip
    assert notice_event(notice, "box", NOW, "i-0abc") == AccountEvent(
        provider="aws",
        source="agent",
        key="aws:box:2026-12-04T22:02:00Z terminate",
        kind="preemption",
        status="upcoming",
        starts_at=SOON,
        title="AWS preemption notice",
        detail="spot instance-action terminate",
        entities=("i-0abc",),
        raw_type="metadata:preemption",
    )


@pytest.mark.parametrize(
    ("deadline", "status"),
    [(SOON, "upcoming"), (NOW, "open"), (NOW - timedelta(seconds=1), "open"), (None, "open")],
    ids=["ahead", "now", "passed", "none"],
)
def test_a_notice_is_upcoming_until_its_deadline(deadline: datetime | None, status: str) -> None:
    assert notice_status(deadline, NOW) == status


def test_a_target_without_an_instance_id_names_no_entity() -> None:
    notice = Notice("azure", "reboot", None, "E-1", "")
    assert notice_event(notice, "box", NOW).entities == ()


def test_the_deadline_is_stored_in_utc() -> None:
    later = SOON.astimezone(timezone(timedelta(hours=2)))
    event = notice_event(Notice("azure", "reboot", later, "E-1", ""), "box", NOW)
    assert event.starts_at == SOON
    assert event.starts_at.tzinfo == UTC


@pytest.mark.parametrize(
    ("notice", "target", "key"),
    [
        (Notice("aws", "preemption", SOON, "2026-12-04T22:02:00Z terminate", ""), "box-1",
         "aws:box-1:2026-12-04T22:02:00Z terminate"),
        (Notice("azure", "redeploy", SOON, "E-1", ""), "box-2", "azure:box-2:E-1"),
        (Notice("gcp", "preemption", SOON, "preempted", ""), "box-1",
         "gcp:box-1:preempted@2026-12-04T22:02:00Z"),
        (Notice("gcp", "preemption", SOON + timedelta(days=3), "preempted", ""), "box-1",
         "gcp:box-1:preempted@2026-12-07T22:02:00Z"),
    ],
    ids=["aws", "azure", "gce", "gce-again-later"],
)  # fmt: skip
def test_a_key_is_the_boxs_own_and_for_gce_the_occurrences(
    notice: Notice, target: str, key: str
) -> None:
    """Two boxes reclaimed at one moment share AWS' key and Azure's EventId; every GCE
    preemption is keyed ``preempted``: the stored key keeps them apart."""
    assert notice_key(notice, target) == key
