"""What every scenario checks, in one place: a running deployment with its local world, waits
with deadlines that fail with the evidence (process logs, webhooks, firing alerts), exactly one
signed firing and one resolved webhook per alert, every surface agreeing at the same moment, and
the monthly report counting the interval the webhooks announced."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest

from tests.scenarios import surfaces
from tests.scenarios.deployments import Deployment
from tests.scenarios.servers import (
    DcgmExporter,
    HeartbeatJob,
    HttpTargets,
    SignedWebhookReceiver,
    StatusFeeds,
    TcpTarget,
)
from tests.support import slamon_command

PROBE_INTERVAL_S = 1.0  # every scenario target's interval
# From a fault to its webhook: the next probe slot (1 s), confirmation (2 probes, 0.2 s apart),
# the evaluation (1 s) and the delivery sweep (1 s), on a busy 2-core machine that also runs
# Chromium and PostgreSQL. A correct slamon needs a few seconds; this is the deadline.
ALERT_S = 20.0
QUIET_S = 3.0  # after the last expected webhook: three delivery sweeps that must bring nothing
AGREE_S = 6.0  # surfaces read one after another (API, /metrics, Chromium) may straddle a round

FAST_SCHEDULE = (
    "schedule: {tick: 1s, feeds: 1s, alerts: 1s, vantages: 1s, deliveries: 1s, heartbeats: 1s,"
    " dispatch: 1s, discovery: 1s, account_events: 1s}\n"
    "probes: {retry_interval: 0.2}\n"
)
WEBHOOK_SECRET = "scenario-webhook-secret-7f3a9c"

T = TypeVar("T")


def alerting_config(receiver_url: str, alerts: str = "") -> str:
    """The fast schedule, ``alerts:`` with ``feed_stale_after: 5s, retry_base: 1s`` (plus
    ``alerts``) and one signed webhook channel behind a catch-all route."""
    extra = f", {alerts}" if alerts else ""
    return (
        FAST_SCHEDULE
        + f"alerts: {{feed_stale_after: 5s, retry_base: 1s{extra}}}\n"
        + "channels:\n"
        + f"  - {{name: scenario-hook, kind: webhook, url: '{receiver_url}',"
        + f" secret: '{WEBHOOK_SECRET}'}}\n"
        + "routes:\n"
        + "  - {match: {}, channels: [scenario-hook]}\n"
    )


@dataclass
class World:
    """The local servers one deployment is pointed at."""

    receiver: SignedWebhookReceiver = field(
        default_factory=lambda: SignedWebhookReceiver(WEBHOOK_SECRET)
    )
    feeds: StatusFeeds = field(default_factory=StatusFeeds)
    dcgm: DcgmExporter = field(default_factory=DcgmExporter)
    http: HttpTargets = field(default_factory=HttpTargets)
    tcp: dict[str, TcpTarget] = field(default_factory=dict)
    jobs: list[HeartbeatJob] = field(default_factory=list)

    def tcp_target(self, name: str) -> TcpTarget:
        self.tcp[name] = TcpTarget()
        self.tcp[name].listen()
        return self.tcp[name]

    def close(self) -> None:
        for job in self.jobs:
            job.stop()
        for target in self.tcp.values():
            target.close()
        for server in (self.receiver, self.feeds, self.dcgm, self.http):
            server.close()


@dataclass
class Live:
    """A running deployment, its world and a browser: what the scenarios drive and read."""

    deployment: Deployment
    world: World
    browser: Any
    reader: surfaces.StatusPageReader | None = None

    @property
    def base(self) -> str:
        return self.deployment.base_url

    def firing(self) -> dict[tuple[str, str], dict[str, Any]]:
        return surfaces.firing_alerts(self.base, self.deployment.read_token)

    def metrics(self) -> surfaces.Metrics:
        return surfaces.metrics(self.base)

    def page(self) -> surfaces.StatusPage:
        if self.reader is None:
            self.reader = surfaces.StatusPageReader(self.browser)
        return self.reader.read(self.base)

    def hooks(self, rule: str, subject: str) -> dict[str, list[surfaces.Webhook]]:
        return surfaces.webhooks_for(self.world.receiver, rule, subject)

    def report(self, month: str) -> dict[str, Any]:
        return surfaces.monthly_report(
            self.deployment.root, self.deployment.env, slamon_command(), month
        )

    def outages(self, target: str, series: str = "reachable") -> list[dict[str, Any]]:
        return surfaces.outages(self.base, self.deployment.read_token, target, series)

    def diagnostics(self) -> str:
        """The evidence printed with a failure: webhooks so far, firing alerts, dead processes."""
        lines = ["webhooks received (rule, subject, event, started_at, resolved_at, verified):"]
        for hook in surfaces.webhooks(self.world.receiver):
            lines.append(
                f"  {hook.rule} {hook.subject} {hook.event} {hook.started_at} "
                f"{hook.resolved_at} {hook.verified}"
            )
        try:
            firing = sorted(self.firing())
        except Exception as exc:  # the API itself may be what failed
            firing = [("API unreadable", repr(exc))]
        lines.append(f"firing on the API: {firing}")
        dead = self.deployment.crashed()
        if dead:
            lines.append(f"EXITED: {dead}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- waiting


def eventually(predicate: Callable[[], T], what: str, timeout: float = ALERT_S) -> T:
    """Poll ``predicate`` until it returns something truthy; on the deadline, fail naming
    ``what`` (the report adds the evidence: see conftest.py)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout:g} s", pytrace=False)
        time.sleep(0.2)


