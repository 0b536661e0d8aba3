"""The monthly report as one self-contained HTML page.

Inline CSS and inline SVG charts (:mod:`monitor.reports.render.charts`), no scripts and no external
resources, so the file can be mailed or archived as it is. The only outgoing URLs are ``<a>``
links to the providers' own incident pages (http/https only). Every value is escaped by Jinja2's
autoescape; the charts escape their own text.
"""

from __future__ import annotations

import functools
from importlib import resources

import jinja2

from monitor.reports.model import MonthlyReport
from monitor.reports.render import charts
from monitor.reports.render.tables import Link, all_tables, ranked, summary, when

CONTENT_TYPE = "text/html; charset=utf-8"
TEMPLATE = "monthly.html.j2"


@functools.cache
def _template() -> jinja2.Template:
    source = resources.files("monitor.reports").joinpath("templates", TEMPLATE).read_text("utf-8")
    env = jinja2.Environment(
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        keep_trailing_newline=True,
    )
    env.tests["link"] = lambda value: isinstance(value, Link)
    env.globals["when"] = when
    return env.from_string(source)


def render(report: MonthlyReport) -> bytes:
    """UTF-8 HTML for ``report``."""
    figures = {
        "scorecard": charts.uptime_bars(ranked(report.providers)),
        "outages": charts.outage_timeline(report),
    }
    page = _template().render(
        report=report, tables=all_tables(report), summary=summary(report), charts=figures
    )
    return page.encode()
