"""slamon's Grafana dashboards as code, built with Grafana's Foundation SDK.

``python -m dashboards.build`` writes ``dashboards/*.json`` from the boards' builders
(``dashboards/boards/``, one module per dashboard, over the kit in ``dashboards/kit/``);
``python -m dashboards.build --check`` writes nothing and exits 1 naming every file that differs
from what the code generates (tests/dashboards/test_generated.py runs it). Edit the code, never
the JSON: docker-compose provisions the JSON read-only and ``slamon grafana push`` uploads it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from grafana_foundation_sdk.builders import dashboard as builders
from grafana_foundation_sdk.cog.encoder import JSONEncoder

from dashboards.boards import alerts, gpu_fleet, provider_health, sla_compliance

DIRECTORY = Path(__file__).resolve().parent

BUILDERS: dict[str, Callable[[], builders.Dashboard]] = {
    "alerts.json": alerts.dashboard,
    "gpu-fleet.json": gpu_fleet.dashboard,
    "provider-health.json": provider_health.dashboard,
    "sla-compliance.json": sla_compliance.dashboard,
}


def render(dashboard: builders.Dashboard) -> str:
    """The dashboard as the JSON file holds it: two-space indents, a final newline."""
    data: dict[str, Any] = json.loads(json.dumps(dashboard.build(), cls=JSONEncoder))
    for item in data["templating"]["list"]:
        # The SDK's variable model has no `definition`, the text Grafana's editor shows.
        item["definition"] = item["query"]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def generate() -> dict[str, str]:
    """Every dashboard file's name and the text the code generates for it."""
    return {name: render(build()) for name, build in BUILDERS.items()}


def main(argv: Sequence[str] | None = None) -> int:
    """Write the stale dashboard files (or, with ``--check``, name them and return 1)."""
    parser = argparse.ArgumentParser(
        prog="python -m dashboards.build", description="Generate dashboards/*.json from code."
    )
    parser.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a file differs"
    )
    parser.add_argument("--dir", type=Path, default=DIRECTORY, help="where the JSON files are")
    args = parser.parse_args(argv)
    stale = []
    for name, text in generate().items():
        path = args.dir / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
            if not args.check:
                path.write_text(text, encoding="utf-8")
                print(f"wrote {path}")
    if args.check and stale:
        print(
            f"out of date: {', '.join(stale)} (run `python -m dashboards.build`)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
