"""`slamon export`: slamon's objectives and rules in the formats the rest of the stack reads.

Each subcommand reads the config (the source of truth) and writes a file another tool takes:
nothing here touches the database.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from monitor.sla.openslo import TargetObjective
    from monitor.sla.policy import SlaPolicy


@click.group()
def export() -> None:
    """Write slamon's SLOs and rules for other tools (OpenSLO, Sloth, Prometheus)."""


@export.command("prometheus-rules")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default="-")
def prometheus_rules(config_path: Path | None, out: Path) -> None:
    """Write Prometheus recording and alerting rules for the config's burn windows (default
    config: $SLAMON_CONFIG or slamon.yaml; default out: standard output): each target's
    availability, downtime ratio and burn rate over slamon's counters, SlamonSlaBurn as
    slamon's sla_burn judges, and SlamonTargetDown. Check them with `promtool check rules`."""
    from monitor.alerts.prometheus_rules import render, rule_groups
    from monitor.alerts.sla_rules import burn_windows
    from monitor.config import load_config
    from monitor.errors import SlamonError
    from monitor.settings import Settings

    config = load_config(config_path or Settings().config)
    try:
        text = render(rule_groups(burn_windows(config.alerts.burn_windows)))
    except ValueError as exc:  # a window Prometheus cannot name (1.5 s)
        raise SlamonError(f"alerts.burn_windows: {exc}") from None
    _write_text(out, text)


CONFIG_HELP = "The YAML config (default: $SLAMON_CONFIG or slamon.yaml)."
OUT_HELP = "Where to write ('-', the default, for standard output)."


@export.command("openslo")
@click.option(
    "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help=CONFIG_HELP
)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default="-", help=OUT_HELP)
def openslo(config_path: Path | None, out: Path) -> None:
    """Write each target's SLA objective as OpenSLO v1 (a Service per provider, an SLO per
    target: calendar month in UTC, time-slice budgeting, the policy in slamon.dev/
    annotations). `slamon import openslo` reads it back."""
    from monitor.sla.openslo import export_documents, exportable

    objectives = _objectives(config_path)
    kept = [o for o in objectives if exportable(o.policy)]
    for name in sorted({o.policy.name for o in objectives if not exportable(o.policy)}):
        click.echo(
            f"note: policy {name!r}: a 100 % target has no OpenSLO form (objectives' targets "
            "lie below 1); its targets are left out",
            err=True,
        )
    if not kept:
        raise _nothing_to_export()
    _write(out, export_documents(kept))
    click.echo(f"{_where(out)}: {len(kept)} SLOs (OpenSLO v1)", err=True)


@export.command("sloth")
@click.option(
    "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help=CONFIG_HELP
)
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default="-", help=OUT_HELP)
def sloth(config_path: Path | None, out: Path) -> None:
    """Write each target's SLA objective as a Sloth spec (version prometheus/v1), one spec per
    provider: burn-rate alerts and recording rules over slamon's counters."""
    from monitor.sla.sloth import sloth_specs

    objectives = _objectives(config_path)
    if not objectives:
        raise _nothing_to_export()
    specs = sloth_specs(objectives)
    _write(out, specs)
    click.echo(f"{_where(out)}: {len(specs)} Sloth specs, {len(objectives)} SLOs", err=True)


def _objectives(config_path: Path | None) -> list[TargetObjective]:
    """Every configured target with an SLA policy, as ``TargetObjective``s; notes on stderr
    for what has none to export."""
    from monitor.config import load_config
    from monitor.settings import Settings
    from monitor.sla.openslo import TargetObjective
    from monitor.sla.policy_config import policies_for

    config = load_config(config_path or Settings().config)
    policies = policies_for(config.sla_policies)
    objectives = [
        TargetObjective(t.name, policies[t.sla], t.interval)
        for t in config.targets
        if t.sla is not None
    ]
    without = len(config.targets) - len(objectives)
    if without:
        click.echo(f"note: {without} targets have no SLA policy (`sla:`): left out", err=True)
    used = {o.policy.name for o in objectives}
    for raw in config.sla_policies:
        if raw["name"] not in used:
            click.echo(
                f"note: policy {raw['name']!r}: no target names it; an SLO measures a target, "
                "so it is left out",
                err=True,
            )
    return objectives


def _nothing_to_export() -> Exception:
    from monitor.errors import SlamonError

    return SlamonError("no target has an SLA policy (`sla:` in the config): nothing to export")


