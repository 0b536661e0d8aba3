"""Tests for the HTML report (monitor/reports/render/html.py) and its SVG charts (charts.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from html.parser import HTMLParser

import pytest

from monitor.reports.model import MonthlyReport
from monitor.reports.render import charts
from monitor.reports.render import html as render_html
from monitor.reports.render.tables import when

EVIL = "<script>alert('x')</script>\"><img src=x onerror=alert(1)>&amp;"


class Tags(HTMLParser):
    """Every start tag with its attributes, as a browser would parse the page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def html(report: MonthlyReport) -> str:
    return render_html.render(report).decode()


def tags(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(page)
    return parser.tags


def test_the_page_loads_nothing_from_outside(report: MonthlyReport) -> None:
    page = html(report)
    found = tags(page)
    names = {tag for tag, _ in found}
    assert not names & {"script", "link", "img", "iframe", "object", "embed", "image", "use"}
    assert not [a for _, a in found if "src" in a]
    assert "url(" not in page
    assert "@import" not in page


def test_the_only_links_are_the_providers_incident_pages(report: MonthlyReport) -> None:
    hrefs = [a["href"] for tag, a in tags(html(report)) if "href" in a]
    assert hrefs == ["https://health.aws.amazon.com/health/status#ec2-use1-20250603"]


def test_a_javascript_url_from_a_feed_is_not_linked(report: MonthlyReport) -> None:
    bad = replace(report.incidents[0], url="javascript:alert(1)")
    page = html(replace(report, incidents=(bad,)))
    assert "javascript:" not in page
    assert "Increased EC2 API error rates in US-EAST-1" in page


def test_a_malicious_target_name_is_escaped_everywhere(report: MonthlyReport) -> None:
    evil_target = replace(report.targets[1], name=EVIL)  # has an outage: in the chart too
    evil = replace(
        report,
        targets=(report.targets[0], evil_target, *report.targets[2:]),
        notes=(EVIL,),
        incidents=(replace(report.incidents[0], title=EVIL),),
        policy={EVIL: EVIL},
    )
    page = html(evil)
    assert "<script" not in page
    assert "<img" not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
    assert "&amp;amp;" in page  # an entity in a name is shown, not interpreted
    assert not [a for _, a in tags(page) if "onerror" in a]


def test_every_target_and_outage_time_is_shown(report: MonthlyReport) -> None:
    page = html(report)
    for target in report.targets:
        assert f"<td>{target.name}</td>" in page
        for outage in target.outages:
            assert when(outage.start) in page
            assert outage.end is None or when(outage.end) in page
    assert "2025-06-17 02:00:00.25" in page  # sub-second evidence kept


def test_a_target_without_data_says_so_and_never_claims_100(report: MonthlyReport) -> None:
    page = html(report)
    row = re.search(r"<tr[^>]*>\s*<td>lambda-h100-1</td>.*?</tr>", page, re.S)
    assert row is not None
    assert "no data" in row.group(0)
    assert "100.000%" not in row.group(0)
    assert 'class="muted"' in row.group(0)


def test_the_page_shows_credit_deadline_ledgers_policy_hash_and_notes(
    report: MonthlyReport,
) -> None:
    page = html(report)
    for text in (
        "2025-08-31 23:59:59",  # claim deadline
        "2h 24m 14s",  # observed ledger
        "1h 00m 00s",  # acknowledged ledger
        "2h 20m 40s",  # SLA-eligible ledger
        "BREACH",
        report.policy_hash,
        report.notes[0].replace("'", "&#39;"),
        "15m 12s",  # status-page lag
        "2,171.18",  # money lost
    ):
        assert text in page, text


def test_an_open_outage_and_an_open_incident_are_marked_open(report: MonthlyReport) -> None:
    page = html(report)
    assert re.search(
        r"<td>trainer-1</td>\s*<td[^>]*>2025-06-30 22:47:13</td>\s*<td[^>]*>open", page
    )
    assert 'stroke-dasharray="3 2"' in page  # the timeline's open bar


def test_the_page_has_both_charts(report: MonthlyReport) -> None:
    svgs = [a.get("aria-label") for tag, a in tags(html(report)) if tag == "svg"]
    assert svgs == ["Uptime against SLA target per provider", "Outage timeline per target"]


def test_an_empty_month_renders_with_its_note(report: MonthlyReport) -> None:
    empty = replace(
        report, providers=(), targets=(), pools=(), incidents=(), notes=("no data at all",)
    )
    page = html(empty)
    assert "no data at all" in page
    assert "No outages" in page


def test_a_thousand_targets_render(make_report: Callable[[int], MonthlyReport]) -> None:
    big = make_report(1000)
    page = html(big)
    assert page.count("<tr") > 1000
    assert big.targets[-1].name in page


@pytest.mark.parametrize(
    ("values", "floor"),
    [
        ([99.95, 99.5], 99.0),
        ([99.99999, 99.99], 99.95),
        ([100.0], 99.999),
        ([42.0, 99.9], 0.0),
        ([], 99.999),
    ],
    ids=["typical", "tight", "all-perfect", "a-bad-month", "no-values"],
)
def test_the_uptime_axis_starts_just_below_every_value(values: list[float], floor: float) -> None:
    assert charts.axis_floor(values) == floor


def test_the_uptime_chart_marks_a_breach_red_and_no_data_grey(report: MonthlyReport) -> None:
    aws, lam = report.providers
    svg = str(charts.uptime_bars([aws, replace(lam, uptime_pct=None)]))
    assert f'fill="{charts.BAD}"><title>Amazon Web Services: uptime 99.431%' in svg
    assert f'fill="{charts.NODATA}"><title>Lambda: no data' in svg


def test_the_timeline_has_one_bar_per_outage_with_its_exact_times(report: MonthlyReport) -> None:
    svg = str(charts.outage_timeline(report))
    titles = re.findall(r"<title>([^<]*)</title>", svg)
    assert "trainer-0: 2025-06-03 14:02:07 → 2025-06-03 15:10:00 UTC" in titles[0]
    assert "trainer-1: 2025-06-30 22:47:13 → still open UTC" in titles[2]
    assert titles[-1] == "lambda-h100-1: no data"
    assert len(titles) == sum(len(t.outages) for t in report.targets) + 1


def test_the_provider_s_record_is_shown_escaped(recorded: MonthlyReport) -> None:
    page = html(recorded)
    evidence = section_of(page, "evidence")
    assert "AWS_EC2_OPERATIONAL_ISSUE_7f3c2a1b" in evidence
    assert "&#34;impaired&#34; &lt;b&gt;status&lt;/b&gt;" in evidence
    assert "<b>status" not in page
    assert "user_initiated" in evidence
    excluded = section_of(page, "exclusions")
    assert "2025-06-03 15:00:00" in excluded
    assert "10m 00s" in excluded
    assert "user-initiated (exclude_user_initiated)" in excluded
    assert "i-0abc:user-restart,=1" in excluded
    assert "AWS_EC2_OPERATIONAL_ISSUE_7f3c2a1b" in section_of(page, "sla")  # the claim cites it
    assert "issue, user_initiated" in section_of(page, "outages")


def test_without_a_provider_s_record_the_sections_say_so(report: MonthlyReport) -> None:
    page = html(report)
    assert "No outage overlaps an account event." in section_of(page, "evidence")
    assert "No downtime was left out on the provider" in section_of(page, "exclusions")


def section_of(page: str, key: str) -> str:
    start = page.index(f'<section id="{key}">')
    return page[start : page.index("</section>", start)]
