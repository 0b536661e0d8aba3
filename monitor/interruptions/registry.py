"""The metadata sources, one line per cloud, and finding the one of the box this runs on."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from monitor.interruptions.aws import AwsMetadata
from monitor.interruptions.azure import AzureMetadata
from monitor.interruptions.gcp import GceMetadata
from monitor.interruptions.model import MetadataError, NotOnThisCloud
from monitor.interruptions.source import Source

REGISTRY: dict[str, Callable[[httpx.Client, str | None], Source]] = {
    "aws": AwsMetadata,
    "gcp": GceMetadata,
    "azure": AzureMetadata,
}


def find_source(cloud: str, client: httpx.Client, base_url: str | None = None) -> Source:
    """The source of ``cloud`` (``aws``, ``gcp``, ``azure``) after checking that its service
    answers, or for ``auto`` the first that does. ``NotOnThisCloud`` (one line) otherwise;
    ``ValueError`` for an unknown cloud."""
    if cloud != "auto" and cloud not in REGISTRY:
        raise ValueError(f"cloud {cloud!r}: one of auto, {', '.join(REGISTRY)}")
    problems = []
    for name in REGISTRY if cloud == "auto" else (cloud,):
        source = REGISTRY[name](client, base_url)
        try:
            source.check()
            return source
        except MetadataError as exc:
            problems.append(str(exc))
    if cloud != "auto":
        raise NotOnThisCloud(problems[0])
    raise NotOnThisCloud("not on AWS, GCE or Azure: " + "; ".join(problems))