def _write(out: Path, documents: list[dict[str, Any]]) -> None:
    import yaml

    _write_text(out, yaml.safe_dump_all(documents, sort_keys=False, allow_unicode=True, width=100))


def _write_text(out: Path, text: str) -> None:
    """``text`` to ``out`` ('-': standard output); one line when it cannot be written."""
    from monitor.errors import SlamonError

    if str(out) == "-":
        click.echo(text, nl=False)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise SlamonError(f"{out}: {exc.strerror}") from None


def _where(out: Path) -> str:
    return "standard output" if str(out) == "-" else str(out)


# ------------------------------------------------------------- slamon import openslo (its body)


def import_openslo(file: Path, config_path: Path | None, as_json: bool) -> None:
    """Read OpenSLO SLOs back as slamon policies and print them as config (see report_cmd)."""
    import json

    from monitor.config import load_config
    from monitor.config.models import TargetConfig
    from monitor.errors import SlamonError
    from monitor.settings import Settings
    from monitor.sla.openslo import (
        OpenSloError,
        check_time_slices,
        policies_of,
        read_documents,
    )

    documents = _read_yaml_documents(file)
    config = load_config(config_path or Settings().config, missing_ok=True)
    default_interval = TargetConfig.model_fields["interval"].default
    try:
        objectives = read_documents(documents)
        check_time_slices(
            objectives, {t.name: t.interval for t in config.targets}, default_interval
        )
        policies = policies_of(objectives)
    except OpenSloError as exc:
        raise SlamonError(f"{_where_in(file)}: {exc}") from None
    pasted = [p for p in policies if not _builtin_unchanged(p)]
    text = _policies_yaml(pasted)
    _validate(text, file)
    if as_json:
        for policy in policies:
            line = {
                "policy": _config_fields(policy),
                "builtin": _builtin_unchanged(policy),
                "slos": [o.slo for o in objectives if o.policy.name == policy.name],
                "targets": [
                    o.target
                    for o in objectives
                    if o.policy.name == policy.name and o.target is not None
                ],
            }
            click.echo(json.dumps(line, ensure_ascii=False))
        return
    click.echo(
        f"# {_where_in(file)}: {len(objectives)} SLOs, {len(policies)} SLA policies; paste "
        "under the config's sla_policies (docs/openslo.md)"
    )
    click.echo(text, nl=False)
    for policy in policies:
        if _builtin_unchanged(policy):
            click.echo(f"# {policy.name}: built in, unchanged (nothing to paste)")
    mapped = [o for o in objectives if o.target is not None]
    if mapped:
        click.echo("# targets: give each its policy with `sla:`")
    for read in mapped:
        click.echo(f"#   {read.target}: sla: {read.policy.name}")


def _read_yaml_documents(file: Path) -> list[Any]:
    import sys

    import yaml

    from monitor.config.loader import SAFE_LOADER
    from monitor.errors import SlamonError

    try:
        text = sys.stdin.read() if str(file) == "-" else file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise SlamonError(f"{file}: cannot read: {reason}") from None
    try:
        return list(yaml.load_all(text, Loader=SAFE_LOADER))
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split())
        raise SlamonError(f"{_where_in(file)}: not valid YAML: {reason}") from None
    except RecursionError:
        raise SlamonError(f"{_where_in(file)}: YAML nested too deeply") from None


def _where_in(file: Path) -> str:
    return "standard input" if str(file) == "-" else str(file)


def _builtin_unchanged(policy: SlaPolicy) -> bool:
    from monitor.sla.terms import BUILTIN_POLICIES

    return BUILTIN_POLICIES.get(policy.name) == policy


def _config_fields(policy: SlaPolicy) -> dict[str, Any]:
    """A policy as the config writes it: ``to_json()`` without its empty (default) fields."""
    return {k: v for k, v in policy.to_json().items() if v is not None}


def _policies_yaml(policies: list[SlaPolicy]) -> str:
    import yaml

    fields = [_config_fields(p) for p in policies]
    return yaml.safe_dump({"sla_policies": fields}, sort_keys=False, allow_unicode=True, width=100)


def _validate(text: str, file: Path) -> None:
    """What import prints is a config section the config's own models accept."""
    from monitor.config import parse_config
    from monitor.errors import ConfigError

    try:
        parse_config(text)
    except ConfigError as exc:
        raise ConfigError([f"{_where_in(file)}: {p}" for p in exc.problems]) from None
