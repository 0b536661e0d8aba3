"""The `slamon` command line (docs/DESIGN.md's contract). User errors print one line and exit
non-zero; tracebacks are for bugs only."""

from __future__ import annotations

import importlib
from typing import Any

import click

from monitor import __version__
from monitor.errors import ConfigError, SlamonError

# Each command's module, imported only when that command runs (or for --help): `slamon run`
# supervises for as long as the service lives and needs none of the others' imports.
COMMANDS = {
    "agent": "monitor.cli.agent_cmd:agent",
    "alerts": "monitor.cli.alerts_cmd:alerts",
    "api": "monitor.cli.serve:api",
    "beat": "monitor.cli.serve:beat",
    "config": "monitor.cli.config_cmd:config",
    "discover": "monitor.cli.discover_cmd:discover",
    "events": "monitor.cli.events_cmd:events",
    "export": "monitor.cli.export_cmd:export",
    "feeds": "monitor.cli.feeds_cmd:feeds",
    "grafana": "monitor.cli.grafana_cmd:grafana",
    "import": "monitor.cli.report_cmd:import_",
    "migrate": "monitor.cli.serve:migrate",
    "notices": "monitor.cli.notices_cmd:notices",
    "preflight": "monitor.cli.serve:preflight_command",
    "probe": "monitor.cli.probe_cmd:probe",
    "report": "monitor.cli.report_cmd:report",
    "run": "monitor.cli.serve:run",
    "secrets": "monitor.cli.secrets_cmd:secrets_group",
    "token": "monitor.cli.token_cmd:token",
    "worker": "monitor.cli.serve:worker",
}


class SlamonGroup(click.Group):
    """A click group that turns slamon's own errors into clear messages and exit codes, and
    loads a command's module only when that command is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = COMMANDS.get(cmd_name)
        if where is None:
            return None
        module, _, attribute = where.partition(":")
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ConfigError as exc:
            for problem in exc.problems:
                click.echo(f"error: {problem}", err=True)
            ctx.exit(1)
        except SlamonError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(1)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:
            messages = _settings_errors(exc) or [m for m in [_database_error(exc)] if m]
            if not messages:
                raise  # a bug: the traceback is for us
            for message in messages:
                click.echo(f"error: {message}", err=True)
            ctx.exit(1)


def _settings_errors(exc: Exception) -> list[str]:
    """One line per ``SLAMON_*`` variable the settings refused (``SLAMON_PUBLIC_URL: must be an
    http(s) URL…``); empty for anything else."""
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError) or exc.title != "Settings":
        return []
    lines = []
    for error in exc.errors(include_url=False):
        name = "SLAMON_" + "_".join(str(part) for part in error["loc"]).upper()
        lines.append(f"{name}: {error['msg'].removeprefix('Value error, ')}")
    return lines


def _database_error(exc: Exception) -> str | None:
    """One line for a database that is down or refuses us mid-command (the driver's reason,
    which names host and port but never the password); None for anything else."""
    from sqlalchemy.exc import InterfaceError, OperationalError

    if not isinstance(exc, OperationalError | InterfaceError):
        return None
    reason = str(getattr(exc, "orig", exc)).strip().splitlines() or [type(exc).__name__]
    return f"database unavailable: {reason[0]}"


@click.group(cls=SlamonGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="slamon")
def cli() -> None:
    """slamon: SLA and provider-health monitor for rented GPUs."""


def main() -> None:
    cli(prog_name="slamon")


if __name__ == "__main__":  # pragma: no cover
    main()
