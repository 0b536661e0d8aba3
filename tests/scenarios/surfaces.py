"""Every surface slamon tells the truth on, read as plain data the scenarios compare: the
webhooks it sent, its REST API, ``/metrics``, the status page in Chromium and the monthly report.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.scenarios.servers import SignedWebhookReceiver

# --------------------------------------------------------------------------- webhooks


@dataclass(frozen=True)
class Webhook:
    """One alert message as the receiver got it."""

    event: str  # firing | resolved
    rule: str
    subject: str  # the alert's target, else its provider, else its vantage
    fingerprint: str
    severity: str
    started_at: datetime | None
    resolved_at: datetime | None
    verified: bool
    version: object
    labels: dict[str, str]
    received_at: float
    url: str | None = None  # alert.url: slamon's page for what the alert is about
    alert: dict[str, Any] = field(default_factory=dict)  # the message's whole ``alert`` object


def when(text: object) -> datetime | None:
    return datetime.fromisoformat(text) if isinstance(text, str) else None


def webhooks(receiver: SignedWebhookReceiver) -> list[Webhook]:
    """Every message received so far, oldest first (unparseable bodies as rule ``?``)."""
    found = []
    for got in list(receiver.received):
        payload: dict[str, Any] = got.payload if isinstance(got.payload, dict) else {}
        raw = payload.get("alert")
        alert: dict[str, Any] = raw if isinstance(raw, dict) else {}
        labels = dict(alert.get("labels") or {})
        found.append(
            Webhook(
                event=str(payload.get("event", "?")),
                rule=str(alert.get("rule", "?")),
                subject=_subject(labels),
                fingerprint=str(alert.get("fingerprint", "")),
                severity=str(alert.get("severity", "")),
                started_at=when(alert.get("started_at")),
                resolved_at=when(alert.get("resolved_at")),
                verified=got.verified,
                version=payload.get("version"),
                labels=labels,
                received_at=got.at,
                url=alert.get("url") if isinstance(alert.get("url"), str) else None,
                alert=alert,
            )
        )
    return found


def webhooks_for(
    receiver: SignedWebhookReceiver, rule: str, subject: str
) -> dict[str, list[Webhook]]:
    """The messages of one alert rule about one target or provider, by event."""
    events: dict[str, list[Webhook]] = {"firing": [], "resolved": []}
    for hook in webhooks(receiver):
        if hook.rule == rule and hook.subject == subject:
            events.setdefault(hook.event, []).append(hook)
    return events


# --------------------------------------------------------------------------- REST API


def _pages(base: str, token: str, path: str, **params: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    offset: int | None = 0
    with httpx.Client(base_url=base, timeout=10) as client:
        while offset is not None:
            reply = client.get(
                path,
                params={**params, "limit": 500, "offset": offset},
                headers={"Authorization": f"Bearer {token}"},
            )
            reply.raise_for_status()
            page = reply.json()
            items += page["items"]
            offset = page["next_offset"]
    return items


def _subject(labels: dict[str, Any]) -> str:
    """What an alert is about: its target, else its provider, its vantage or its discovery
    source."""
    about = labels.get("target") or labels.get("provider") or labels.get("vantage")
    return str(about or labels.get("source") or "?")


def firing_alerts(base: str, token: str) -> dict[tuple[str, str], dict[str, Any]]:
    """``GET /api/v1/alerts?state=firing`` by (rule, target-or-provider)."""
    return {
        (a["rule"], _subject(a["labels"])): a
        for a in _pages(base, token, "/api/v1/alerts", state="firing")
    }


def targets(base: str, token: str, include_retired: bool = False) -> dict[str, dict[str, Any]]:
    items = _pages(base, token, "/api/v1/targets", include_retired=include_retired)
    return {t["name"]: t for t in items}


def providers(base: str, token: str) -> dict[str, dict[str, Any]]:
    return {p["slug"]: p for p in _pages(base, token, "/api/v1/providers")}


def outages(base: str, token: str, target: str, series: str | None = None) -> list[dict[str, Any]]:
    """The target's outages, oldest first, times parsed."""
    params: dict[str, Any] = {"target": target}
    if series:
        params["series"] = series
    rows = _pages(base, token, "/api/v1/outages", **params)
    for row in rows:
        row["start"], row["end"] = when(row["start"]), when(row["end"])
    return sorted(rows, key=lambda r: r["start"])


