"""The YAML config as pydantic models. Field names are part of the contract (docs/DESIGN.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Annotated, Any, Literal, Protocol, get_args

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from monitor.account.alertmanager import DEFAULT_TARGET_LABELS as ALERTMANAGER_TARGET_LABELS
from monitor.account.kinds import KINDS as ACCOUNT_KINDS
from monitor.config.durations import parse_duration
from monitor.discovery.kinds import KINDS as DISCOVERY_KINDS
from monitor.discovery.model import CAPACITIES, Capacity
from monitor.discovery.template import TemplateError, placeholders
from monitor.probes.kinds import KINDS
from monitor.probes.vantages import BlindRule
from monitor.sla.policy_config import policy_from_config
from monitor.sla.slowdown import SlowdownRule
from monitor.sla.terms import BUILTIN_POLICIES

Duration = Annotated[float, BeforeValidator(parse_duration)]
Slug = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=64)]
Short = Annotated[str, Field(max_length=64)]
ChannelKind = Literal[
    "webhook", "slack", "pagerduty", "teams", "discord", "apprise", "alertmanager"
]
# The kinds monitor.alerts.channels can send (its KINDS, which sit above the config: a test holds
# the two equal).
CHANNEL_KINDS: tuple[str, ...] = get_args(ChannelKind)

# The feed kinds' names, as monitor/feeds/kinds/__init__.py's REGISTRY registers them: the config
# sits below feeds and cannot read the registry, so tests/monitor/feeds/kinds/test_kinds.py holds
# the two equal (and docs/DESIGN.md's list with them).
FeedKind = Literal[
    "statuspage",
    "gcp",
    "aws-rss",
    "aws-health",
    "azure-rss",
    "rss",
    "statusio",
    "betterstack",
    "instatus",
]


def json_number(value: object) -> object:
    """A number, as the schema says: not ``true`` nor ``"8"`` (pydantic would take both);
    ``8.0`` is a JSON Schema integer and stays one."""
    if isinstance(value, str | bool):
        raise ValueError("must be a number")
    return value


MIN_INTERVAL_S = 1.0
# An alertmanager channel posts its firing alerts again this often (Prometheus' resend_delay
# is 1 min), so an Alertmanager restarted (it keeps alerts in memory only) hears them again.
DEFAULT_RESEND_S = 60.0
DEFAULT_TIMEOUT_S = 5.0


def _at_least_one_second(value: float) -> float:
    if value < MIN_INTERVAL_S:
        raise ValueError("must be ≥ 1 s")
    return value


def _positive(value: float) -> float:
    if value <= 0:
        raise ValueError("must be > 0 s")
    return value


# The schema states the bounds too (the API's OpenAPI document takes it from these models).
Interval = Annotated[
    Duration, AfterValidator(_at_least_one_second), Field(json_schema_extra={"minimum": 1})
]
Timeout = Annotated[
    Duration, AfterValidator(_positive), Field(json_schema_extra={"exclusiveMinimum": 0})
]


class Strict(BaseModel):
    """Unknown keys are errors: a typo must not silently do nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class FeedConfig(Strict):
    kind: FeedKind
    url: str


class ProviderConfig(Strict):
    """A provider to watch; overrides or extends the built-in catalog entry with this slug."""

    slug: Slug
    name: str | None = None
    feeds: list[FeedConfig] | None = None
    regions: list[str] = []
    components: list[str] = []
    sla: str | None = None


def _known_kind(value: Any) -> Any:
    """A registered probe kind (``monitor.probes.kinds``), said as pydantic says a Literal."""
    if isinstance(value, str) and value in KINDS:
        return value
    names = [repr(name) for name in KINDS]
    expected = " or ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    raise ValueError(f"Input should be {expected}")


def _kinds_enum(schema: dict[str, Any]) -> None:
    schema["enum"] = list(KINDS)


TargetKind = Annotated[str, BeforeValidator(_known_kind), Field(json_schema_extra=_kinds_enum)]


