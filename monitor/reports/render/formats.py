"""The four report renderers by name, for the CLI (``--format``) and the API (``?format=``).

Each renderer is a pure function ``render(report: MonthlyReport) -> bytes``; the entry also gives
the HTTP content type and the file extension to save it under.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from monitor.reports.model import MonthlyReport
from monitor.reports.render import csv as render_csv
from monitor.reports.render import html as render_html
from monitor.reports.render import json as render_json
from monitor.reports.render import pdf as render_pdf


@dataclass(frozen=True, slots=True)
class Renderer:
    render: Callable[[MonthlyReport], bytes]
    content_type: str
    extension: str


RENDERERS: dict[str, Renderer] = {
    "json": Renderer(render_json.render, render_json.CONTENT_TYPE, "json"),
    "csv": Renderer(render_csv.render, render_csv.CONTENT_TYPE, "csv"),
    "html": Renderer(render_html.render, render_html.CONTENT_TYPE, "html"),
    "pdf": Renderer(render_pdf.render, render_pdf.CONTENT_TYPE, "pdf"),
}
