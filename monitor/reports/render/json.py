"""The monthly report as one JSON document (``slamon report monthly --format json``).

Top-level keys: ``format`` (``"slamon.monthly-report"``), ``version`` (1), then every field of
:class:`~monitor.reports.model.MonthlyReport` under its own name: ``month``, ``period_start``,
``period_end``, ``generated_at``, ``policy``, ``policy_hash``, ``providers`` (each with
``claim_event_ids``: the provider's account event ids its claim cites), ``targets`` (each with
``outages`` as ``{start, end, duration_s, …, evidence: [{event_id, provider, kind, source,
title, detail, start, end}], excluded_by_events_s}`` and ``exclusions`` as ``{start, end,
seconds, reason, event_id, provider_words}``), ``pools``, ``incidents``, ``notes``, ``work``
and ``ledger`` (the interruption ledger: one object per provider, instance type and capacity).
Times are ISO 8601 UTC with ``Z``; unknown numbers are ``null`` (a target with no data has
``uptime_pct: null``); floats are written in their shortest exact form, so :func:`parse` gives back
an equal report. The policy must hold JSON values only (its hash is computed over them anyway).
"""

from __future__ import annotations

import json
from typing import Any

from monitor.reports.model import MonthlyReport
from monitor.reports.render.codec import build, to_plain

FORMAT = "slamon.monthly-report"
VERSION = 1
CONTENT_TYPE = "application/json"


def to_document(report: MonthlyReport) -> dict[str, Any]:
    """The report as a JSON-ready dict (what the API returns without re-encoding)."""
    return {"format": FORMAT, "version": VERSION, **to_plain(report)}


def render(report: MonthlyReport) -> bytes:
    """UTF-8 JSON, indented for people; raises ``ValueError`` on NaN/infinity or naive times."""
    text = json.dumps(to_document(report), indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode()


def parse(data: bytes) -> MonthlyReport:
    """Read a document written by :func:`render`; ``ValueError`` names what is wrong."""
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a JSON report: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"not a slamon monthly report (expected format {FORMAT!r})")
    if doc.get("version") != VERSION:
        raise ValueError(f"unsupported report version {doc.get('version')!r}")
    return build(MonthlyReport, doc)
