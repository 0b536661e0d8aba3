from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor import tokens
from monitor.db.models import ApiToken, Target
from monitor.errors import SlamonError

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def add_target(session: Session, name: str) -> Target:
    row = Target(name=name, kind="heartbeat")
    session.add(row)
    session.flush()
    return row


def test_a_new_token_is_slm_and_43_urlsafe_characters() -> None:
    plaintext = tokens.generate()
    assert plaintext.startswith("slm_")
    body = plaintext.removeprefix("slm_")
    assert len(body) == 43  # 32 bytes, base64 without padding
    assert set(body) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert tokens.generate() != plaintext


def test_a_token_is_stored_only_as_its_sha256(session: Session) -> None:
    plaintext = tokens.create(session, "ci", "read")
    row = session.scalars(select(ApiToken).where(ApiToken.name == "ci")).one()
    assert row.token_hash == hashlib.sha256(plaintext.encode()).hexdigest()
    assert plaintext not in {row.name, row.token_hash, row.scope}


@pytest.mark.parametrize(
    ("granted", "needed", "allowed"),
    [
        pytest.param("admin", "admin", True, id="admin-may-admin"),
        pytest.param("admin", "read", True, id="admin-implies-read"),
        pytest.param("read", "read", True, id="read-may-read"),
        pytest.param("read", "admin", False, id="read-may-not-admin"),
        pytest.param("admin", "events", True, id="admin-may-push-events"),
        pytest.param("events", "events", True, id="events-may-push-events"),
        pytest.param("events", "read", False, id="events-may-not-read"),
        pytest.param("events", "admin", False, id="events-may-not-admin"),
        pytest.param("read", "events", False, id="read-may-not-push-events"),
        pytest.param("bogus", "read", False, id="unknown-scope-may-nothing"),
    ],
)
def test_scopes_admin_implies_read_and_events_and_not_the_reverse(
    granted: str, needed: str, allowed: bool
) -> None:
    assert tokens.scope_allows(granted, needed) is allowed


def test_verify_finds_the_token_by_its_plaintext(session: Session) -> None:
    plaintext = tokens.create(session, "grafana", "read")
    found = tokens.verify(session, plaintext, now=T0)
    assert found is not None
    assert (found.name, found.scope) == ("grafana", "read")


@pytest.mark.parametrize(
    "presented",
    [
        pytest.param("slm_" + "A" * 43, id="well-formed-but-unknown"),
        pytest.param("", id="empty"),
        pytest.param("not-a-slamon-token", id="wrong-prefix"),
        pytest.param("slm_" + "A" * 500, id="absurdly-long"),
    ],
)
def test_verify_refuses_what_was_never_issued(session: Session, presented: str) -> None:
    tokens.create(session, "real", "admin")
    assert tokens.verify(session, presented) is None


def test_a_revoked_token_no_longer_verifies(session: Session) -> None:
    plaintext = tokens.create(session, "old", "admin")
    revoked = tokens.revoke(session, "old", now=T0)
    assert revoked.revoked_at == T0
    assert tokens.verify(session, plaintext) is None


def test_revoking_twice_keeps_the_first_revocation_time(session: Session) -> None:
    tokens.create(session, "old", "read")
    tokens.revoke(session, "old", now=T0)
    again = tokens.revoke(session, "old", now=T0 + timedelta(days=1))
    assert again.revoked_at == T0


def test_last_used_is_recorded_at_most_once_a_minute(session: Session) -> None:
    plaintext = tokens.create(session, "busy", "read")
    seen = []
    for seconds in (0, 30, 59, 60, 90, 125):
        row = tokens.verify(session, plaintext, now=T0 + timedelta(seconds=seconds))
        assert row is not None
        seen.append(row.last_used_at)
    minute = T0 + timedelta(seconds=60)
    assert seen == [T0, T0, T0, minute, minute, T0 + timedelta(seconds=125)]


def test_a_second_token_with_the_same_name_is_refused_by_name(session: Session) -> None:
    tokens.create(session, "ci", "read")
    with pytest.raises(SlamonError, match="a token named 'ci' already exists"):
        tokens.create(session, "ci", "admin")


def test_a_revoked_token_still_holds_its_name(session: Session) -> None:
    tokens.create(session, "ci", "read")
    tokens.revoke(session, "ci")
    with pytest.raises(SlamonError, match=r"already exists \(revoked"):
        tokens.create(session, "ci", "read")


@pytest.mark.parametrize(
    ("name", "scope", "message"),
    [
        pytest.param("x", "write", "unknown scope 'write'", id="unknown-scope"),
        pytest.param("  ", "read", "1 to 100 characters", id="blank-name"),
        pytest.param("n" * 101, "read", "1 to 100 characters", id="long-name"),
    ],
)
def test_bad_names_and_scopes_are_clear_errors(
    session: Session, name: str, scope: str, message: str
) -> None:
    with pytest.raises(SlamonError, match=message):
        tokens.create(session, name, scope)


def test_revoking_an_unknown_name_is_a_clear_error(session: Session) -> None:
    with pytest.raises(SlamonError, match="no token named 'ghost'"):
        tokens.revoke(session, "ghost")


def test_tokens_are_listed_by_name_revoked_ones_included(session: Session) -> None:
    for name in ("zeta", "alpha", "mid"):
        tokens.create(session, name, "read")
    tokens.revoke(session, "mid")
    listed = tokens.list_tokens(session)
    assert [t.name for t in listed] == ["alpha", "mid", "zeta"]
    assert [t.revoked_at is not None for t in listed] == [False, True, False]


def test_a_heartbeat_token_opens_only_its_own_target(session: Session) -> None:
    job_a, job_b = add_target(session, "job-a"), add_target(session, "job-b")
    token_a = tokens.create_heartbeat_token(session, job_a)
    tokens.create_heartbeat_token(session, job_b)
    assert job_a.heartbeat_token_hash == hashlib.sha256(token_a.encode()).hexdigest()
    assert tokens.heartbeat_token_matches(job_a, token_a)
    assert not tokens.heartbeat_token_matches(job_b, token_a)


def test_a_fresh_heartbeat_token_replaces_the_old_one(session: Session) -> None:
    job = add_target(session, "job")
    first = tokens.create_heartbeat_token(session, job)
    second = tokens.create_heartbeat_token(session, job)
    assert not tokens.heartbeat_token_matches(job, first)
    assert tokens.heartbeat_token_matches(job, second)


def test_a_heartbeat_token_is_not_an_api_token(session: Session) -> None:
    job = add_target(session, "job")
    plaintext = tokens.create_heartbeat_token(session, job)
    assert tokens.verify(session, plaintext) is None


@given(other=st.text(max_size=80))
def test_no_other_text_matches_a_heartbeat_token(other: str) -> None:
    plaintext = tokens.generate(tokens.HEARTBEAT_PREFIX)
    target = Target(name="t", kind="heartbeat", heartbeat_token_hash=tokens.hash_token(plaintext))
    assert tokens.heartbeat_token_matches(target, other) is (other == plaintext)


def test_a_target_without_a_heartbeat_token_matches_nothing() -> None:
    target = Target(name="t", kind="http", heartbeat_token_hash=None)
    assert not tokens.heartbeat_token_matches(target, tokens.generate(tokens.HEARTBEAT_PREFIX))
