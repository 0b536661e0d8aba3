"""The monthly report as a PDF: the HTML page's tables, as real (searchable) text.

Built with ReportLab's platypus: landscape A4, every table a ``LongTable`` whose header row
repeats on each page, so a report with thousands of targets paginates by itself. Text cells wrap
only when they do not fit (a ``Paragraph`` per cell is the slow part of ReportLab). The PDF is
built in invariant mode, so the same report gives the same bytes.

Fonts are the PDF standard Helvetica family (nothing embedded): Latin text renders; scripts
outside Windows-1252 (e.g. CJK target names) show as boxes in the PDF but stay exact in the
JSON and CSV.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from reportlab.lib import colors  # type: ignore[import-untyped,unused-ignore]
from reportlab.lib.pagesizes import A4, landscape  # type: ignore[import-untyped,unused-ignore]
from reportlab.lib.styles import ParagraphStyle  # type: ignore[import-untyped,unused-ignore]
from reportlab.lib.units import mm  # type: ignore[import-untyped,unused-ignore]
from reportlab.pdfbase.pdfmetrics import stringWidth  # type: ignore[import-untyped,unused-ignore]
from reportlab.platypus import (  # type: ignore[import-untyped,unused-ignore]
    LongTable,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

from monitor.reports.model import MonthlyReport
from monitor.reports.render.tables import Cell, Link, all_tables, summary, when
from monitor.reports.render.tables import Table as Rows

CONTENT_TYPE = "application/pdf"
PAGE = landscape(A4)
MARGIN = 12 * mm
WIDTH = PAGE[0] - 2 * MARGIN
FONT, BOLD, SIZE = "Helvetica", "Helvetica-Bold", 7.0
PAD = 3.0
HEAD_BG = colors.HexColor("#eeeeee")
ZEBRA = colors.HexColor("#fafafa")
FLAG_BG = {"bad": colors.HexColor("#fdecea"), "muted": colors.HexColor("#f0f0f0")}

_TITLE = ParagraphStyle("title", fontName=BOLD, fontSize=16, leading=20, spaceAfter=4)
_H2 = ParagraphStyle(
    "h2", fontName=BOLD, fontSize=11, leading=14, spaceBefore=10, spaceAfter=2, keepWithNext=1
)
_BODY = ParagraphStyle("body", fontName=FONT, fontSize=8, leading=10, spaceAfter=4)
_CAPTION = ParagraphStyle("caption", parent=_BODY, textColor=colors.HexColor("#616161"))
_LEAD = ParagraphStyle("lead", parent=_CAPTION, keepWithNext=1)  # a caption stays with its table
_NOTE = ParagraphStyle("note", parent=_BODY, backColor=colors.HexColor("#fff8e1"), borderPadding=3)
_CELL = ParagraphStyle("cell", fontName=FONT, fontSize=SIZE, leading=SIZE + 1.5)
_HEAD = ParagraphStyle("head", parent=_CELL, fontName=BOLD)
_HEAD_NUM = ParagraphStyle("head_num", parent=_HEAD, alignment=2)  # right-aligned


def render(report: MonthlyReport) -> bytes:
    """PDF bytes for ``report``."""
    out = io.BytesIO()
    doc = SimpleDocTemplate(
        out,
        pagesize=PAGE,
        leftMargin=MARGIN,
        rightMargin=MARGIN,
        topMargin=MARGIN,
        bottomMargin=MARGIN + 4 * mm,
        title=f"SLA report {report.month}",
        author="slamon",
        subject="Monthly GPU provider SLA report",
        creator="slamon",
        invariant=1,
    )
    footer = f"slamon · SLA report {report.month} · policy {report.policy_hash}"

    def on_page(canvas: Any, page_doc: Any) -> None:
        canvas.saveState()
        canvas.setFont(FONT, 7)
        canvas.setFillColor(colors.HexColor("#616161"))
        canvas.drawString(MARGIN, MARGIN, footer)
        canvas.drawRightString(PAGE[0] - MARGIN, MARGIN, f"page {page_doc.page}")
        canvas.restoreState()

    doc.build(_story(report), onFirstPage=on_page, onLaterPages=on_page)
    data: bytes = out.getvalue()
    return data


def _story(report: MonthlyReport) -> list[Any]:
    meta = (
        f"Period {when(report.period_start)} to {when(report.period_end)} UTC (end exclusive) · "
        f"generated {when(report.generated_at)} UTC · accounting policy {report.policy_hash}"
    )
    story: list[Any] = [
        Paragraph(_esc(f"GPU provider SLA report — {report.month}"), _TITLE),
        Paragraph(_esc(meta), _CAPTION),
    ]
    if report.notes:
        story.append(Paragraph("Notes", _H2))
        story.extend(Paragraph(_esc(note), _NOTE) for note in report.notes)
    story.extend([Spacer(1, 4), _summary(summary(report))])
    for rows in all_tables(report):
        story.append(Paragraph(_esc(rows.title), _H2))
        if rows.caption:
            story.append(Paragraph(_esc(rows.caption), _LEAD))
        story.append(_table(rows) if rows.rows else Paragraph(_esc(rows.empty), _BODY))
    return story


def _summary(pairs: Sequence[tuple[str, str]]) -> Any:
    labels = [Paragraph(_esc(label), _CAPTION) for label, _ in pairs]
    values = [Paragraph(f"<b>{_esc(value)}</b>", _BODY) for _, value in pairs]
    table = Table([labels, values], colWidths=[WIDTH / len(pairs)] * len(pairs), hAlign="LEFT")
    table.setStyle(TableStyle([("BOX", (0, 0), (-1, -1), 0.5, colors.HexColor("#e0e0e0"))]))
    return table


def _table(rows: Rows) -> Any:
    total = sum(c.width for c in rows.columns)
    widths = [WIDTH * c.width / total for c in rows.columns]
    head = [Paragraph(_esc(c.title), _HEAD_NUM if c.numeric else _HEAD) for c in rows.columns]
    body = [
        [_cell(cell, w - 2 * PAD) for cell, w in zip(row, widths, strict=True)] for row in rows.rows
    ]
    table = LongTable([head, *body], colWidths=widths, repeatRows=1, hAlign="LEFT")
    table.setStyle(TableStyle(_style(rows)))
    return table


def _cell(cell: Cell, room: float) -> Any:
    if isinstance(cell, Link):
        return Paragraph(
            f'<a href={quoteattr(cell.href)} color="#1565c0">{_esc(cell.text)}</a>', _CELL
        )
    if stringWidth(cell, FONT, SIZE) <= room and "\n" not in cell:
        return cell  # plain strings are drawn far faster than paragraphs
    return Paragraph(_esc(cell), _CELL)


def _style(rows: Rows) -> list[tuple[Any, ...]]:
    style: list[tuple[Any, ...]] = [
        ("FONT", (0, 0), (-1, -1), FONT, SIZE),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("LEFTPADDING", (0, 0), (-1, -1), PAD),
        ("RIGHTPADDING", (0, 0), (-1, -1), PAD),
        ("TOPPADDING", (0, 0), (-1, -1), 1.5),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
        ("BACKGROUND", (0, 0), (-1, 0), HEAD_BG),
        ("LINEBELOW", (0, 0), (-1, 0), 0.8, colors.black),
        ("LINEBELOW", (0, 1), (-1, -1), 0.25, colors.HexColor("#e0e0e0")),
        ("ROWBACKGROUNDS", (0, 1), (-1, -1), [colors.white, ZEBRA]),
    ]
    style.extend(
        ("ALIGN", (i, 1), (i, -1), "RIGHT") for i, c in enumerate(rows.columns) if c.numeric
    )
    for i, flag in enumerate(rows.flags, start=1):
        if flag in FLAG_BG:
            style.append(("BACKGROUND", (0, i), (-1, i), FLAG_BG[flag]))
    return style


def _esc(text: str) -> str:
    """Paragraph text is XML-like markup: escape it so names like ``<b>`` stay literal."""
    return escape(text)
