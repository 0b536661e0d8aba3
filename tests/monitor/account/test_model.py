"""The pure rules of monitor/account/model.py: each provider's words mapped to slamon's kinds and
statuses, as tables, and the times and words they are read with."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from monitor.account.model import (
    EVENT_KINDS,
    aws_health_kind,
    aws_health_status,
    azure_incident_kind,
    azure_reason_kind,
    azure_stage_status,
    ec2_event_kind,
    ec2_event_status,
    first_line,
    gcp_event_kind,
    gcp_event_status,
    utc,
)

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("code", "category", "kind"),
    [
        pytest.param("AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED", "scheduledChange", "retirement",
                     id="instance-retirement-is-a-retirement-not-mere-maintenance"),
        pytest.param("AWS_EC2_DEDICATED_HOST_RETIREMENT_SCHEDULED", "scheduledChange",
                     "retirement", id="host-retirement"),
        pytest.param("AWS_EC2_INSTANCE_STOP_SCHEDULED", "scheduledChange", "retirement",
                     id="ebs-backed-retirement-is-a-stop"),
        pytest.param("AWS_EC2_SYSTEM_MAINTENANCE_SCHEDULED", "scheduledChange",
                     "scheduled_maintenance", id="system-maintenance"),
        pytest.param("AWS_EC2_INSTANCE_REBOOT_MAINTENANCE_SCHEDULED", "scheduledChange",
                     "scheduled_maintenance", id="reboot-maintenance"),
        pytest.param("AWS_RDS_MAINTENANCE_SCHEDULED", "accountNotification",
                     "scheduled_maintenance", id="the-code-wins-over-the-category"),
        pytest.param("AWS_EC2_OPERATIONAL_ISSUE", "issue", "issue", id="issue"),
        pytest.param("AWS_EC2_INSTANCE_STORE_DRIVE_PERFORMANCE_DEGRADED", "issue", "issue",
                     id="degraded-drive"),
        pytest.param("AWS_BILLING_NOTIFICATION", "accountNotification", "issue",
                     id="an-account-notification-is-kept-as-an-issue"),
        pytest.param("AWS_EC2_SOMETHING_NEW", "scheduledChange", "scheduled_maintenance",
                     id="an-unknown-scheduled-change"),
        pytest.param("AWS_EC2_SOMETHING_NEW", "investigation", "issue", id="an-investigation"),
    ],
)  # fmt: skip
def test_an_aws_health_event_is_kinded_by_its_code_then_its_category(
    code: str, category: str, kind: str
) -> None:
    assert aws_health_kind(code, category) == kind


def test_aws_health_statuses_are_slamons_word_for_word_and_nothing_else() -> None:
    assert [aws_health_status(s) for s in ("open", "closed", "upcoming")] == [
        "open",
        "closed",
        "upcoming",
    ]
    with pytest.raises(ValueError, match="statusCode: 'done'"):
        aws_health_status("done")


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("instance-retirement", "retirement"),
        ("instance-stop", "retirement"),
        ("instance-reboot", "scheduled_maintenance"),
        ("system-reboot", "scheduled_maintenance"),
        ("system-maintenance", "scheduled_maintenance"),
        ("something-new", "scheduled_maintenance"),
    ],
)
def test_an_ec2_scheduled_event_is_kinded_by_its_code(code: str, kind: str) -> None:
    assert ec2_event_kind(code) == kind


@pytest.mark.parametrize(
    ("description", "not_before", "status"),
    [
        pytest.param("The instance is running on degraded hardware", datetime(2026, 12, 20,
                     tzinfo=UTC), "upcoming", id="before-its-window"),
        pytest.param("The instance is running on degraded hardware", datetime(2026, 12, 1,
                     tzinfo=UTC), "open", id="in-its-window"),
        pytest.param("[Completed] The instance is running on degraded hardware",
                     datetime(2026, 12, 1, tzinfo=UTC), "closed", id="completed"),
        pytest.param("[Canceled] Scheduled reboot", datetime(2026, 12, 20, tzinfo=UTC), "closed",
                     id="canceled-before-it-began"),
        pytest.param("Scheduled reboot", None, "open", id="no-window-given"),
    ],
)  # fmt: skip
def test_an_ec2_event_is_closed_by_its_description_else_timed_by_its_window(
    description: str, not_before: datetime | None, status: str
) -> None:
    assert ec2_event_status(description, not_before, NOW) == status


@pytest.mark.parametrize(
    ("reason", "kind"),
    [
        ("Unplanned", "issue"),
        ("Planned", "scheduled_maintenance"),
        ("UserInitiated", "user_initiated"),
        ("User Initiated", "user_initiated"),
        ("unplanned", "issue"),
        ("", "issue"),
    ],
)
def test_a_resource_health_reason_type_gives_the_kind(reason: str, kind: str) -> None:
    assert azure_reason_kind(reason) == kind


@pytest.mark.parametrize(
    ("incident_type", "kind"),
    [
        ("Incident", "issue"),
        ("Maintenance", "scheduled_maintenance"),
        ("Informational", "issue"),
        ("ActionRequired", "issue"),
        ("Security", "issue"),
    ],
)
def test_a_service_health_incident_type_gives_the_kind(incident_type: str, kind: str) -> None:
    assert azure_incident_kind(incident_type) == kind


@pytest.mark.parametrize(
    ("stage", "status"),
    [
        ("Active", "open"),
        ("InProgress", "open"),
        ("Planned", "upcoming"),
        ("Rescheduled", "upcoming"),
        ("Resolved", "closed"),
        ("RCA", "closed"),
        ("Complete", "closed"),
        ("Canceled", "closed"),
    ],
)
def test_a_service_health_stage_gives_the_status(stage: str, status: str) -> None:
    assert azure_stage_status(stage) == status


def test_a_service_health_stage_azure_does_not_document_is_refused() -> None:
    with pytest.raises(ValueError, match="stage: 'Whenever'"):
        azure_stage_status("Whenever")


def test_gcp_incidents_are_issues_and_their_state_is_the_status() -> None:
    assert gcp_event_kind("INCIDENT") == "issue"
    assert (gcp_event_status("ACTIVE"), gcp_event_status("CLOSED")) == ("open", "closed")
    with pytest.raises(ValueError, match="state: 'STATE_UNSPECIFIED'"):
        gcp_event_status("STATE_UNSPECIFIED")


def test_every_kind_a_rule_gives_is_one_of_the_five() -> None:
    given = {
        aws_health_kind("AWS_X_RETIREMENT_SCHEDULED", ""),
        aws_health_kind("X", "scheduledChange"),
        aws_health_kind("X", "issue"),
        azure_reason_kind("UserInitiated"),
    }
    assert given <= set(EVENT_KINDS)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("2016-05-04T14:11:29.7598931Z", datetime(2016, 5, 4, 14, 11, 29, 759893,
                     tzinfo=UTC), id="azure-seven-fractional-digits"),
        pytest.param("2022-10-18T17:41:20.112287Z", datetime(2022, 10, 18, 17, 41, 20, 112287,
                     tzinfo=UTC), id="google-rfc3339"),
        pytest.param("Sat, 05 Jun 2016 15:10:09 GMT", datetime(2016, 6, 5, 15, 10, 9,
                     tzinfo=UTC), id="eventbridge-rfc1123"),
        pytest.param("2026-12-04T14:00:00+02:00", datetime(2026, 12, 4, 12, tzinfo=UTC),
                     id="an-offset-becomes-utc"),
        pytest.param(datetime(2017, 1, 31, 20, 36, 31), datetime(2017, 1, 31, 20, 36, 31,
                     tzinfo=UTC), id="a-naive-datetime-is-utc"),
        pytest.param(None, None, id="none"),
        pytest.param("", None, id="empty"),
    ],
)  # fmt: skip
def test_times_are_read_as_aware_utc(value: object, expected: datetime | None) -> None:
    assert utc(value) == expected


@pytest.mark.parametrize("value", ["yesterday", "2026-13-01T00:00:00Z", 1481033166, []])
def test_a_value_that_is_no_time_is_refused(value: object) -> None:
    with pytest.raises(ValueError):
        utc(value)


def test_the_detail_is_the_first_line_of_the_words_without_markup() -> None:
    assert first_line("<p>Thisisatest</p>") == "Thisisatest"
    assert first_line("\n\n  first   line \nsecond") == "first line"
    assert first_line(None) == ""
    assert len(first_line("x" * 1000)) == 500
