"""A toy probe kind, written the way a new kind is: this module, plus one ``register`` call.

``file:///path`` targets: reachable while the file exists, usable while it reads ``ready`` (a
stand-in for, say, a GPU agent's readiness flag). Used by ``test_kinds.py``.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from monitor.db.base import utcnow
from monitor.probes.kind import ProbeKind, UrlRule, UsableRule
from monitor.probes.model import ProbeResult, ProbeTarget, failure
from monitor.probes.wire import ProbeClient


async def probe(target: ProbeTarget, client: ProbeClient) -> ProbeResult:
    at = utcnow()
    path = Path(urlsplit(target.url or "").path)
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return failure(target, at, "connect", f"{path} does not exist")
    ready = text == "ready"
    error = None if ready else f"flag reads {text!r}"
    return ProbeResult(target.id, target.name, at, True, usable=ready, error=error)


KIND = ProbeKind(
    "toy",
    UrlRule(("file",), "file:///path/to/flag", r"^file:///\S+$", needs_host=False),
    probe=probe,
    usable=(UsableRule("toy_unready", "warning", "is up but its flag is not ready"),),
)