def _url_by_kind(schema: dict[str, Any], _model: type) -> None:
    """What ``_url_matches_kind`` checks, said in the JSON schema too (the API's OpenAPI
    document): every kind with a URL rule needs a url of its shape."""
    by_pattern: dict[str, list[str]] = {}
    for kind in KINDS.values():
        if kind.url is not None:
            by_pattern.setdefault(kind.url.pattern, []).append(kind.name)
    schema["allOf"] = [
        {
            "if": {"properties": {"kind": {"enum": names}}, "required": ["kind"]},
            "then": {
                "required": ["url"],
                "properties": {"url": {"type": "string", "pattern": pattern}},
            },
        }
        for pattern, names in by_pattern.items()
    ]


# Rules JSON Schema cannot state (they span fields, or the config's SLA policies), said in the
# fields' descriptions; tests/scenarios/schemathesis.toml expects their 422.
SLA_RULE = "An SLA policy slamon knows: built in, or in the config's sla_policies (422 otherwise)."
PROVIDER_RULE = (
    "Without one, the SLA policy's provider; one that contradicts the policy's is refused (422)."
)


class TargetConfig(Strict):
    """One probed instance (or a training job that pushes heartbeats)."""

    model_config = ConfigDict(json_schema_extra=_url_by_kind)

    name: Annotated[str, Field(min_length=1, max_length=200)]
    kind: TargetKind
    url: Annotated[str, Field(max_length=2000)] | None = None
    provider: Short | None = Field(default=None, description=PROVIDER_RULE)
    region: Short | None = None
    zone: Short | None = None
    pool: Annotated[str, Field(max_length=200)] | None = None
    instance_type: Annotated[str, Field(max_length=100)] | None = None
    # A number's bounds go before its check: after a validator, pydantic keeps them out of the
    # JSON schema's minimum/maximum, and the API's OpenAPI document would not state them.
    gpus: Annotated[int, Field(ge=0, le=1024), BeforeValidator(json_number)] = 0
    hourly_price: Annotated[
        float, Field(ge=0, le=1_000_000, allow_inf_nan=False), BeforeValidator(json_number)
    ] = 0.0
    sla: Annotated[str, Field(max_length=100)] | None = Field(default=None, description=SLA_RULE)
    interval: Interval = 30.0
    timeout: Timeout = Field(default=5.0, description="Must not exceed interval (422 otherwise).")
    confirmations: Annotated[int, Field(ge=1, le=10), BeforeValidator(json_number)] = 2
    # successes in a row that end an outage; None: as many as ``confirmations``
    recovery_confirmations: (
        Annotated[int, Field(ge=1, le=10), BeforeValidator(json_number)] | None
    ) = None
    expect_status: list[Annotated[int, Field(strict=True, ge=100, le=599)]] | None = None
    expect_body: str | None = None
    grace: Duration | None = None
    stall_after: Duration | None = None
    labels: dict[str, str] = {}
    # the cloud's own id (an EC2 instance id, a node's providerID): account events join on it;
    # a discovered target carries its instance's
    instance_id: Annotated[str, Field(min_length=1, max_length=300)] | None = None
    capacity: Capacity = Field(default="unknown", description=f"One of {', '.join(CAPACITIES)}.")

    @model_validator(mode="before")
    @classmethod
    def _default_timeout(cls, data: Any) -> Any:
        """Without a timeout: 5 s, or the interval when that is shorter."""
        if isinstance(data, dict) and "timeout" not in data:
            try:
                interval = parse_duration(data.get("interval", 30.0))
            except ValueError:
                return data  # the interval's own error is reported
            return {**data, "timeout": min(DEFAULT_TIMEOUT_S, max(interval, 0.001))}
        return data

    @model_validator(mode="after")
    def _url_matches_kind(self) -> TargetConfig:
        rule = KINDS[self.kind].url
        problem = rule.problem(self.kind, self.url) if rule is not None else None
        if problem is not None:
            raise ValueError(problem)
        return self

    @model_validator(mode="after")
    def _timeout_fits_interval(self) -> TargetConfig:
        if self.timeout > self.interval:
            raise ValueError("timeout: must not exceed interval")
        return self


class PoolConfig(Strict):
    """A group of interchangeable instances; available while at least ``min_up`` are up."""

    name: str
    min_up: Annotated[int, Field(ge=1)] = 1
    description: str | None = None


