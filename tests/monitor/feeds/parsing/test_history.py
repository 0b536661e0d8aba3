from __future__ import annotations

from datetime import UTC, datetime

import pytest

from monitor.feeds.model import IncidentUpdate
from monitor.feeds.parsing.history import (
    HistoryEntry,
    affected_components,
    is_maintenance_history,
    read_history,
    read_stamp,
    resolved_time,
    to_updates,
)
from tests.monitor.feeds.fuzzing import utc

STATUSPAGE_BODY = (
    "<p><small>Aug <var>21</var>, <var>00:37</var> UTC</small><br /> <strong>Resolved</strong> - "
    "This incident has been resolved.</p>"
    "<p><small>Aug <var>20</var>, <var>20:37</var> UTC</small><br /> <strong>Update</strong> - "
    "We are seeing <em>gradual</em> recovery &amp; a fix is rolling out.</p>"
    "<p><small>Aug <var> 4</var>, <var>14:43</var> UTC</small><br /> "
    "<strong>Investigating</strong> - We are investigating reports.</p>"
    "<p>This incident affected: Git Operations and API Requests.</p>"
)
STATUSIO_BODY = (
    "<small>September 1, 2026 1:14AM UTC</small><br /><b>Scheduled</b> - Work in US-EAST-02B"
    "<br /><br />Location:<br />US-EAST-02B<br /><br />"
    "<small>September 2, 2026 5:00PM UTC</small><br /><b>Active</b> - This maintenance has started."
    " <br /><br />"
)


@pytest.mark.parametrize(
    ("stamp", "reference", "expected"),
    [
        pytest.param(
            "Aug 21, 00:37 UTC", utc(2026, 8, 21, 0, 37), utc(2026, 8, 21, 0, 37), id="statuspage"
        ),
        pytest.param(
            "Aug  4, 15:39 UTC", utc(2025, 8, 5), utc(2025, 8, 4, 15, 39), id="padded-day"
        ),
        pytest.param(
            "Dec 31, 23:50 UTC",
            utc(2026, 1, 1, 0, 10),
            utc(2025, 12, 31, 23, 50),
            id="december-in-january-item",
        ),
        pytest.param(
            "Jan 1, 10:00 UTC",
            utc(2025, 12, 31, 23, 0),
            utc(2026, 1, 1, 10, 0),
            id="within-a-day-after-reference",
        ),
        pytest.param(
            "Jan 3, 10:00 UTC",
            utc(2025, 12, 31, 23, 0),
            utc(2025, 1, 3, 10, 0),
            id="over-a-day-after-reference",
        ),
        pytest.param(
            "Feb 29, 12:00 UTC", utc(2027, 3, 1), utc(2024, 2, 29, 12, 0), id="leap-day-looks-back"
        ),
        pytest.param("September 1, 2026 1:14AM UTC", None, utc(2026, 9, 1, 1, 14), id="statusio"),
        pytest.param("August 28, 2026 12:00PM UTC", None, utc(2026, 8, 28, 12, 0), id="noon"),
        pytest.param(
            "August 28, 2026 12:30AM UTC", None, utc(2026, 8, 28, 0, 30), id="after-midnight"
        ),
        pytest.param(
            "September 1st, 2026 3:00 PM UTC", None, utc(2026, 9, 1, 15, 0), id="ordinal-day"
        ),
        pytest.param(
            "Dec 31, 2023 - 23:00 UTC", None, utc(2023, 12, 31, 23, 0), id="year-and-dash"
        ),
        pytest.param(
            "September 1, 2026 1:14PM EDT", None, utc(2026, 9, 1, 17, 14), id="named-zone"
        ),
        pytest.param("Sept 1, 2026 09:05", None, utc(2026, 9, 1, 9, 5), id="no-zone-is-utc"),
    ],
)
def test_stamps_are_read_as_utc_times(
    stamp: str, reference: datetime | None, expected: datetime
) -> None:
    assert read_stamp(stamp, reference) == expected


@pytest.mark.parametrize(
    ("stamp", "reference"),
    [
        pytest.param("not a date", utc(2026, 1, 1), id="words"),
        pytest.param("Foo 21, 00:37 UTC", utc(2026, 1, 1), id="unknown-month"),
        pytest.param("Aug 21, 25:00 UTC", utc(2026, 9, 1), id="hour-25"),
        pytest.param("Aug 21, 10:61 UTC", utc(2026, 9, 1), id="minute-61"),
        pytest.param("August 32, 2026 1:00AM UTC", None, id="day-32"),
        pytest.param("February 30, 2026 1:00AM UTC", None, id="february-30"),
        pytest.param("August 1, 2026 13:00PM UTC", None, id="pm-hour-13"),
        pytest.param("Aug 21, 00:37 UTC", None, id="yearless-without-reference"),
        pytest.param(
            "Aug 21, 00:37 UTC", datetime.max.replace(tzinfo=UTC), id="reference-at-the-end-of-time"
        ),
    ],
)
def test_stamps_that_are_no_date_give_none(stamp: str, reference: datetime | None) -> None:
    assert read_stamp(stamp, reference) is None


