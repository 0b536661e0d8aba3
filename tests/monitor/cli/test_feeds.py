"""`slamon feeds …` as a new user runs it."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import FIXTURES, FeedServer, slamon_command

FEEDS = FIXTURES / "feeds"
CONTRACT_PAIRS = {
    "statuspage": "statuspage/ai-status-cloudflare-summary-trimmed.json",
    "gcp": "gcp/gcp-incidents-excerpt-2022-07.json",
    "aws-health": "aws-health/ai-status-aws-currentevents.json",
    "aws-rss": "aws-rss/checkmk-aws-all-rss-2023-02.rss",
    "azure-rss": "azure-rss/checkmk-azure-status-feed-2022-11-edited.rss",
    "rss": "statuspage-history/github-history-2026-08.atom",
    "statusio": "statusio/coreweave-statusio-rss-2026-09.xml",
    "betterstack": "betterstack/ai-status-together-index.json",
    "instatus": "instatus/ai-status-perplexity-summary.json",
}
EXPECTED_COUNTS = {"statuspage": 13, "gcp": 5, "rss": 25, "statusio": 10, "instatus": 0}
KEYS = {
    "provider",
    "source_id",
    "title",
    "status",
    "impact",
    "is_maintenance",
    "started_at",
    "resolved_at",
    "url",
    "components",
    "regions",
    "updates",
}


def slamon(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*slamon_command(), *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("kind", sorted(CONTRACT_PAIRS))
def test_feeds_parse_prints_one_incident_per_json_line(kind: str, tmp_path: Path) -> None:
    result = slamon(
        "feeds", "parse", "--kind", kind, str(FEEDS / CONTRACT_PAIRS[kind]), "--json", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(set(r) >= KEYS for r in records)
    if kind in EXPECTED_COUNTS:
        assert len(records) == EXPECTED_COUNTS[kind]
    else:
        assert records


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--kind", "gcp", "garbage.json"), "error: gcp feed: invalid JSON"),
        (("--kind", "gcp", "missing.json"), "error: missing.json: No such file or directory"),
        (("--kind", "nagios", "garbage.json"), "error: unknown feed kind 'nagios'"),
        (("--kind", "rss", "garbage.json"), "error: rss feed: "),
    ],
)
def test_feeds_parse_reports_bad_input_in_one_line(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    (tmp_path / "garbage.json").write_bytes(b"{\x00\xff not json")
    result = slamon("feeds", "parse", *args, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith(message), result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_feeds_list_shows_the_catalog_and_config_additions(tmp_path: Path) -> None:
    (tmp_path / "slamon.yaml").write_text(
        "providers: [{slug: acme, feeds: [{kind: rss, url: 'https://acme.example/h.atom'}]}]"
    )
    result = slamon("feeds", "list", "--json", cwd=tmp_path)
    slugs = {json.loads(line)["provider"] for line in result.stdout.splitlines()}
    assert {"aws", "gcp", "azure", "coreweave", "lambda", "acme"} <= slugs


@pytest.fixture
def server() -> Iterator[FeedServer]:
    feed_server = FeedServer()
    yield feed_server
    feed_server.close()


def test_feeds_poll_stores_then_finds_nothing_new_then_reports_a_failure(
    tmp_path: Path, server: FeedServer
) -> None:
    server.routes["/incidents.json"] = (200, (FEEDS / CONTRACT_PAIRS["gcp"]).read_bytes())
    (tmp_path / "slamon.yaml").write_text(
        f"providers: [{{slug: gcp, feeds: [{{kind: gcp, url: '{server.url}/incidents.json'}}]}}]"
    )
    assert slamon("migrate", cwd=tmp_path).returncode == 0

    first = slamon("feeds", "poll", "--provider", "gcp", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "5 incidents: 5 new, 0 changed, 33 updates added" in first.stdout
    again = slamon("feeds", "poll", "--provider", "gcp", "--json", cwd=tmp_path)
    assert json.loads(again.stdout)["result"] == "unchanged"

    server.routes["/incidents.json"] = (503, b"busy")
    failed = slamon("feeds", "poll", "--provider", "gcp", cwd=tmp_path)
    assert failed.returncode == 1
    assert "failed: " in failed.stdout
    assert "HTTP 503" in failed.stdout

    stats = slamon("feeds", "stats", "--month", "2022-06", "--json", cwd=tmp_path)
    [row] = [json.loads(line) for line in stats.stdout.splitlines()]
    assert (row["provider"], row["incidents"]) == ("gcp", 3)