class MaintenanceConfig(Strict):
    """A planned window; matching targets' downtime inside it is excluded from SLA math."""

    name: str
    start: AwareDatetime
    end: AwareDatetime
    provider: str | None = None
    region: str | None = None
    pool: str | None = None
    targets: list[str] = []

    @model_validator(mode="after")
    def _ends_after_start(self) -> MaintenanceConfig:
        if self.end <= self.start:
            raise ValueError("end: must be after start")
        return self


class ChannelConfig(Strict):
    """A notification channel. Webhook URLs are secrets too (Slack, Discord, Teams): neither the
    url nor the secret appears in a repr, a log line or an error."""

    name: str
    kind: ChannelKind
    url: str = Field(repr=False)
    secret: str | None = Field(default=None, repr=False)
    # kind alertmanager only: every Alertmanager of one HA cluster (each is posted to), given
    # instead of ``url`` (which is then the first of them); and how often firing alerts are
    # posted again (``monitor/alerts/resend.py``) [DEFAULT_RESEND_S]
    urls: list[str] | None = Field(default=None, repr=False)
    resend_every: Interval | None = None

    @field_validator("url")
    @classmethod
    def _url_has_scheme(cls, value: str) -> str:
        if "://" not in value:
            raise ValueError("must be a URL with a scheme, e.g. https://…")
        return value

    @model_validator(mode="before")
    @classmethod
    def _url_from_urls(cls, data: Any) -> Any:
        """An alertmanager channel's ``urls`` stands instead of ``url``, never beside it;
        ``url`` is then the first of them."""
        if not isinstance(data, dict) or data.get("kind") != "alertmanager":
            return data  # another kind's urls is refused after validation, with its name
        urls = data.get("urls")
        if urls is None:
            if "url" not in data:
                raise ValueError("url (one Alertmanager) or urls (each of a cluster) is required")
            return data
        if "url" in data and (not isinstance(urls, list) or [data["url"]] != urls[:1]):
            # a config dumped and read again holds both, url the first of urls: that is fine
            raise ValueError("give url (one Alertmanager) or urls (each of a cluster), not both")
        if not isinstance(urls, list) or not all(isinstance(url, str) for url in urls):
            raise ValueError("urls: must be a list of the Alertmanagers' URLs")
        if not urls:
            raise ValueError("urls: must name at least one Alertmanager")
        return {**data, "url": urls[0]}

    @model_validator(mode="after")
    def _alertmanager_fields(self) -> ChannelConfig:
        if self.kind != "alertmanager":
            for name in ("urls", "resend_every"):
                if getattr(self, name) is not None:
                    raise ValueError(f"{name}: only for kind alertmanager")
            return self
        if self.secret is not None:
            raise ValueError(
                "secret: not used by kind alertmanager (put basic-auth credentials in the "
                "URL: http://user:password@host:9093)"
            )
        for address in self.addresses:
            if not address.startswith(("http://", "https://")):
                raise ValueError("an Alertmanager's URL must be http:// or https://")
        if len(set(self.addresses)) < len(self.addresses):
            raise ValueError("urls: an Alertmanager is named twice")
        return self

    @property
    def addresses(self) -> list[str]:
        """Where a message to this channel goes: every one of ``urls``, else ``url``."""
        return list(self.urls) if self.urls else [self.url]

    @property
    def resend_s(self) -> float:
        """An alertmanager channel's resend period in seconds (``resend_every``)."""
        return self.resend_every if self.resend_every is not None else DEFAULT_RESEND_S


class RouteConfig(Strict):
    match: dict[str, str] = {}
    channels: list[str]
    continue_: bool = Field(default=True, alias="continue")


class SilenceConfig(Strict):
    match: dict[str, str]
    start: AwareDatetime | None = None
    end: AwareDatetime
    comment: str = ""


class ProbesConfig(Strict):
    """How probing runs: vantages and their quorum, shards, confirmation retries, retention."""

    vantages: list[str] = []
    quorum: Annotated[int, Field(ge=1)] | None = None
    shard_size: Annotated[int, Field(ge=1, le=5000)] = 250
    concurrency: Annotated[int, Field(ge=1, le=5000)] = 200
    retry_interval: Timeout = 1.0
    canary: str | None = None
    raw_retention: Interval = 14 * 86400.0
    # Minute rollups make dashboards over the raw window fast, and go with it; what is kept for
    # ever is hour rollups, outages and observed windows (under a byte per probe).
    minute_retention: Interval = 14 * 86400.0

    @field_validator("canary")
    @classmethod
    def _canary_is_a_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://", "tcp://")):
            raise ValueError("must be an http(s):// or tcp://host:port URL")
        return value