def test_statuspage_history_is_returned_oldest_first_with_plain_text_bodies() -> None:
    entries = read_history(STATUSPAGE_BODY, utc(2026, 8, 21, 0, 37))

    assert entries == [
        HistoryEntry(utc(2026, 8, 4, 14, 43), "Investigating", "We are investigating reports."),
        HistoryEntry(
            utc(2026, 8, 20, 20, 37),
            "Update",
            "We are seeing gradual recovery & a fix is rolling out.",
        ),
        HistoryEntry(utc(2026, 8, 21, 0, 37), "Resolved", "This incident has been resolved."),
    ]


def test_statusio_history_keeps_its_oldest_first_order_and_line_breaks() -> None:
    entries = read_history(STATUSIO_BODY, None)

    assert entries == [
        HistoryEntry(
            utc(2026, 9, 1, 1, 14), "Scheduled", "Work in US-EAST-02B\nLocation:\nUS-EAST-02B"
        ),
        HistoryEntry(utc(2026, 9, 2, 17, 0), "Active", "This maintenance has started."),
    ]


def test_statuspage_updates_posted_in_the_same_minute_keep_newest_first_meaning() -> None:
    body = (
        "<p><small>Aug <var>18</var>, <var>07:40</var> UTC</small><br><strong>Monitoring</strong>"
        " - second</p><p><small>Aug <var>18</var>, <var>07:40</var> UTC</small><br>"
        "<strong>Investigating</strong> - first</p>"
    )

    entries = read_history(body, utc(2026, 8, 18, 11, 42))

    assert [(e.word, e.body) for e in entries] == [
        ("Investigating", "first"),
        ("Monitoring", "second"),
    ]


def test_statusio_updates_posted_in_the_same_minute_keep_page_order() -> None:
    body = (
        "<small>August 27, 2026 9:30AM UTC</small><br /><b>Active</b> - first<br />"
        "<small>August 27, 2026 9:30AM UTC</small><br /><b>Completed</b> - second<br />"
    )

    assert [e.word for e in read_history(body, None)] == ["Active", "Completed"]


def test_the_affected_components_line_is_not_part_of_any_update() -> None:
    entries = read_history(STATUSPAGE_BODY, utc(2026, 8, 21, 0, 37))

    assert all("affected" not in entry.body for entry in entries)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("", id="empty"),
        pytest.param("<p>Plain description of an outage.</p>", id="plain-html"),
        pytest.param("<small>Aug 21, 00:37 UTC</small> no status word", id="stamp-without-word"),
        pytest.param("<small>whenever</small><br><strong>Resolved</strong> - done", id="no-date"),
    ],
)
def test_bodies_without_a_stamped_history_give_no_entries(body: str) -> None:
    assert read_history(body, utc(2026, 8, 21)) == []


def test_an_undatable_stamp_is_left_out_and_the_rest_kept() -> None:
    body = (
        "<small>August 40, 2026 1:00AM UTC</small><br /><b>Identified</b> - lost<br />"
        "<small>August 27, 2026 9:30AM UTC</small><br /><b>Resolved</b> - kept<br />"
    )

    assert read_history(body, None) == [HistoryEntry(utc(2026, 8, 27, 9, 30), "Resolved", "kept")]


def entries_with(*words: str) -> list[HistoryEntry]:
    return [
        HistoryEntry(utc(2026, 8, 1, hour), word, f"body {hour}") for hour, word in enumerate(words)
    ]


