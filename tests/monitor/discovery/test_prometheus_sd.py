"""file_sd and http_sd: Prometheus' target-group documents from real files and a real server."""

from __future__ import annotations

import json
import socket
from datetime import UTC, datetime
from pathlib import Path

import pytest

from monitor.config import parse_config
from monitor.discovery.kind import SweepContext
from monitor.discovery.kinds import KINDS
from monitor.discovery.kinds.file_sd import FileSdOptions
from monitor.discovery.kinds.http_sd import HttpSdOptions
from monitor.errors import ConfigError, SweepFailed
from tests.support import FeedServer

NOW = datetime(2026, 12, 4, 12, tzinfo=UTC)
CONTEXT = SweepContext("lab", NOW, timeout_s=2.0)
GROUPS = [
    {
        "targets": ["10.0.0.1:9400", "10.0.0.2:9400"],
        "labels": {
            "pool": "h100",
            "instance_type": "p5.48xlarge",
            "capacity": "spot",
            "team": "ml",
        },
    },
    {"targets": ["10.0.0.3:9400"], "labels": {"name": "box-3", "external_id": "i-3", "gpus": "4"}},
]


def file_sd(path: Path | str) -> list:
    return list(KINDS["file_sd"].list_instances(FileSdOptions(path=str(path)), CONTEXT))


def test_file_sd_reads_addresses_and_labels_into_instances(tmp_path: Path) -> None:
    path = tmp_path / "sd.json"
    path.write_text(json.dumps(GROUPS))
    found = {i.external_id: i for i in file_sd(path)}
    assert sorted(found) == ["10.0.0.1:9400", "10.0.0.2:9400", "i-3"]
    first = found["10.0.0.1:9400"]
    assert (first.name, first.capacity, first.instance_type) == (
        "10.0.0.1:9400",
        "spot",
        "p5.48xlarge",
    )
    assert first.target["pool"] == "h100"
    assert first.target["labels"] == {"team": "ml"}
    assert first.template_fields()["address"] == "10.0.0.1:9400"
    assert first.template_fields()["host"] == "10.0.0.1"
    third = found["i-3"]
    assert (third.name, third.gpus, third.target["gpus"]) == ("box-3", 4, 4)


def test_file_sd_reads_yaml_and_globs_and_sees_a_change_at_the_next_sweep(tmp_path: Path) -> None:
    (tmp_path / "a.yml").write_text("- targets: ['h1:80']\n  labels: {pool: a}\n")
    (tmp_path / "b.json").write_text(json.dumps([{"targets": ["h2:80"]}]))
    assert sorted(i.external_id for i in file_sd(tmp_path / "*")) == ["h1:80", "h2:80"]
    (tmp_path / "a.yml").write_text("- targets: ['h1:80', 'h3:80']\n")
    assert sorted(i.external_id for i in file_sd(tmp_path / "*")) == ["h1:80", "h2:80", "h3:80"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{not json", "malformed"),
        (json.dumps({"targets": ["a:1"]}), "expected a list of target groups"),
        (json.dumps([{"targets": "a:1"}]), "'targets' must be a list"),
        (json.dumps([{"targets": ["a:1"], "labels": {"gpus": "eight"}}]), "not a number"),
        (json.dumps([{"targets": ["a:1"], "labels": {"capacity": "cheap"}}]), "capacity 'cheap'"),
    ],
)
def test_a_malformed_file_fails_the_sweep_with_one_line(
    tmp_path: Path, text: str, says: str
) -> None:
    path = tmp_path / "sd.json"
    path.write_text(text)
    with pytest.raises(SweepFailed) as caught:
        file_sd(path)
    message = str(caught.value)
    assert says in message
    assert "\n" not in message
    assert str(path) in message


def test_a_missing_file_fails_the_sweep(tmp_path: Path) -> None:
    with pytest.raises(SweepFailed, match="cannot read"):
        file_sd(tmp_path / "gone.json")
    with pytest.raises(SweepFailed, match="no file matches"):
        file_sd(tmp_path / "*.json")


def http_sd(url: str, token: str | None = None) -> list:
    return list(KINDS["http_sd"].list_instances(HttpSdOptions(url=url, token=token), CONTEXT))


def test_http_sd_reads_the_servers_answer() -> None:
    server = FeedServer()
    try:
        server.routes["/sd"] = (200, json.dumps(GROUPS).encode())
        assert len(http_sd(server.url + "/sd")) == 3
        server.routes["/sd"] = (503, b"busy")
        with pytest.raises(SweepFailed, match="answered HTTP 503"):
            http_sd(server.url + "/sd")
        server.routes["/sd"] = (200, b"<html>")
        with pytest.raises(SweepFailed, match="malformed document"):
            http_sd(server.url + "/sd")
    finally:
        server.close()


def test_http_sd_unreachable_is_one_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(SweepFailed, match="unreachable") as caught:
        http_sd(f"http://127.0.0.1:{port}/sd")
    assert "\n" not in str(caught.value)


def test_config_validates_a_sources_own_options() -> None:
    config = parse_config(
        "discovery:\n  - {name: lab, kind: http_sd, url: 'http://sd:8080/targets',"
        " template: {kind: http, url: 'http://{address}/healthz'}}\n"
    )
    assert config.discovery[0].options.url == "http://sd:8080/targets"
    with pytest.raises(ConfigError) as caught:
        parse_config(
            "discovery:\n  - {name: lab, kind: http_sd, url: 'ftp://x', template: {kind: http}}\n"
        )
    assert any("url" in problem for problem in caught.value.problems)
    with pytest.raises(ConfigError, match="no target field 'colour'"):
        parse_config(
            "discovery:\n  - {name: a, kind: file_sd, path: x,"
            " template: {kind: http, colour: red}}\n"
        )
