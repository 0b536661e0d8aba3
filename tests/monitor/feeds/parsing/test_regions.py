"""Tests for the region helpers the hyperscaler feeds share (monitor/feeds/parsing/regions.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.feeds.parsing.regions import (
    AZURE_REGIONS,
    aws_region_for_name,
    aws_regions_in,
    azure_region_code,
    azure_regions_in,
    gcp_location_in_title,
    normalize_gcp_location,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("ec2-us-east-1", ("us-east-1",), id="feed-id"),
        pytest.param(
            "https://status.aws.amazon.com/#ec2-us-east-1_1676305380", ("us-east-1",), id="guid"
        ),
        pytest.param("multipleservices-ap-southeast-2", ("ap-southeast-2",), id="service-key"),
        pytest.param("s3-us-gov-west-1", ("us-gov-west-1",), id="govcloud-code"),
        pytest.param("ec2-cn-north-1", ("cn-north-1",), id="china"),
        pytest.param("ec2-cn-northwest-1", ("cn-northwest-1",), id="china-northwest"),
        pytest.param("arn:aws:health:me-central-1::event/X", ("me-central-1",), id="arn"),
        pytest.param("in the US-EAST-1 Region", ("us-east-1",), id="upper-case-in-prose"),
        pytest.param("zone use1-az2 of us-east-1a", ("us-east-1",), id="availability-zone"),
        pytest.param(
            "Amazon Elastic Compute Cloud (N. Virginia)", ("us-east-1",), id="title-display-name"
        ),
        pytest.param("Amazon S3 (Canada (Central))", ("ca-central-1",), id="nested-canada"),
        pytest.param("AWS GovCloud (US-West)", ("us-gov-west-1",), id="govcloud-name"),
        pytest.param("Israel (Tel Aviv)", ("il-central-1",), id="israel"),
        pytest.param("South America (São Paulo)", ("sa-east-1",), id="accented-name"),
        pytest.param("Middle East (UAE)", ("me-central-1",), id="uae"),
        pytest.param(
            "eu-west-1 first, then Asia Pacific (Tokyo), then eu-west-1 again",
            ("eu-west-1", "ap-northeast-1"),
            id="order-of-first-appearance",
        ),
        pytest.param("billingconsole", (), id="global-service"),
        pytest.param("we moved traffic to London", (), id="bare-city-in-prose-is-not-trusted"),
        pytest.param("(Central)", (), id="central-alone-is-ambiguous"),
        pytest.param("xus-east-1 and us-east-12345", (), id="glued-to-other-words"),
        pytest.param("us-middle-1", (), id="unknown-direction"),
        pytest.param("", (), id="empty"),
    ],
)
def test_aws_regions_are_found_in_ids_guids_and_titles(
    text: str, expected: tuple[str, ...]
) -> None:
    assert aws_regions_in(text) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("N. Virginia", "us-east-1"),
        ("Ohio", "us-east-2"),
        ("N. California", "us-west-1"),
        ("Oregon", "us-west-2"),
        ("Ireland", "eu-west-1"),
        ("Frankfurt", "eu-central-1"),
        ("London", "eu-west-2"),
        ("Paris", "eu-west-3"),
        ("Stockholm", "eu-north-1"),
        ("Milan", "eu-south-1"),
        ("Tokyo", "ap-northeast-1"),
        ("Seoul", "ap-northeast-2"),
        ("Osaka", "ap-northeast-3"),
        ("Singapore", "ap-southeast-1"),
        ("Sydney", "ap-southeast-2"),
        ("Mumbai", "ap-south-1"),
        ("Hong Kong", "ap-east-1"),
        ("São Paulo", "sa-east-1"),
        ("Canada (Central)", "ca-central-1"),
        ("Bahrain", "me-south-1"),
        ("Cape Town", "af-south-1"),
        ("Jakarta", "ap-southeast-3"),
        ("UAE", "me-central-1"),
        ("Zurich", "eu-central-2"),
        ("Spain", "eu-south-2"),
        ("Hyderabad", "ap-south-2"),
        ("Melbourne", "ap-southeast-4"),
        ("Israel (Tel Aviv)", "il-central-1"),
        ("US East (N. Virginia)", "us-east-1"),
        ("Europe (Frankfurt)", "eu-central-1"),
        ("AWS GovCloud (US-East)", "us-gov-east-1"),
        ("  oregon ", "us-west-2"),
        ("us-west-2", "us-west-2"),
        ("Global", None),
        ("Central", None),
        ("", None),
    ],
    ids=lambda value: str(value),
)
def test_aws_display_names_map_to_region_codes(name: str, expected: str | None) -> None:
    assert aws_region_for_name(name) == expected


@pytest.mark.parametrize(
    ("location_id", "expected"),
    [
        pytest.param("us-central1", "us-central1", id="region"),
        pytest.param("europe-west4", "europe-west4", id="europe"),
        pytest.param("asia-northeast1", "asia-northeast1", id="asia"),
        pytest.param("northamerica-northeast1", "northamerica-northeast1", id="long-region"),
        pytest.param("global", "global", id="global"),
        pytest.param("us", "us", id="multi-region-us"),
        pytest.param("eu", "eu", id="multi-region-eu"),
        pytest.param("asia", "asia", id="multi-region-asia"),
        pytest.param(" US-Central1 ", "us-central1", id="case-and-blanks"),
        pytest.param("us-central1-b", "us-central1", id="zone-names-its-region"),
        pytest.param("Iowa (us-central1)", "", id="a-title-is-not-an-id"),
        pytest.param("", "", id="empty"),
    ],
)
def test_gcp_location_ids_normalize_to_region_codes(location_id: str, expected: str) -> None:
    assert normalize_gcp_location(location_id) == expected


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        pytest.param("Iowa (us-central1)", "us-central1", id="region"),
        pytest.param("Montréal (northamerica-northeast1)", "northamerica-northeast1", id="accent"),
        pytest.param("Global", "", id="no-parentheses"),
    ],
)
def test_gcp_location_titles_give_the_id_in_parentheses(title: str, expected: str) -> None:
    assert gcp_location_in_title(title) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("East US", "eastus"),
        ("East US 2", "eastus2"),
        ("West Europe", "westeurope"),
        ("North Central US", "northcentralus"),
        ("Central US EUAP", "centraluseuap"),
        ("East US 2 EUAP", "eastus2euap"),
        ("Australia Central 2", "australiacentral2"),
        ("US Gov Virginia", "usgovvirginia"),
        ("US DoD East", "usdodeast"),
        ("China North 3", "chinanorth3"),
        ("westeurope", "westeurope"),
        ("Azure China", None),
        ("Europe", None),
        ("Azure Synapse Analytics", None),
    ],
    ids=lambda value: str(value),
)
def test_azure_display_names_map_to_known_codes_only(name: str, expected: str | None) -> None:
    assert azure_region_code(name) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "Azure Databricks - North Central US - Investigating",
            ("northcentralus",),
            id="longest-name-wins-over-central-us",
        ),
        pytest.param(
            "Storage in East US 2 EUAP and West Europe",
            ("eastus2euap", "westeurope"),
            id="two-regions-in-order",
        ),
        pytest.param("customers in east us and westus2", ("eastus", "westus2"), id="any-case"),
        pytest.param("East US, 2 instances affected", ("eastus",), id="no-span-over-commas"),
        pytest.param("Azure Key Vault issue affecting Azure China", (), id="not-a-region"),
        pytest.param("West Europe, West Europe", ("westeurope",), id="de-duplicated"),
        pytest.param("Midwest US customers", (), id="part-of-a-word"),
        pytest.param("", (), id="empty"),
    ],
)
def test_azure_regions_are_found_in_text(text: str, expected: tuple[str, ...]) -> None:
    assert azure_regions_in(text) == expected


def test_every_known_azure_code_is_lower_case_without_spaces() -> None:
    assert all(code == code.lower() and " " not in code for code in AZURE_REGIONS)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_region_helpers_never_raise_and_return_known_shapes(text: str) -> None:
    for code in aws_regions_in(text):
        assert code == code.lower()
        assert aws_regions_in(code) == (code,)
    assert set(azure_regions_in(text)) <= AZURE_REGIONS
    assert isinstance(normalize_gcp_location(text), str)
    aws_region_for_name(text)
    azure_region_code(text)