@pytest.mark.parametrize(
    ("words", "maintenance", "statuses"),
    [
        pytest.param(
            ("Investigating", "Update", "Monitoring", "Update", "Resolved"),
            False,
            ("investigating", "investigating", "monitoring", "monitoring", "resolved"),
            id="update-carries-the-previous-state",
        ),
        pytest.param(
            ("Update", "Resolved"),
            False,
            ("investigating", "resolved"),
            id="update-first-is-investigating",
        ),
        pytest.param(
            ("Update", "In progress", "Completed"),
            True,
            ("scheduled", "in_progress", "completed"),
            id="update-first-is-scheduled",
        ),
        pytest.param(
            ("Scheduled", "Active", "Active", "Completed"),
            True,
            ("scheduled", "in_progress", "in_progress", "completed"),
            id="statusio-active",
        ),
        pytest.param(
            ("In Progress", "Verifying", "Completed"),
            True,
            ("in_progress", "verifying", "completed"),
            id="verifying",
        ),
        pytest.param(
            ("Investigating", "Frobnicating", "Resolved", "Postmortem"),
            False,
            ("investigating", "investigating", "resolved", "postmortem"),
            id="unknown-word-carries-on",
        ),
        pytest.param(
            ("Identified", "Monitoring", "Resolved"),
            True,
            ("in_progress", "verifying", "completed"),
            id="incident-words-in-maintenance",
        ),
        pytest.param(
            ("Scheduled", "In progress", "Completed"),
            False,
            ("investigating", "identified", "resolved"),
            id="maintenance-words-in-incident",
        ),
    ],
)
def test_status_words_become_normalized_statuses(
    words: tuple[str, ...], maintenance: bool, statuses: tuple[str, ...]
) -> None:
    updates = to_updates(entries_with(*words), maintenance)

    assert tuple(update.status for update in updates) == statuses
    assert [update.at.hour for update in updates] == list(range(len(words)))


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        pytest.param(("Scheduled",), True, id="scheduled"),
        pytest.param(("Update", "In progress"), True, id="in-progress"),
        pytest.param(("Active",), True, id="statusio-active"),
        pytest.param(("Completed",), True, id="completed"),
        pytest.param(("Verifying",), True, id="verifying"),
        pytest.param(("Investigating", "Update", "Resolved"), False, id="incident"),
        pytest.param((), False, id="no-history"),
    ],
)
def test_maintenance_is_told_from_maintenance_only_statuses(
    words: tuple[str, ...], expected: bool
) -> None:
    assert is_maintenance_history(entries_with(*words)) is expected


def updates_with(*statuses: str) -> tuple[IncidentUpdate, ...]:
    return tuple(IncidentUpdate(utc(2026, 8, 1, hour), s, "") for hour, s in enumerate(statuses))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("statuses", "hour"),
    [
        pytest.param(("investigating", "resolved"), 1, id="resolved"),
        pytest.param(
            ("investigating", "resolved", "postmortem"), 1, id="postmortem-keeps-resolved-time"
        ),
        pytest.param(("scheduled", "in_progress", "completed"), 2, id="completed"),
        pytest.param(("investigating", "resolved", "investigating"), None, id="reopened"),
        pytest.param(("investigating", "monitoring"), None, id="open"),
        pytest.param((), None, id="no-updates"),
    ],
)
def test_resolved_time_is_when_the_closing_run_began(
    statuses: tuple[str, ...], hour: int | None
) -> None:
    expected = None if hour is None else utc(2026, 8, 1, hour)

    assert resolved_time(updates_with(*statuses)) == expected


@pytest.mark.parametrize(
    ("body", "components"),
    [
        pytest.param(
            "<p>This incident affected: Git Operations and API Requests.</p>",
            ("Git Operations", "API Requests"),
            id="two",
        ),
        pytest.param(
            "<p>This incident affected: Actions, Pages, and Packages.</p>",
            ("Actions", "Pages", "Packages"),
            id="three",
        ),
        pytest.param("<p>This incident affected: Webhooks.</p>", ("Webhooks",), id="one"),
        pytest.param(
            "<p>This scheduled maintenance affected: Codespaces.</p>",
            ("Codespaces",),
            id="maintenance",
        ),
        pytest.param(
            "<p>This incident affected: Europe (Frankfurt, DE - (FRA), Amsterdam) and API.</p>",
            ("Europe (Frankfurt, DE - (FRA), Amsterdam)", "API"),
            id="group-stays-whole",
        ),
        pytest.param(
            "<p>This incident affected: Claude API (api.anthropic.com) and Claude.ai.</p>",
            ("Claude API (api.anthropic.com)", "Claude.ai"),
            id="dots-in-names",
        ),
        pytest.param(
            "<p>This incident affected: API, API and Webhooks.</p>",
            ("API", "Webhooks"),
            id="duplicates",
        ),
        pytest.param("<p>Nothing was affected.</p>", (), id="none"),
    ],
)
def test_affected_components_are_split_from_statuspage_line(
    body: str, components: tuple[str, ...]
) -> None:
    assert affected_components(body) == components


def test_a_malformed_marked_section_in_a_body_is_read_as_text() -> None:
    html = "<p><![foo[ x ]]>This incident affected: Git Operations and API Requests.</p>"

    assert affected_components(html) == ("Git Operations", "API Requests")
