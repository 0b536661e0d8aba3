"""The channel kinds a config may name are the kinds the channels can send, and the docs list
the same ones."""

from __future__ import annotations

import re
from pathlib import Path

from monitor.alerts.channels import KINDS
from monitor.config.models import CHANNEL_KINDS

ROOT = Path(__file__).resolve().parents[4]


def test_the_config_names_exactly_the_kinds_the_channels_send() -> None:
    assert sorted(CHANNEL_KINDS) == sorted(KINDS)


def test_the_configuration_reference_and_design_list_every_channel_kind() -> None:
    reference = (ROOT / "docs" / "configuration.md").read_text()
    design = (ROOT / "docs" / "DESIGN.md").read_text()
    row = next(line for line in reference.splitlines() if line.startswith("| `channels[]`"))
    listed = re.findall(r"`(\w+)`", row.split("`kind`", 1)[1].split(")", 1)[0])
    comment = re.search(r"kind: webhook\s+# (.+)", design)

    assert sorted(listed) == sorted(KINDS)
    assert comment is not None
    assert sorted(comment.group(1).split(" | ")) == sorted(KINDS)
