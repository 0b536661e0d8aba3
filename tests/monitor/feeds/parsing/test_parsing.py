"""Tests for the helpers every feed parser shares (monitor/feeds/parsing/)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.errors import FeedParseError
from monitor.feeds.model import Incident, Status
from monitor.feeds.parsing.documents import first_by_source_id, listed_dicts
from monitor.feeds.parsing.status import as_kind, closed_status, opening_status
from monitor.feeds.parsing.syndication import feed_field, feed_title, read_feed
from monitor.feeds.parsing.text import html_to_text, page_slug, plain_text, to_ascii, unique
from monitor.feeds.parsing.times import first_time, parse_time, read_time
from monitor.feeds.parsing.values import as_dict, dicts_in, id_text, nonblank

PROPERTY = settings(max_examples=200, deadline=None)

# --- text -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        pytest.param("Cloudflare", "cloudflare", id="plain"),
        pytest.param("Cloudflare Status", "cloudflare", id="status-suffix"),
        pytest.param("GitHub Status Page", "github", id="status-page-suffix"),
        pytest.param("Together AI Status Page", "together-ai", id="two-words-status-page"),
        pytest.param("Together AI", "together-ai", id="two-words"),
        pytest.param("GitHub Status - Incident History", "github", id="statuspage-history"),
        pytest.param("Acme Cloud Status", "acme-cloud", id="two-words-status"),
        pytest.param("CoreWeave Cloud", "coreweave-cloud", id="no-status-word"),
        pytest.param("Fly.io", "fly-io", id="punctuation"),
        pytest.param("Status", "status", id="only-status"),
        pytest.param("Status.io Status", "status-io", id="leading-status-is-a-name"),
        pytest.param("Acme Statuspage", "acme-statuspage", id="status-inside-a-word"),
        pytest.param("Société Générale", "societe-generale", id="accents"),
        pytest.param("Société Générale status page", "societe-generale", id="accents-status"),
        pytest.param("  ***  ", "statuspage", id="no-letters"),
        pytest.param("", "statuspage", id="empty"),
        pytest.param(None, "statuspage", id="missing"),
        pytest.param(42, "statuspage", id="not-text"),
    ],
)
def test_page_slug_table(name: object, slug: str) -> None:
    assert page_slug(name, "statuspage") == slug


@PROPERTY
@given(st.text(max_size=40))
def test_page_slug_is_always_a_slug_or_the_default(name: str) -> None:
    slug = page_slug(name, "default")
    assert slug == "default" or re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", slug)


@pytest.mark.parametrize(
    ("html", "text"),
    [
        pytest.param("<p>a</p><p>b &lt; c</p>", "a\nb < c", id="blocks-and-entities"),
        pytest.param(
            "<p>We are <b>on  it</b>.</p><br/>\n\n<p>More</p>",
            "We are on it.\nMore",
            id="blank-runs-folded",
        ),
        pytest.param("<![foo[ bar ]]>text", "text", id="malformed-marked-section"),
        pytest.param("<p>one</p><![foo[ bar ]]><p>two</p>", "one two", id="malformed-among-blocks"),
        pytest.param("<![foo[ 1 < 2 ]]>ok", "ok", id="malformed-with-angle-bracket"),
        pytest.param("<!x y>z", "z", id="odd-declaration"),
        pytest.param("", "", id="empty"),
        pytest.param(None, "", id="none"),
    ],
)
def test_html_to_text_table(html: str | None, text: str) -> None:
    assert html_to_text(html) == text


@PROPERTY
@given(st.text(alphabet=st.sampled_from("<>![]/&;#-x? pa"), max_size=40) | st.text(max_size=40))
def test_html_to_text_never_raises(html: str) -> None:
    assert isinstance(html_to_text(html), str)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(
            "Line one.\r\n\r\n\r\n\r\nLine two.  ", "Line one.\n\nLine two.", id="paragraphs"
        ),
        pytest.param(
            "latency < 5ms and > 2ms", "latency < 5ms and > 2ms", id="angle-brackets-in-text"
        ),
        pytest.param("<![foo[ bar ]]>text", "text", id="malformed-marked-section"),
        pytest.param("<p>a</p><p>b &lt; c</p>", "a\nb < c", id="html"),
        pytest.param("AT&amp;T", "AT&T", id="entity-only"),
        pytest.param(None, "", id="none"),
        pytest.param(42, "", id="not-text"),
    ],
)
def test_plain_text_table(value: object, expected: str) -> None:
    assert plain_text(value) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("São Paulo", "Sao Paulo"), ("Zürich", "Zurich"), ("東京 Tokyo", " Tokyo"), ("", "")],
    ids=["accent", "umlaut", "non-latin-dropped", "empty"],
)
def test_to_ascii_table(text: str, expected: str) -> None:
    assert to_ascii(text) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["b", "a", "b", "c", "a"], ("b", "a", "c")),
        ([], ()),
        (iter(["x", "x"]), ("x",)),
    ],
    ids=["first-appearance-order", "empty", "iterator"],
)
def test_unique_table(values: Any, expected: tuple[str, ...]) -> None:
    assert unique(values) == expected


# --- untrusted JSON values ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("  API  ", "API"), ("x", "x"), ("   ", None), ("", None), (None, None), (3, None)],
    ids=["stripped", "plain", "blank", "empty", "none", "not-text"],
)
def test_nonblank_table(value: object, expected: str | None) -> None:
    assert nonblank(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("k7l4", "k7l4"),
        (941865, "941865"),
        (0, "0"),
        ("", None),
        (True, None),
        (1.5, None),
        (None, None),
        ({"id": 1}, None),
    ],
    ids=["text", "int", "zero", "empty", "bool", "float", "none", "object"],
)
def test_id_text_table(value: object, expected: str | None) -> None:
    assert id_text(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [({"a": 1}, {"a": 1}), ([], {}), (None, {}), ("x", {})],
    ids=["object", "list", "none", "text"],
)
def test_as_dict_table(value: object, expected: dict[str, Any]) -> None:
    assert as_dict(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [([{"a": 1}, 2, None, {}], [{"a": 1}, {}]), ({"a": 1}, []), (None, []), ("ab", [])],
    ids=["objects-kept-in-order", "object", "none", "text"],
)
def test_dicts_in_table(value: object, expected: list[dict[str, Any]]) -> None:
    assert dicts_in(value) == expected


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        ({"items": [{"a": 1}, "x", {"b": 2}]}, [{"a": 1}, {"b": 2}]),
        ({"items": None}, []),
        ({}, []),
    ],
    ids=["non-objects-skipped", "null", "missing"],
)
def test_listed_dicts_table(doc: dict[str, Any], expected: list[dict[str, Any]]) -> None:
    assert listed_dicts(doc, "items", "acme") == expected


@pytest.mark.parametrize("value", [{"id": 1}, "none", 3], ids=["object", "text", "number"])
def test_listed_dicts_rejects_a_value_that_is_no_list(value: object) -> None:
    with pytest.raises(FeedParseError, match="acme feed: items is"):
        listed_dicts({"items": value}, "items", "acme")


def incident(source_id: str, title: str) -> Incident:
    return Incident("acme", source_id, title, "investigating", "minor", False, None, None, None)


def test_first_by_source_id_keeps_the_first_of_each_id_in_order_and_skips_none() -> None:
    items = [incident("b", "1"), None, incident("a", "2"), incident("b", "3"), incident("c", "4")]
    assert [(i.source_id, i.title) for i in first_by_source_id(items)] == [
        ("b", "1"),
        ("a", "2"),
        ("c", "4"),
    ]


# --- times ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(
            "2019-02-20T12:00:19-06:00", datetime(2019, 2, 20, 18, 0, 19, tzinfo=UTC), id="offset"
        ),
        pytest.param("2026-09-14T06:00:00.000Z", datetime(2026, 9, 14, 6, tzinfo=UTC), id="zulu"),
        pytest.param(
            "2026-09-14T06:00:00", datetime(2026, 9, 14, 6, tzinfo=UTC), id="naive-is-utc"
        ),
        pytest.param(
            "Tue, 01 Sep 2026 10:00:00 PDT", datetime(2026, 9, 1, 17, tzinfo=UTC), id="rfc822"
        ),
        pytest.param(1700000000, datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC), id="epoch"),
        pytest.param(
            " 1700000000000 ",
            datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC),
            id="epoch-millis-text",
        ),
        pytest.param("", None, id="empty"),
        pytest.param(None, None, id="none"),
    ],
)
def test_parse_time_table(value: str | int | float | None, expected: datetime | None) -> None:
    assert parse_time(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("not a time", id="words"),
        pytest.param("0001-01-01T00:00:00+01:00", id="before-year-1"),
        pytest.param("9999-12-31T23:59:59-01:00", id="after-year-9999"),
        pytest.param(1e300, id="huge-epoch"),
        pytest.param(-1e20, id="huge-negative-epoch"),
        pytest.param(10**400, id="int-too-large-for-float"),
        pytest.param("9" * 400, id="huge-epoch-text"),
        pytest.param(float("inf"), id="infinity"),
        pytest.param(float("nan"), id="nan"),
    ],
)
def test_parse_time_raises_value_error_and_nothing_else(value: str | int | float) -> None:
    with pytest.raises(ValueError):
        parse_time(value)


@PROPERTY
@given(st.text(max_size=40) | st.floats() | st.integers())
def test_parse_time_raises_nothing_but_value_error(value: str | int | float) -> None:
    try:
        parsed = parse_time(value)
    except ValueError:
        return
    assert parsed is None or parsed.tzinfo is UTC


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param(
            "2019-02-20T12:00:19-06:00", datetime(2019, 2, 20, 18, 0, 19, tzinfo=UTC), id="offset"
        ),
        pytest.param("2026-09-14T06:00:00.000Z", datetime(2026, 9, 14, 6, tzinfo=UTC), id="zulu"),
        pytest.param("not a time", None, id="words"),
        pytest.param("", None, id="empty"),
        pytest.param(None, None, id="none"),
        pytest.param(True, None, id="bool"),
        pytest.param(1e300, None, id="huge-epoch"),
        pytest.param(10**400, None, id="int-too-large-for-float"),
        pytest.param("0001-01-01T00:00:00+01:00", None, id="before-year-1"),
        pytest.param({"t": 1}, None, id="object"),
    ],
)
def test_read_time_table(value: object, expected: datetime | None) -> None:
    assert read_time(value) == expected


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (
            {"a": "2026-01-01T00:00:00Z", "b": "2026-01-02T00:00:00Z"},
            datetime(2026, 1, 1, tzinfo=UTC),
        ),
        ({"a": "soon", "b": "2026-01-02T00:00:00Z"}, datetime(2026, 1, 2, tzinfo=UTC)),
        ({"a": None, "c": "2026-01-03T00:00:00Z"}, None),
        ({}, None),
    ],
    ids=["first-key-wins", "unreadable-skipped", "other-keys-ignored", "empty"],
)
def test_first_time_table(item: dict[str, Any], expected: datetime | None) -> None:
    assert first_time(item, "a", "b") == expected


# --- status words ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "maintenance", "expected"),
    [
        ("investigating", True, "in_progress"),
        ("identified", True, "in_progress"),
        ("monitoring", True, "verifying"),
        ("resolved", True, "completed"),
        ("postmortem", True, "completed"),
        ("scheduled", True, "scheduled"),
        ("scheduled", False, "investigating"),
        ("in_progress", False, "identified"),
        ("verifying", False, "monitoring"),
        ("completed", False, "resolved"),
        ("postmortem", False, "postmortem"),
    ],
)
def test_as_kind_table(status: Status, maintenance: bool, expected: Status) -> None:
    assert as_kind(status, maintenance) == expected


def test_opening_and_closed_status_speak_each_kinds_words() -> None:
    assert (opening_status(False), closed_status(False)) == ("investigating", "resolved")
    assert (opening_status(True), closed_status(True)) == ("scheduled", "completed")


# --- feedparser -----------------------------------------------------------------------------------

RSS = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title> Acme   Status </title>'
    b"<item><title>Errors</title><guid>1</guid></item></channel></rss>"
)


@pytest.mark.parametrize(
    ("raw", "entries"),
    [
        pytest.param(RSS, 1, id="rss"),
        pytest.param(RSS + b"\n<!-- cached 12s -->\n", 1, id="comment-after-root"),
        pytest.param(RSS.replace(b"<title>Errors", b"<title>A & B"), 1, id="local-xml-error"),
        pytest.param(b'<feed xmlns="http://www.w3.org/2005/Atom"></feed>', 0, id="empty-atom"),
    ],
)
def test_read_feed_reads_feeds(raw: bytes, entries: int) -> None:
    assert len(feed_field(read_feed(raw, "acme"), "entries")) == entries


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        pytest.param(b"", "empty document", id="empty"),
        pytest.param(b" \r\n\t", "empty document", id="blank"),
        pytest.param(b"\x00\xff garbage {{{", "truncated", id="garbage"),
        pytest.param(RSS[:-9], "truncated", id="cut-before-closing-tag"),
        pytest.param(
            b"<html><head><title>502</title></head><body>Bad</body></html>",
            "not an RSS or Atom feed",
            id="html-error-page",
        ),
    ],
)
def test_read_feed_rejects_what_is_no_feed(raw: bytes, reason: str) -> None:
    with pytest.raises(FeedParseError, match=reason) as caught:
        read_feed(raw, "acme")
    assert caught.value.kind == "acme"


def test_read_feed_does_not_open_bytes_that_name_a_file(tmp_path: Path) -> None:
    path = tmp_path / "feed.xml"
    path.write_bytes(RSS)
    with pytest.raises(FeedParseError):
        read_feed(str(path).encode(), "acme")


def test_feed_field_reads_the_plain_dict_without_feedparsers_fallbacks() -> None:
    atom = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>T</title><entry><id>1</id>'
        b"<published>2026-01-01T00:00:00Z</published></entry></feed>"
    )
    [entry] = feed_field(read_feed(atom, "acme"), "entries")
    # feedparser's own get("updated") would fall back to "published" with a DeprecationWarning
    assert feed_field(entry, "updated") is None
    assert feed_field(entry, "published") == "2026-01-01T00:00:00Z"
    assert feed_field(None, "title") is None


def test_feed_title_folds_whitespace() -> None:
    assert feed_title(read_feed(RSS, "acme")) == "Acme Status"
    assert feed_title({}) == ""
