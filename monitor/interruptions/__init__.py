"""Interruption notices from the metadata service of the box this runs on: AWS IMDSv2, GCE's
metadata server, Azure Scheduled Events. One module per cloud, one line in ``REGISTRY``; each
parses its documents with pure functions and polls with a client it is given.

httpx and the standard library only (nothing else of slamon's): ``monitor.training`` uses this
in a training job, where slamon's own dependencies are not installed. ``slamon agent
--metadata`` uses it too.
"""

from __future__ import annotations

from monitor.interruptions.model import CLOUDS, MetadataError, Notice, NotOnThisCloud
from monitor.interruptions.registry import REGISTRY, find_source
from monitor.interruptions.source import Source
from monitor.interruptions.watch import Watch

__all__ = [
    "CLOUDS",
    "REGISTRY",
    "MetadataError",
    "NotOnThisCloud",
    "Notice",
    "Source",
    "Watch",
    "find_source",
]
