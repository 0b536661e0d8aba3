"""Tests for the text helpers the channels share (monitor/alerts/channels/_format.py)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.alerts.channels._format import iso, ordered_labels, title, truncate, utf16_len
from tests.monitor.alerts.channels.samples import firing, resolved


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        pytest.param("short", 10, "short", id="fits"),
        pytest.param("exactly10!", 10, "exactly10!", id="exactly-the-limit"),
        pytest.param("one too long", 11, "one too lo…", id="cut-with-ellipsis"),
        pytest.param("ab🔴cd", 4, "ab…", id="astral-char-counts-two"),
        pytest.param("ab🔴cd", 5, "ab🔴…", id="astral-char-kept-whole"),
        pytest.param("anything", 1, "…", id="limit-one"),
    ],
)
def test_truncate_cuts_to_utf16_units_with_an_ellipsis(
    text: str, limit: int, expected: str
) -> None:
    assert truncate(text, limit) == expected


@given(text=st.text(), limit=st.integers(1, 200))
def test_truncate_never_exceeds_the_limit_and_keeps_a_prefix(text: str, limit: int) -> None:
    cut = truncate(text, limit)

    assert utf16_len(cut) <= limit
    assert cut == text or (cut.endswith("…") and text.startswith(cut[:-1]))


def test_well_known_labels_come_first_then_the_rest_alphabetically() -> None:
    labels = {"zeta": "1", "pool": "p", "alpha": "2", "target": "t", "provider": "aws"}

    assert [k for k, _ in ordered_labels(labels)] == ["target", "provider", "pool", "alpha", "zeta"]


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        pytest.param(
            {"target": "t0", "provider": "aws"}, "FIRING (critical): target_down · t0", id="target"
        ),
        pytest.param({"provider": "aws"}, "FIRING (critical): target_down · aws", id="provider"),
        pytest.param({}, "FIRING (critical): target_down · 5f2b8c0e9a1d4e7f", id="fingerprint"),
    ],
)
def test_the_title_names_the_most_specific_subject(labels: dict[str, str], expected: str) -> None:
    assert title(firing(labels=labels)) == expected


def test_a_resolved_title_leaves_out_severity() -> None:
    assert title(resolved()) == "RESOLVED: target_down · trainer-0"


def test_times_are_written_in_utc_with_a_z() -> None:
    paris = timezone(timedelta(hours=1))

    assert iso(datetime(2025, 3, 14, 13, 0, tzinfo=paris)) == "2025-03-14T12:00:00Z"
