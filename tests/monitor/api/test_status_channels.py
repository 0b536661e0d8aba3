"""The status page names a disabled notification channel, with the answer that disabled it, next
to the firing alerts; nothing is said while every channel is enabled."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from sqlalchemy.orm import Session, sessionmaker

from monitor.db.models import Channel
from tests.support import ApiClient

DISABLED_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
ERROR = "HTTP 403 from https://hooks.slack.com/***: invalid_token"


def channels_block(page: str) -> str | None:
    found = re.search(r'<div id="channels".*?</div>', page, re.S)
    return found.group(0) if found else None


def test_a_disabled_channel_is_shown_with_its_last_error(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        session.add_all(
            [
                Channel(name="ops", kind="webhook", enabled=True),
                Channel(
                    name="chat",
                    kind="slack",
                    enabled=False,
                    disabled_at=DISABLED_AT,
                    last_error=ERROR,
                ),
            ]
        )
        session.commit()

    block = channels_block(api.get("/").text)

    assert block is not None
    assert "1 notification channel disabled" in block
    assert (
        '<li data-channel="chat"><strong>chat</strong> (slack) since 2026-12-01 12:00 UTC: '
        f"{ERROR}</li>"
    ) in block
    assert 'data-channel="ops"' not in block
    assert "slamon alerts enable NAME" in block


def test_nothing_is_said_while_every_channel_is_enabled(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        session.add(Channel(name="ops", kind="webhook", enabled=True))
        session.commit()

    page = api.get("/").text

    assert channels_block(page) is None
    assert "notification channel" not in page


def test_a_disabled_channels_error_is_escaped(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    evil = '<script>alert("pwned")</script>'
    with sessions() as session:
        session.add(
            Channel(
                name="chat", kind="slack", enabled=False, disabled_at=DISABLED_AT, last_error=evil
            )
        )
        session.commit()

    page = api.get("/").text

    assert evil not in page
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;" in (channels_block(page) or "")