class BurnWindowConfig(Strict):
    """One multi-window burn-rate page: fires when the month's error budget burns at
    ``factor`` × or more over both ``long`` and ``short`` (the SRE workbook's pairs are the
    default; shorter ones suit small fleets that want to hear sooner, and tests)."""

    long: Interval
    short: Interval
    factor: Annotated[float, Field(gt=0, allow_inf_nan=False)]
    severity: Literal["critical", "warning", "info"] = "warning"

    @model_validator(mode="after")
    def _short_within_long(self) -> BurnWindowConfig:
        if self.short > self.long:
            raise ValueError("short must not be longer than long")
        return self


DEFAULT_BURN_WINDOWS = [
    BurnWindowConfig(long=3600, short=300, factor=14.4, severity="critical"),
    BurnWindowConfig(long=6 * 3600, short=1800, factor=6.0, severity="warning"),
]


class AlertsConfig(Strict):
    """Noise control and delivery: re-notify interval, grouping, how long to keep retrying."""

    renotify: Interval = 4 * 3600.0
    group_by_incident: bool = True
    max_delivery_age: Interval = 24 * 3600.0
    retry_base: Interval = 5.0
    retry_max: Interval = 600.0
    feed_stale_after: Interval = 30 * 60.0
    discovery_failing_after: Interval = 5 * 60.0  # failed sweeps for this long: discovery_failing
    # scheduled_maintenance fires when announced, and reminds this long before the work starts
    maintenance_reminder: Interval = 3600.0
    burn_min_samples: Annotated[int, Field(ge=1)] = 10
    burn_windows: Annotated[list[BurnWindowConfig], Field(min_length=1)] = DEFAULT_BURN_WINDOWS
    # a vantage disagreeing with the quorum on this share of its targets for this long is blind
    vantage_blind_share: Annotated[float, Field(gt=0, le=1)] = 0.9
    vantage_blind_after: Interval = 180.0
    # training_slowdown: throughput below this share of its trailing median for this long
    slowdown_share: Annotated[float, Field(gt=0, lt=1)] = 0.7
    slowdown_after: Interval = 300.0
    slowdown_trailing: Interval = 3600.0
    slowdown_min_samples: Annotated[int, Field(ge=2)] = 10

    @property
    def blind_rule(self) -> BlindRule:
        """The vantage_blind rule these settings make (the vantage verdict task judges with it)."""
        return BlindRule(
            share=self.vantage_blind_share, after=timedelta(seconds=self.vantage_blind_after)
        )

    @property
    def slowdown_rule(self) -> SlowdownRule:
        """The training_slowdown rule these settings make (the alert and the report's slow
        time judge a job's throughput with it)."""
        return SlowdownRule(
            share=self.slowdown_share,
            after=timedelta(seconds=self.slowdown_after),
            trailing=timedelta(seconds=self.slowdown_trailing),
            min_samples=self.slowdown_min_samples,
        )


class ScheduleConfig(Strict):
    """How often the periodic tasks run (beat is built from this)."""

    tick: Interval = 30.0
    feeds: Interval = 120.0
    dispatch: Interval = 1.0
    heartbeats: Interval = 5.0
    rollup: Interval = 60.0
    alerts: Interval = 30.0
    vantages: Interval = 30.0  # judging each vantage against the quorum (vantage_blind)
    discovery: Interval = 15.0  # looking for discovery sources due a sweep (each has ``every``)
    account_events: Interval = 15.0  # looking for account event sources due a poll (``every``)
    deliveries: Interval = 5.0
    retention: Interval = 3600.0
    # the schedulers' leader lease: renewed every third of it; when the leader dies a standby
    # takes over within the lease plus one dispatch period (monitor/scheduler)
    lease: Interval = 10.0


