"""`slamon agent --metadata`: each interruption notice printed at once as a console event line
(and pushed: tests/monitor/agent/test_notice_push.py); a metadata service that is not there is
one line."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from monitor.agent.model import AgentError
from monitor.agent.notices import notice_line, open_source, watch
from monitor.cli import cli
from monitor.events import words
from monitor.interruptions import Notice
from monitor.interruptions.aws import INSTANCE_ACTION
from tests.monitor.interruptions.fake_metadata import MetadataServer, closed_port
from tests.support import WebhookReceiver

NOW = datetime(2026, 12, 4, 22, 0, tzinfo=UTC)
H100_CSV = Path(__file__).resolve().parents[2] / "fixtures" / "nvidia-smi" / "gpuexp-h100-load.csv"
ACTION = b'{"action": "terminate", "time": "2026-12-04T22:02:00Z"}'


@pytest.mark.parametrize(
    ("deadline", "facts"),
    [
        (datetime(2026, 12, 4, 22, 2, tzinfo=UTC),
         "aws preemption by 22:02:00Z (in 2m 00s): spot instance-action terminate [k]"),
        (None, "aws preemption (no deadline given): spot instance-action terminate [k]"),
        (datetime(2026, 12, 4, 21, 59, 30, tzinfo=UTC),
         "aws preemption at 21:59:30Z (30s ago): spot instance-action terminate [k]"),
    ],
    ids=["ahead", "no-deadline", "passed"],
)  # fmt: skip
def test_a_notice_line_says_what_by_when(deadline: datetime | None, facts: str) -> None:
    notice = Notice("aws", "preemption", deadline, "k", "spot instance-action terminate")
    assert notice_line(notice, NOW) == (
        f"2026-12-04 22:00:00Z  {words.line(words.INTERRUPT_NOTICE, facts)}"
    )


def test_the_watch_echoes_each_notice_once_as_it_appears() -> None:
    server = MetadataServer("aws")
    lines: list[str] = []
    try:
        with httpx.Client(timeout=2) as client:
            w = watch(open_source("aws", client, server.url), lines.append)
            server.documents[INSTANCE_ACTION] = (200, ACTION)
            deadline = time.monotonic() + 4
            while not lines and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(1.2)
            w.close()
    finally:
        server.close()
    assert len(lines) == 1
    assert "interrupt notice  aws preemption" in lines[0]


def test_no_metadata_service_is_one_line_at_start() -> None:
    with httpx.Client(timeout=1) as client, pytest.raises(AgentError) as caught:
        open_source("gcp", client, closed_port())
    assert str(caught.value).startswith("--metadata gcp: no GCE metadata server at")
    assert "\n" not in str(caught.value)


def fake_nvidia_smi(folder: Path) -> str:
    script = folder / "nvidia-smi"
    script.write_text(f"#!/bin/sh\nexec cat '{H100_CSV}'\n")
    script.chmod(0o755)
    return str(script)


def test_once_with_metadata_prints_the_notices_there_now(tmp_path: Path) -> None:
    server, slamon = MetadataServer("aws"), WebhookReceiver()
    server.documents[INSTANCE_ACTION] = (200, ACTION)
    try:
        argv = ["agent", "--url", f"http://127.0.0.1:{slamon.port}", "--target", "box",
                "--source", "nvidia-smi", "--nvidia-smi", fake_nvidia_smi(tmp_path), "--once",
                "--metadata", "auto", "--metadata-url", server.url]  # fmt: skip
        result = CliRunner().invoke(cli, argv)
    finally:
        server.close()
        slamon.close()
    assert result.exit_code == 0, result.output
    assert "interrupt notice  aws preemption " in result.output
    assert "[2026-12-04T22:02:00Z terminate]" in result.output
    assert "pushed one reading (nvidia-smi)" in result.output
    assert "pushed 1 interruption notice(s)" in result.output
    notice, reading = (json.loads(body) for _, body in slamon.requests)  # in this order
    assert (notice["cloud"], notice["kind"]) == ("aws", "preemption")
    assert "gpus" in reading


def test_once_with_an_absent_metadata_service_fails_in_one_line(tmp_path: Path) -> None:
    argv = ["agent", "--url", "http://127.0.0.1:9", "--target", "box", "--source", "nvidia-smi",
            "--nvidia-smi", fake_nvidia_smi(tmp_path), "--once", "--metadata", "azure",
            "--metadata-url", closed_port()]  # fmt: skip
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code != 0
    assert "--metadata azure: no Azure metadata service at" in result.output
    assert "Traceback" not in result.output


def test_metadata_none_watches_nothing_and_pushes_the_reading(tmp_path: Path) -> None:
    slamon = WebhookReceiver()
    try:
        argv = ["agent", "--url", f"http://127.0.0.1:{slamon.port}", "--target", "box",
                "--source", "nvidia-smi", "--nvidia-smi", fake_nvidia_smi(tmp_path), "--once",
                "--metadata", "none"]  # fmt: skip
        result = CliRunner().invoke(cli, argv)
    finally:
        slamon.close()
    assert result.exit_code == 0, result.output
    assert "interrupt notice" not in result.output
    [(_, body)] = slamon.requests  # the reading alone: no metadata service was asked
    assert "gpus" in json.loads(body)