def await_webhook(
    live: Live, rule: str, subject: str, event: str, timeout: float = ALERT_S
) -> surfaces.Webhook:
    """The first ``event`` webhook of ``rule`` about ``subject``."""
    found = eventually(
        lambda: live.hooks(rule, subject)[event],
        f"a {event} {rule} webhook for {subject}",
        timeout,
    )
    return found[0]


def await_all(
    live: Live, keys: list[tuple[str, str]], event: str, timeout: float = ALERT_S
) -> dict[tuple[str, str], surfaces.Webhook]:
    """The first ``event`` webhook of each (rule, subject) in ``keys`` that came before the
    deadline (all of them, unless some never came: the caller says what is missing)."""
    deadline = time.monotonic() + timeout
    while True:
        got = {key: live.hooks(*key)[event] for key in keys}
        came = {key: hooks[0] for key, hooks in got.items() if hooks}
        if len(came) == len(keys) or time.monotonic() > deadline:
            return came
        time.sleep(0.2)


def quiet_period() -> None:
    """Let a few delivery sweeps pass: a duplicate or late message would arrive in them."""
    time.sleep(QUIET_S)


def once_each(live: Live, rule: str, subject: str) -> tuple[surfaces.Webhook, surfaces.Webhook]:
    """Exactly one signed firing and one signed resolved webhook of ``rule`` about ``subject``
    so far, describing the same alert; (firing, resolved). Whatever comes later is caught by
    ``no_second_messages`` at the end of the run."""
    hooks = live.hooks(rule, subject)
    summary = {event: [(h.started_at, h.resolved_at) for h in got] for event, got in hooks.items()}
    assert len(hooks["firing"]) == 1, f"{rule} {subject}: firing webhooks {summary}"
    assert len(hooks["resolved"]) == 1, f"{rule} {subject}: resolved webhooks {summary}"
    firing, resolved = hooks["firing"][0], hooks["resolved"][0]
    for hook in (firing, resolved):
        assert hook.verified, f"{rule} {subject}: {hook.event} webhook not signed with the secret"
        assert hook.version == 1
        assert hook.severity
    assert firing.fingerprint == resolved.fingerprint
    assert firing.started_at is not None
    assert firing.resolved_at is None
    assert resolved.started_at == firing.started_at
    assert resolved.resolved_at is not None
    assert resolved.resolved_at >= firing.started_at
    return firing, resolved


def no_second_messages(live: Live) -> list[str]:
    """After a quiet period: every (rule, subject) that was sent more than one firing or more
    than one resolved webhook in the whole run, and every webhook that was not signed."""
    quiet_period()
    counts: dict[tuple[str, str, str], int] = {}
    wrong = []
    for hook in surfaces.webhooks(live.world.receiver):
        key = (hook.rule, hook.subject, hook.event)
        counts[key] = counts.get(key, 0) + 1
        if not hook.verified:
            wrong.append(f"{key}: not signed with the channel's secret")
    wrong += [f"{key}: {n} webhooks" for key, n in sorted(counts.items()) if n > 1]
    return wrong


