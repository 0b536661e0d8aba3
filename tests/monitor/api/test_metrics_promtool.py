"""/metrics, checked by Prometheus' own linter: a scrape of a deployment with something in
every family (``tests/monitor/api/metrics_rows.py``) passes ``promtool check metrics``
(Debian's ``/usr/bin/promtool``) without a single warning: counters end in ``_total``, units
are base units spelled as suffixes, every family has its help."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.orm import Session, sessionmaker

from monitor.db.base import utcnow
from tests.monitor.api.metrics_rows import config, populate
from tests.prometheus import promtool
from tests.support import ApiClient


def test_a_populated_scrape_passes_promtool_check_metrics_without_a_warning(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session, session.begin():
        populate(session, now)
    api.app.state.slamon.config = config(now)  # type: ignore[attr-defined]
    text = api.get("/metrics").text
    # populated: every family slamon serves has samples, so promtool judges each of them
    empty = [
        family.name
        for family in text_string_to_metric_families(text)
        if family.name.startswith("slamon_") and not family.samples
    ]
    assert empty == []
    assert promtool("check", "metrics", stdin=text) == (0, "")


def test_promtool_check_metrics_does_warn_on_what_it_should() -> None:
    """The check above can fail: the same promtool flags a counter whose sample lacks
    ``_total`` and a unit that is not a base unit (``slamon_ledger_instance_hours``, renamed
    ``slamon_ledger_instance_seconds`` for it)."""
    text = (
        "# HELP slamon_refused Refused.\n# TYPE slamon_refused counter\nslamon_refused 1\n"
        "# HELP slamon_lived_hours Lived.\n# TYPE slamon_lived_hours gauge\nslamon_lived_hours 2\n"
    )
    code, said = promtool("check", "metrics", stdin=text)
    assert code != 0
    assert 'counter metrics should have "_total" suffix' in said
    assert 'use base unit "seconds" instead of "hours"' in said