def incidents(base: str, token: str, provider: str) -> list[dict[str, Any]]:
    return _pages(base, token, "/api/v1/incidents", provider=provider)


# --------------------------------------------------------------------------- /metrics


@dataclass(frozen=True)
class Metrics:
    """The gauges the scenarios compare, keyed by target, rule or provider."""

    target_up: dict[str, float]
    target_usable: dict[str, float]
    alerts_firing: dict[str, float]  # by rule, severities summed
    feed_failures: dict[str, float]  # by provider, feeds summed
    open_incidents: dict[str, float]  # by provider
    task_finished: dict[str, float]  # by task: unix time of its latest run
    target_latency: dict[str, float]  # by target: median of its latest rolled-up minute, s
    discovery_up: dict[str, float]  # by discovery source: 1 when its latest sweep succeeded


def metrics(base: str) -> Metrics:
    text = httpx.get(f"{base}/metrics", timeout=10).raise_for_status().text
    values: dict[str, dict[str, float]] = {}

    def add(family: str, key: str, value: float) -> None:
        table = values.setdefault(family, {})
        table[key] = table.get(key, 0.0) + value

    keys = {
        "slamon_target_up": "target",
        "slamon_target_usable": "target",
        "slamon_alerts_firing": "rule",
        "slamon_feed_consecutive_failures": "provider",
        "slamon_provider_open_incidents": "provider",
        "slamon_task_last_finished_timestamp_seconds": "task",
        "slamon_target_latency_seconds": "target",
        "slamon_discovery_up": "source",
    }
    for family in text_string_to_metric_families(text):
        label = keys.get(family.name)
        if label is None:
            continue
        for sample in family.samples:
            add(family.name, sample.labels[label], float(sample.value))
    return Metrics(
        values.get("slamon_target_up", {}),
        values.get("slamon_target_usable", {}),
        values.get("slamon_alerts_firing", {}),
        values.get("slamon_feed_consecutive_failures", {}),
        values.get("slamon_provider_open_incidents", {}),
        values.get("slamon_task_last_finished_timestamp_seconds", {}),
        values.get("slamon_target_latency_seconds", {}),
        values.get("slamon_discovery_up", {}),
    )


# --------------------------------------------------------------------------- status page

# A feed shown in one of these states is vouched for; anything else (stale, failing, never
# polled, unknown) is not.
HEALTHY_FEED_STATES = frozenset({"ok", "operational", "fresh", "up", "healthy"})


@dataclass(frozen=True)
class ProviderOnPage:
    feed_state: str | None  # None: the page says nothing about the feed
    text: str  # what the provider's element reads (its open incidents' titles among it)


@dataclass(frozen=True)
class StatusPage:
    targets: dict[str, str]  # target -> state as shown
    providers: dict[str, ProviderOnPage]
    problems: list[str] = field(default_factory=list)  # console errors, page errors, dialogs
    markup: str = "data-target"  # which markup was read (see _READ_PAGE)


