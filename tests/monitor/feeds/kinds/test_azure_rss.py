"""Tests for the Azure status RSS parser (monitor/feeds/kinds/azure_rss.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.errors import FeedParseError
from monitor.feeds.kinds.azure_rss import parse, split_status
from monitor.feeds.model import Incident
from tests.monitor.feeds.fuzzing import FUZZ, assert_well_formed, at, fuzz_raises_only_parse_errors
from tests.support import FIXTURES as SHARED_FIXTURES

FIXTURE = SHARED_FIXTURES / "feeds" / "azure-rss" / "checkmk-azure-status-feed-2022-11-edited.rss"
STATUS_PAGE = "https://status.azure.com/en-us/status/"


def rss(*items: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>Azure Status</title><link>{STATUS_PAGE}</link>"
        "<lastBuildDate>Thu, 17 Nov 2022 08:36:00 Z</lastBuildDate>"
        + "".join(items)
        + "</channel></rss>"
    ).encode()


def item(title: str, *extra: str) -> str:
    return f"<item><title>{title}</title>{''.join(extra)}</item>"


@pytest.fixture(scope="module")
def captured() -> list[Incident]:
    return parse(FIXTURE.read_bytes())


# --- the captured feed ------------------------------------------------------------------------


def test_each_item_is_one_incident_in_feed_order(captured: list[Incident]) -> None:
    assert [i.title for i in captured] == [
        "Azure Key Vault issue affecting Azure China",
        "Azure Databricks - North Central US - Investigating",
        "Azure Synapse Analytics Mitigating",
    ]
    assert {i.provider for i in captured} == {"azure"}
    assert {i.impact for i in captured} == {"major"}
    assert {i.url for i in captured} == {STATUS_PAGE}
    assert not any(i.is_maintenance for i in captured)


def test_status_word_at_the_end_of_the_title_sets_the_state(captured: list[Incident]) -> None:
    assert [i.status for i in captured] == ["investigating", "investigating", "identified"]
    assert all(i.resolved_at is None for i in captured)


def test_regions_come_from_the_title_and_categories_as_codes(captured: list[Incident]) -> None:
    assert [i.regions for i in captured] == [(), ("northcentralus",), ("westeurope",)]


def test_components_are_non_region_categories_else_the_service_in_the_title(
    captured: list[Incident],
) -> None:
    assert [i.components for i in captured] == [
        ("Azure Key Vault",),
        ("Azure Databricks",),
        ("Azure Synapse Analytics",),
    ]


def test_items_without_guid_or_pub_date_get_hash_ids_and_no_updates(
    captured: list[Incident],
) -> None:
    assert len({i.source_id for i in captured}) == 3
    assert all(len(i.source_id) == 24 for i in captured)
    assert all(i.updates == () and i.started_at is None for i in captured)


def test_parsing_the_same_bytes_twice_gives_equal_incidents(captured: list[Incident]) -> None:
    assert parse(FIXTURE.read_bytes()) == captured


def test_explicit_provider_is_used() -> None:
    assert {i.provider for i in parse(FIXTURE.read_bytes(), provider="msft")} == {"msft"}


# --- hand-made edge cases ---------------------------------------------------------------------


def test_empty_feed_is_normal_and_holds_no_incidents() -> None:
    assert parse(rss()) == []


def test_item_with_guid_and_pub_date_carries_one_plain_text_update() -> None:
    feed = rss(
        item(
            "Virtual Machines - East US 2 - Investigating",
            '<guid isPermaLink="false">TRACK-123</guid>',
            "<link>https://azure.status.microsoft/en-us/status</link>",
            "<pubDate>Tue, 29 Oct 2024 18:05:00 Z</pubDate>",
            "<description>&lt;p&gt;&lt;strong&gt;Impact:&lt;/strong&gt; Starting at 17:40 UTC"
            " customers &amp;amp; partners&lt;/p&gt;</description>",
        )
    )
    (incident,) = parse(feed)
    assert incident.source_id == "TRACK-123"
    assert incident.started_at == at("2024-10-29T18:05:00+00:00")
    assert incident.url == "https://azure.status.microsoft/en-us/status"
    assert (incident.regions, incident.components) == (("eastus2",), ("Virtual Machines",))
    (update,) = incident.updates
    assert (update.at, update.status) == (at("2024-10-29T18:05:00+00:00"), "investigating")
    assert update.body == "Impact: Starting at 17:40 UTC customers & partners"


def test_id_without_guid_survives_the_status_word_changing() -> None:
    before = parse(rss(item("Azure Front Door - West Europe - Investigating")))[0]
    after = parse(rss(item("Azure Front Door - West Europe - Mitigated")))[0]
    assert before.source_id == after.source_id
    assert (before.status, after.status) == ("investigating", "resolved")


def test_mitigated_item_with_pub_date_is_resolved_then() -> None:
    feed = rss(item("Azure SQL - Mitigated", "<pubDate>Tue, 29 Oct 2024 20:00:00 Z</pubDate>"))
    (incident,) = parse(feed)
    assert (incident.status, incident.resolved_at) == ("resolved", at("2024-10-29T20:00:00+00:00"))


@pytest.mark.parametrize(
    ("title", "core", "status"),
    [
        pytest.param("Azure Databricks - North Central US - Investigating",
                     "Azure Databricks - North Central US", "investigating", id="dash-separated"),
        pytest.param("Azure Synapse Analytics Mitigating", "Azure Synapse Analytics",
                     "identified", id="trailing-word"),
        pytest.param("Azure Front Door - mitigated", "Azure Front Door", "resolved", id="any-case"),
        pytest.param("Storage - Resolved", "Storage", "resolved", id="resolved"),
        pytest.param("Storage - Active", "Storage", "investigating", id="active"),
        pytest.param("Key Vault issue", "Key Vault issue", "investigating", id="no-word"),
        pytest.param("Investigating", "Investigating", "investigating", id="word-alone"),
    ],
)  # fmt: skip
def test_status_word_is_split_off_the_title(title: str, core: str, status: str) -> None:
    assert split_status(title) == (core, status)


def test_regions_in_the_description_count_when_title_and_categories_name_none() -> None:
    feed = rss(item("Azure Cosmos DB issue", "<description>Customers in UK South</description>"))
    assert parse(feed)[0].regions == ("uksouth",)
    feed = rss(item("Cosmos DB - Japan East", "<description>Failover to Japan West</description>"))
    assert parse(feed)[0].regions == ("japaneast",)


def test_several_categories_split_into_regions_and_components() -> None:
    feed = rss(
        item(
            "Networking issue",
            "<category>Azure Front Door</category><category>East US</category>",
            "<category>Azure CDN</category><category>West US 2</category>",
        )
    )
    (incident,) = parse(feed)
    assert incident.regions == ("eastus", "westus2")
    assert incident.components == ("Azure Front Door", "Azure CDN")


def test_unknown_status_word_reads_as_investigating() -> None:
    assert parse(rss(item("Azure Monitor - Degraded-ish")))[0].status == "investigating"


def test_item_without_title_or_guid_is_skipped() -> None:
    assert parse(rss("<item><description>orphan</description></item>")) == []


def test_repeated_item_is_kept_once() -> None:
    again = item("Azure SQL - Investigating")
    assert len(parse(rss(again, again))) == 1


def test_utf8_bom_is_accepted(captured: list[Incident]) -> None:
    assert parse(b"\xef\xbb\xbf" + FIXTURE.read_bytes()) == captured


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"<!DOCTYPE html><html><body><p>Azure status</p></body></html>", id="html"),
        pytest.param(b"{}", id="json"),
        pytest.param(b"\xff\xfe\x00garbage\x00", id="garbage"),
    ],
)
def test_unreadable_documents_raise_feed_parse_error(raw: bytes) -> None:
    with pytest.raises(FeedParseError, match="azure-rss"):
        parse(raw)


def test_truncated_feed_raises_feed_parse_error() -> None:
    with pytest.raises(FeedParseError, match="truncated"):
        parse(FIXTURE.read_bytes()[:-60])


# --- properties -------------------------------------------------------------------------------

xml_text = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="<&>"), max_size=30
)


@FUZZ
@given(
    st.lists(
        st.tuples(
            xml_text,
            st.sampled_from(["", " - Investigating", " Mitigated", " - East US"]),
            st.lists(xml_text, max_size=2),
            st.sampled_from(["", "<pubDate>Tue, 29 Oct 2024 20:00:00 Z</pubDate>",
                             "<pubDate>soon</pubDate>", "<guid>g1</guid>"]),
        ),
        max_size=4,
    )
)  # fmt: skip
def test_any_item_mix_parses_into_well_formed_incidents(
    items: list[tuple[str, str, list[str], str]],
) -> None:
    feed = rss(
        *(
            item(title + suffix, *(f"<category>{c}</category>" for c in categories), extra)
            for title, suffix, categories, extra in items
        )
    )
    for incident in parse(feed):
        assert_well_formed(incident)
        assert incident.source_id


test_arbitrary_or_mutated_fixture_bytes_raise_nothing_but_feed_parse_error = (
    fuzz_raises_only_parse_errors(parse, "azure-rss", [FIXTURE.read_bytes()])
)