def still_once(live: Live, rule: str, subject: str, event: str = "firing") -> None:
    """After a quiet period, still exactly one ``event`` webhook of ``rule`` about ``subject``."""
    quiet_period()
    got = live.hooks(rule, subject)[event]
    assert len(got) == 1, (
        f"{rule} {subject}: {len(got)} {event} webhooks: {[h.started_at for h in got]}"
    )


# --------------------------------------------------------------------------- agreeing surfaces


@dataclass(frozen=True)
class Expect:
    """What every surface must show at one moment.

    ``targets``: name -> ``up`` | ``down`` | ``unusable`` (reachable, GPUs or progress not);
    ``gone``: targets no surface may list; ``firing`` / ``quiet``: (rule, subject) alerts that
    must / must not be firing; ``incidents``: provider -> (title, open?);
    ``feeds``: provider -> healthy?
    """

    targets: dict[str, str] = field(default_factory=dict)
    gone: tuple[str, ...] = ()
    firing: tuple[tuple[str, str], ...] = ()
    quiet: tuple[tuple[str, str], ...] = ()
    incidents: dict[str, tuple[str, bool]] = field(default_factory=dict)
    feeds: dict[str, bool] = field(default_factory=dict)


def disagreements(live: Live, expect: Expect) -> list[str]:
    """Everything a surface shows that differs from ``expect``, read in one pass."""
    firing = live.firing()
    api_targets = surfaces.targets(live.base, live.deployment.read_token)
    api_providers = surfaces.providers(live.base, live.deployment.read_token)
    metrics = live.metrics()
    page = live.page()
    wrong = [f"page: {p}" for p in page.problems]
    wrong += _alerts(expect, firing, metrics)
    wrong += _alert_times(live, expect, firing)
    wrong += _targets(expect, api_targets, metrics, page)
    wrong += _providers(expect, api_providers, metrics, page)
    return wrong


def _alerts(
    expect: Expect, firing: dict[tuple[str, str], dict[str, Any]], metrics: surfaces.Metrics
) -> list[str]:
    wrong = [f"API: {key} is not firing" for key in expect.firing if key not in firing]
    wrong += [f"API: {key} is still firing" for key in expect.quiet if key in firing]
    for rule in {r for r, _ in (*expect.firing, *expect.quiet)}:
        on_api = sum(1 for r, _ in firing if r == rule)
        on_metrics = metrics.alerts_firing.get(rule, 0.0)
        if on_api != on_metrics:
            wrong.append(
                f"/metrics: slamon_alerts_firing{{rule={rule}}} {on_metrics}, API {on_api}"
            )
    return wrong


def _alert_times(
    live: Live, expect: Expect, firing: dict[tuple[str, str], dict[str, Any]]
) -> list[str]:
    """A firing alert on the API began when its firing webhook said it did."""
    wrong = []
    for key in expect.firing:
        sent = live.hooks(*key)["firing"]
        shown = surfaces.when(firing[key]["started_at"]) if key in firing else None
        if sent and shown is not None and shown != sent[-1].started_at:
            wrong.append(f"API: {key} started_at {shown}, webhook {sent[-1].started_at}")
    return wrong


def _targets(
    expect: Expect,
    api_targets: dict[str, dict[str, Any]],
    metrics: surfaces.Metrics,
    page: surfaces.StatusPage,
) -> list[str]:
    wrong = []
    for name, state in expect.targets.items():
        if name not in api_targets:
            wrong.append(f"API: target {name} not listed")
        up, usable = metrics.target_up.get(name), metrics.target_usable.get(name)
        want_up, want_usable = {"up": (1, 1), "down": (0, None), "unusable": (1, 0)}[state]
        if up != want_up or (want_usable is not None and usable != want_usable):
            wrong.append(f"/metrics: {name} up={up} usable={usable}, expected {state}")
        shown = page.targets.get(name)
        if state == "unusable":
            if shown in (None, "", "up", "unknown"):
                wrong.append(f"page ({page.markup}): {name} shown as {shown!r}, expected not up")
        elif shown != state:
            wrong.append(f"page ({page.markup}): {name} shown as {shown!r}, expected {state!r}")
    for name in expect.gone:
        if name in api_targets:
            wrong.append(f"API: retired target {name} still listed")
        if name in metrics.target_up or name in metrics.target_usable:
            wrong.append(f"/metrics: retired target {name} still has a series")
        if name in page.targets:
            wrong.append(f"page: retired target {name} still shown")
    return wrong


