"""What a badge says (monitor/status/badges.py): read off the status page's view, unknown and no
data in grey and never green, a group's state and pooled uptime, the SLA against its objective."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from monitor.reports.model import MonthlyReport, PoolReport, TargetReport
from monitor.status.badges import (
    Subject,
    badge,
    badge_path,
    sla_badge,
    subject,
    uptime_colour,
)
from monitor.status.history import Uptime
from monitor.status.view import WINDOWS, SlaView
from tests.monitor.status.test_groups import target, uptimes, view_of
from tests.monitor.status.test_view import NOW


def report_with(targets: list[TargetReport], pools: list[PoolReport]) -> MonthlyReport:
    return MonthlyReport(
        month="2026-05",
        period_start=NOW.replace(day=1, hour=0, minute=0),
        period_end=NOW,
        generated_at=NOW,
        policy={},
        policy_hash="x",
        targets=tuple(targets),
        pools=tuple(pools),
    )


def target_report(name: str, uptime_pct: float | None, target_pct: float | None) -> TargetReport:
    blank = TargetReport(**dict.fromkeys(TargetReport.__dataclass_fields__, None))  # type: ignore[arg-type]
    return replace(blank, name=name, uptime_pct=uptime_pct, target_pct=target_pct)


def found(state: str = "up", pct: float | None = 100.0, kind: str = "targets") -> Subject:
    return Subject(kind, "gpu-0", state, uptimes(24, pct), None, None)


@pytest.mark.parametrize(
    ("state", "colour"),
    [
        pytest.param("up", "green", id="up-green"),
        pytest.param("degraded", "yellow", id="degraded-yellow"),
        pytest.param("unusable", "orange", id="unusable-orange"),
        pytest.param("down", "red", id="down-red"),
        pytest.param("unknown", "grey", id="unknown-grey-never-green"),
    ],
)
def test_a_state_badge_names_the_subject_and_wears_the_state_s_colour(
    state: str, colour: str
) -> None:
    made = badge(found(state), "state", "2026-05")
    assert made is not None
    assert (made.label, made.value, made.colour) == ("gpu-0", state, colour)


@pytest.mark.parametrize(
    ("pct", "colour"),
    [
        pytest.param(None, "grey", id="no-data-grey"),
        pytest.param(100.0, "green", id="full"),
        pytest.param(99.9, "green", id="three-nines"),
        pytest.param(99.89, "yellowgreen", id="just-under-three-nines"),
        pytest.param(97.0, "yellow", id="ninety-seven"),
        pytest.param(92.0, "orange", id="ninety-two"),
        pytest.param(89.99, "red", id="under-ninety"),
    ],
)
def test_uptime_colours(pct: float | None, colour: str) -> None:
    assert uptime_colour(pct) == colour


def test_an_uptime_badge_shows_the_page_s_text_for_its_window() -> None:
    subject_ = Subject(
        "targets",
        "gpu-0",
        "up",
        tuple(
            Uptime(w, timedelta(hours=5), pct, pct)
            for w, pct in zip(WINDOWS, (99.999, 97.5, 50.0), strict=True)
        ),
        None,
        None,
    )
    made = [badge(subject_, m, "2026-05") for m in ("uptime-24h", "uptime-7d", "uptime-30d")]
    assert [(b.label, b.value, b.colour) for b in made if b] == [
        ("uptime 24h", "99.99%", "green"),  # truncated, never rounded up to 100
        ("uptime 7d", "97.50%", "yellow"),
        ("uptime 30d", "50.00%", "red"),
    ]


def test_nothing_observed_is_no_data_in_grey() -> None:
    made = badge(found(pct=None), "uptime-24h", "2026-05")
    assert made is not None
    assert (made.value, made.colour) == ("no data", "grey")


@pytest.mark.parametrize(
    ("sla", "objective", "value", "colour"),
    [
        pytest.param(99.95, 99.5, "99.950% / 99.5%", "green", id="meets-its-objective"),
        pytest.param(99.5, 99.5, "99.500% / 99.5%", "green", id="exactly-the-objective"),
        pytest.param(98.0, 99.5, "98.000% / 99.5%", "red", id="misses-it"),
        pytest.param(99.0, None, "99.000%", "blue", id="no-objective"),
        pytest.param(None, 99.5, "no data", "grey", id="no-data"),
    ],
)
def test_the_sla_badge_against_the_objective(
    sla: float | None, objective: float | None, value: str, colour: str
) -> None:
    made = sla_badge(Subject("targets", "gpu-0", "up", (), sla, objective), "2026-05")
    assert (made.label, made.value, made.colour) == ("SLA 2026-05", value, colour)


def test_an_unknown_metric_or_kind_has_no_badge_and_a_label_replaces_the_left_text() -> None:
    assert badge(found(), "latency", "2026-05") is None
    made = badge(found(), "state", "2026-05", label="training box")
    assert made is not None
    assert (made.label, made.value) == ("training box", "up")
    assert subject(view_of([target("a", "up")]), "vantages", "a") is None


def test_subjects_are_read_off_the_view_and_its_report() -> None:
    fleet = [
        target("a", "up", uptime=uptimes(10, 100.0)),
        target("b", "unknown", uptime=uptimes(0, None)),
        target("c", "down", pool=None, provider="gcp", uptime=uptimes(10, 50.0)),
    ]
    view = replace(
        view_of(fleet),
        report=report_with(
            [target_report("a", 99.95, 99.5)],
            [PoolReport("h100", 2, 1, 99.1, 0.0)],
        ),
        sla=(SlaView("aws", "Amazon Web Services", 99.2, 99.5, 10.0),),
    )
    a = subject(view, "targets", "a")
    assert a is not None
    assert (a.state, a.sla_pct, a.objective_pct) == ("up", 99.95, 99.5)
    b = subject(view, "targets", "b")
    assert b is not None
    assert (b.state, b.sla_pct) == ("unknown", None)
    pool = subject(view, "pools", "h100")
    assert pool is not None
    assert (pool.state, pool.sla_pct, pool.objective_pct) == ("degraded", 99.1, None)
    assert pool.uptime[0].reachable_pct == 100.0  # b was never watched: it weighs nothing
    aws = subject(view, "providers", "aws")
    assert aws is not None
    assert (aws.state, aws.sla_pct, aws.objective_pct) == (
        "degraded",
        99.2,
        99.5,
    )
    gcp = subject(view, "providers", "gcp")  # no catalog row, but a live target names it
    assert gcp is not None
    assert (gcp.state, gcp.sla_pct) == ("down", None)
    assert subject(view, "providers", "azure") is None
    assert subject(view, "pools", "a100") is None
    assert subject(view, "targets", "zz") is None


def test_badge_paths_quote_the_name() -> None:
    assert badge_path("targets", "a/b <c>", "state") == "/badges/targets/a%2Fb%20%3Cc%3E/state.svg"
