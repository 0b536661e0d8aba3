from __future__ import annotations

from monitor.config import parse_config
from monitor.feeds.catalog import CATALOG, FeedSpec, providers_for
from monitor.feeds.kinds import REGISTRY

DESIGN_PROVIDERS = {
    "aws",
    "gcp",
    "azure",
    "lambda",
    "coreweave",
    "runpod",
    "paperspace",
    "vastai",
    "together",
    "nebius",
    "oci",
}


def test_the_catalog_covers_the_hyperscalers_and_the_gpu_clouds() -> None:
    assert {p.slug for p in CATALOG} >= DESIGN_PROVIDERS


def test_every_catalog_feed_is_a_registered_kind_over_https() -> None:
    for provider in CATALOG:
        for feed in provider.feeds:
            assert feed.kind in REGISTRY
            assert feed.url.startswith("https://")


def test_config_overrides_only_the_fields_it_sets() -> None:
    merged = {
        p.slug: p
        for p in providers_for(parse_config("providers: [{slug: aws, regions: [us-east-1]}]"))
    }
    aws = merged["aws"]
    assert aws.regions == ("us-east-1",)
    assert aws.feeds == next(p for p in CATALOG if p.slug == "aws").feeds
    assert aws.source == "config"


def test_config_adds_a_provider_and_can_give_a_catalog_one_its_feed() -> None:
    config = parse_config(
        """
providers:
  - slug: lambda
    feeds: [{kind: statuspage, url: "https://status.lambda.example/api/v2/incidents.json"}]
  - slug: acme-gpu
    name: Acme GPU
    feeds: [{kind: rss, url: "https://acme.example/history.atom"}]
"""
    )
    merged = {p.slug: p for p in providers_for(config)}
    assert merged["lambda"].feeds == (
        FeedSpec("statuspage", "https://status.lambda.example/api/v2/incidents.json"),
    )
    assert merged["lambda"].name == "Lambda"
    assert merged["acme-gpu"].name == "Acme GPU"
    assert len(merged) == len(CATALOG) + 1
