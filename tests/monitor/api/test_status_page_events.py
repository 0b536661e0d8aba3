"""The status page's account events (monitor/status/view.py, templates/status.html.j2): a
provider's maintenance, retirement, preemption or issue upcoming or open on a target in service
is marked beside the target and listed under "Provider events", with the account event sources
behind them; an event never changes a target's state, so unknown stays unknown. On SQLite and
PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from sqlalchemy import event
from sqlalchemy.orm import Session, sessionmaker

from monitor.api.status_page import render
from monitor.config import parse_config
from monitor.db.base import utcnow
from monitor.db.models import AccountSource, Target
from monitor.fleet.account_store import record
from monitor.status.view import build_view
from tests.monitor.api.test_pages import account_events, retirement
from tests.monitor.api.test_status_page import add_states, add_target, elements, fleet
from tests.support import ApiClient

SOURCES = "account_events:\n  - {name: health, kind: aws_health}\n"


def with_instance(session: Session, name: str, instance: str) -> Target:
    row = add_target(session, name)
    row.external_id = instance
    session.flush()
    return row


def test_an_upcoming_retirement_is_marked_beside_its_target_and_unknown_stays_unknown(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        with_instance(session, "gpu-retiring", "i-0abc")  # never probed: unknown
        fine = with_instance(session, "gpu-fine", "i-0fine")
        add_states(session, fine, "up", "up", now)
        with_instance(session, "gpu-own-restart", "i-0own")
        gone = with_instance(session, "gpu-gone", "i-0gone")
        gone.retired_at = now - timedelta(hours=1)
        ahead = retirement(now)
        record(
            session,
            [
                ahead,
                replace(  # the account's own doing: not the provider's event to mark
                    ahead,
                    key="own",
                    kind="user_initiated",
                    status="open",
                    starts_at=now - timedelta(minutes=5),
                    entities=("i-0own",),
                ),
                replace(
                    ahead,
                    key="over",
                    status="closed",
                    entities=("i-0fine",),
                    starts_at=now - timedelta(hours=3),
                    ends_at=now - timedelta(hours=2),
                ),
                replace(ahead, key="retired-box", entities=("i-0gone",)),
                replace(ahead, key="billing", kind="issue", region="global", entities=()),
            ],
            now,
        )
        session.commit()
    page = api.get("/").text

    rows = fleet(page)
    assert rows["gpu-retiring"].attrs["data-state"] == "unknown"
    [mark] = elements(marks_html(page, "gpu-retiring"), "span", "data-account-event").values()
    assert (mark.attrs["data-account-event"], mark.attrs["data-event-status"]) == (
        "retirement",
        "upcoming",
    )
    assert mark.text == "retirement in 14 d"
    assert "aws: instance-retirement" in mark.attrs["title"]
    assert set(rows["gpu-retiring"].text.split()) & {"up", "down", "unusable"} == set()
    for name in ("gpu-fine", "gpu-own-restart"):
        assert elements(marks_html(page, name), "span", "data-account-event") == {}, name
    assert rows["gpu-fine"].attrs["data-state"] == "up"
    banner = elements(page, "section", "data-state")["unknown"]  # the events change no state
    assert "No current verdict on 2 of 3 targets" in banner.text
    listed = account_events(page, "account-events")
    assert [r.attrs["data-event"] for r in listed] == [ahead.key]
    [link] = [h for h, a in elements(page, "a", "href").items() if a.text == "gpu-retiring"][-1:]
    assert link == "targets/gpu-retiring"


def marks_html(page: str, target: str) -> str:
    """The HTML of one fleet row."""
    start = page.index(f'<tr class="target" data-target="{target}"')
    return page[start : page.index("</tr>", start)]


def test_open_work_comes_first_and_a_row_counts_the_rest(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        with_instance(session, "gpu-1", "i-0abc")
        ahead = retirement(now)
        record(
            session,
            [
                ahead,
                replace(
                    ahead,
                    key="maint",
                    kind="scheduled_maintenance",
                    status="open",
                    starts_at=now - timedelta(minutes=30),
                    ends_at=now + timedelta(hours=1),
                ),
                replace(
                    ahead, key="notice", kind="preemption", starts_at=now + timedelta(minutes=2)
                ),
            ],
            now,
            "agent",
        )
        session.commit()
    page = api.get("/").text

    row = marks_html(page, "gpu-1")
    [mark] = elements(row, "span", "data-account-event").values()
    assert mark.text == "maintenance under way"
    assert "+2 more" in row
    listed = account_events(page, "account-events")
    assert [r.attrs["data-event"] for r in listed] == ["maint", "notice", ahead.key]
    assert "under way since " in listed[0].text
    assert "(in 2 min)" in listed[1].text or "(in 1 min)" in listed[1].text
    assert "via agent" in listed[1].text


def test_the_section_never_reads_silence_as_all_clear(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        add_target(session, "gpu-1")
        session.commit()
    state = api.app.state.slamon  # type: ignore[attr-defined]

    none_configured = api.get("/").text
    assert "No account event source is configured" in none_configured
    assert account_events(none_configured, "account-events") == []

    # two config objects alive at once: the page kept for the first is not the second's (a
    # source's polls log no change, so the kept page would show them within 15 s, not at once)
    first, second = parse_config(SOURCES), parse_config(SOURCES)
    state.config = first
    never_polled = api.get("/").text
    sources = elements(never_polled, "li", "data-account-source")
    assert sources["health"].attrs["data-state"] == "unknown"
    assert "not every source below is polling cleanly" in never_polled
    assert "No maintenance, retirement" not in never_polled

    with sessions() as session:
        session.add(AccountSource(name="health", kind="aws_health", last_polled_at=now,
                                  last_success_at=now, consecutive_failures=0))  # fmt: skip
        session.commit()
    state.config = second
    polled = api.get("/").text
    assert elements(polled, "li", "data-account-source")["health"].attrs["data-state"] == "ok"
    assert "No maintenance, retirement, preemption or issue upcoming or open" in polled


def test_the_page_reads_the_same_number_of_statements_with_events_on_three_targets_or_thirty(
    session: Session,
) -> None:
    now = utcnow()
    config = parse_config(SOURCES)

    def statements() -> int:
        seen: list[str] = []
        connection = session.connection()
        listener = lambda *args: seen.append(args[2])  # noqa: E731
        event.listen(connection, "before_cursor_execute", listener)
        try:
            render(build_view(session, config, now))
        finally:
            event.remove(connection, "before_cursor_execute", listener)
        return len(seen)

    made: list[str] = []

    def grow(count: int) -> None:
        for _ in range(count):
            name = f"gpu-{len(made)}"
            with_instance(session, name, f"i-{len(made)}")
            made.append(name)
            record(session, [retirement(now, f"i-{len(made) - 1}")], now)

    grow(3)
    few = statements()
    grow(27)
    assert statements() == few
    assert len(build_view(session, config, now).account_events) == 30