class WatchdogConfig(Strict):
    """Is slamon doing its job, and who to tell while it is: the bounds /healthz, /metrics and
    the watchdog judge by, and the URL the leader pings every ``every`` while all hold (a
    dead man's switch: healthchecks.io, Dead Man's Snitch, Better Stack, any URL). Without a
    URL nothing is pinged; the bounds still judge /healthz."""

    url: str | None = Field(default=None, repr=False)  # a secret: the URL is the credential
    every: Interval = 60.0
    timeout: Interval = 10.0
    max_lag: Interval = 30.0  # a periodic task this late (after its slot) is off schedule
    max_backlog: Interval = 600.0  # a delivery pending this long: deliveries are not draining
    max_feed_age: Interval | None = None  # no feed polled for this long [3 × schedule.feeds]

    @field_validator("url")
    @classmethod
    def _url_is_http(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value


LabelName = Annotated[str, Field(pattern=r"^[a-zA-Z_][a-zA-Z0-9_]*$", max_length=100)]


class AlertmanagerReceiverConfig(Strict):
    """``POST /api/v1/alertmanager`` (``monitor/account/alertmanager.py``): the labels an
    alert names its target by, the first it carries winning (a target's name as slamon knows
    it; an alert carrying none is about no target)."""

    target_labels: list[LabelName] = Field(
        default=list(ALERTMANAGER_TARGET_LABELS), min_length=1, max_length=10
    )


TEMPLATE_FIELDS = frozenset(TargetConfig.model_fields) - {"instance_id"}


class SourceKind(Protocol):
    """What the config checks of a discovery or an account event source kind (their records
    are peers: ``monitor.discovery.kind.DiscoveryKind``, ``monitor.account.kind.AccountKind``)."""

    @property
    def options(self) -> type[BaseModel]: ...

    def missing_extra(self) -> str | None: ...


def check_kind_options(kind: SourceKind, name: str, given: dict[str, Any] | None) -> None:
    """A source's own options (the keys beyond every source's) against its kind's model, and
    its kind's SDK: ``ValueError`` naming the first bad option, or the extra to install."""
    try:
        kind.options.model_validate(given or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or name
        raise ValueError(f"{where}: {first['msg']}") from None
    missing = kind.missing_extra()
    if missing:
        raise ValueError(missing)


class DiscoveryConfig(BaseModel):
    """One discovery source: where instances are listed, how often, and the target each gets.

    The fields below are every kind's; the rest are the kind's own options (``regions``,
    ``path``, ``url`` …), validated by its record in ``monitor.discovery.kinds``.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=100)]
    kind: str
    every: Interval = 60.0
    retire_after: Annotated[int, Field(ge=1, le=1000)] = 2  # good sweeps missing, then retired
    timeout: Timeout = 20.0
    template: dict[str, Any]
    gpu_types: dict[str, Annotated[int, Field(ge=0, le=1024)]] = {}  # instance type -> GPUs
    prices: dict[str, Annotated[float, Field(ge=0, allow_inf_nan=False)]] = {}  # type -> $/h
    price_tag: str | None = None  # a tag or label holding the hourly price

    @field_validator("kind")
    @classmethod
    def _known_discovery_kind(cls, value: str) -> str:
        if value not in DISCOVERY_KINDS:
            known = ", ".join(sorted(DISCOVERY_KINDS))
            raise ValueError(f"unknown discovery kind {value!r} (known: {known})")
        return value

    @field_validator("template")
    @classmethod
    def _template_fields(cls, value: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(value) - TEMPLATE_FIELDS)
        if unknown:
            raise ValueError(f"template: no target field {unknown[0]!r}")
        if "kind" not in value:
            raise ValueError("template: needs a probe kind (kind: http, tcp, dcgm or heartbeat)")
        for key, item in value.items():
            texts = item.values() if isinstance(item, dict) else [item]
            for text in texts:
                if isinstance(text, str):
                    try:
                        placeholders(text)
                    except TemplateError as exc:
                        raise ValueError(f"template {key}: {exc}") from None
        return value

    @model_validator(mode="after")
    def _kind_options(self) -> DiscoveryConfig:
        check_kind_options(DISCOVERY_KINDS[self.kind], self.kind, self.model_extra)
        return self

    @property
    def options(self) -> Any:
        """The kind's own options, validated (``FileSdOptions``, ``Ec2Options`` …)."""
        return DISCOVERY_KINDS[self.kind].options.model_validate(self.model_extra or {})


class AccountSourceConfig(BaseModel):
    """One account event source: which provider API to read, how often, with which options.

    The fields below are every kind's; the rest are the kind's own options (``regions``,
    ``subscription_id``, ``project`` …), validated by its record in ``monitor.account.kinds``.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=100)]
    kind: str
    every: Interval = 300.0
    timeout: Timeout = 20.0

    @field_validator("kind")
    @classmethod
    def _known_account_kind(cls, value: str) -> str:
        if value not in ACCOUNT_KINDS:
            known = ", ".join(sorted(ACCOUNT_KINDS))
            raise ValueError(f"unknown account event kind {value!r} (known: {known})")
        return value

    @model_validator(mode="after")
    def _kind_options(self) -> AccountSourceConfig:
        check_kind_options(ACCOUNT_KINDS[self.kind], self.kind, self.model_extra)
        return self

    @property
    def options(self) -> Any:
        """The kind's own options, validated (``AwsHealthOptions`` …)."""
        return ACCOUNT_KINDS[self.kind].options.model_validate(self.model_extra or {})


class Config(Strict):
    """The whole YAML file."""

    providers: list[ProviderConfig] = []
    targets: list[TargetConfig] = []
    pools: list[PoolConfig] = []
    maintenance: list[MaintenanceConfig] = []
    channels: list[ChannelConfig] = []
    routes: list[RouteConfig] = []
    silences: list[SilenceConfig] = []
    sla_policies: list[dict[str, Any]] = []
    discovery: list[DiscoveryConfig] = []
    account_events: list[AccountSourceConfig] = []
    probes: ProbesConfig = ProbesConfig()
    alerts: AlertsConfig = AlertsConfig()
    schedule: ScheduleConfig = ScheduleConfig()
    watchdog: WatchdogConfig = WatchdogConfig()
    alertmanager_receiver: AlertmanagerReceiverConfig = AlertmanagerReceiverConfig()

    @model_validator(mode="before")
    @classmethod
    def _providers_from_policies(cls, data: Any) -> Any:
        """A target with an SLA policy and no provider is on the policy's provider (every
        policy names one), so its credits and impact are counted under that provider."""
        if not isinstance(data, dict) or not isinstance(data.get("targets"), list):
            return data
        raw_policies = data.get("sla_policies")
        providers = policy_providers(raw_policies if isinstance(raw_policies, list) else ())
        return {**data, "targets": [_with_provider(t, providers) for t in data["targets"]]}

    @model_validator(mode="after")
    def _unique_sources(self) -> Config:
        names = [source.name for source in self.discovery]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"discovery: two sources are named {twice[0]!r}")
        names = [source.name for source in self.account_events]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"account_events: two sources are named {twice[0]!r}")
        return self

    def target(self, name: str) -> TargetConfig | None:
        return next((t for t in self.targets if t.name == name), None)

    def source(self, name: str) -> DiscoveryConfig | None:
        return next((s for s in self.discovery if s.name == name), None)

    def account_source(self, name: str) -> AccountSourceConfig | None:
        return next((s for s in self.account_events if s.name == name), None)


