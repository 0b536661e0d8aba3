"""``file_sd``: Prometheus' file-based service discovery. The files are read on every sweep, so
a change is seen at the next one (nothing is cached between sweeps); ``path`` may be a glob."""

from __future__ import annotations

import glob
import json
from collections.abc import Sequence
from pathlib import Path

from monitor.discovery.kind import DiscoveryKind, SourceOptions, SweepContext
from monitor.discovery.model import Instance
from monitor.discovery.prometheus_sd import DocumentError, instances
from monitor.errors import SweepFailed


class FileSdOptions(SourceOptions):
    path: str  # a JSON or YAML file (by its suffix: .yml/.yaml read as YAML), or a glob of them


def list_instances(options: FileSdOptions, context: SweepContext) -> Sequence[Instance]:
    paths = sorted(glob.glob(options.path)) if glob.has_magic(options.path) else [options.path]
    if not paths:
        raise SweepFailed(f"file_sd: no file matches {options.path}")
    found: dict[str, Instance] = {}
    for path in paths:
        for instance in _read(Path(path)):
            found.setdefault(instance.external_id, instance)
    return list(found.values())


def _read(path: Path) -> list[Instance]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SweepFailed(f"file_sd: cannot read {path}: {exc.strerror or exc}") from None
    try:
        if path.suffix.lower() in (".yml", ".yaml"):
            import yaml  # only a process that reads a YAML file_sd loads the YAML parser

            document = yaml.safe_load(text)
        else:
            document = json.loads(text)
        return instances(document if document is not None else [])
    except (ValueError, DocumentError) as exc:  # json, yaml (a ValueError too) and our own
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SweepFailed(f"file_sd: {path} is malformed: {reason}") from None
    except Exception as exc:  # yaml.YAMLError is not a ValueError
        raise SweepFailed(f"file_sd: {path} is malformed: {str(exc).splitlines()[0]}") from None


KIND = DiscoveryKind(name="file_sd", options=FileSdOptions, list_instances=list_instances)
