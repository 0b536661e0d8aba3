"""Tests for the PDF report (monitor/reports/render/pdf.py), checked through poppler's tools.

``pdftoppm`` shows the PDF opens and draws its pages; ``pdftotext`` shows the tables are real,
searchable text. Both come with Debian's ``poppler-utils``; without it these tests skip.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from monitor.reports.model import MonthlyReport
from monitor.reports.render import pdf as render_pdf
from tests.monitor.reports.render.conftest import ISSUE_ARN, wrapped_cells

POPPLER = "needs pdftoppm/pdftotext (apt-get install poppler-utils)"
needs_poppler = pytest.mark.skipif(
    not (shutil.which("pdftoppm") and shutil.which("pdftotext")), reason=POPPLER
)


def pdf_text(report: MonthlyReport, tmp_path: Path) -> list[str]:
    """The text of each page, as ``pdftotext`` extracts it."""
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(render_pdf.render(report))
    out = subprocess.run(
        ["pdftotext", "-enc", "UTF-8", str(pdf), "-"], check=True, capture_output=True
    ).stdout.decode()
    return out.split("\f")[:-1]  # every page ends with a form feed


def test_the_pdf_is_a_complete_document(report: MonthlyReport) -> None:
    data = render_pdf.render(report)
    assert data.startswith(b"%PDF-")
    assert data.rstrip().endswith(b"%%EOF")


def test_the_same_report_gives_the_same_bytes(report: MonthlyReport) -> None:
    assert render_pdf.render(report) == render_pdf.render(report)


@needs_poppler
def test_the_pdf_opens_and_draws_its_pages(report: MonthlyReport, tmp_path: Path) -> None:
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(render_pdf.render(report))
    subprocess.run(["pdftoppm", "-png", "-r", "50", str(pdf), str(tmp_path / "page")], check=True)
    pages = sorted(tmp_path.glob("page-*.png"))
    assert len(pages) >= 2
    assert all(p.read_bytes().startswith(b"\x89PNG") and p.stat().st_size > 5000 for p in pages)


@needs_poppler
def test_the_tables_are_searchable_text(report: MonthlyReport, tmp_path: Path) -> None:
    text = "\n".join(pdf_text(report, tmp_path))
    for expected in (
        *(t.name for t in report.targets),
        "GPU provider SLA report — 2025-06",
        "Provider scorecard",
        "Amazon Web Services",
        "99.842%",  # trainer-0's uptime
        "99.999%",  # 99.99999, truncated: never shown as 100
        "BREACH",
        "2025-06-03 14:02:07",  # outage evidence
        "2025-06-17 02:00:00.25",
        "2025-08-31 23:59:59",  # claim deadline
        "2,171.18",  # money lost
        "Increased EC2 API error rates in US-EAST-1",
        "no probe data this month",
        report.policy_hash,
    ):
        assert expected in text, expected


@needs_poppler
def test_markup_in_names_is_shown_literally(report: MonthlyReport, tmp_path: Path) -> None:
    short = "<b>x</b> & y"
    long = "<i>evil</i> & <b>co</b> " + "very-long-target-name-" * 3  # wraps: drawn as a paragraph
    t0, t1, *rest = report.targets
    evil = replace(
        report,
        targets=(replace(t0, name=short), replace(t1, name=long), *rest),
        notes=("<font color=red>note</font> & more",),
    )
    text = "\n".join(pdf_text(evil, tmp_path))
    assert short in text
    assert "<i>evil</i> & <b>co</b>" in text
    assert "<font color=red>note</font> & more" in text


@needs_poppler
def test_a_thousand_targets_paginate_with_the_header_on_every_page(
    make_report: Callable[[int], MonthlyReport], tmp_path: Path
) -> None:
    big = make_report(1000)
    pages = pdf_text(big, tmp_path)
    assert len(pages) > 20
    target_pages = [p for p in pages if "-node-" in p]
    assert len(target_pages) > 10
    assert all("Target" in p for p in target_pages)  # LongTable repeats the header row
    text = "\n".join(pages)
    assert all(t.name in text for t in big.targets)
    assert f"page {len(pages)}" in pages[-1]


@needs_poppler
def test_an_empty_month_renders_and_says_why(report: MonthlyReport, tmp_path: Path) -> None:
    empty = replace(
        report, providers=(), targets=(), pools=(), incidents=(), notes=("no probe data at all",)
    )
    text = "\n".join(pdf_text(empty, tmp_path))
    assert "no probe data at all" in text
    assert "No outages." in text


@needs_poppler
def test_the_provider_s_record_is_searchable_text(recorded: MonthlyReport, tmp_path: Path) -> None:
    text = " ".join("\n".join(pdf_text(recorded, tmp_path)).split())  # wrapped cells joined
    for expected in (
        "The provider's record",
        "Excluded on the provider's record",
        '"impaired" <b>status</b>',
        "i-0abc:user-restart,=1",
        "user-initiated (exclude_user_initiated)",
        "10m 00s",
    ):
        assert expected in text, expected
    # an ARN is wider than its column: drawn whole, over lines, in the claim and evidence tables
    # (read down its column: the next row's cell may follow it there)
    cells = wrapped_cells(render_pdf.render(recorded), tmp_path, "arn:aws:health:")
    assert len(cells) == 2
    assert all(cell.startswith(ISSUE_ARN) for cell in cells), cells