# Read in the page itself. The contract is ``data-target``/``data-state`` on a target's
# element and ``data-provider``/``data-feed-state`` on a provider's (a state may sit on the
# element or on one inside it). Until the redesigned page carries them all, what it has is read
# instead: fleet rows ``tr.target[data-name][data-state]``, a provider card's own ``data-state``
# (operational | incident | maintenance | unknown: its feed's verdict unless an incident is open),
# and before the redesign the #fleet and #providers tables. ``markup`` says which was read.
_READ_PAGE = """() => {
  const all = sel => [...document.querySelectorAll(sel)];
  const inner = (el, key, name) =>
    el.dataset[key] ?? el.querySelector(`[${name}]`)?.dataset[key] ?? null;
  let markup = 'data-target';
  let targets = all('[data-target]').map(
    el => [el.dataset.target, inner(el, 'state', 'data-state')]);
  if (!targets.length) {
    markup = 'data-name';
    targets = all('tr.target[data-name]').map(el => [el.dataset.name, el.dataset.state ?? null]);
  }
  if (!targets.length && !all('[data-provider]').length) {
    markup = 'tables';
    targets = all('#fleet tbody tr').map(
      tr => [tr.cells[0].innerText.trim(), tr.cells[1].innerText.trim()]);
  }
  let providers = all('[data-provider]').map(el => [
    el.dataset.provider,
    inner(el, 'feedState', 'data-feed-state') ?? el.dataset.state ?? null,
    el.innerText]);
  if (!providers.length) {
    providers = all('#providers tbody tr').map(tr => [
      (tr.cells[0].querySelector('.meta')?.innerText ?? '').replace(/[()]/g, '').trim(),
      null,
      tr.innerText]);
  }
  return {markup, targets, providers};
}"""


class StatusPageReader:
    """One Chromium tab that reads the status page ``/`` as a real browser renders it (kept
    open between reads: a new tab costs half a second); console errors, page errors and dialogs
    are collected per read."""

    def __init__(self, browser: Any) -> None:
        self.problems: list[str] = []
        self.page = browser.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.problems.append(f"pageerror: {e}"))
        self.page.on("dialog", self._dialog)

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.problems.append(f"console error: {message.text}")

    def _dialog(self, dialog: Any) -> None:
        self.problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    def read(self, base: str) -> StatusPage:
        """Every target's shown state and every provider's feed state and text. With
        ``_READ_PAGE``, the one place that knows the page's markup."""
        self.problems = []
        reply = self.page.goto(f"{base}/", wait_until="load")
        if reply is None or reply.status != 200:
            self.problems.append(f"GET / answered {reply.status if reply else 'nothing'}")
        read = self.page.evaluate(_READ_PAGE)
        shown: dict[str, str] = {}
        for name, state in read["targets"]:
            shown.setdefault(name, (state or "").strip().lower())  # the first element naming it
        return StatusPage(
            targets=shown,
            providers={
                slug: ProviderOnPage((feed or "").strip().lower() or None, text)
                for slug, feed, text in read["providers"]
            },
            problems=list(self.problems),
            markup=read["markup"],
        )

    def close(self) -> None:
        self.page.close()


# --------------------------------------------------------------------------- monthly report


def monthly_report(
    cwd: Path, env: dict[str, str], command: list[str], month: str
) -> dict[str, Any]:
    """``slamon report monthly --month MONTH --format json`` run as a command against the
    deployment's database; the parsed document."""
    out = cwd / f"report-{month}.json"
    done = subprocess.run(
        [*command, "report", "monthly", "--month", month, "--format", "json", "--out", str(out)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"slamon report monthly failed:\n{done.stdout}\n{done.stderr}"
    document: dict[str, Any] = json.loads(out.read_text())
    return document


def report_outages(report: dict[str, Any], target: str, series: str) -> list[dict[str, Any]] | None:
    """The report's outages of one target and series (times parsed); None when the report does
    not list the target at all."""
    entry = next((t for t in report.get("targets", []) if t["name"] == target), None)
    if entry is None:
        return None
    return [
        {**o, "start": when(o["start"]), "end": when(o["end"])}
        for o in entry.get("outages", [])
        if o.get("series", "reachable") == series
    ]


def report_target(report: dict[str, Any], target: str) -> dict[str, Any] | None:
    return next((t for t in report.get("targets", []) if t["name"] == target), None)


def report_incident(report: dict[str, Any], provider: str, source_id: str) -> dict[str, Any] | None:
    return next(
        (
            i
            for i in report.get("incidents", [])
            if i["provider"] == provider and i["source_id"] == source_id
        ),
        None,
    )
