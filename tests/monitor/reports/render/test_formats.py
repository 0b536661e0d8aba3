"""Tests for the renderer registry (monitor/reports/render/formats.py)."""

from __future__ import annotations

import pytest

from monitor.reports.model import MonthlyReport
from monitor.reports.render.formats import RENDERERS

MAGIC = {"json": b"{", "csv": b"\xef\xbb\xbfsection,", "html": b"<!DOCTYPE html>", "pdf": b"%PDF-"}


def test_the_four_formats_are_registered() -> None:
    assert set(RENDERERS) == {"json", "csv", "html", "pdf"}


@pytest.mark.parametrize("fmt", sorted(MAGIC))
def test_each_renderer_gives_bytes_of_its_content_type(report: MonthlyReport, fmt: str) -> None:
    renderer = RENDERERS[fmt]
    content = renderer.render(report)
    assert content.startswith(MAGIC[fmt])
    assert renderer.extension == fmt
    assert renderer.content_type.split(";")[0] in {
        "application/json",
        "text/csv",
        "text/html",
        "application/pdf",
    }