def _providers(
    expect: Expect,
    api_providers: dict[str, dict[str, Any]],
    metrics: surfaces.Metrics,
    page: surfaces.StatusPage,
) -> list[str]:
    wrong = []
    for slug, (title, is_open) in expect.incidents.items():
        count = 1 if is_open else 0
        listed = api_providers.get(slug, {}).get("open_incidents")
        if listed != count:
            wrong.append(f"API: {slug} open_incidents={listed}, expected {count}")
        if metrics.open_incidents.get(slug) != count:
            wrong.append(f"/metrics: {slug} open incidents {metrics.open_incidents.get(slug)}")
        shown = page.providers.get(slug)
        on_page = shown is not None and title in shown.text
        if on_page != is_open:
            wrong.append(f"page: incident {title!r} of {slug} shown={on_page}, expected {is_open}")
    for slug, healthy in expect.feeds.items():
        feeds = api_providers.get(slug, {}).get("feeds", [])
        failing = [f for f in feeds if f["consecutive_failures"] > 0]
        if bool(failing) == healthy or not feeds:
            wrong.append(f"API: {slug} feeds {feeds}, expected healthy={healthy}")
        if (metrics.feed_failures.get(slug, 0.0) == 0) != healthy:
            wrong.append(f"/metrics: {slug} feed failures {metrics.feed_failures.get(slug)}")
        shown = page.providers.get(slug)
        state = shown.feed_state if shown else None
        if (state in surfaces.HEALTHY_FEED_STATES) != healthy:
            wrong.append(
                f"page ({page.markup}): {slug} feed state {state!r}, expected healthy={healthy}"
            )
    return wrong


def settled_disagreements(live: Live, expect: Expect, timeout: float = AGREE_S) -> list[str]:
    """``disagreements``, read again for up to ``timeout`` until there are none (the surfaces
    are read one after another, so one read may straddle a probe round)."""
    deadline = time.monotonic() + timeout
    while True:
        wrong = disagreements(live, expect)
        if not wrong or time.monotonic() > deadline:
            return wrong
        time.sleep(0.5)


def surfaces_agree(live: Live, expect: Expect, timeout: float = AGREE_S) -> None:
    """API, /metrics and the status page all show ``expect``, or fail listing every
    disagreement of the last read."""
    wrong = settled_disagreements(live, expect, timeout)
    assert not wrong, "surfaces disagree:\n  " + "\n  ".join(wrong)


# --------------------------------------------------------------------------- the report


def month_of(moment: datetime) -> str:
    return f"{moment.astimezone(UTC):%Y-%m}"


def within(a: datetime | None, b: datetime | None, slack: float = PROBE_INTERVAL_S) -> bool:
    return a is not None and b is not None and abs((a - b).total_seconds()) <= slack


def report_counts(
    live: Live,
    report: dict[str, Any],
    target: str,
    series: str,
    announced: list[tuple[surfaces.Webhook, surfaces.Webhook]],
) -> None:
    """The monthly ``report`` (``live.report(month)``, run as a command) lists ``target``'s
    ``series`` outages as exactly the intervals the (firing, resolved) webhook pairs announced,
    each end within one probe interval, and the API's outages agree with it."""
    rows = surfaces.report_outages(report, target, series)
    assert rows is not None, f"the {report['month']} report does not list {target}"
    expected = [(f.started_at, r.resolved_at) for f, r in announced]
    reported = [(o["start"], o["end"]) for o in rows]
    assert len(reported) == len(expected), (
        f"{target} {series}: report {reported}, webhooks {expected}"
    )
    for (start_at, end_at), (r_start, r_end) in zip(
        sorted(expected), sorted(reported), strict=True
    ):
        assert within(r_start, start_at), f"{target}: report start {r_start}, webhook {start_at}"
        assert within(r_end, end_at), f"{target}: report end {r_end}, webhook {end_at}"
    api = [(o["start"], o["end"]) for o in live.outages(target, series)]
    assert len(api) == len(expected), f"{target} {series}: API outages {api}, webhooks {expected}"
    for (start_at, end_at), (a_start, a_end) in zip(sorted(expected), sorted(api), strict=True):
        assert within(a_start, start_at), f"{target}: API start {a_start}, webhook {start_at}"
        assert within(a_end, end_at), f"{target}: API end {a_end}, webhook {end_at}"


def ago(**delta: float) -> datetime:
    return datetime.now(UTC) - timedelta(**delta)
