"""The built-in provider catalog, and merging it with the user's config.

Feed URLs are the providers' public, machine-readable status endpoints. Where a provider
publishes none we know of, it has no feed here; add one under ``providers:`` in the config.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from monitor.config.models import Config, ProviderConfig


@dataclass(frozen=True, slots=True)
class FeedSpec:
    kind: str
    url: str


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """A provider as slamon watches it: catalog entry, possibly overridden by the config."""

    slug: str
    name: str
    feeds: tuple[FeedSpec, ...] = ()
    regions: tuple[str, ...] = ()
    components: tuple[str, ...] = ()
    sla: str | None = None
    source: str = "catalog"
    notes: str = field(default="", compare=False)


CATALOG: tuple[ProviderSpec, ...] = (
    ProviderSpec(
        "aws",
        "Amazon Web Services",
        (FeedSpec("aws-health", "https://health.aws.amazon.com/public/currentevents"),),
        sla="aws-ec2-instance",
        notes="AWS Health Dashboard JSON (UTF-16); per-service RSS also works as aws-rss",
    ),
    ProviderSpec(
        "gcp",
        "Google Cloud",
        (FeedSpec("gcp", "https://status.cloud.google.com/incidents.json"),),
        sla="gcp-compute-single-vm",
    ),
    ProviderSpec(
        "azure",
        "Microsoft Azure",
        (FeedSpec("azure-rss", "https://azure.status.microsoft/en-us/status/feed/"),),
        sla="azure-vm-single-premium",
        notes="lists only issues open right now; empty most of the time",
    ),
    ProviderSpec(
        "coreweave",
        "CoreWeave",
        (FeedSpec("statusio", "https://status.io/pages/5e126e998f2f032e1f8f0f4b/rss"),),
    ),
    ProviderSpec(
        "together",
        "Together AI",
        (FeedSpec("betterstack", "https://status.together.ai/index.json"),),
    ),
    ProviderSpec(
        "runpod", "RunPod", (FeedSpec("betterstack", "https://uptime.runpod.io/index.json"),)
    ),
    ProviderSpec(
        "digitalocean",
        "DigitalOcean (incl. Paperspace)",
        (FeedSpec("statuspage", "https://status.digitalocean.com/api/v2/incidents.json"),),
    ),
    ProviderSpec(
        "paperspace",
        "Paperspace",
        (FeedSpec("statuspage", "https://status.paperspace.com/api/v2/incidents.json"),),
    ),
    ProviderSpec("lambda", "Lambda", notes="no machine-readable feed known; add one in config"),
    ProviderSpec("vastai", "Vast.ai", notes="no machine-readable feed known; add one in config"),
    ProviderSpec("nebius", "Nebius", notes="no machine-readable feed known; add one in config"),
    ProviderSpec(
        "oci",
        "Oracle Cloud Infrastructure",
        notes="no machine-readable feed known; add one in config",
    ),
)


def providers_for(config: Config) -> tuple[ProviderSpec, ...]:
    """The catalog with the config's providers applied: a known slug is overridden field by
    field (only fields the config sets), an unknown one is added."""
    merged = {spec.slug: spec for spec in CATALOG}
    for entry in config.providers:
        base = merged.get(entry.slug)
        merged[entry.slug] = _override(base, entry) if base else _from_config(entry)
    return tuple(merged.values())


def _override(base: ProviderSpec, entry: ProviderConfig) -> ProviderSpec:
    return replace(
        base,
        name=entry.name or base.name,
        feeds=_feeds(entry) if entry.feeds is not None else base.feeds,
        regions=tuple(entry.regions) or base.regions,
        components=tuple(entry.components) or base.components,
        sla=entry.sla or base.sla,
        source="config",
    )


def _from_config(entry: ProviderConfig) -> ProviderSpec:
    return ProviderSpec(
        slug=entry.slug,
        name=entry.name or entry.slug,
        feeds=_feeds(entry),
        regions=tuple(entry.regions),
        components=tuple(entry.components),
        sla=entry.sla,
        source="config",
    )


def _feeds(entry: ProviderConfig) -> tuple[FeedSpec, ...]:
    return tuple(FeedSpec(f.kind, f.url) for f in entry.feeds or ())