def policy_providers(sla_policies: Iterable[Any] = ()) -> dict[str, str]:
    """The provider of each SLA policy by name: the built-ins', then the user's own
    ``sla_policies`` (which may take a built-in's name). A user policy that does not validate
    is left out; the loader's cross-check reports it."""
    providers = {name: policy.provider for name, policy in BUILTIN_POLICIES.items()}
    for raw in sla_policies:
        try:
            policy = policy_from_config(raw)
        except (TypeError, ValueError):
            continue
        providers[policy.name] = policy.provider
    return providers


def provider_of(provider: str | None, sla: str | None, providers: Mapping[str, str]) -> str | None:
    """A target's provider: its own, or else its SLA policy's (None without either)."""
    return provider or providers.get(sla or "", provider)


def _with_provider(target: Any, providers: Mapping[str, str]) -> Any:
    """A raw or validated target with its policy's provider filled in where it names none."""
    if isinstance(target, TargetConfig):
        wanted = provider_of(target.provider, target.sla, providers)
        return (
            target if wanted == target.provider else target.model_copy(update={"provider": wanted})
        )
    if (
        isinstance(target, dict)
        and not target.get("provider")
        and isinstance(target.get("sla"), str)
    ):
        wanted = providers.get(target["sla"])
        return {**target, "provider": wanted} if wanted else target
    return target
